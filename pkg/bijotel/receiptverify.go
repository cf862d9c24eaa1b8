package bijotel

import (
	"bytes"
	"crypto/ed25519"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ReceiptReport says what VerifyReceipt checked.
type ReceiptReport struct {
	Receipt *Receipt
	// Checks are every check, in order; the Rekor leg is always skipped.
	Checks []protocol.Check
}

// VerifyReceipt parses raw (ParseReceipt) and checks it offline against trusted, the
// original federation's key as the verifier holds it (required, as in BIJOTEL 2.15+):
//
//   - federation_key: the receipt's key is trusted, compared as keys (the original
//     compares PEM text, §5.1.7); nil trusted fails with protocol.ErrNoTrustedKey.
//   - participants_order: stored in strictly increasing operator_id order, as the
//     federation stores and signs them (stricter: the original re-sorts for the hash).
//   - anchor_id: its time is anchored_at's (stricter).
//   - cross_anchor_hash: recomputed (§3.5 step 4).
//   - federation_signature: Ed25519 over ReceiptPayload, participants in stored order,
//     under the receipt's key.
//   - rekor: never checked offline (no inclusion proof in the receipt, §5.1.6); reported
//     as skipped, never as verified.
//
// The error is the first failed check's *CheckError (protocol.ErrKeyNotTrusted,
// protocol.ErrNoTrustedKey, protocol.ErrMismatch or protocol.ErrSignature), or a parse
// error wrapping protocol.ErrMalformed with no report.
func VerifyReceipt(raw []byte, trusted ed25519.PublicKey) (*ReceiptReport, error) {
	rc, err := ParseReceipt(raw)
	if err != nil {
		return nil, err
	}
	embedded, err := ParseFederationKeyPEM([]byte(rc.FederationPublicKeyPEM))
	if err != nil {
		return nil, err // ParseReceipt checked it
	}
	rep := &ReceiptReport{Receipt: rc}
	var first *CheckError
	check := func(name string, fail *CheckError, detail string) {
		if fail == nil {
			rep.Checks = append(rep.Checks, protocol.Check{Name: name, OK: true, Detail: detail})
			return
		}
		fail.Check = name
		rep.Checks = append(rep.Checks, protocol.Check{Name: name, Detail: fail.Reason})
		if first == nil {
			first = fail
		}
	}
	check("federation_key", keyCheck(embedded, trusted), "the trusted key "+KeyFingerprint(embedded))
	check("participants_order", orderCheck(rc.Participants), fmt.Sprintf("%d operators in operator_id order", len(rc.Participants)))
	check("anchor_id", anchorIDCheck(rc), "carries anchored_at "+rc.AnchoredAt)
	var hashFail *CheckError
	if CrossAnchorHash(rc.Participants, rc.AnchoredAt) != rc.CrossAnchorHash {
		hashFail = &CheckError{Reason: "cross_anchor_hash mismatch: stated " + rc.CrossAnchorHash, kind: protocol.ErrMismatch}
	}
	check("cross_anchor_hash", hashFail, "recomputed from the participants and anchored_at")
	check("federation_signature", signatureCheck(rc, embedded), "Ed25519 over the original's payload, participants in stored order")
	rekor := "no Rekor entry (rekor_log_index is null)"
	if rc.RekorLogIndex != nil {
		url := "no rekor_url"
		if rc.RekorURL != nil {
			url = *rc.RekorURL
		}
		rekor = fmt.Sprintf("not checked offline: rekor_log_index %d at %s (the receipt carries no inclusion proof, and the entry witnesses SHA-256 of the hash's bytes)", *rc.RekorLogIndex, protocol.Excerpt(url))
	}
	rep.Checks = append(rep.Checks, protocol.Check{Name: "rekor", Skipped: true, Detail: rekor})
	if first != nil {
		return rep, first
	}
	return rep, nil
}

func keyCheck(embedded, trusted ed25519.PublicKey) *CheckError {
	switch {
	case trusted == nil:
		return &CheckError{Reason: "no federation key given: the receipt is bound to no federation", kind: protocol.ErrNoTrustedKey}
	case !bytes.Equal(embedded, trusted):
		return &CheckError{Reason: "federation public key in receipt does not match the expected key supplied by the verifier", kind: protocol.ErrKeyNotTrusted}
	}
	return nil
}

func orderCheck(ps []Participant) *CheckError {
	for i := 1; i < len(ps); i++ {
		if ps[i-1].OperatorID >= ps[i].OperatorID {
			return &CheckError{Reason: fmt.Sprintf("participating_operators out of operator_id order or repeated at %s: the federation stores and signs them sorted", protocol.Excerpt(ps[i].OperatorID)), kind: protocol.ErrMismatch}
		}
	}
	return nil
}

func anchorIDCheck(rc *Receipt) *CheckError {
	m := anchorIDPattern.FindStringSubmatch(rc.AnchorID)
	want := ""
	for _, c := range rc.AnchoredAt {
		if c != '-' && c != ':' {
			want += string(c)
		}
	}
	if m == nil || m[1] != want {
		return &CheckError{Reason: fmt.Sprintf("anchor_id %s does not carry anchored_at %s", protocol.Excerpt(rc.AnchorID), protocol.Excerpt(rc.AnchoredAt)), kind: protocol.ErrMismatch}
	}
	return nil
}

func signatureCheck(rc *Receipt, embedded ed25519.PublicKey) *CheckError {
	payload, err := ReceiptPayload(rc)
	if err != nil {
		return &CheckError{Reason: err.Error(), kind: protocol.ErrMalformed}
	}
	sig, err := decodeBase64(rc.FederationSignature)
	if err != nil || !ed25519.Verify(embedded, payload, sig) {
		return &CheckError{Reason: "federation signature does not verify over the receipt's payload", kind: protocol.ErrSignature}
	}
	return nil
}
