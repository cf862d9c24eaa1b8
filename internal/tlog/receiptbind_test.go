package tlog

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Issue 14, holes 4 and 5: a receipt binds its log leg, and the embedded log signs
// integratedTime and logIndex. These tests build receipts around real entries of the
// embedded log.

// boundReceipt is a current-format receipt of cross-anchor n, logged by l under
// recordKey and signed by signKey, as a map a tamperer can edit before signReceiptMap.
func boundReceipt(t *testing.T, l *Embedded, n int, recordKey, signKey ed25519.PrivateKey) map[string]any {
	t.Helper()
	// A one-operator anchor, logged as the federation logs it.
	ps := []protocol.Participant{{OperatorID: "op_0000000000000001", ChainSignature: hex.EncodeToString(bytes.Repeat([]byte{byte(n)}, 32))}}
	at := "2026-11-21T18:00:00.000000000Z"
	hash, err := protocol.CrossAnchorHash(ps, at)
	if err != nil {
		t.Fatal(err)
	}
	content, err := protocol.CrossAnchorLogContent(hash)
	if err != nil {
		t.Fatal(err)
	}
	body, err := protocol.NewHashedRekord(content, recordKey)
	if err != nil {
		t.Fatal(err)
	}
	e, err := l.Upload(t.Context(), body)
	if err != nil {
		t.Fatal(err)
	}
	logPEM, err := marshalKeyPEM(l.pub)
	if err != nil {
		t.Fatal(err)
	}
	var entry map[string]any
	raw, _ := json.Marshal(e.Bundle)
	if err := json.Unmarshal(raw, &entry); err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"anchor_id": "anchor-20261121-001", "anchored_at": at, "cross_anchor_hash": hash,
		"participating_operators":    []any{map[string]any{"operator_id": ps[0].OperatorID, "chain_signature": ps[0].ChainSignature}},
		"tlog_log_index":             e.Index,
		"tlog_url":                   e.URL,
		"tlog_public_key_pem":        string(logPEM),
		"tlog_record_public_key_pem": mustPEM(t, recordKey),
		"federation_public_key_pem":  mustPEM(t, signKey),
		"tlog_entry":                 entry,
	}
}

func mustPEM(t *testing.T, key ed25519.PrivateKey) string {
	t.Helper()
	p, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return string(p)
}

// signReceiptMap signs m with key over its payload, as the federation does, and returns
// the receipt's JSON.
func signReceiptMap(t *testing.T, m map[string]any, key ed25519.PrivateKey) []byte {
	t.Helper()
	delete(m, "federation_signature")
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := protocol.ReceiptPayload(raw)
	if err != nil {
		t.Fatal(err)
	}
	m["federation_signature"] = base64.StdEncoding.EncodeToString(ed25519.Sign(key, payload))
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tlogCheck returns the report's "tlog_entry" check.
func tlogCheck(rep *protocol.ReceiptReport) protocol.Check {
	if rep == nil || len(rep.Checks) == 0 {
		return protocol.Check{}
	}
	return rep.Checks[len(rep.Checks)-1]
}

var rotatedFederationKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x42}, ed25519.SeedSize))

// Hole 4 (a): the unsigned tlog_entry of a receipt swapped for a bundle of another log,
// or of another anchor, verified with no --log-key: nothing checked it.
func TestReceiptSwappedLogEntryFails(t *testing.T) {
	l := openTestLog(t, t.TempDir())
	otherKey, err := GenerateLogKey("attacker.test/log")
	if err != nil {
		t.Fatal(err)
	}
	attacker := openTestLogWithKey(t, t.TempDir(), otherKey)
	pub := federationKey.Public().(ed25519.PublicKey)

	honest := boundReceipt(t, l, 1, federationKey, federationKey)
	if rep, err := protocol.VerifyReceipt(signReceiptMap(t, honest, federationKey), pub); err != nil || !tlogCheck(rep).OK {
		t.Fatalf("the honest logged receipt: %v, tlog_entry check %+v", err, tlogCheck(rep))
	}
	fromAttacker := boundReceipt(t, attacker, 1, federationKey, federationKey)
	otherAnchor := boundReceipt(t, l, 2, federationKey, federationKey)
	for name, entry := range map[string]any{
		"a bundle of another log":    fromAttacker["tlog_entry"],
		"a bundle of another anchor": otherAnchor["tlog_entry"],
	} {
		m := boundReceipt(t, l, 1, federationKey, federationKey)
		raw := signReceiptMap(t, m, federationKey)
		var signed map[string]any
		if err := json.Unmarshal(raw, &signed); err != nil {
			t.Fatal(err)
		}
		signed["tlog_entry"] = entry // not in the payload: the signature still verifies
		swapped, _ := json.Marshal(signed)
		rep, err := protocol.VerifyReceipt(swapped, pub)
		if err == nil {
			t.Errorf("%s: the receipt verifies (tlog_entry check %+v)", name, tlogCheck(rep))
		}
	}
}

// Hole 4 (b): a receipt re-signed by a later federation key names the log entry that the
// earlier key signed; its log leg must verify, as the signing key vouches for the
// record key.
func TestReceiptResignedAfterRotationVerifiesLog(t *testing.T) {
	l := openTestLog(t, t.TempDir())
	m := boundReceipt(t, l, 3, federationKey, rotatedFederationKey)
	raw := signReceiptMap(t, m, rotatedFederationKey)
	rep, err := protocol.VerifyReceipt(raw, rotatedFederationKey.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatalf("the re-signed receipt: %v", err)
	}
	if c := tlogCheck(rep); !c.OK || c.Name != "tlog_entry" {
		t.Fatalf("the re-signed receipt's log leg is not verified: %+v", c)
	}
	// With the log's key given, it verifies too.
	rep, err = protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: rotatedFederationKey.Public().(ed25519.PublicKey), LogKey: l.pub})
	if err != nil || !tlogCheck(rep).OK {
		t.Fatalf("with --log-key: %v, %+v", err, tlogCheck(rep))
	}
}

// Hole 4 (c): an attacker's log key written into the receipt, with a bundle that log
// signed: the key is in the signed payload, so the signature fails.
func TestReceiptForgedLogKeyFails(t *testing.T) {
	l := openTestLog(t, t.TempDir())
	otherKey, err := GenerateLogKey("attacker.test/log")
	if err != nil {
		t.Fatal(err)
	}
	attacker := openTestLogWithKey(t, t.TempDir(), otherKey)
	forged := boundReceipt(t, attacker, 4, federationKey, federationKey)
	raw := signReceiptMap(t, boundReceipt(t, l, 4, federationKey, federationKey), federationKey)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tlog_public_key_pem", "tlog_entry", "tlog_log_index"} {
		m[k] = forged[k]
	}
	out, _ := json.Marshal(m)
	if _, err := protocol.VerifyReceipt(out, federationKey.Public().(ed25519.PublicKey)); !errors.Is(err, protocol.ErrSignature) {
		t.Fatalf("a receipt naming the attacker's log: %v, want %v", err, protocol.ErrSignature)
	}
	// The caller's log key is required when given.
	_, err = protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: federationKey.Public().(ed25519.PublicKey), LogKey: attacker.pub})
	if !errors.Is(err, protocol.ErrKeyNotTrusted) {
		t.Fatalf("a receipt of another log than --log-key: %v, want %v", err, protocol.ErrKeyNotTrusted)
	}
}

// Hole 5: the embedded log's integratedTime and top-level logIndex were the log's word
// only; edited, the bundle still verified.
func TestEmbeddedBundleTimeAndIndexAreSigned(t *testing.T) {
	l := openTestLog(t, t.TempDir())
	body, _ := record(t, 7)
	e, err := l.Upload(t.Context(), body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Verify(t.Context(), &e.Bundle); err != nil {
		t.Fatalf("the honest bundle: %v", err)
	}
	if e.Bundle.Verification.SignedEntryTimestamp == "" {
		t.Error("the embedded log gave no signed entry timestamp")
	}
	for name, edit := range map[string]func(b *protocol.LogBundle){
		"integratedTime + 3600": func(b *protocol.LogBundle) { b.IntegratedTime += 3600 },
		"integratedTime 0":      func(b *protocol.LogBundle) { b.IntegratedTime = 0 },
		"logIndex + 1000":       func(b *protocol.LogBundle) { b.LogIndex += 1000 },
		"no SET":                func(b *protocol.LogBundle) { b.Verification.SignedEntryTimestamp = "" },
	} {
		b := cloneBundle(e.Bundle)
		edit(&b)
		if _, err := l.Verify(t.Context(), &b); !errors.Is(err, protocol.ErrNotIncluded) {
			t.Errorf("%s: %v, want %v", name, err, protocol.ErrNotIncluded)
		}
	}
}

// A legacy receipt (neither log key member, as signed before issue 14) with an entry of
// the embedded log as it was then, without a signed entry timestamp: its log leg is
// verified only under the caller's log key, and then says integratedTime is not
// authenticated; without a log key it fails (ErrNoTrustedKey), never reported verified.
func TestLegacyReceiptLogLeg(t *testing.T) {
	l := openTestLog(t, t.TempDir())
	m := boundReceipt(t, l, 8, federationKey, federationKey)
	delete(m, "tlog_public_key_pem")
	delete(m, "tlog_record_public_key_pem")
	entry := m["tlog_entry"].(map[string]any)
	delete(entry["verification"].(map[string]any), "signedEntryTimestamp")
	raw := signReceiptMap(t, m, federationKey)
	pub := federationKey.Public().(ed25519.PublicKey)

	rep, err := protocol.VerifyReceipt(raw, pub)
	if c := tlogCheck(rep); !errors.Is(err, protocol.ErrNoTrustedKey) || c.Skipped || c.OK || !strings.Contains(c.Detail, "bound to no log key; pass --log-key") {
		t.Fatalf("without a log key: %v, %+v", err, c)
	}
	if !rep.Receipt.Legacy {
		t.Error("the report does not say the receipt is legacy")
	}
	rep, err = protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: pub, LogKey: l.pub})
	if c := tlogCheck(rep); err != nil || !c.OK || !strings.Contains(c.Detail, "integratedTime is not authenticated") {
		t.Fatalf("with the log key: %v, %+v", err, c)
	}
	otherKey, err := GenerateLogKey("attacker.test/log")
	if err != nil {
		t.Fatal(err)
	}
	other := openTestLogWithKey(t, t.TempDir(), otherKey)
	if _, err := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: pub, LogKey: other.pub}); !errors.Is(err, protocol.ErrMismatch) {
		t.Fatalf("under another log's key: %v, want a logID mismatch", err)
	}
}
