package protocol

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// The receipts of the original product's federation (BIJOTEL, bijotel-federation 0.3;
// docs/PROTOCOL.md §7, "Receipts of the original product"), built here from the
// original's rules alone. VerifyReceipt refuses every one of them as malformed: they are
// not Cairn receipts. cairn federation verify recognises them and applies the original's
// rules (pkg/bijotel.VerifyReceipt), whose verdicts the vectors state; the external test
// TestBijotelReceiptVectors in this directory and cmd/cairn's tests check them.

// bijotelReceipt is the original's receipt as its client saves it (GET /anchor/{id}).
type bijotelReceipt struct {
	AnchorID        string               `json:"anchor_id"`
	CrossAnchorHash string               `json:"cross_anchor_hash"`
	AnchoredAt      string               `json:"anchored_at"`
	RekorLogIndex   *int64               `json:"rekor_log_index"`
	RekorURL        *string              `json:"rekor_url"`
	Signature       string               `json:"federation_signature"`
	PEM             string               `json:"federation_public_key_pem"`
	Participants    []bijotelParticipant `json:"participating_operators"`
}

type bijotelParticipant struct {
	OperatorID     string `json:"operator_id"`
	ChainSignature string `json:"chain_signature"`
}

// newBijotelReceipt is a receipt of three operators at 2026-09-10T03:45:01Z, logged in
// Rekor when logged, not yet signed.
func newBijotelReceipt(logged bool) *bijotelReceipt {
	r := &bijotelReceipt{AnchoredAt: "2026-09-10T03:45:01Z", AnchorID: "anchor_20260910T034501Z_9224cd"}
	for i := range 3 {
		id := sha256.Sum256(fmt.Appendf(nil, "-----BEGIN PUBLIC KEY-----\noperator %d\n-----END PUBLIC KEY-----\n", i))
		head := sha256.Sum256(fmt.Appendf(nil, "head of operator %d", i))
		r.Participants = append(r.Participants, bijotelParticipant{"op_" + hex.EncodeToString(id[:])[:12], hex.EncodeToString(head[:])})
	}
	sort.Slice(r.Participants, func(i, j int) bool { return r.Participants[i].OperatorID < r.Participants[j].OperatorID })
	if logged {
		index, url := int64(123456789), "https://rekor.sigstore.dev"
		r.RekorLogIndex, r.RekorURL = &index, &url
	}
	r.rehash()
	return r
}

// rehash sets cross_anchor_hash: SHA-256 of the chain signatures in operator_id order,
// then anchored_at.
func (r *bijotelReceipt) rehash() {
	h := sha256.New()
	for _, p := range r.Participants {
		h.Write([]byte(p.ChainSignature))
	}
	h.Write([]byte(r.AnchoredAt))
	r.CrossAnchorHash = hex.EncodeToString(h.Sum(nil))
}

// sign signs r with key over the original's payload: the receipt form (§1) of anchor_id,
// anchored_at, cross_anchor_hash, federation_public_key_pem, participating_operators (in
// r's order) and the two rekor members. The PEM is written without its final newline, as
// the original's settings hold it.
func (r *bijotelReceipt) sign(tb testing.TB, key ed25519.PrivateKey) {
	tb.Helper()
	r.PEM = strings.TrimSuffix(string(mustMarshalPEM(tb, key)), "\n")
	obj, err := json.Marshal(map[string]any{"anchor_id": r.AnchorID, "anchored_at": r.AnchoredAt, "cross_anchor_hash": r.CrossAnchorHash,
		"federation_public_key_pem": r.PEM, "participating_operators": r.Participants, "rekor_log_index": r.RekorLogIndex, "rekor_url": r.RekorURL})
	if err != nil {
		tb.Fatal(err)
	}
	payload, err := canonical.ReceiptForm(obj)
	if err != nil {
		tb.Fatal(err)
	}
	r.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, payload))
}

func (r *bijotelReceipt) json(tb testing.TB) string {
	tb.Helper()
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return string(raw)
}

// bijotelReceiptVectors are the original's receipt cases, with the verdict of its rules
// when the federation key is given ("trusted_key") and when it is not ("no_key").
func bijotelReceiptVectors(tb testing.TB) map[string]vector {
	signed := func(logged bool, key ed25519.PrivateKey, edit func(r *bijotelReceipt)) string {
		r := newBijotelReceipt(logged)
		r.sign(tb, key)
		if edit != nil {
			edit(r)
		}
		return r.json(tb)
	}
	cases := map[string]struct {
		desc, receipt, trusted, none string
	}{
		"valid": {"an honest receipt of the original's federation, logged in Rekor (which no offline check covers)",
			signed(true, federationKey, nil), "ok", "no_trusted_key"},
		"pending": {"an honest receipt not logged: rekor_log_index and rekor_url null",
			signed(false, federationKey, nil), "ok", "no_trusted_key"},
		"signed-by-another-key": {"the same anchor signed by a key other than the federation's, which the receipt names",
			signed(true, otherKey, nil), "key_not_trusted", "no_trusted_key"},
		"reordered-participants": {"the first two participants swapped after signing (the original re-sorted them for the hash)",
			signed(true, federationKey, func(r *bijotelReceipt) {
				r.Participants[0], r.Participants[1] = r.Participants[1], r.Participants[0]
			}), "mismatch participants_order", "no_trusted_key"},
		"changed-hash": {"one hex digit of cross_anchor_hash changed after signing",
			signed(true, federationKey, func(r *bijotelReceipt) { r.CrossAnchorHash = flipHex(r.CrossAnchorHash) }), "mismatch cross_anchor_hash", "no_trusted_key"},
		"anchor-id-other-time": {"anchor_id naming another second than anchored_at, signed: Cairn requires it to carry anchored_at",
			func() string {
				r := newBijotelReceipt(true)
				r.AnchorID = "anchor_20260910T034502Z_9224cd"
				r.sign(tb, federationKey)
				return r.json(tb)
			}(), "mismatch anchor_id", "no_trusted_key"},
		"rekor-index-edited": {"rekor_log_index changed after signing: the original's payload signs it",
			signed(true, federationKey, func(r *bijotelReceipt) { n := *r.RekorLogIndex + 1; r.RekorLogIndex = &n }), "signature", "no_trusted_key"},
		"unknown-member": {"a member the original never wrote",
			strings.Replace(signed(true, federationKey, nil), `"anchor_id":`, `"tlog_entry": {}, "anchor_id":`, 1), "malformed", "malformed"},
	}
	fedPEM := string(mustMarshalPEM(tb, federationKey))
	out := map[string]vector{}
	for name, c := range cases {
		out["bijotel-receipt-"+name] = vector{Desc: c.desc, Kind: "bijotel-receipt",
			Inputs:   map[string]string{"receipt": c.receipt, "public_key_pem": fedPEM},
			Expected: map[string]string{"trusted_key": c.trusted, "no_key": c.none}}
	}
	return out
}

// flipHex changes the first hex digit of s.
func flipHex(s string) string {
	if s[0] == '0' {
		return "1" + s[1:]
	}
	return "0" + s[1:]
}

// TestBijotelReceiptsAreNotCairnReceipts: VerifyReceipt, Cairn's format, refuses every
// receipt of the original as malformed, in both modes, whatever the original's rules say.
func TestBijotelReceiptsAreNotCairnReceipts(t *testing.T) {
	for name, v := range bijotelReceiptVectors(t) {
		for _, key := range []ed25519.PublicKey{nil, federationKey.Public().(ed25519.PublicKey)} {
			if _, err := VerifyReceipt([]byte(v.Inputs["receipt"]), key); verdict(err) != "malformed" {
				t.Errorf("%s: VerifyReceipt says %q (%v), want malformed", name, verdict(err), err)
			}
		}
	}
}
