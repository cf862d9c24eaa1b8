package protocol

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// Receipt is the federation's signed record of one cross-anchor.
type Receipt struct {
	// AnchorID is "anchor-YYYYMMDD-NNN".
	AnchorID string `json:"anchor_id"`
	// AnchoredAt is in the form FormatAnchoredAt writes.
	AnchoredAt string `json:"anchored_at"`
	// CrossAnchorHash is CrossAnchorHash(ParticipatingOperators, AnchoredAt) in the seed
	// form, MerkleAnchorHash of InclusionProof's root, its size and AnchoredAt in the
	// Merkle form.
	CrossAnchorHash string `json:"cross_anchor_hash"`
	// AnchorForm is "" for the seed form, whose receipt lists ParticipatingOperators,
	// and MerkleForm for the Merkle form, whose receipt carries its own Leaf and its
	// InclusionProof instead (docs/PROTOCOL.md §7).
	AnchorForm string `json:"anchor_form,omitempty"`
	// ParticipatingOperators is in hash order (see SortParticipants); the seed form only.
	ParticipatingOperators []Participant `json:"participating_operators,omitempty"`
	// Leaf is the receipt holder's leaf of the anchor's tree; the Merkle form only.
	Leaf *MerkleLeaf `json:"leaf,omitempty"`
	// InclusionProof proves Leaf in the anchor's tree; the Merkle form only.
	InclusionProof *LeafInclusionProof `json:"inclusion_proof,omitempty"`
	// TLogLogIndex is the transparency log's index of the entry (the bundle's top-level
	// logIndex, across all shards of a sharded Rekor), or nil before logging.
	TLogLogIndex *int64 `json:"tlog_log_index"`
	// TLogURL is the transparency log's URL, or nil before logging.
	TLogURL *string `json:"tlog_url"`
	// TLogPublicKeyPEM is the log's public key, a PKIX "PUBLIC KEY" PEM of an ECDSA or
	// Ed25519 key as Rekor's /api/v1/log/publicKey serves it, or nil before logging.
	// Signed, so the federation key vouches for the log.
	TLogPublicKeyPEM *string `json:"tlog_public_key_pem"`
	// TLogRecordPublicKeyPEM is the Ed25519 federation key that signed the logged
	// hashedrekord (the key that signed the anchor), or nil before logging. It differs
	// from FederationPublicKeyPEM in a receipt re-signed after a federation key rotation.
	TLogRecordPublicKeyPEM *string `json:"tlog_record_public_key_pem"`
	// FederationPublicKeyPEM is the Ed25519 SubjectPublicKeyInfo PEM of the signing key.
	FederationPublicKeyPEM string `json:"federation_public_key_pem"`
	// FederationSignature is the Ed25519 signature over ReceiptPayload, padded standard
	// base64.
	FederationSignature string `json:"federation_signature"`
	// TLogEntry is the log's proof bundle (a LogBundle), a JSON object, not signed:
	// VerifyReceipt binds it through the signed members above.
	TLogEntry json.RawMessage `json:"tlog_entry,omitempty"`
	// Legacy marks a receipt in the format signed before tlog_public_key_pem and
	// tlog_record_public_key_pem existed: it has neither member, and its tlog_entry can be
	// verified only under a log key the caller gives. SignReceipt writes a legacy receipt
	// when set; VerifyReceipt sets it on the receipt it reports.
	Legacy bool `json:"-"`
}

// MarshalJSON writes r's members in the order of the struct, without
// tlog_public_key_pem and tlog_record_public_key_pem when r.Legacy.
func (r Receipt) MarshalJSON() ([]byte, error) {
	type plain Receipt
	var v any = plain(r)
	if r.Legacy {
		v = struct {
			plain
			TLogPublicKeyPEM       *string `json:"tlog_public_key_pem,omitempty"`
			TLogRecordPublicKeyPEM *string `json:"tlog_record_public_key_pem,omitempty"`
		}{plain: plain(r)}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// Receipt members that are not part of the signed payload, and those whose presence
// tells the current format from the legacy one.
const (
	receiptSignatureMember = "federation_signature"
	receiptTLogEntryMember = "tlog_entry"
	receiptLeafMember      = "leaf"
	receiptProofMember     = "inclusion_proof"
	receiptLogKeyMember    = "tlog_public_key_pem"
	receiptRecordKeyMember = "tlog_record_public_key_pem"
)

// Check is the outcome of one step of a verification.
type Check struct {
	// Name says what was checked.
	Name string `json:"name"`
	// OK is true when the check passed.
	OK bool `json:"ok"`
	// Skipped is true when the check was not performed; OK is then false.
	Skipped bool `json:"skipped,omitempty"`
	// Detail explains a failure or a skip.
	Detail string `json:"detail,omitempty"`
}

// ReceiptReport is what VerifyReceipt found.
type ReceiptReport struct {
	// Receipt is the decoded receipt, nil if it did not parse.
	Receipt *Receipt
	// Checks are the checks run, in order, up to and including the first that failed.
	Checks []Check
}

// ReceiptPayload returns the bytes the federation signs for the receipt raw: the receipt
// payload form (canonical.ReceiptForm) of raw's top-level JSON object with the members
// federation_signature and tlog_entry removed, and the Merkle form's leaf and
// inclusion_proof, which the signed cross_anchor_hash binds through the tree's root: one
// signature serves every participant's receipt of an anchor. Every other member, known or
// not, stays in the payload, so a member added after signing makes the signature fail.
//
// raw must be one JSON object in valid UTF-8 with no duplicate keys, whose kept members
// the receipt form can represent (no fractions or exponents); otherwise the error wraps
// ErrMalformed (and canonical.ErrInvalid when the receipt form refused it). The removed
// members are only checked to be JSON.
func ReceiptPayload(raw []byte) ([]byte, error) {
	members, err := splitTopLevel(raw)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	return receiptPayload(members)
}

// unsignedMember reports whether a receipt's top-level member name is left out of its
// payload.
func unsignedMember(name string) bool {
	switch name {
	case receiptSignatureMember, receiptTLogEntryMember, receiptLeafMember, receiptProofMember:
		return true
	}
	return false
}

// receiptPayload rebuilds the object from the signed members and puts it in receipt form.
func receiptPayload(members []topMember) ([]byte, error) {
	var obj []byte
	obj = append(obj, '{')
	for _, m := range members {
		if unsignedMember(m.name) {
			if !json.Valid(m.value) {
				return nil, fmt.Errorf("%w: receipt member %q is not JSON", ErrMalformed, m.name)
			}
			continue
		}
		if len(obj) > 1 {
			obj = append(obj, ',')
		}
		obj = append(obj, m.rawKey...)
		obj = append(obj, ':')
		obj = append(obj, m.value...)
	}
	obj = append(obj, '}')
	payload, err := canonical.ReceiptForm(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: receipt payload: %w", ErrMalformed, err)
	}
	return payload, nil
}

// SignReceipt signs r with key: it sets r.FederationPublicKeyPEM to key's public key,
// r.FederationSignature to the signature over the payload of r's JSON (see ReceiptPayload)
// and returns the receipt's final JSON, indented. It refuses, with VerifyReceipt's error,
// a receipt that VerifyReceipt would refuse under key's public half (so sort the
// participants and compute the cross-anchor hash first), and a key that is not 64 bytes
// (ErrMalformed). r.TLogEntry, if set, is carried unsigned; in the current format (r.Legacy
// false) it must then verify under r.TLogPublicKeyPEM, as VerifyReceipt requires, so a
// receipt is never signed over a log entry it does not bind.
func SignReceipt(r *Receipt, key ed25519.PrivateKey) ([]byte, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: Ed25519 private key is %d bytes, want %d", ErrMalformed, len(key), ed25519.PrivateKeySize)
	}
	pub := key.Public().(ed25519.PublicKey)
	pemText, err := MarshalPublicKeyPEM(pub)
	if err != nil {
		return nil, err
	}
	r.FederationPublicKeyPEM = string(pemText)
	r.FederationSignature = ""
	unsigned, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("%w: receipt: %w", ErrMalformed, err)
	}
	payload, err := ReceiptPayload(unsigned)
	if err != nil {
		return nil, err
	}
	r.FederationSignature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, payload))
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("%w: receipt: %w", ErrMalformed, err)
	}
	if _, err := VerifyReceipt(out.Bytes(), pub); err != nil {
		return nil, fmt.Errorf("receipt not signed: %w", err)
	}
	return out.Bytes(), nil
}

// ReceiptVerifyOptions says which keys VerifyReceiptWith trusts.
type ReceiptVerifyOptions struct {
	// FederationKey is the trusted federation key. Nil fails "trusted_key" with
	// ErrNoTrustedKey: the receipt is then bound to no federation.
	FederationKey ed25519.PublicKey
	// LogKey, when not nil, is the transparency log key the caller trusts
	// (*ecdsa.PublicKey or ed25519.PublicKey): a current-format receipt must name it in
	// tlog_public_key_pem, and a legacy receipt's tlog_entry is verified under it.
	LogKey crypto.PublicKey
}

// VerifyReceipt is VerifyReceiptWith with trusted as the federation key and no log key.
func VerifyReceipt(raw []byte, trusted ed25519.PublicKey) (*ReceiptReport, error) {
	return VerifyReceiptWith(raw, ReceiptVerifyOptions{FederationKey: trusted})
}

// VerifyReceiptWith checks the receipt raw and returns a report of the checks, in order,
// stopping at the first failure (the report is returned in every case):
//
//   - "parse": raw is one JSON object with anchor_id ("anchor-YYYYMMDD-NNN"), anchored_at
//     (see ParseAnchoredAt), cross_anchor_hash (64 lowercase hex), participating_operators
//     (a non-empty array of objects with exactly the members operator_id and
//     chain_signature, of the shapes CrossAnchorHash requires), tlog_log_index (a
//     non-negative integer or null; "-0" is refused), tlog_url (a string or null),
//     federation_public_key_pem (an Ed25519 key, see ParsePublicKeyPEM),
//     federation_signature (canonical padded base64 of 64 bytes), an optional tlog_entry
//     object, and a payload ReceiptPayload accepts. A current-format receipt also has
//     tlog_public_key_pem (see ParseLogPublicKeyPEM) and tlog_record_public_key_pem (an
//     Ed25519 key), each a string or null; tlog_log_index, tlog_url and both keys are all
//     null or all non-null, and tlog_entry is present exactly when they are non-null. A
//     legacy receipt has neither key member. Anything else is ErrMalformed.
//   - "participants_order": operator_ids strictly ascend. Else a *MismatchError.
//   - "cross_anchor_hash": the recomputed hash equals the stated one. Else a
//     *MismatchError with Field "cross_anchor_hash".
//   - "federation_signature": the signature verifies over the payload under
//     federation_public_key_pem. Else ErrSignature.
//   - "trusted_key": that key equals opts.FederationKey. Else ErrKeyNotTrusted. With no
//     key the check fails with the detail "self-consistent but bound to no trusted key"
//     and the error wraps ErrNoTrustedKey: the receipt proves nothing about the federation.
//   - "tlog_entry": see verifyReceiptLog. In a current-format receipt a present tlog_entry
//     is always verified, under the log key the receipt signs (which must equal
//     opts.LogKey when given, else ErrKeyNotTrusted). A legacy receipt's tlog_entry is
//     verified only under opts.LogKey; without one the check is skipped, and the caller
//     must not rely on tlog_log_index, tlog_url or tlog_entry. No entry yet: skipped.
//
// Unknown top-level members are allowed but signed, so one added after signing fails
// "federation_signature".
func VerifyReceiptWith(raw []byte, opts ReceiptVerifyOptions) (*ReceiptReport, error) {
	rep := &ReceiptReport{}
	fail := func(name string, err error) (*ReceiptReport, error) {
		rep.Checks = append(rep.Checks, Check{Name: name, Detail: err.Error()})
		return rep, err
	}
	pass := func(name, detail string) {
		rep.Checks = append(rep.Checks, Check{Name: name, OK: true, Detail: detail})
	}

	p, err := parseReceipt(raw)
	if err != nil {
		return fail("parse", err)
	}
	rep.Receipt = p.receipt
	pass("parse", "")

	if p.receipt.AnchorForm == MerkleForm {
		if err := checkMerkleReceipt(p.receipt, pass); err != nil {
			return fail(err.check, err.err)
		}
	} else if err := checkSeedReceipt(p.receipt, pass); err != nil {
		return fail(err.check, err.err)
	}

	if !ed25519.Verify(p.key, p.payload, p.signature) {
		return fail("federation_signature", fmt.Errorf("%w: federation_signature over the receipt payload", ErrSignature))
	}
	pass("federation_signature", "signed by "+Fingerprint(p.key))

	switch trusted := opts.FederationKey; {
	case trusted == nil:
		err := fmt.Errorf("%w: receipt is self-consistent but bound to no trusted key", ErrNoTrustedKey)
		rep.Checks = append(rep.Checks, Check{Name: "trusted_key", Detail: "self-consistent but bound to no trusted key"})
		return rep, err
	case !p.key.Equal(trusted):
		return fail("trusted_key", fmt.Errorf("%w: receipt signed by %s, trusted key is %s", ErrKeyNotTrusted, Fingerprint(p.key), Fingerprint(trusted)))
	}
	pass("trusted_key", "")

	check, err := verifyReceiptLog(p, opts.LogKey)
	rep.Checks = append(rep.Checks, check)
	return rep, err
}

// parsedReceipt is a receipt with its decoded keys, signature and payload.
type parsedReceipt struct {
	receipt   *Receipt
	key       ed25519.PublicKey
	signature []byte
	payload   []byte
	logKey    crypto.PublicKey  // tlog_public_key_pem; nil when null or legacy
	recordKey ed25519.PublicKey // tlog_record_public_key_pem; nil when null or legacy
}

// parseReceipt performs the "parse" check of VerifyReceipt.
func parseReceipt(raw []byte) (*parsedReceipt, error) {
	members, err := splitTopLevel(raw)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	payload, err := receiptPayload(members)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		byName[m.name] = m.value
	}
	r := &Receipt{}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"anchor_id", &r.AnchorID},
		{"anchored_at", &r.AnchoredAt},
		{"cross_anchor_hash", &r.CrossAnchorHash},
		{"federation_public_key_pem", &r.FederationPublicKeyPEM},
		{receiptSignatureMember, &r.FederationSignature},
	} {
		if *f.dst, err = jsonStringMember(byName, f.name); err != nil {
			return nil, err
		}
	}
	if !wellFormedAnchorID(r.AnchorID) {
		return nil, fmt.Errorf("%w: anchor_id %s is not anchor-YYYYMMDD-NNN", ErrMalformed, Quote(r.AnchorID))
	}
	if _, err := ParseAnchoredAt(r.AnchoredAt); err != nil {
		return nil, err
	}
	if !isHex(r.CrossAnchorHash, 64) {
		return nil, fmt.Errorf("%w: cross_anchor_hash is not 64 lowercase hex characters", ErrMalformed)
	}
	if err := parseAnchorForm(r, byName); err != nil {
		return nil, err
	}
	if r.TLogLogIndex, err = logIndexMember(byName); err != nil {
		return nil, err
	}
	if r.TLogURL, err = nullableStringMember(byName, "tlog_url"); err != nil {
		return nil, err
	}
	if v, ok := byName[receiptTLogEntryMember]; ok {
		if v[0] != '{' {
			return nil, fmt.Errorf("%w: tlog_entry is not a JSON object", ErrMalformed)
		}
		r.TLogEntry = v
	}
	key, err := ParsePublicKeyPEM([]byte(r.FederationPublicKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("federation_public_key_pem: %w", err)
	}
	sig, err := decodeCanonicalBase64(receiptSignatureMember, r.FederationSignature, ed25519.SignatureSize)
	if err != nil {
		return nil, err
	}
	p := &parsedReceipt{receipt: r, key: key, signature: sig, payload: payload}
	if err := parseLogMembers(p, byName); err != nil {
		return nil, err
	}
	return p, nil
}
