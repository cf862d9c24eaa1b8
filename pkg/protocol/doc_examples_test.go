package protocol

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// docPath is the page whose worked examples these tests keep true.
const docPath = "../../docs/PROTOCOL.md"

// docExample is one worked example: named rows of values.
type docExample struct {
	name string
	rows [][2]string
}

func (x docExample) render() string {
	width := 0
	for _, r := range x.rows {
		width = max(width, len(r[0]))
	}
	var b strings.Builder
	b.WriteString("```text\n")
	for _, r := range x.rows {
		fmt.Fprintf(&b, "%-*s  %s\n", width, r[0], strings.ReplaceAll(r[1], "\n", `\n`))
	}
	b.WriteString("```\n")
	return b.String()
}

// docExamples computes every worked example of docs/PROTOCOL.md from fixed inputs.
func docExamples(tb testing.TB) []docExample {
	must := func(b []byte, err error) string {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return string(b)
	}
	sha := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	var xs []docExample
	add := func(name string, rows ...[2]string) { xs = append(xs, docExample{name, rows}) }

	jcsIn := `{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`
	add("canonical-json", [2]string{"input", jcsIn}, [2]string{"rfc8785", must(canonical.Transform([]byte(jcsIn)))})
	rfIn := `{"b":"é ✓","a":[1,-0,null],"c":"/\u007f"}`
	add("receipt-form", [2]string{"input", rfIn}, [2]string{"receipt_form", must(canonical.ReceiptForm([]byte(rfIn)))})

	// Two chain rows.
	secret := bytes.Repeat([]byte{0x5c}, 32)
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC).UnixNano()
	body := func(name string, n int64) SpanBody {
		return SpanBody{
			Name: name, Kind: "client",
			Attributes:  map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 12 * n},
			StatusCode:  "OK",
			StartTimeNS: start + n*int64(time.Second), EndTimeNS: start + n*int64(time.Second) + 850_000_000,
			TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: fmt.Sprintf("00f067aa0ba902b%d", n),
		}
	}
	e1, err := NewEntry(secret, 1, GenesisPrevHash, body("chat gpt-4o", 1))
	if err != nil {
		tb.Fatal(err)
	}
	e2, err := NewEntry(secret, 2, e1.HMACHash, body("chat gpt-4o", 2))
	if err != nil {
		tb.Fatal(err)
	}
	add("chain-row",
		[2]string{"secret_hex", hex.EncodeToString(secret)},
		[2]string{"seq", "1"},
		[2]string{"canonical_body", string(e1.CanonicalBody)},
		[2]string{"canonical_hash", e1.CanonicalHash},
		[2]string{"prev_hash", e1.PrevHash},
		[2]string{"hmac_input", e1.PrevHash + e1.CanonicalHash},
		[2]string{"hmac_hash", e1.HMACHash},
		[2]string{"seq 2 canonical_hash", e2.CanonicalHash},
		[2]string{"seq 2 prev_hash", e2.PrevHash},
		[2]string{"seq 2 hmac_hash", e2.HMACHash},
	)
	leaf1, leaf2 := appendLeaf(nil, e1), appendLeaf(nil, e2)
	h1, h2 := leafHash(leaf1), leafHash(leaf2)
	root := sha256.Sum256(append(append([]byte{1}, h1...), h2...))
	add("entries-root",
		[2]string{"leaf 1", string(leaf1)},
		[2]string{"leaf_hash 1", hex.EncodeToString(h1)},
		[2]string{"leaf_hash 2", hex.EncodeToString(h2)},
		[2]string{"entries_root", hex.EncodeToString(root[:])},
	)
	add("chain-signature",
		[2]string{"message", "chain:" + e2.HMACHash + ":2"},
		[2]string{"chain_signature", ChainSignature(secret, e2.HMACHash, 2)},
	)

	// The export header of those two rows, signed by an operator key.
	opKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	opPub := opKey.Public().(ed25519.PublicKey)
	var export bytes.Buffer
	w, err := NewExportWriter(&export, ExportOptions{Secret: secret, Key: opKey, ExportedAt: time.Date(2026, 11, 21, 13, 0, 0, 0, time.UTC), HeaderOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range []*Entry{e1, e2} {
		if err := w.Write(e); err != nil {
			tb.Fatal(err)
		}
	}
	h, err := w.Close()
	if err != nil {
		tb.Fatal(err)
	}
	signed := must(h.SignedBytes())
	pubPEM := must(MarshalPublicKeyPEM(opPub))
	add("export",
		[2]string{"operator_seed_hex", hex.EncodeToString(opKey.Seed())},
		[2]string{"public_key", pubPEM},
		[2]string{"signed_header", signed},
		[2]string{"signature_value", base64.StdEncoding.EncodeToString(ed25519.Sign(opKey, []byte(signed)))},
		[2]string{"header_only_export", strings.TrimSuffix(export.String(), "\n")},
	)
	add("operator-id",
		[2]string{"raw_public_key", hex.EncodeToString(opPub)},
		[2]string{"fingerprint", Fingerprint(opPub)},
		[2]string{"operator_id", OperatorID(opPub)},
	)
	add("registration",
		[2]string{"message", string(RegistrationMessage("Acme Research", opPub))},
		[2]string{"signature", SignRegistration(opKey, "Acme Research")},
	)
	challenge, err := NewChallenge("1763730300-6f1c2a9e0b7d4e38a5c0f2d1")
	if err != nil {
		tb.Fatal(err)
	}
	challengeSig, err := SignChallenge(opKey, challenge)
	if err != nil {
		tb.Fatal(err)
	}
	challengeToken, err := SignToken(opKey, challenge)
	if err != nil {
		tb.Fatal(err)
	}
	add("challenge",
		[2]string{"challenge_body", strings.TrimPrefix(challenge, ChallengePrefix)},
		[2]string{"nonce", challenge},
		[2]string{"nonce_hex", hex.EncodeToString([]byte(challenge))},
		[2]string{"signature", challengeSig},
		[2]string{"as_token", "Bearer " + challengeToken},
	)
	reqBody := []byte(`{"hello":"federation"}`)
	nonce := BodyNonce(time.Unix(1763730000, 0), reqBody)
	token, err := SignToken(opKey, nonce)
	if err != nil {
		tb.Fatal(err)
	}
	add("bearer-token",
		[2]string{"body", string(reqBody)},
		[2]string{"body_sha256", sha(reqBody)},
		[2]string{"nonce", nonce},
		[2]string{"authorization", "Bearer " + token},
	)
	wd := NewWithdrawal(opKey, time.Date(2026, 11, 21, 14, 0, 0, 0, time.UTC))
	add("withdrawal",
		[2]string{"message", string(WithdrawalMessage(wd.OperatorID, wd.At))},
		[2]string{"body", must(canonical.Marshal(wd))},
	)
	newKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{4}, ed25519.SeedSize))
	rot, err := NewKeyRotation(opKey, newKey, time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC))
	if err != nil {
		tb.Fatal(err)
	}
	add("key-rotation",
		[2]string{"new_key_seed_hex", hex.EncodeToString(newKey.Seed())},
		[2]string{"message", string(RotationMessage(rot.NewPublicKey, rot.RotationAt))},
		[2]string{"old_key_signature", rot.OldKeySignature},
		[2]string{"new_key_signature", rot.NewKeySignature},
	)

	xs = append(xs, renameExample(tb, opKey))

	// A cross-anchor of two operators and its receipt.
	ps := []Participant{
		{OperatorID: "op_9b1d6b5e0c2f4a71", ChainSignature: ChainSignature(secret, e2.HMACHash, 2)},
		{OperatorID: OperatorID(opPub), ChainSignature: ChainSignature(secret, e1.HMACHash, 1)},
	}
	SortParticipants(ps)
	at := FormatAnchoredAt(time.Date(2026, 11, 21, 18, 0, 0, 120_000_000, time.UTC))
	hash, err := CrossAnchorHash(ps, at)
	if err != nil {
		tb.Fatal(err)
	}
	add("cross-anchor",
		[2]string{"participant 1", ps[0].OperatorID + " " + ps[0].ChainSignature},
		[2]string{"participant 2", ps[1].OperatorID + " " + ps[1].ChainSignature},
		[2]string{"anchored_at", at},
		[2]string{"hash_input", ps[0].ChainSignature + ps[1].ChainSignature + at},
		[2]string{"cross_anchor_hash", hash},
	)
	fedKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	receipt := must(SignReceipt(&Receipt{AnchorID: "anchor-20261121-001", AnchoredAt: at, CrossAnchorHash: hash, ParticipatingOperators: ps}, fedKey))
	add("receipt",
		[2]string{"federation_seed_hex", hex.EncodeToString(fedKey.Seed())},
		[2]string{"payload", must(ReceiptPayload([]byte(receipt)))},
		[2]string{"receipt", must(canonical.Transform([]byte(receipt)))},
	)
	xs = append(xs, merkleDocExamples(tb, ps, map[string]int64{"op_9b1d6b5e0c2f4a71": 2, OperatorID(opPub): 1}, at, fedKey)...)
	bundle := vectorBundle(tb, vectorLogKey, fedKey, hash)
	entry := must(json.Marshal(bundle))
	logPEM, recordPEM := string(mustMarshalPEM(tb, vectorLogKey)), string(mustMarshalPEM(tb, fedKey))
	index, url := int64(vectorLogIndex), "https://log.example/api/v1/log/entries/"+bundle.UUID
	logged := must(SignReceipt(&Receipt{AnchorID: "anchor-20261121-001", AnchoredAt: at, CrossAnchorHash: hash, ParticipatingOperators: ps,
		TLogLogIndex: &index, TLogURL: &url, TLogPublicKeyPEM: &logPEM, TLogRecordPublicKeyPEM: &recordPEM, TLogEntry: []byte(entry)}, fedKey))
	setPayload := must(EntryTimestampPayload(bundle))
	add("receipt-logged",
		[2]string{"log_seed_hex", hex.EncodeToString(vectorLogKey.Seed())},
		[2]string{"log_public_key_pem", logPEM},
		[2]string{"log_id", bundle.LogID},
		[2]string{"checkpoint", bundle.Verification.InclusionProof.Checkpoint},
		[2]string{"set_payload", setPayload},
		[2]string{"tlog_entry", must(canonical.Transform([]byte(entry)))},
		[2]string{"payload", must(ReceiptPayload([]byte(logged)))},
		[2]string{"receipt", must(canonical.Transform([]byte(logged)))},
	)
	xs = append(xs, importExample(tb, secret))
	content := must(CrossAnchorLogContent(hash))
	digest := sha512.Sum512([]byte(content))
	add("hashedrekord",
		[2]string{"content_hex", hex.EncodeToString([]byte(content))},
		[2]string{"sha512", hex.EncodeToString(digest[:])},
		[2]string{"body", must(NewHashedRekord([]byte(content), fedKey))},
	)
	suspended, resumed := suspensionRecordExamples()
	add("suspension-records",
		[2]string{"suspension", must(canonical.Marshal(suspended))},
		[2]string{"resumption", must(canonical.Marshal(resumed))},
	)
	return xs
}

var docBlock = regexp.MustCompile("(?s)(<!-- example: ([a-z0-9-]+) -->\n)```text\n.*?```\n")

// TestProtocolDocExamples keeps the worked examples of docs/PROTOCOL.md equal to what
// this package computes; -update rewrites them.
func TestProtocolDocExamples(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, x := range docExamples(t) {
		want[x.name] = x.render()
	}
	seen := map[string]bool{}
	var stale []string
	out := docBlock.ReplaceAllFunc(doc, func(m []byte) []byte {
		sub := docBlock.FindSubmatch(m)
		name := string(sub[2])
		seen[name] = true
		w, ok := want[name]
		if !ok {
			stale = append(stale, name+": no such example")
			return m
		}
		if string(m[len(sub[1]):]) != w {
			stale = append(stale, name+": values differ")
		}
		return append(append([]byte{}, sub[1]...), w...)
	})
	for name := range want {
		if !seen[name] {
			stale = append(stale, name+": not in the document")
		}
	}
	if *update {
		if err := os.WriteFile(docPath, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if len(stale) > 0 {
		t.Fatalf("docs/PROTOCOL.md examples are stale (review, then go test ./pkg/protocol -run DocExamples -update):\n%s", strings.Join(stale, "\n"))
	}
}

// importExample is a one-row legacy chain imported behind its bridge record (§2). The
// digest line is built here independently, with canonical.Marshal, and must hash to what
// ImportDigest computes.
func importExample(tb testing.TB, secret []byte) docExample {
	tb.Helper()
	sha := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	legacyBody := `{"attributes":{"gen_ai.request.model":"claude-sonnet-4","gen_ai.usage.input_tokens":120},` +
		`"end_time_ns":"1781492406123456789","kind":"CLIENT","name":"chat claude-sonnet-4",` +
		`"start_time_ns":"1781492405273456789","status_code":"UNSET","status_description":null}`
	e := &Entry{TimestampNS: "1781492406123456789", TraceID: "00000000000000000000000000abc001", SpanID: "0000000000005001",
		SpanName: "chat claude-sonnet-4", SpanKind: "CLIENT", CanonicalBody: []byte(legacyBody), CanonicalHash: sha([]byte(legacyBody))}
	d := NewImportDigest()
	d.Add(1, e)
	line, err := canonical.Marshal(map[string]any{"canonical_hash": e.CanonicalHash, "seq": 1, "span_id": e.SpanID,
		"span_kind": e.SpanKind, "span_name": e.SpanName, "timestamp_ns": e.TimestampNS, "trace_id": e.TraceID})
	if err != nil || sha(append(line, '\n')) != d.Sum() {
		tb.Fatalf("the digest line does not hash to ImportDigest's sum (%v)", err)
	}
	b := &Bridge{LegacyFirstSeq: 1, LegacyLastSeq: 1, LegacyRows: 1, LegacyFirstPrevHash: GenesisPrevHash,
		LegacyHeadHMACHash: EntryHMAC(secret, GenesisPrevHash, e.CanonicalHash), LegacyExportSHA256: sha([]byte("the legacy export")),
		LegacyExportCreatedAt: "2026-11-26T10:00:00.123456+00:00", LegacyRowsSHA256: d.Sum(), FirstSeq: 2, LastSeq: 2}
	s, err := NewEntrySealer(secret)
	if err != nil {
		tb.Fatal(err)
	}
	bridge, err := s.Seal(1, GenesisPrevHash, b.Body(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)))
	if err != nil {
		tb.Fatal(err)
	}
	s.Link(e, 2, bridge.HMACHash)
	if kind, err := CheckEntryBody(e, nil); err != nil || kind != BodyImported {
		tb.Fatalf("the imported entry: %v, kind %d", err, kind)
	}
	return docExample{"import-bridge", [][2]string{
		{"secret_hex", hex.EncodeToString(secret)},
		{"legacy_body", legacyBody},
		{"legacy_canonical_hash", e.CanonicalHash},
		{"legacy_hmac_hash", b.LegacyHeadHMACHash},
		{"digest_line", string(line)},
		{"legacy_rows_sha256", b.LegacyRowsSHA256},
		{"bridge_body", string(bridge.CanonicalBody)},
		{"bridge_hmac_hash", bridge.HMACHash},
		{"seq 2 prev_hash", e.PrevHash},
		{"seq 2 hmac_hash", e.HMACHash},
	}}
}
