package protocol

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// verifyReceiptLog performs VerifyReceiptWith's "tlog_entry" check on a receipt whose
// signature and federation key have been verified, and returns the check:
//
//   - no tlog_entry: skipped, "no log entry yet".
//   - current format: logKey, when not nil, must equal tlog_public_key_pem (else
//     ErrKeyNotTrusted); then the entry must verify under tlog_public_key_pem, signed
//     entry timestamp required, with tlog_record_public_key_pem as the record's key.
//   - legacy format without logKey: fails with ErrNoTrustedKey, "legacy receipt: its
//     tlog_entry is bound to no log key; pass --log-key". Nothing in the receipt says
//     which log's key to check it under, so a present entry is never passed unverified.
//   - legacy format with logKey: the entry must verify under logKey with
//     federation_public_key_pem as the record's key; a bundle without a signed entry
//     timestamp is accepted (the embedded log wrote none then) and the detail says that
//     its integratedTime is not authenticated.
func verifyReceiptLog(p *parsedReceipt, logKey crypto.PublicKey) (Check, error) {
	r := p.receipt
	const name = "tlog_entry"
	fail := func(err error) (Check, error) { return Check{Name: name, Detail: err.Error()}, err }
	switch {
	case r.TLogEntry == nil:
		return Check{Name: name, Skipped: true, Detail: "no log entry yet"}, nil
	case r.Legacy && logKey == nil:
		return fail(fmt.Errorf("%w: legacy receipt: its tlog_entry is bound to no log key; pass --log-key", ErrNoTrustedKey))
	}
	key, recordKey, allowMissingSET := p.logKey, p.recordKey, false
	if r.Legacy {
		key, recordKey, allowMissingSET = logKey, p.key, true
	} else if logKey != nil {
		want, err := LogID(logKey)
		if err != nil {
			return fail(err)
		}
		if got, _ := LogID(p.logKey); got != want {
			return fail(fmt.Errorf("%w: the receipt names log %s, the trusted log key is %s", ErrKeyNotTrusted, got, want))
		}
	}
	b, err := verifyLogLeg(r, LogVerifyOptions{Key: key, AllowMissingSET: allowMissingSET}, recordKey)
	if err != nil {
		return fail(err)
	}
	logID, _ := LogID(key)
	detail := fmt.Sprintf("log %s recorded the anchor at index %d", logID, b.LogIndex)
	body, _ := decodeCanonicalBase64("body", b.Body, -1) // verified above
	switch {
	case IsRekorV2Body(body):
		detail += fmt.Sprintf("; a Rekor v2 entry, its time in %d RFC 3161 timestamps not checked here (Sigstore's tools check them against the federation's trusted root)",
			len(b.Verification.RFC3161Timestamps))
	case b.Verification.SignedEntryTimestamp == "":
		detail += "; no signed entry timestamp: integratedTime is not authenticated"
	default:
		detail += ", integrated at " + time.Unix(b.IntegratedTime, 0).UTC().Format(time.RFC3339) + " (signed entry timestamp)"
	}
	if !recordKey.Equal(p.key) {
		detail += "; the logged record is signed by federation key " + Fingerprint(recordKey) + ", which the receipt's signing key vouches for (a receipt re-signed after a key rotation)"
	}
	if r.Legacy {
		detail += "; legacy receipt, verified under --log-key"
	}
	return Check{Name: name, OK: true, Detail: detail}, nil
}

// VerifyReceiptLog checks offline that the log holding opts.Key recorded r's
// cross-anchor: r's tlog_entry is a LogBundle that VerifyLogBundle accepts under opts,
// whose top-level logIndex is r's tlog_log_index, and whose body is the hashedrekord of
// CrossAnchorLogContent(r.CrossAnchorHash) under r's tlog_record_public_key_pem, or its
// federation key in a legacy receipt. A receipt without a tlog_entry is ErrNotIncluded:
// the log leg is not done. It checks nothing of r's signature: call VerifyReceiptWith,
// which runs this check itself.
func VerifyReceiptLog(r *Receipt, opts LogVerifyOptions) error {
	if r.TLogEntry == nil {
		return fmt.Errorf("%w: the receipt has no tlog_entry yet", ErrNotIncluded)
	}
	keyPEM := r.FederationPublicKeyPEM
	if r.TLogRecordPublicKeyPEM != nil {
		keyPEM = *r.TLogRecordPublicKeyPEM
	}
	recordKey, err := ParsePublicKeyPEM([]byte(keyPEM))
	if err != nil {
		return err
	}
	_, err = verifyLogLeg(r, opts, recordKey)
	return err
}

// verifyLogLeg decodes r's tlog_entry, which must be exactly a LogBundle's JSON (the
// member names of the format, each once; signedEntryTimestamp absent rather than empty;
// hashes an array, [] when the proof is empty, never null),
// and checks it as VerifyReceiptLog states.
func verifyLogLeg(r *Receipt, opts LogVerifyOptions, recordKey ed25519.PublicKey) (*LogBundle, error) {
	dec := json.NewDecoder(bytes.NewReader(r.TLogEntry))
	dec.DisallowUnknownFields()
	var b LogBundle
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%w: tlog_entry: %w", ErrMalformed, err)
	}
	// encoding/json matches member names case-insensitively and keeps the last of
	// duplicates: require the bundle to be exactly what it decoded to, so that every
	// reader sees the same bundle.
	want, err := canonical.Transform(r.TLogEntry)
	if err != nil {
		return nil, fmt.Errorf("%w: tlog_entry: %w", ErrMalformed, err)
	}
	if got, err := canonical.Marshal(&b); err != nil || !bytes.Equal(got, want) {
		return nil, fmt.Errorf("%w: tlog_entry has members other than a proof bundle's, in another case, repeated or empty", ErrMalformed)
	}
	if b.Verification.InclusionProof.Hashes == nil { // null decodes to nil; [] does not
		return nil, fmt.Errorf("%w: tlog_entry's inclusion proof hashes are null, not an array", ErrMalformed)
	}
	if r.TLogLogIndex == nil || *r.TLogLogIndex != b.LogIndex {
		got := "null"
		if r.TLogLogIndex != nil {
			got = strconv.FormatInt(*r.TLogLogIndex, 10)
		}
		return nil, &MismatchError{Field: "tlog_log_index", Want: strconv.FormatInt(b.LogIndex, 10), Got: got}
	}
	body, err := VerifyLogBundle(&b, opts)
	if err != nil {
		return nil, err
	}
	content, err := CrossAnchorLogContent(r.CrossAnchorHash)
	if err != nil {
		return nil, err
	}
	if err := VerifyHashedRekord(body, content, recordKey); err != nil {
		return nil, err
	}
	return &b, nil
}
