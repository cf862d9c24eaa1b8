package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// Receipt is the federation's signed record of one cross-anchor.
type Receipt struct {
	// AnchorID is "anchor-YYYYMMDD-NNN".
	AnchorID string `json:"anchor_id"`
	// AnchoredAt is in the form FormatAnchoredAt writes.
	AnchoredAt string `json:"anchored_at"`
	// CrossAnchorHash is CrossAnchorHash(ParticipatingOperators, AnchoredAt).
	CrossAnchorHash string `json:"cross_anchor_hash"`
	// ParticipatingOperators is in hash order (see SortParticipants).
	ParticipatingOperators []Participant `json:"participating_operators"`
	// TLogLogIndex is the transparency log's index of the entry, or nil before logging.
	TLogLogIndex *int64 `json:"tlog_log_index"`
	// TLogURL is the transparency log's URL, or nil before logging.
	TLogURL *string `json:"tlog_url"`
	// FederationPublicKeyPEM is the Ed25519 SubjectPublicKeyInfo PEM of the signing key.
	FederationPublicKeyPEM string `json:"federation_public_key_pem"`
	// FederationSignature is the Ed25519 signature over ReceiptPayload, padded standard
	// base64.
	FederationSignature string `json:"federation_signature"`
	// TLogEntry is the log's proof bundle, a JSON object; it is not signed and not yet
	// verified by this package.
	TLogEntry json.RawMessage `json:"tlog_entry,omitempty"`
}

// Receipt members that are not part of the signed payload.
const (
	receiptSignatureMember = "federation_signature"
	receiptTLogEntryMember = "tlog_entry"
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
// federation_signature and tlog_entry removed. Every other member, known or not, stays in
// the payload, so a member added after signing makes the signature fail.
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

// receiptPayload rebuilds the object from the signed members and puts it in receipt form.
func receiptPayload(members []topMember) ([]byte, error) {
	var obj []byte
	obj = append(obj, '{')
	for _, m := range members {
		if m.name == receiptSignatureMember || m.name == receiptTLogEntryMember {
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
// (ErrMalformed). r.TLogEntry, if set, is carried unsigned.
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

// VerifyReceipt checks the receipt raw and returns a report of the checks, in order,
// stopping at the first failure (the report is returned in every case):
//
//   - "parse": raw is one JSON object with anchor_id ("anchor-YYYYMMDD-NNN"), anchored_at
//     (see ParseAnchoredAt), cross_anchor_hash (64 lowercase hex), participating_operators
//     (a non-empty array of objects with operator_id and chain_signature of the shapes
//     CrossAnchorHash requires), tlog_log_index (a non-negative integer or null), tlog_url
//     (a string or null), federation_public_key_pem (an Ed25519 key, see
//     ParsePublicKeyPEM), federation_signature (canonical padded base64 of 64 bytes), an
//     optional tlog_entry object, and a payload ReceiptPayload accepts. Else ErrMalformed.
//   - "participants_order": operator_ids strictly ascend. Else ErrMalformed.
//   - "cross_anchor_hash": the recomputed hash equals the stated one. Else a
//     *MismatchError with Field "cross_anchor_hash".
//   - "federation_signature": the signature verifies over the payload under
//     federation_public_key_pem. Else ErrSignature.
//   - "trusted_key": that key equals trusted. Else ErrKeyNotTrusted. With trusted nil the
//     check fails with the detail "self-consistent but bound to no trusted key" and the
//     error wraps ErrNoTrustedKey: the receipt proves nothing about the federation.
//   - "tlog_entry": always skipped here; VerifyReceiptLog checks the log proof against the
//     log's key. Until it has, the caller must not rely on tlog_log_index, tlog_url or
//     tlog_entry.
//
// Unknown members are allowed but signed, so one added after signing fails
// "federation_signature".
func VerifyReceipt(raw []byte, trusted ed25519.PublicKey) (*ReceiptReport, error) {
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

	if err := checkParticipantOrder(p.receipt.ParticipatingOperators); err != nil {
		// The list is well formed but not in the order the hash is defined over: a
		// reordered receipt does not match, rather than being unreadable.
		return fail("participants_order", &MismatchError{Field: "participating_operators", Want: "ascending operator_id order", Got: err.Error()})
	}
	pass("participants_order", fmt.Sprintf("%d operators in ascending operator_id order", len(p.receipt.ParticipatingOperators)))

	want, err := CrossAnchorHash(p.receipt.ParticipatingOperators, p.receipt.AnchoredAt)
	if err != nil {
		return fail("cross_anchor_hash", err)
	}
	if want != p.receipt.CrossAnchorHash {
		return fail("cross_anchor_hash", &MismatchError{Field: "cross_anchor_hash", Want: want, Got: p.receipt.CrossAnchorHash})
	}
	pass("cross_anchor_hash", "")

	if !ed25519.Verify(p.key, p.payload, p.signature) {
		return fail("federation_signature", fmt.Errorf("%w: federation_signature over the receipt payload", ErrSignature))
	}
	pass("federation_signature", "signed by "+Fingerprint(p.key))

	switch {
	case trusted == nil:
		err := fmt.Errorf("%w: receipt is self-consistent but bound to no trusted key", ErrNoTrustedKey)
		rep.Checks = append(rep.Checks, Check{Name: "trusted_key", Detail: "self-consistent but bound to no trusted key"})
		return rep, err
	case !p.key.Equal(trusted):
		return fail("trusted_key", fmt.Errorf("%w: receipt signed by %s, trusted key is %s", ErrKeyNotTrusted, Fingerprint(p.key), Fingerprint(trusted)))
	}
	pass("trusted_key", "")

	detail := "no log entry yet"
	if p.receipt.TLogEntry != nil {
		detail = "log proof not verified: needs the log's key (VerifyReceiptLog)"
	}
	rep.Checks = append(rep.Checks, Check{Name: "tlog_entry", Skipped: true, Detail: detail})
	return rep, nil
}

// parsedReceipt is a receipt with its decoded key, signature and payload.
type parsedReceipt struct {
	receipt   *Receipt
	key       ed25519.PublicKey
	signature []byte
	payload   []byte
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
		return nil, fmt.Errorf("%w: anchor_id %q is not anchor-YYYYMMDD-NNN", ErrMalformed, r.AnchorID)
	}
	if _, err := ParseAnchoredAt(r.AnchoredAt); err != nil {
		return nil, err
	}
	if !isHex(r.CrossAnchorHash, 64) {
		return nil, fmt.Errorf("%w: cross_anchor_hash is not 64 lowercase hex characters", ErrMalformed)
	}
	if r.ParticipatingOperators, err = participantsMember(byName["participating_operators"]); err != nil {
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
	return &parsedReceipt{receipt: r, key: key, signature: sig, payload: payload}, nil
}

func jsonStringMember(m map[string]json.RawMessage, name string) (string, error) {
	v, ok := m[name]
	if !ok {
		return "", fmt.Errorf("%w: receipt member %s is missing", ErrMalformed, name)
	}
	return jsonString(name, v)
}

func nullableStringMember(m map[string]json.RawMessage, name string) (*string, error) {
	v, ok := m[name]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: receipt member %s is missing", ErrMalformed, name)
	case string(v) == "null":
		return nil, nil
	}
	s, err := jsonString(name, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is neither a JSON string nor null", ErrMalformed, name)
	}
	return &s, nil
}

func logIndexMember(m map[string]json.RawMessage) (*int64, error) {
	v, ok := m["tlog_log_index"]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: receipt member tlog_log_index is missing", ErrMalformed)
	case string(v) == "null":
		return nil, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 || string(v) == "-0" {
		return nil, fmt.Errorf("%w: tlog_log_index is neither a non-negative 64-bit integer nor null", ErrMalformed)
	}
	return &n, nil
}

func participantsMember(v json.RawMessage) ([]Participant, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: receipt member participating_operators is missing", ErrMalformed)
	}
	var elems []map[string]json.RawMessage
	if v[0] != '[' || json.Unmarshal(v, &elems) != nil {
		return nil, fmt.Errorf("%w: participating_operators is not an array of JSON objects", ErrMalformed)
	}
	ps := make([]Participant, len(elems))
	for i, obj := range elems {
		if obj == nil {
			return nil, fmt.Errorf("%w: participant %d is not a JSON object", ErrMalformed, i)
		}
		var err error
		if ps[i].OperatorID, err = jsonStringMember(obj, "operator_id"); err != nil {
			return nil, fmt.Errorf("participant %d: %w", i, err)
		}
		if ps[i].ChainSignature, err = jsonStringMember(obj, "chain_signature"); err != nil {
			return nil, fmt.Errorf("participant %d: %w", i, err)
		}
	}
	if err := checkParticipants(ps); err != nil {
		return nil, err
	}
	return ps, nil
}
