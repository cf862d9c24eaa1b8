package protocol

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// TestProtocolDocExamplesVerify reads every worked example from docs/PROTOCOL.md itself,
// not from the generator, and checks it as a verifier written from the page would: each
// hash, MAC and signature recomputes or verifies, and each signed document passes the
// verifier of its format. TestProtocolDocExamples keeps the page equal to what this
// package computes; this test keeps what the page says true.

// docRow splits a row of an example into its name and value.
var docRow = regexp.MustCompile(`^(\S+(?: \S+)*) {2,}(.*)$`)

// readDocExamples returns every example of the page, by name, as rows by name. Values are
// as printed: a newline in a raw value is the two characters \n (see raw).
func readDocExamples(t *testing.T) map[string]map[string]string {
	t.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, m := range docBlock.FindAllSubmatch(doc, -1) {
		rows := map[string]string{}
		body := strings.TrimSuffix(strings.TrimPrefix(string(m[0][len(m[1]):]), "```text\n"), "```\n")
		for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
			r := docRow.FindStringSubmatch(line)
			if r == nil {
				t.Fatalf("example %s: row %q has no name and value", m[2], line)
			}
			rows[r[1]] = r[2]
		}
		out[string(m[2])] = rows
	}
	return out
}

// raw is a value that is text rather than JSON, with its newlines restored.
func raw(s string) string { return strings.ReplaceAll(s, `\n`, "\n") }

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hexHMAC(secret []byte, msg string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

func TestProtocolDocExamplesVerify(t *testing.T) {
	x := readDocExamples(t)
	want := func(what string, got, wantV string) {
		t.Helper()
		if got != wantV {
			t.Errorf("%s: the page says %q, a verifier gets %q", what, wantV, got)
		}
	}
	ok := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	checked := map[string]bool{}
	use := func(name string) map[string]string {
		checked[name] = true
		if x[name] == nil {
			t.Fatalf("the page has no example %s", name)
		}
		return x[name]
	}

	c := use("canonical-json")
	got, err := canonical.Transform([]byte(c["input"]))
	ok("canonical-json", err)
	want("canonical-json", string(got), c["rfc8785"])
	c = use("receipt-form")
	got, err = canonical.ReceiptForm([]byte(c["input"]))
	ok("receipt-form", err)
	want("receipt-form", string(got), c["receipt_form"])

	// Chain rows, their leaves, root and chain signature.
	row := use("chain-row")
	secret := mustHex(t, row["secret_hex"])
	want("chain-row canonical_hash", hexSHA256([]byte(row["canonical_body"])), row["canonical_hash"])
	want("chain-row hmac_input", row["prev_hash"]+row["canonical_hash"], row["hmac_input"])
	want("chain-row hmac_hash", hexHMAC(secret, row["hmac_input"]), row["hmac_hash"])
	want("chain-row seq 2 prev_hash", row["seq 2 prev_hash"], row["hmac_hash"])
	want("chain-row seq 2 hmac_hash", hexHMAC(secret, row["seq 2 prev_hash"]+row["seq 2 canonical_hash"]), row["seq 2 hmac_hash"])
	var cols struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		Start   string `json:"start_time_ns"`
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	}
	ok("chain-row canonical_body", json.Unmarshal([]byte(row["canonical_body"]), &cols))
	e := &Entry{Seq: 1, TimestampNS: cols.Start, TraceID: cols.TraceID, SpanID: cols.SpanID, SpanName: cols.Name, SpanKind: cols.Kind,
		CanonicalBody: []byte(row["canonical_body"]), CanonicalHash: row["canonical_hash"], PrevHash: row["prev_hash"], HMACHash: row["hmac_hash"]}
	ok("chain-row entry", CheckEntry(e, hmac.New(sha256.New, secret)))
	root := use("entries-root")
	var leaf map[string]any
	ok("entries-root leaf 1", json.Unmarshal([]byte(root["leaf 1"]), &leaf))
	want("entries-root leaf 1 canonical_hash", leaf["canonical_hash"].(string), row["canonical_hash"])
	want("entries-root leaf 1 hmac_hash", leaf["hmac_hash"].(string), row["hmac_hash"])
	want("entries-root leaf_hash 1", hexSHA256(append([]byte{0}, root["leaf 1"]...)), root["leaf_hash 1"])
	want("entries_root", hexSHA256(append(append([]byte{1}, mustHex(t, root["leaf_hash 1"])...), mustHex(t, root["leaf_hash 2"])...)), root["entries_root"])
	sig := use("chain-signature")
	want("chain-signature message", "chain:"+row["seq 2 hmac_hash"]+":2", sig["message"])
	want("chain_signature", hexHMAC(secret, sig["message"]), sig["chain_signature"])

	// The export of those rows, and its key.
	ex := use("export")
	pub, err := ParsePublicKeyPEM([]byte(raw(ex["public_key"])))
	ok("export public_key", err)
	opKey := ed25519.NewKeyFromSeed(mustHex(t, ex["operator_seed_hex"]))
	if !pub.Equal(opKey.Public()) {
		t.Error("export: public_key is not the seed's")
	}
	report, err := VerifyExport(strings.NewReader(ex["header_only_export"]), VerifyOptions{Secret: secret, PublicKey: pub})
	ok("export header_only_export", err)
	if err == nil {
		want("export signed_header", string(report.Envelope.Signed), ex["signed_header"])
		want("export entries_root", report.Header.EntriesRoot, root["entries_root"])
		want("export chain_signature", report.Header.ChainSignature, sig["chain_signature"])
	}
	ok("export signature_value", verifySignature(pub, []byte(ex["signed_header"]), ex["signature_value"], "export"))
	id := use("operator-id")
	want("operator-id raw_public_key", hex.EncodeToString(pub), id["raw_public_key"])
	want("operator-id fingerprint", hexSHA256(pub), id["fingerprint"])
	want("operator-id operator_id", "op_"+id["fingerprint"][:16], id["operator_id"])

	// Signed forms under the operator's key.
	ch := use("challenge")
	want("challenge nonce", ChallengePrefix+ch["challenge_body"], ch["nonce"])
	want("challenge nonce_hex", hex.EncodeToString([]byte(ch["nonce"])), ch["nonce_hex"])
	ok("challenge signature", VerifyChallenge(pub, ch["nonce"], ch["signature"]))
	tok, err := ParseAuthorization(ch["as_token"])
	ok("challenge as_token", err)
	if err == nil {
		ok("challenge as_token signature", tok.VerifyAs(pub))
		want("challenge as_token nonce", tok.Nonce, ch["nonce"])
	}
	reg := use("registration")
	want("registration message", "register Acme Research "+id["fingerprint"], reg["message"])
	ok("registration signature", VerifyRegistration(pub, "Acme Research", reg["signature"]))
	bt := use("bearer-token")
	want("bearer-token body_sha256", hexSHA256([]byte(bt["body"])), bt["body_sha256"])
	tok, err = ParseAuthorization(bt["authorization"])
	ok("bearer-token authorization", err)
	if err == nil {
		want("bearer-token nonce", tok.Nonce, bt["nonce"])
		ok("bearer-token signature", tok.VerifyAs(pub))
		ok("bearer-token body nonce", tok.CheckBodyNonce(time.Unix(1763730000, 0), []byte(bt["body"]), TokenMaxAge))
	}
	wd := use("withdrawal")
	var w Withdrawal
	ok("withdrawal body", json.Unmarshal([]byte(wd["body"]), &w))
	want("withdrawal message", string(WithdrawalMessage(w.OperatorID, w.At)), wd["message"])
	at, _ := time.Parse(time.RFC3339, w.At)
	ok("withdrawal signature", w.VerifyAs(id["operator_id"], pub, at))
	rot := use("key-rotation")
	msg := raw(rot["message"])
	cut := strings.Index(msg, "-----END PUBLIC KEY-----\n") + len("-----END PUBLIC KEY-----\n")
	r := KeyRotation{OperatorID: id["operator_id"], NewPublicKey: msg[:cut], RotationAt: msg[cut:],
		OldKeySignature: rot["old_key_signature"], NewKeySignature: rot["new_key_signature"]}
	rotAt, _ := time.Parse(time.RFC3339, r.RotationAt)
	newPub, err := r.Verify(pub, rotAt)
	ok("key-rotation signatures", err)
	if err == nil && !newPub.Equal(ed25519.NewKeyFromSeed(mustHex(t, rot["new_key_seed_hex"])).Public()) {
		t.Error("key-rotation: the new key is not the seed's")
	}
	rn := use("rename")
	var rename Rename
	ok("rename body", json.Unmarshal([]byte(rn["body"]), &rename))
	renameMsg, err := RenameMessage(rename.OperatorID, rename.OrgName, rename.Contact, rename.At)
	ok("rename message", err)
	want("rename message", string(renameMsg), rn["message"])
	want("rename signature", rename.Signature, rn["signature"])
	ok("rename message signature", verifySignature(pub, []byte(rn["message"]), rn["signature"], "rename"))
	renameAt, _ := rename.Time()
	ok("rename signature", rename.VerifyAs(id["operator_id"], pub, renameAt))

	// The cross-anchor, its receipts and its log record.
	ca := use("cross-anchor")
	p1, p2 := strings.Fields(ca["participant 1"]), strings.Fields(ca["participant 2"])
	want("cross-anchor hash_input", p1[1]+p2[1]+ca["anchored_at"], ca["hash_input"])
	want("cross_anchor_hash", hexSHA256([]byte(ca["hash_input"])), ca["cross_anchor_hash"])
	hash, err := CrossAnchorHash([]Participant{{p1[0], p1[1]}, {p2[0], p2[1]}}, ca["anchored_at"])
	ok("cross-anchor", err)
	want("cross-anchor CrossAnchorHash", hash, ca["cross_anchor_hash"])
	want("cross-anchor participant 2's chain_signature", p2[1], sig["chain_signature"])
	rc := use("receipt")
	fedKey := ed25519.NewKeyFromSeed(mustHex(t, rc["federation_seed_hex"]))
	fedPub := fedKey.Public().(ed25519.PublicKey)
	_, err = VerifyReceipt([]byte(rc["receipt"]), fedPub)
	ok("receipt", err)
	payload, err := ReceiptPayload([]byte(rc["receipt"]))
	ok("receipt payload", err)
	want("receipt payload", string(payload), rc["payload"])
	lg := use("receipt-logged")
	logKey, err := ParseLogPublicKeyPEM([]byte(raw(lg["log_public_key_pem"])))
	ok("receipt-logged log_public_key_pem", err)
	logID, _ := LogID(logKey)
	want("receipt-logged log_id", logID, lg["log_id"])
	_, err = VerifyReceiptWith([]byte(lg["receipt"]), ReceiptVerifyOptions{FederationKey: fedPub, LogKey: logKey})
	ok("receipt-logged", err)
	_, err = OpenCheckpoint([]byte(raw(lg["checkpoint"])), logKey)
	ok("receipt-logged checkpoint", err)
	var bundle LogBundle
	ok("receipt-logged tlog_entry", json.Unmarshal([]byte(lg["tlog_entry"]), &bundle))
	setPayload, err := EntryTimestampPayload(&bundle)
	ok("receipt-logged set_payload", err)
	want("receipt-logged set_payload", string(setPayload), lg["set_payload"])
	payload, err = ReceiptPayload([]byte(lg["receipt"]))
	ok("receipt-logged payload", err)
	want("receipt-logged payload", string(payload), lg["payload"])
	checkMerkleExamples(t, use("merkle-anchor"), use("merkle-receipt"), fedPub, want, ok)
	hr := use("hashedrekord")
	want("hashedrekord content", hr["content_hex"], ca["cross_anchor_hash"])
	sum := sha512.Sum512(mustHex(t, hr["content_hex"]))
	want("hashedrekord sha512", hex.EncodeToString(sum[:]), hr["sha512"])
	ok("hashedrekord body", VerifyHashedRekord([]byte(hr["body"]), mustHex(t, hr["content_hex"]), fedPub))
	sr := use("suspension-records")
	for _, name := range []string{"suspension", "resumption"} {
		ok("suspension-records "+name, canonical.Check([]byte(sr[name])))
		var rec struct {
			Type string `json:"type"`
		}
		ok("suspension-records "+name, json.Unmarshal([]byte(sr[name]), &rec))
		want("suspension-records type", rec.Type, name)
	}

	checkImportExample(t, use("import-bridge"), want, ok)

	for name := range x {
		if !checked[name] {
			t.Errorf("example %s is on the page but no check reads it", name)
		}
	}
}

// checkImportExample verifies the import-bridge example: its digest line, legacy HMAC and
// bridge, and the two-entry chain they make, as an export verified with the secret.
func checkImportExample(t *testing.T, ib map[string]string, want func(string, string, string), ok func(string, error)) {
	t.Helper()
	secret := mustHex(t, ib["secret_hex"])
	want("import-bridge legacy_canonical_hash", hexSHA256([]byte(ib["legacy_body"])), ib["legacy_canonical_hash"])
	want("import-bridge legacy_hmac_hash", hexHMAC(secret, GenesisPrevHash+ib["legacy_canonical_hash"]), ib["legacy_hmac_hash"])
	want("import-bridge legacy_rows_sha256", hexSHA256([]byte(ib["digest_line"]+"\n")), ib["legacy_rows_sha256"])
	var line struct {
		CanonicalHash string `json:"canonical_hash"`
		SpanID        string `json:"span_id"`
		SpanKind      string `json:"span_kind"`
		SpanName      string `json:"span_name"`
		TimestampNS   string `json:"timestamp_ns"`
		TraceID       string `json:"trace_id"`
	}
	ok("import-bridge digest_line", json.Unmarshal([]byte(ib["digest_line"]), &line))
	bridge := &Entry{Seq: 1, CanonicalBody: []byte(ib["bridge_body"]), CanonicalHash: hexSHA256([]byte(ib["bridge_body"])), PrevHash: GenesisPrevHash}
	var bb struct {
		Name, Kind string
		TraceID    string `json:"trace_id"`
		SpanID     string `json:"span_id"`
		Start      string `json:"start_time_ns"`
	}
	ok("import-bridge bridge_body", json.Unmarshal(bridge.CanonicalBody, &bb))
	bridge.SpanName, bridge.SpanKind, bridge.TraceID, bridge.SpanID, bridge.TimestampNS = bb.Name, bb.Kind, bb.TraceID, bb.SpanID, bb.Start
	bridge.HMACHash = hexHMAC(secret, bridge.PrevHash+bridge.CanonicalHash)
	want("import-bridge bridge_hmac_hash", bridge.HMACHash, ib["bridge_hmac_hash"])
	want("import-bridge seq 2 prev_hash", ib["seq 2 prev_hash"], bridge.HMACHash)
	imported := &Entry{Seq: 2, TimestampNS: line.TimestampNS, TraceID: line.TraceID, SpanID: line.SpanID, SpanName: line.SpanName,
		SpanKind: line.SpanKind, CanonicalBody: []byte(ib["legacy_body"]), CanonicalHash: line.CanonicalHash, PrevHash: ib["seq 2 prev_hash"]}
	imported.HMACHash = hexHMAC(secret, imported.PrevHash+imported.CanonicalHash)
	want("import-bridge seq 2 hmac_hash", imported.HMACHash, ib["seq 2 hmac_hash"])
	var out bytes.Buffer
	w, err := NewExportWriter(&out, ExportOptions{Secret: secret, Key: testKey, ExportedAt: testTime})
	ok("import-bridge export", err)
	for _, e := range []*Entry{bridge, imported} {
		ok("import-bridge export", w.Write(e))
	}
	_, err = w.Close()
	ok("import-bridge export", err)
	report, err := VerifyExport(&out, VerifyOptions{Secret: secret})
	ok("import-bridge export verifies", err)
	if err == nil && (report.Import == nil || !report.Import.ColumnsChecked || !report.Import.LegacyHMACsRederived ||
		report.Import.Bridge.LegacyRowsSHA256 != ib["legacy_rows_sha256"] || report.Import.Bridge.LegacyHeadHMACHash != ib["legacy_hmac_hash"]) {
		t.Errorf("import-bridge: import report %+v", report.Import)
	}
}
