package api

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// These tests are issue 14's hole 1: the chain service must not be an HMAC oracle. A
// caller with the API key (or anyone, without one) forges an entry and asks the server to
// verify it; if any answer or log line carries the HMAC or chain_signature that would have
// passed, the caller repairs the forgery with it, round after round, until the forged
// export or chain verifies under the secret it never had.

// revealed matches a value the server computed, as MismatchError spelled it before the fix.
var revealed = regexp.MustCompile(`computed ([0-9a-f]{64})`)

// maxOracleRounds bounds the attack: a 5-entry chain needs at most a round per entry and a
// few for the header.
const maxOracleRounds = 12

// forgedModel is the edit the forger makes to a body: the same length, so the body stays
// canonical and its columns still agree with it.
var (
	honestModel = []byte(`"gen_ai.request.model":"gpt-4o"`)
	forgedModel = []byte(`"gen_ai.request.model":"gpt-4x"`)
)

func TestExportVerifyIsNoHMACOracle(t *testing.T) {
	f := newFixture(t, 5, nil)
	resp, export := f.postJSON("/api/export", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %s", resp.StatusCode, export)
	}
	x := parseExport(t, export)
	x.forgeBody(t, 2) // entry seq 3
	_, forger, _ := ed25519.GenerateKey(nil)

	for round := range maxOracleRounds {
		x.sign(t, forger)
		ct, body := upload(t, "file", string(x.bytes(t)))
		// The forger has the API key, so it opts in to the server's secret.
		resp, out := f.do(http.MethodPost, "/api/export/verify?use_server_secret=true", ct, body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("round %d: %d %s", round, resp.StatusCode, out)
		}
		var res exportVerifyResult
		decode(t, out, &res)
		if res.Valid && res.HMACsChecked {
			if _, err := protocol.VerifyExport(bytes.NewReader(x.bytes(t)), protocol.VerifyOptions{Secret: testSecret}); err == nil {
				t.Fatalf("after %d rounds the server accepted a forged export, which also passes verify-export --secret-hex offline", round)
			}
			t.Fatalf("after %d rounds the server accepted a forged export", round)
		}
		if leak := x.leaks(out); leak != "" {
			t.Errorf("round %d: the answer carries %s: %s", round, leak, out)
		}
		if leak := x.leaks([]byte(f.logs.String())); leak != "" {
			t.Errorf("round %d: the log carries %s", round, leak)
		}
		m := revealed.FindStringSubmatch(res.Error)
		if m == nil {
			return // the server gave nothing to repair the forgery with
		}
		switch {
		case res.ReasonCode == protocol.ReasonHMAC:
			i := res.Seq - x.firstSeq()
			x.entries[i]["hmac_hash"] = m[1]
			if i+1 < int64(len(x.entries)) {
				x.entries[i+1]["prev_hash"] = m[1]
			}
		case res.ReasonCode == reasonHeaderMismatch && res.Field != "":
			x.top[res.Field] = m[1]
		default:
			t.Fatalf("round %d: unexpected answer %s", round, out)
		}
	}
	t.Fatalf("the attack did not end in %d rounds", maxOracleRounds)
}

func TestChainVerifyIsNoHMACOracle(t *testing.T) {
	f := newFixture(t, 5, nil)
	// A process that can write chain.db, but lacks the secret, forges row 3.
	var body []byte
	f.query(func(db *sql.DB) error {
		return db.QueryRow(`SELECT canonical_body FROM chain WHERE seq = 3`).Scan(&body)
	})
	forged := bytes.Replace(body, honestModel, forgedModel, 1)
	if bytes.Equal(forged, body) {
		t.Fatal("the test did not forge the body")
	}
	sum := sha256.Sum256(forged)
	f.tamper(`UPDATE chain SET canonical_body = ?, canonical_hash = ? WHERE seq = 3`, forged, hex.EncodeToString(sum[:]))

	for round := range maxOracleRounds {
		resp, out := f.postJSON("/api/chain/verify", `{"full":true}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("round %d: %d %s", round, resp.StatusCode, out)
		}
		var res verifyResult
		decode(t, out, &res)
		if res.Valid {
			t.Fatalf("after %d rounds the server verifies a chain with a forged row", round)
		}
		// What would pass: the HMAC of the first bad row over its stored columns.
		var prev, hash string
		f.query(func(db *sql.DB) error {
			return db.QueryRow(`SELECT prev_hash, canonical_hash FROM chain WHERE seq = ?`, res.FirstBadSeq).Scan(&prev, &hash)
		})
		want := protocol.EntryHMAC(testSecret, prev, hash)
		if bytes.Contains(out, []byte(want)) {
			t.Errorf("round %d: the answer carries the HMAC that would pass at seq %d: %s", round, res.FirstBadSeq, out)
		}
		if strings.Contains(f.logs.String(), want) {
			t.Errorf("round %d: the log carries the HMAC that would pass at seq %d", round, res.FirstBadSeq)
		}
		if res.Error == nil {
			t.Fatalf("round %d: an invalid chain without an error: %s", round, out)
		}
		m := revealed.FindStringSubmatch(*res.Error)
		if m == nil || res.Reason != protocol.ReasonHMAC {
			return
		}
		f.tamper(`UPDATE chain SET hmac_hash = ? WHERE seq = ?`, m[1], res.FirstBadSeq)
		f.tamper(`UPDATE chain SET prev_hash = ? WHERE seq = ?`, m[1], res.FirstBadSeq+1)
	}
	t.Fatalf("the attack did not end in %d rounds", maxOracleRounds)
}

// query runs fn on the chain file behind the store's back.
func (f *fixture) query(fn func(*sql.DB) error) {
	f.t.Helper()
	db, err := sql.Open("sqlite", f.dbPath)
	if err != nil {
		f.t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if err := fn(db); err != nil {
		f.t.Fatal(err)
	}
}

// editableExport is an export taken apart for a forger to edit: its top-level members
// and its entries, numbers kept as written.
type editableExport struct {
	top     map[string]any
	entries []map[string]any
}

func parseExport(t *testing.T, b []byte) *editableExport {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	x := &editableExport{}
	if err := dec.Decode(&x.top); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(x.top["entries"])
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&x.entries); err != nil {
		t.Fatal(err)
	}
	return x
}

func (x *editableExport) firstSeq() int64 {
	n, _ := x.entries[0]["seq"].(json.Number).Int64()
	return n
}

// forgeBody edits entry i's body and recomputes its canonical_hash, as anyone can.
func (x *editableExport) forgeBody(t *testing.T, i int) {
	t.Helper()
	body, err := base64.StdEncoding.DecodeString(x.entries[i]["canonical_body_b64"].(string))
	if err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(body, honestModel, forgedModel, 1)
	if bytes.Equal(forged, body) {
		t.Fatal("the test did not forge the body")
	}
	sum := sha256.Sum256(forged)
	x.entries[i]["canonical_body_b64"] = base64.StdEncoding.EncodeToString(forged)
	x.entries[i]["canonical_hash"] = hex.EncodeToString(sum[:])
}

// header is the export's signed members.
func (x *editableExport) header(t *testing.T) protocol.ExportHeader {
	t.Helper()
	members := map[string]any{}
	for k, v := range x.top {
		if k != "entries" && k != "signature" {
			members[k] = v
		}
	}
	raw, _ := json.Marshal(members)
	var h protocol.ExportHeader
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// sign re-signs the envelope with the forger's own key.
func (x *editableExport) sign(t *testing.T, key ed25519.PrivateKey) {
	t.Helper()
	h := x.header(t)
	signed, err := h.SignedBytes()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	x.top["signature"] = map[string]any{"algorithm": "Ed25519", "public_key": string(pub),
		"value": base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed))}
}

func (x *editableExport) bytes(t *testing.T) []byte {
	t.Helper()
	x.top["entries"] = x.entries
	b, err := json.Marshal(x.top)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// leaks names the secret-keyed value in b that the forger needs next, if b carries one:
// the HMAC of an entry over its current prev_hash and canonical_hash (where it differs from
// the stated one), or the chain_signature over the current last_hmac_hash.
func (x *editableExport) leaks(b []byte) string {
	for _, e := range x.entries {
		want := protocol.EntryHMAC(testSecret, e["prev_hash"].(string), e["canonical_hash"].(string))
		if want != e["hmac_hash"] && bytes.Contains(b, []byte(want)) {
			return "the HMAC that would pass at seq " + e["seq"].(json.Number).String()
		}
	}
	count, _ := x.top["entry_count"].(json.Number).Int64()
	want := protocol.ChainSignature(testSecret, x.top["last_hmac_hash"].(string), count)
	if want != x.top["chain_signature"] && bytes.Contains(b, []byte(want)) {
		return "the chain_signature that would pass"
	}
	return ""
}
