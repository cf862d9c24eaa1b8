package protocol

import (
	"crypto"
	"errors"
)

// Receipt legs, strongest last. A receipt's strength is how many of its legs verify on
// their own: a client holding two copies of one anchor's receipt keeps the stronger, so a
// federation that serves a weaker copy later (its log proof dropped) never costs the
// client the proof it holds.
const (
	// LegsNone: the receipt does not parse, its hash does not recompute or its
	// federation signature does not verify.
	LegsNone = 0
	// LegsSigned: the federation's signature verifies; no log proof verifies (none yet,
	// or a tlog_entry that does not verify).
	LegsSigned = 1
	// LegsLogged: the federation's signature verifies and so does its tlog_entry.
	LegsLogged = 2
)

// ReceiptLegs returns how many legs of the receipt raw verify on their own: LegsNone,
// LegsSigned or LegsLogged. The federation signature is checked under the key the
// receipt names (federation_public_key_pem), a current-format tlog_entry under the log
// key it signs (tlog_public_key_pem), a legacy receipt's only under logKey (nil: a legacy
// tlog_entry does not count).
//
// It establishes no trust: it is for comparing copies of one anchor's receipt that the
// caller verified under the keys it trusts (VerifyReceiptWith) when it got them. Two
// copies with the same cross_anchor_hash (and, in the Merkle form, the same leaf: each
// participant's receipt of one anchor has the same hash) and a different count differ
// only in what they prove.
func ReceiptLegs(raw []byte, logKey crypto.PublicKey) int {
	rep, err := VerifyReceiptWith(raw, ReceiptVerifyOptions{})
	if !errors.Is(err, ErrNoTrustedKey) || rep.Receipt == nil {
		return LegsNone // a failure before the trust check: hash, signature or shape
	}
	key, err := ParsePublicKeyPEM([]byte(rep.Receipt.FederationPublicKeyPEM))
	if err != nil {
		return LegsNone
	}
	opts := ReceiptVerifyOptions{FederationKey: key}
	if rep.Receipt.Legacy {
		opts.LogKey = logKey
	}
	rep, err = VerifyReceiptWith(raw, opts)
	if err != nil || len(rep.Checks) == 0 {
		return LegsSigned
	}
	if last := rep.Checks[len(rep.Checks)-1]; last.Name == "tlog_entry" && last.OK {
		return LegsLogged
	}
	return LegsSigned
}
