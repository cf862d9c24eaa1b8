package protocol

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// VerifyOptions says what an export is verified against. Give Secret, PublicKey, or both;
// with neither, VerifyExport checks everything it can and returns ErrNoTrustedKey.
type VerifyOptions struct {
	// Secret is the chain's HMAC key. With it every hmac_hash and the chain_signature
	// are recomputed.
	Secret []byte
	// PublicKey is the operator key the caller trusts. With it the envelope must name
	// this key. A key of small order is refused with ErrMalformed, as every parser of
	// keys in this package refuses it.
	PublicKey ed25519.PublicKey
}

// ExportReport describes a verified export.
type ExportReport struct {
	Header *ExportHeader
	// Envelope is the header as read with its signature and the exact bytes the
	// signature covers (Envelope.Header is *Header), for a caller that keeps the signed
	// header, such as a federation recording a submission.
	Envelope *SignedHeader
	// Entries is how many entries the export carried; 0 for a header-only export.
	Entries int64
	// HMACsChecked is true when the export carried entries and every hmac_hash and the
	// chain_signature were recomputed with the secret. It is false for a header-only
	// export, which has no hmac_hash to recompute, even with the secret.
	HMACsChecked bool
	// ChainSignatureChecked is true when chain_signature was recomputed with the secret.
	ChainSignatureChecked bool
	// KeyTrusted is true when the envelope was signed by VerifyOptions.PublicKey.
	KeyTrusted bool
	// Checks are the checks run, in order (see the Check* names), up to and including the
	// first that failed; a check that could not run is Skipped, with the reason.
	Checks []Check
	// Authenticated are the header members (of HeaderMembers) that something the caller
	// trusts vouches for: the trusted key's envelope signature covers them all; the secret
	// covers entry_count, last_seq (equal to it), last_hmac_hash and chain_signature
	// through chain_signature, and with entries also first_seq, first_prev_hash and
	// entries_root, which are recomputed from the HMAC-checked entries. Set only when
	// VerifyExport returns no error.
	Authenticated []string
	// Unauthenticated are the other header members: nothing the caller trusts vouches for
	// them, though their syntax was checked. Empty exactly when the whole header is
	// authenticated. Set only when VerifyExport returns no error.
	Unauthenticated []string
	// Import says what was checked of the entries the chain imported from the original
	// product (docs/PROTOCOL.md §2), when the export carries its bridge record at seq 1;
	// nil otherwise (an export that carries an imported entry without its bridge fails).
	Import *ImportReport
}

// Names of the checks in an ExportReport, in the order VerifyExport runs them.
const (
	// CheckEntries: every entry's shape, seq, body hash, canonical body, columns and link,
	// and the rules of imported entries (ImportCheck).
	CheckEntries = "entries"
	// CheckHMACs: every entry's hmac_hash, recomputed with the secret.
	CheckHMACs = "hmacs"
	// CheckHeaderAgainstEntries: first_seq, last_seq, first_prev_hash, last_hmac_hash and
	// entries_root against the entries (and first_prev_hash against genesis for seq 1).
	CheckHeaderAgainstEntries = "header_vs_entries"
	// CheckChainSignature: chain_signature recomputed with the secret.
	CheckChainSignature = "chain_signature"
	// CheckEnvelopeSignature: the Ed25519 signature against the key the envelope names.
	CheckEnvelopeSignature = "envelope_signature"
	// CheckTrustedKey: the envelope's key is VerifyOptions.PublicKey.
	CheckTrustedKey = "trusted_key"
)

// HeaderMembers are the header members an ExportReport says are authenticated or not,
// in the order it lists them. format and version are constants, checked by value.
var HeaderMembers = []string{"exported_at", "entry_count", "first_seq", "last_seq", "first_prev_hash", "last_hmac_hash", "chain_signature", "entries_root"}

// secretMembers are the header members the secret authenticates through
// chain_signature alone, with no entries.
var secretMembers = map[string]bool{"entry_count": true, "last_seq": true, "last_hmac_hash": true, "chain_signature": true}

// secretEntryMembers are the members the secret authenticates besides those when the
// export carries entries, whose HMACs bind them.
var secretEntryMembers = map[string]bool{"first_seq": true, "first_prev_hash": true, "entries_root": true}

// pass, skip and fail record a check.
func (r *ExportReport) pass(name, detail string) {
	r.Checks = append(r.Checks, Check{Name: name, OK: true, Detail: detail})
}

func (r *ExportReport) skip(name, detail string) {
	r.Checks = append(r.Checks, Check{Name: name, Skipped: true, Detail: detail})
}

func (r *ExportReport) fail(name string, err error) error {
	r.Checks = append(r.Checks, Check{Name: name, Detail: err.Error()})
	return err
}

// classify fills Authenticated and Unauthenticated. With the secret alone, entries_root
// is authenticated only when every column of every entry carried is bound by something
// the secret covers: a span body's columns by the body, an imported entry's by the bridge
// record's legacy_rows_sha256, which only a verification that read every imported entry
// checks (columnsUnbound false).
func (r *ExportReport) classify(secret, columnsUnbound bool) {
	for _, m := range HeaderMembers {
		byEntries := r.Entries > 0 && secretEntryMembers[m] && (m != "entries_root" || !columnsUnbound)
		if r.KeyTrusted || (secret && (secretMembers[m] || byEntries)) {
			r.Authenticated = append(r.Authenticated, m)
		} else {
			r.Unauthenticated = append(r.Unauthenticated, m)
		}
	}
}

// VerifyExport reads an export from r as a stream and verifies it. It is the one export
// verifier: cairn verify-export, the chain service's POST /api/export/verify and the
// federation's submit all call it. For every entry, in order, it checks the entry's
// shape, that seq follows the previous one, that SHA-256 of the body equals
// canonical_hash, that the columns agree with the body, that prev_hash equals the
// previous entry's hmac_hash, (with a secret) the entry's HMAC, and the rules of imported
// entries (ImportCheck: an imported body only behind the bridge record at seq 1 that
// imports it, and their columns against the bridge's digest). Then it
// checks the header against the entries (first and last seq, first_prev_hash,
// last_hmac_hash, entries_root), chain_signature (with a secret), the envelope signature
// against the key the envelope names, and that key against opts.PublicKey.
//
// The export is read to its end before any verdict (docs/PROTOCOL.md §3): input that is
// not a well-formed export returns ErrMalformed wherever the fault lies, even after an
// entry that failed. Otherwise the first failure is returned: an *EntryError naming the
// seq and a Reason* for the first entry that failed, a *MismatchError for a header value,
// ErrSignature, or ErrKeyNotTrusted. A header-only export passes the header
// checks that need no entries.
//
// The caller must still check that the export continues what it already holds (see
// CheckContinuity) and decide whether it trusts the key.
func VerifyExport(r io.Reader, opts VerifyOptions) (*ExportReport, error) {
	return verifyExport(r, opts, exportBufferSize)
}

// verifyExport is VerifyExport reading bufferSize bytes of r at a time.
func verifyExport(r io.Reader, opts VerifyOptions, bufferSize int) (*ExportReport, error) {
	if opts.Secret != nil && len(opts.Secret) < MinSecretBytes {
		return nil, fmt.Errorf("%w: chain secret is %d bytes, want at least %d", ErrMalformed, len(opts.Secret), MinSecretBytes)
	}
	if opts.PublicKey != nil {
		if err := checkKeyOrder(opts.PublicKey); err != nil {
			return nil, fmt.Errorf("trusted key: %w", err)
		}
	}
	v := entryVerifier{tree: newTree(), leafHasher: sha256.New(), imports: NewImportCheck(nil, 1, opts.Secret)}
	if opts.Secret != nil {
		v.mac = hmac.New(sha256.New, opts.Secret)
	}
	v.checker = NewEntryChecker(v.mac)
	// The whole export is read before any verdict: a malformed export is malformed
	// wherever the fault lies, even after an entry that failed (docs/PROTOCOL.md §3).
	x := newExportReader(r, bufferSize)
	var e Entry
	var entryErr error
	for {
		err := x.Next(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if entryErr == nil {
			entryErr = v.add(&e)
		}
	}
	sh, err := x.Header()
	if err != nil {
		return nil, err
	}
	if entryErr != nil {
		return nil, entryErr
	}
	h := &sh.Header
	report := &ExportReport{Header: h, Envelope: sh, Entries: v.span.count, HMACsChecked: v.mac != nil && v.span.count > 0,
		Import: v.imports.Report()}
	if x.HasEntries() && v.span.count == 0 {
		return report, report.fail(CheckEntries, &MismatchError{Field: "entries", Want: fmt.Sprintf("%d entries", h.LastSeq-h.FirstSeq+1), Got: "none"})
	}
	if v.span.count > 0 {
		report.pass(CheckEntries, fmt.Sprintf("%d entries", v.span.count)+importDetail(report.Import, v.imports.imported))
	} else {
		report.skip(CheckEntries, "header-only export: no entries")
	}
	switch {
	case report.HMACsChecked:
		report.pass(CheckHMACs, fmt.Sprintf("%d hmac_hash recomputed", v.span.count))
	case v.mac != nil:
		report.skip(CheckHMACs, "header-only export: no hmac_hash to recompute")
	default:
		report.skip(CheckHMACs, "no secret")
	}
	if err := v.checkHeader(h); err != nil {
		return report, report.fail(CheckHeaderAgainstEntries, err)
	}
	if v.span.count > 0 {
		report.pass(CheckHeaderAgainstEntries, "")
	} else {
		report.skip(CheckHeaderAgainstEntries, "header-only export: first_seq, first_prev_hash and entries_root have no entries to be checked against")
	}
	if opts.Secret != nil {
		want := ChainSignature(opts.Secret, h.LastHMACHash, h.EntryCount)
		if !hmac.Equal([]byte(want), []byte(h.ChainSignature)) {
			// The recomputed signature is not kept: it is what a forger needs.
			return report, report.fail(CheckChainSignature, &MismatchError{Field: "chain_signature", Got: h.ChainSignature})
		}
		report.ChainSignatureChecked = true
		report.pass(CheckChainSignature, "covers last_hmac_hash and entry_count")
	} else {
		report.skip(CheckChainSignature, "no secret")
	}
	signer, err := verifyEnvelope(&sh.Signature, sh.Signed)
	if err != nil {
		return report, report.fail(CheckEnvelopeSignature, err)
	}
	report.pass(CheckEnvelopeSignature, "signed by "+OperatorID(signer))
	switch {
	case opts.PublicKey != nil && !signer.Equal(opts.PublicKey):
		return report, report.fail(CheckTrustedKey, fmt.Errorf("%w: export signed by %s, trusted key is %s", ErrKeyNotTrusted, OperatorID(signer), OperatorID(opts.PublicKey)))
	case opts.PublicKey != nil:
		report.KeyTrusted = true
		report.pass(CheckTrustedKey, "")
	case opts.Secret == nil:
		return report, report.fail(CheckTrustedKey, fmt.Errorf("%w: export is self-consistent under %s", ErrNoTrustedKey, OperatorID(signer)))
	default:
		report.skip(CheckTrustedKey, "no public key: the envelope signature vouches for nothing")
	}
	report.classify(opts.Secret != nil, v.imports.columnsUnbound())
	return report, nil
}

// importDetail says, for the entries check, what was checked of imported entries.
func importDetail(im *ImportReport, imported int64) string {
	switch {
	case im == nil:
		return ""
	case imported == 0:
		return "; entry 1 is a bridge record, and no imported entry is carried"
	case !im.ColumnsChecked:
		return fmt.Sprintf("; %d entries imported behind the bridge record, their columns not checked: the export does not hold all of %d..%d", imported, im.Bridge.FirstSeq, im.Bridge.LastSeq)
	case im.LegacyHMACsRederived:
		return fmt.Sprintf("; entries %d..%d imported behind the bridge record, their columns checked against legacy_rows_sha256, and the legacy chain re-derived with the secret", im.Bridge.FirstSeq, im.Bridge.LastSeq)
	}
	return fmt.Sprintf("; entries %d..%d imported behind the bridge record, their columns checked against legacy_rows_sha256 (the legacy chain is proved by its export, legacy_export_sha256)", im.Bridge.FirstSeq, im.Bridge.LastSeq)
}

// parse checks the envelope signature's shape: algorithm SignatureAlgorithm, public_key an
// Ed25519 key in the exact PEM form ParsePublicKeyPEM reads (not of small order), value
// canonical padded base64 of exactly 64 bytes. Else an error wrapping ErrMalformed: a
// signature of another length is a fault of shape, never a signature that fails.
func (sig *EnvelopeSignature) parse() (ed25519.PublicKey, []byte, error) {
	if sig.Algorithm != SignatureAlgorithm {
		return nil, nil, fmt.Errorf("%w: signature algorithm %s, want %q", ErrMalformed, Quote(sig.Algorithm), SignatureAlgorithm)
	}
	pub, err := ParsePublicKeyPEM([]byte(sig.PublicKey))
	if err != nil {
		return nil, nil, fmt.Errorf("signature public_key: %w", err)
	}
	value, err := decodeCanonicalBase64("signature value", sig.Value, ed25519.SignatureSize)
	if err != nil {
		return nil, nil, err
	}
	return pub, value, nil
}

// verifyEnvelope checks the envelope signature over signed against the key it names and
// returns that key. Its shape was checked at step 0 (finishHeader); it is parsed again
// here, which costs a few microseconds an export.
func verifyEnvelope(sig *EnvelopeSignature, signed []byte) (ed25519.PublicKey, error) {
	pub, value, err := sig.parse()
	if err != nil {
		return nil, err
	}
	if !ed25519.Verify(pub, signed, value) {
		return nil, fmt.Errorf("%w: envelope signature by %s", ErrSignature, OperatorID(pub))
	}
	return pub, nil
}

// entryVerifier checks entries one by one and keeps what the header is checked against.
type entryVerifier struct {
	mac        hash.Hash // keyed with the secret; nil without one
	checker    *EntryChecker
	imports    *ImportCheck
	leafHasher hash.Hash
	tree       *compact.Range
	leaf       []byte
	span       entrySpan
}

// add verifies e and folds it into the running Merkle root.
func (v *entryVerifier) add(e *Entry) error {
	if err := v.span.follows(e); err != nil {
		return err
	}
	kind, err := v.checker.Check(e)
	if err != nil {
		return err
	}
	if err := v.imports.Check(e, kind); err != nil {
		return err
	}
	v.leaf = appendLeaf(append(v.leaf[:0], rfc6962.RFC6962LeafHashPrefix), e)
	v.leafHasher.Reset()
	v.leafHasher.Write(v.leaf)
	if err := v.tree.Append(v.leafHasher.Sum(nil), nil); err != nil {
		return err
	}
	v.span.add(e)
	return nil
}

// checkHeader compares the header with the entries read, if any.
func (v *entryVerifier) checkHeader(h *ExportHeader) error {
	if h.FirstSeq == 1 && h.FirstPrevHash != GenesisPrevHash {
		return &MismatchError{Field: "first_prev_hash", Want: GenesisPrevHash, Got: h.FirstPrevHash}
	}
	if v.span.count == 0 {
		return nil // header-only: the header is all there is to check
	}
	root, err := v.tree.GetRootHash(nil)
	if err != nil {
		return err
	}
	for _, c := range [...]struct{ field, want, got string }{
		{"first_seq", strconv.FormatInt(v.span.first.Seq, 10), strconv.FormatInt(h.FirstSeq, 10)},
		{"last_seq", strconv.FormatInt(v.span.last.Seq, 10), strconv.FormatInt(h.LastSeq, 10)},
		{"first_prev_hash", v.span.first.PrevHash, h.FirstPrevHash},
		{"last_hmac_hash", v.span.last.HMACHash, h.LastHMACHash},
		{"entries_root", hex.EncodeToString(root), h.EntriesRoot},
	} {
		if c.want != c.got {
			return &MismatchError{Field: c.field, Want: c.want, Got: c.got}
		}
	}
	return nil
}
