package bijotel

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// VerifyOptions are the trust anchors VerifyExport checks an export against.
type VerifyOptions struct {
	// Secret is the chain's HMAC secret (the hex of BIJOTEL_HMAC_SECRET, decoded), at
	// least MinSecretBytes long; nil for none. Only the secret binds the entries.
	Secret []byte
	// PublicKey is the operator's Ed25519 key as the auditor holds it; nil for none.
	PublicKey ed25519.PublicKey
}

// Trust modes of a verification: which anchors were given.
const (
	ModeHMAC      = "hmac"
	ModeSignature = "signature"
	ModeBoth      = "both"
	ModeNone      = "none"
)

// Verdicts of a verification.
const (
	// VerdictValid: the secret was given and every check passed; the entries are bound.
	VerdictValid = "valid"
	// VerdictNotBound: only the public key was given and every check passed. The signature
	// covers only chain_signature (§5.1.1): bodies and tail are not bound.
	VerdictNotBound = "signature valid, entries not bound"
	// VerdictUnbound: no trust anchor (or only a key for an unsigned v1 export); the
	// export is consistent in itself, which a forger can arrange.
	VerdictUnbound = "consistent, bound to nothing"
	// VerdictInvalid: a check failed.
	VerdictInvalid = "invalid"
)

// ErrEntriesNotBound is wrapped by the error of an export checked with the public key
// alone that passed every check: what the signature proves does not reach the entries.
// It wraps protocol.ErrMismatch.
var ErrEntriesNotBound = fmt.Errorf("%w: entries not bound", protocol.ErrMismatch)

// CheckError is the first check of an export or receipt that failed, with the original's
// reason where it has one (LEGACY-BIJOTEL.md §2.4, §3.6). It wraps protocol.ErrMismatch,
// protocol.ErrSignature, protocol.ErrKeyNotTrusted, protocol.ErrNoTrustedKey,
// ErrEntriesNotBound or protocol.ErrMalformed. No reason holds a MAC or signature that
// would pass.
type CheckError struct {
	Check  string // the check's name in the report's Checks
	Seq    int64  // the entry's seq, 0 when the check is not about an entry
	Reason string
	kind   error
}

func (e *CheckError) Error() string { return e.Reason }

// Unwrap returns the sentinel that classifies the failure.
func (e *CheckError) Unwrap() error { return e.kind }

// ExportReport says what VerifyExport proved.
type ExportReport struct {
	Envelope          *Envelope
	Mode              string // ModeHMAC, ModeSignature, ModeBoth or ModeNone
	FirstSeq, LastSeq int64  // of the entries, 0 when there are none
	SignerFingerprint string // KeyFingerprint of the embedded key, "" when unsigned
	// HMACsChecked: every entry's hmac_hash was recomputed with the secret and matched.
	HMACsChecked bool
	// ChainSignatureChecked: chain_signature was recomputed with the secret over
	// head_hash and entries_count and matched.
	ChainSignatureChecked bool
	// SignatureChecked: the Ed25519 signature over chain_signature verified under the
	// trusted key.
	SignatureChecked bool
	// StructureChecked: every body hash, link, head_hash, the count, seq order and the
	// segment block are consistent.
	StructureChecked bool
	// EntriesBound: the secret binds the count, the head and, link by link, every body.
	// Only then is the verdict VerdictValid.
	EntriesBound bool
	// BoundaryTrusted: the segment's boundary_prev_hash, the link to the entry before the
	// first, was taken from the file: nothing here proves it (§5.1.4).
	BoundaryTrusted bool
	// Checks are every check, in the order the original makes them, then Cairn's own.
	Checks []protocol.Check
	// Notes say what no check covers.
	Notes   []string
	Verdict string
}

// VerifyExport reads and verifies a bijotel-chain-v1 or -v2 export from r as a stream (see
// ReadExport), with the original's checks in its order and reasons (LEGACY-BIJOTEL.md
// §2.4), stricter where §5 says it is weak:
//
//   - With the secret: chain_signature over head_hash and entries_count, head_hash
//     against the last entry, every body hash, HMAC and link from GENESIS or from the
//     segment's boundary_prev_hash, the count, seq strictly increasing and the segment
//     block against the entries. Passing all, the export is valid: the error is nil.
//   - With the public key: the same structural checks, and the Ed25519 signature over
//     chain_signature by that key, compared as a key. That signature binds no entry, so
//     passing all gives ErrEntriesNotBound, never nil.
//   - With neither: the structure is checked but bound to nothing: protocol.ErrNoTrustedKey.
//
// The error is the first failed check's *CheckError; the report lists every check. A
// secret shorter than MinSecretBytes (ErrSecret), a public key of the wrong size or of
// small order, and unreadable or malformed input (protocol.ErrMalformed) return no report.
func VerifyExport(r io.Reader, opts VerifyOptions) (*ExportReport, error) {
	if opts.Secret != nil && len(opts.Secret) < MinSecretBytes {
		return nil, fmt.Errorf("%w: secret_key must be at least %d bytes", ErrSecret, MinSecretBytes)
	}
	if opts.PublicKey != nil {
		if err := checkPublicKey(opts.PublicKey); err != nil {
			return nil, err
		}
	}
	w := &entryWalker{failIndex: -1}
	if opts.Secret != nil {
		w.mac = hmac.New(sha256.New, opts.Secret)
	}
	env, err := ReadExport(r, w.add)
	if err != nil {
		return nil, err
	}
	return verifyEnvelope(env, w, opts)
}

// checkPublicKey refuses a key of the wrong size or of small order, as
// protocol.ParsePublicKeyPEM does.
func checkPublicKey(pub ed25519.PublicKey) error {
	text, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		return err
	}
	_, err = protocol.ParsePublicKeyPEM(text)
	return err
}

// entryWalker checks entries as they are read: body hash, HMAC (with the secret), link to
// the previous entry, in the original's order. The first entry's link is checked once the
// segment block, which may follow the entries, is known.
type entryWalker struct {
	mac       hash.Hash // nil without the secret
	n         int64
	firstSeq  int64
	lastSeq   int64
	firstPrev string
	lastHMAC  string
	fail      *CheckError // the first failure but the first entry's link
	failIndex int64       // the index of fail's entry
	seqFail   *CheckError
}

func (w *entryWalker) add(r *Row) error {
	i := w.n
	w.n++
	prevHMAC := w.lastHMAC
	if i == 0 {
		w.firstSeq, w.firstPrev = r.Seq, r.PrevHash
	} else if r.Seq <= w.lastSeq && w.seqFail == nil {
		w.seqFail = entryFail("seq_order", r.Seq, fmt.Sprintf("seq not strictly increasing at seq=%d (after seq=%d)", r.Seq, w.lastSeq))
	}
	w.lastSeq, w.lastHMAC = r.Seq, r.HMACHash
	if w.failIndex >= 0 {
		return nil // the first failure is kept; the rest is only read
	}
	var reason string
	switch {
	case BodyHash(r.CanonicalBody) != r.CanonicalHash:
		// The reason names the stated hash only (the original also prints the body's).
		reason = fmt.Sprintf("canonical_body tampered at seq=%d: body does not hash to the canonical_hash it claims (%s...)", r.Seq, r.CanonicalHash[:16])
	case w.mac != nil && !macMatches(w.mac, r.PrevHash, r.CanonicalHash, r.HMACHash):
		reason = fmt.Sprintf("hmac_hash mismatch at seq=%d", r.Seq)
	case i > 0 && r.PrevHash != prevHMAC:
		reason = fmt.Sprintf("prev_hash chain break at seq=%d", r.Seq)
	default:
		return nil
	}
	w.fail, w.failIndex = entryFail("entries", r.Seq, reason), i
	return nil
}

func entryFail(check string, seq int64, reason string) *CheckError {
	return &CheckError{Check: check, Seq: seq, Reason: reason, kind: protocol.ErrMismatch}
}

// macMatches recomputes HMAC(prevHash ‖ canonicalHash) with mac and compares it in
// constant time with the stated hex.
func macMatches(mac hash.Hash, prevHash, canonicalHash, stated string) bool {
	if !isHash(stated) { // the original compares hex strings
		return false
	}
	want, err := hex.DecodeString(stated)
	if err != nil {
		return false
	}
	mac.Reset()
	mac.Write([]byte(prevHash))
	mac.Write([]byte(canonicalHash))
	return hmac.Equal(mac.Sum(nil), want)
}

// entriesResult is the walk's verdict once the expected first prev_hash is known.
func (w *entryWalker) entriesResult(expectedFirstPrev string) *CheckError {
	if w.fail != nil && w.failIndex == 0 {
		return w.fail // the first entry's body or HMAC, checked before its link
	}
	if w.n > 0 && w.firstPrev != expectedFirstPrev {
		return entryFail("entries", w.firstSeq, fmt.Sprintf("prev_hash chain break at seq=%d", w.firstSeq))
	}
	return w.fail
}

// verifyEnvelope runs the checks once the whole export has been read.
func verifyEnvelope(env *Envelope, w *entryWalker, opts VerifyOptions) (*ExportReport, error) {
	if env.Format != FormatV1 && env.Format != FormatV2 {
		return nil, malformedf("Not a bijotel-chain-v1 file (and not v2 either); got format=%s", protocol.Quote(env.Format))
	}
	if env.Version != FormatVersion {
		return nil, malformedf("version %s, want %q", protocol.Quote(env.Version), FormatVersion)
	}
	c := &checker{report: &ExportReport{Envelope: env, Mode: mode(opts)}}
	rep := c.report
	if w.n > 0 {
		rep.FirstSeq, rep.LastSeq = w.firstSeq, w.lastSeq
	}
	if env.Signature != nil {
		if pub, err := decodeBase64(env.Signature.PublicKey); err == nil && len(pub) == ed25519.PublicKeySize {
			rep.SignerFingerprint = KeyFingerprint(pub)
		}
	}
	if env.EntriesCount != env.Entries {
		c.fail(&CheckError{Check: "entries_count", Reason: fmt.Sprintf("entries_count mismatch (%d vs len(entries)=%d)", env.EntriesCount, env.Entries), kind: protocol.ErrMismatch})
	} else {
		c.pass("entries_count", fmt.Sprintf("%d entries", env.Entries))
	}
	c.trustAnchor(env, opts)
	c.chainSignature(env, opts)
	c.headHash(env, w)
	c.signature(env, opts)
	expectedFirst := GenesisHash
	if env.Segment != nil {
		expectedFirst = env.Segment.BoundaryPrevHash
	}
	if err := w.entriesResult(expectedFirst); err != nil {
		c.fail(err)
	} else {
		detail := "every body hash and link checked, HMACs not checked (no secret)"
		if w.mac != nil {
			detail = "every body hash, HMAC and link checked"
			rep.HMACsChecked = true
		}
		c.pass("entries", detail)
	}
	if w.seqFail != nil {
		c.fail(w.seqFail)
	} else {
		c.pass("seq_order", "strictly increasing")
	}
	c.segment(env, w)
	rep.StructureChecked = c.passed("entries_count", "head_hash", "entries", "seq_order", "segment")
	c.bound(opts)
	c.notes(env)
	return rep, c.verdict()
}

func mode(opts VerifyOptions) string {
	switch {
	case opts.Secret != nil && opts.PublicKey != nil:
		return ModeBoth
	case opts.Secret != nil:
		return ModeHMAC
	case opts.PublicKey != nil:
		return ModeSignature
	}
	return ModeNone
}

// errNoAnchor is the original's reason for a verification with neither anchor (ISSUE-8).
const errNoAnchor = "verify requires a trust anchor: pass secret_key (HMAC) or public_key_path (Ed25519, v2 export). With neither, only self-referential structure is checked, which a forged export can satisfy."

// errV1Auditor is the original's reason for the public key alone on a v1 export.
const errV1Auditor = "auditor-mode verify requires a v2 (signed) export; this file is bijotel-chain-v1. Ask the operator to re-export with --sign-key."

func (c *checker) trustAnchor(env *Envelope, opts VerifyOptions) {
	switch {
	case opts.Secret == nil && opts.PublicKey == nil:
		c.fail(&CheckError{Check: "trust_anchor", Reason: errNoAnchor, kind: protocol.ErrNoTrustedKey})
	case opts.Secret == nil && env.Format == FormatV1:
		c.fail(&CheckError{Check: "trust_anchor", Reason: errV1Auditor, kind: protocol.ErrNoTrustedKey})
	case opts.Secret != nil && opts.PublicKey != nil:
		c.pass("trust_anchor", "the HMAC secret and the Ed25519 public key")
	case opts.Secret != nil:
		c.pass("trust_anchor", "the HMAC secret")
	default:
		c.pass("trust_anchor", "the Ed25519 public key (it binds chain_signature only)")
	}
}

func (c *checker) chainSignature(env *Envelope, opts VerifyOptions) {
	if opts.Secret == nil {
		c.skip("chain_signature", "not checked: it is an HMAC, only the secret recomputes it")
		return
	}
	stated, _ := hex.DecodeString(env.ChainSignature) // 64 hex digits: the reader checked
	want, _ := hex.DecodeString(ChainSignature(opts.Secret, env.HeadHash, env.EntriesCount))
	if !hmac.Equal(want, stated) {
		c.fail(&CheckError{Check: "chain_signature", Reason: "chain_signature mismatch — file may be tampered", kind: protocol.ErrMismatch})
		return
	}
	c.report.ChainSignatureChecked = true
	c.pass("chain_signature", "recomputed over head_hash and entries_count")
}

func (c *checker) headHash(env *Envelope, w *entryWalker) {
	switch {
	case w.n > 0 && w.lastHMAC != env.HeadHash:
		c.fail(&CheckError{Check: "head_hash", Reason: "head_hash does not match last entry hmac_hash", kind: protocol.ErrMismatch})
	case w.n == 0 && env.HeadHash != GenesisHash:
		c.fail(&CheckError{Check: "head_hash", Reason: "head_hash of an export without entries is not GENESIS", kind: protocol.ErrMismatch})
	default:
		c.pass("head_hash", "the last entry's hmac_hash")
	}
}

func (c *checker) signature(env *Envelope, opts VerifyOptions) {
	const name = "ed25519_signature"
	if opts.PublicKey == nil {
		detail := "not checked: no public key given"
		if env.Signature == nil {
			detail = "none (unsigned export)"
		}
		c.skip(name, detail)
		return
	}
	fail := func(kind error, format string, args ...any) {
		c.fail(&CheckError{Check: name, Reason: fmt.Sprintf(format, args...), kind: kind})
	}
	s := env.Signature
	switch {
	case env.Format != FormatV2:
		fail(protocol.ErrSignature, "--public-key provided but file is %s (only bijotel-chain-v2 carries an Ed25519 signature)", protocol.Excerpt(env.Format))
		return
	case s == nil:
		fail(protocol.ErrSignature, "ed25519_signature block missing")
		return
	case s.PublicKey == "" || s.Signature == "":
		fail(protocol.ErrSignature, "ed25519_signature is missing public_key or signature")
		return
	case s.Algorithm != SignatureAlgorithm:
		fail(protocol.ErrSignature, "unsupported signature algorithm: %s", protocol.Quote(s.Algorithm))
		return
	case s.SignedOver != "" && s.SignedOver != SignedOver:
		fail(protocol.ErrSignature, "unsupported signed_over: %s", protocol.Quote(s.SignedOver))
		return
	}
	embedded, err := decodeBase64(s.PublicKey)
	if err != nil || len(embedded) != ed25519.PublicKeySize {
		fail(protocol.ErrMalformed, "public key in export is not a base64 Ed25519 key")
		return
	}
	if !bytes.Equal(embedded, opts.PublicKey) {
		fail(protocol.ErrKeyNotTrusted, "public key in export does not match auditor's copy (embedded != provided — possible key-swap attack)")
		return
	}
	sig, err := decodeBase64(s.Signature)
	if err == nil && len(sig) != ed25519.SignatureSize {
		err = fmt.Errorf("%d bytes, want %d", len(sig), ed25519.SignatureSize)
	}
	if err != nil {
		fail(protocol.ErrMalformed, "ed25519 signature not base64-decodable: %v", err)
		return
	}
	if !ed25519.Verify(opts.PublicKey, []byte(env.ChainSignature), sig) {
		fail(protocol.ErrSignature, "ed25519 signature does NOT match chain_signature")
		return
	}
	c.report.SignatureChecked = true
	c.pass(name, "by the trusted key "+KeyFingerprint(opts.PublicKey)+", over chain_signature only")
}
