package protocol

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
	"github.com/cairn-dev/cairn/pkg/protocol/internal/jsonread"
)

// Export format identifiers.
const (
	ExportFormat  = "cairn-chain-v2"
	ExportVersion = 2
	// SignatureAlgorithm names the envelope signature scheme: pure Ed25519 (RFC 8032).
	SignatureAlgorithm = "Ed25519"
)

// ExportHeader is every top-level member of an export except entries and signature: the
// members the envelope signature covers.
type ExportHeader struct {
	Format         string `json:"format"`
	Version        int    `json:"version"`
	ExportedAt     string `json:"exported_at"` // RFC 3339 UTC, whole seconds
	EntryCount     int64  `json:"entry_count"` // entries in the chain through LastSeq
	FirstSeq       int64  `json:"first_seq"`
	LastSeq        int64  `json:"last_seq"`
	FirstPrevHash  string `json:"first_prev_hash"`
	LastHMACHash   string `json:"last_hmac_hash"`
	ChainSignature string `json:"chain_signature"`
	EntriesRoot    string `json:"entries_root"` // RFC 6962 root over the exported entries' leaves
}

// SignedHeader is an export's header as read: its members, its signature, and the exact
// bytes the signature covers.
type SignedHeader struct {
	Header    ExportHeader
	Signature EnvelopeSignature
	// Signed is the RFC 8785 JSON of the header members: what Signature.Value signs.
	Signed []byte
}

// EnvelopeSignature is an export's signature member.
type EnvelopeSignature struct {
	Algorithm string `json:"algorithm"`  // "Ed25519"
	PublicKey string `json:"public_key"` // SPKI PEM
	Value     string `json:"value"`      // base64 Ed25519 signature over the canonical header
}

// SignedBytes returns the bytes the envelope signature covers: the RFC 8785 JSON of h.
func (h *ExportHeader) SignedBytes() ([]byte, error) {
	return canonical.Marshal(h)
}

// ExportOptions configures an ExportWriter.
type ExportOptions struct {
	// Secret is the chain's HMAC key; it signs chain_signature. At least MinSecretBytes.
	Secret []byte
	// Key signs the envelope.
	Key ed25519.PrivateKey
	// ExportedAt is the export time; it is written in whole seconds, UTC.
	ExportedAt time.Time
	// HeaderOnly leaves the entries out: the header still commits to them through
	// entries_root, last_hmac_hash and chain_signature.
	HeaderOnly bool
}

// ExportWriter writes a cairn-chain-v2 export as a stream. Entries are written as they
// come and the header after them, so the writer holds one entry at a time however long
// the chain is. Readers must accept members in any order; this writer puts entries first.
type ExportWriter struct {
	w    *bufio.Writer
	opts ExportOptions
	tree *compact.Range
	buf  []byte
	span entrySpan
}

// entrySpan tracks the first and last of a run of entries, without their bodies.
type entrySpan struct {
	count       int64
	first, last Entry
}

// follows checks that e comes right after the span's last entry: seq up by one, and
// prev_hash equal to its hmac_hash.
func (s *entrySpan) follows(e *Entry) error {
	switch {
	case s.count == 0:
		return nil
	case e.Seq != s.last.Seq+1:
		return &EntryError{Seq: e.Seq, Reason: ReasonSeq, Err: &MismatchError{Field: "seq", Want: strconv.FormatInt(s.last.Seq+1, 10), Got: strconv.FormatInt(e.Seq, 10)}}
	case e.PrevHash != s.last.HMACHash:
		return &EntryError{Seq: e.Seq, Reason: ReasonLink, Err: &MismatchError{Field: "prev_hash", Want: s.last.HMACHash, Got: e.PrevHash}}
	}
	return nil
}

// add extends the span with e.
func (s *entrySpan) add(e *Entry) {
	columns := *e
	columns.CanonicalBody = nil
	if s.count == 0 {
		s.first = columns
	}
	s.last = columns
	s.count++
}

// NewExportWriter starts an export on w.
func NewExportWriter(w io.Writer, opts ExportOptions) (*ExportWriter, error) {
	if len(opts.Secret) < MinSecretBytes {
		return nil, fmt.Errorf("%w: chain secret is %d bytes, want at least %d", ErrMalformed, len(opts.Secret), MinSecretBytes)
	}
	if len(opts.Key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: signing key is %d bytes, want %d", ErrMalformed, len(opts.Key), ed25519.PrivateKeySize)
	}
	x := &ExportWriter{w: bufio.NewWriterSize(w, 64<<10), opts: opts, tree: newTree()}
	if !opts.HeaderOnly {
		if _, err := x.w.WriteString(`{"entries":[`); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// Write adds the next entry. Entries must follow each other: seq up by one, and prev_hash
// equal to the previous entry's hmac_hash.
func (x *ExportWriter) Write(e *Entry) error {
	if err := e.checkShape(); err != nil {
		return fmt.Errorf("%w: entry seq %d: %w", ErrMalformed, e.Seq, err)
	}
	if err := x.span.follows(e); err != nil {
		return err
	}
	x.buf = appendLeaf(x.buf[:0], e)
	if err := x.tree.Append(leafHash(x.buf), nil); err != nil {
		return err
	}
	if !x.opts.HeaderOnly {
		x.buf = x.buf[:0]
		if x.span.count > 0 {
			x.buf = append(x.buf, ',')
		}
		x.buf = append(x.buf, '\n')
		x.buf = appendEntryJSON(x.buf, e)
		if _, err := x.w.Write(x.buf); err != nil {
			return err
		}
	}
	x.span.add(e)
	return nil
}

// Close writes the header and the envelope signature, flushes, and returns the header.
// It does not close the underlying writer.
func (x *ExportWriter) Close() (*ExportHeader, error) {
	if x.span.count == 0 {
		return nil, fmt.Errorf("%w: an export needs at least one entry", ErrMalformed)
	}
	root, err := x.tree.GetRootHash(nil)
	if err != nil {
		return nil, err
	}
	h := &ExportHeader{
		Format:         ExportFormat,
		Version:        ExportVersion,
		ExportedAt:     x.opts.ExportedAt.UTC().Truncate(time.Second).Format(time.RFC3339),
		EntryCount:     x.span.last.Seq,
		FirstSeq:       x.span.first.Seq,
		LastSeq:        x.span.last.Seq,
		FirstPrevHash:  x.span.first.PrevHash,
		LastHMACHash:   x.span.last.HMACHash,
		ChainSignature: ChainSignature(x.opts.Secret, x.span.last.HMACHash, x.span.last.Seq),
		EntriesRoot:    hex.EncodeToString(root),
	}
	if x.opts.HeaderOnly {
		x.buf = append(x.buf[:0], '{')
	} else {
		x.buf = append(x.buf[:0], "\n],"...)
	}
	if x.buf, err = appendSignedHeader(x.buf, h, x.opts.Key); err != nil {
		return nil, err
	}
	if _, err := x.w.Write(x.buf); err != nil {
		return nil, err
	}
	return h, x.w.Flush()
}

// appendSignedHeader appends the header's members, the signature member made with key,
// and the closing brace of the export object.
func appendSignedHeader(b []byte, h *ExportHeader, key ed25519.PrivateKey) ([]byte, error) {
	signed, err := h.SignedBytes()
	if err != nil {
		return nil, err
	}
	pub, err := MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	sig, err := canonical.Marshal(EnvelopeSignature{
		Algorithm: SignatureAlgorithm,
		PublicKey: string(pub),
		Value:     base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed)),
	})
	if err != nil {
		return nil, err
	}
	// signed is "{...}": its members, then the signature, close the export object.
	b = append(b, signed[1:len(signed)-1]...)
	b = append(b, `,"signature":`...)
	b = append(b, sig...)
	return append(b, "}\n"...), nil
}

func newTree() *compact.Range {
	f := &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	return f.NewEmptyRange(0)
}

// leafHash is the RFC 6962 leaf hash: SHA-256(0x00 ‖ leaf).
func leafHash(leaf []byte) []byte {
	h := sha256.New()
	h.Write([]byte{rfc6962.RFC6962LeafHashPrefix})
	h.Write(leaf)
	return h.Sum(nil)
}

// headerMembers are the members of ExportHeader, as the format spells them.
var headerMembers = []string{
	"format", "version", "exported_at", "entry_count", "first_seq", "last_seq",
	"first_prev_hash", "last_hmac_hash", "chain_signature", "entries_root",
}

// readHeaderMember reads the value of the top-level member key (any but entries) into
// sh, strictly: integers by readInteger, strings without escape sequences, the signature
// as an object of exactly algorithm, public_key and value. An unknown member is an error.
func readHeaderMember(rd *jsonread.Reader, sh *SignedHeader, key string) error {
	h := &sh.Header
	var str *string
	var num *int64
	switch key {
	case "format":
		str = &h.Format
	case "exported_at":
		str = &h.ExportedAt
	case "first_prev_hash":
		str = &h.FirstPrevHash
	case "last_hmac_hash":
		str = &h.LastHMACHash
	case "chain_signature":
		str = &h.ChainSignature
	case "entries_root":
		str = &h.EntriesRoot
	case "entry_count":
		num = &h.EntryCount
	case "first_seq":
		num = &h.FirstSeq
	case "last_seq":
		num = &h.LastSeq
	case "version":
		v, err := readInteger(rd)
		h.Version = int(v)
		return err
	case "signature":
		return readEnvelopeSignature(rd, &sh.Signature)
	default:
		return errors.New("unknown member")
	}
	if num != nil {
		var err error
		*num, err = readInteger(rd)
		return err
	}
	v, err := readPlain(rd, MaxHeaderMemberBytes)
	*str = string(v)
	return err
}

// readEnvelopeSignature reads the signature member: an object of exactly the members
// algorithm, public_key and value, each a string. Only public_key may hold escapes (its
// PEM's line feeds are written \n).
func readEnvelopeSignature(rd *jsonread.Reader, sig *EnvelopeSignature) error {
	if k, err := rd.Peek(); err != nil {
		return err
	} else if k != jsonread.Object {
		return errors.New("signature must be an object of algorithm, public_key and value")
	}
	if err := rd.Begin(jsonread.Object); err != nil {
		return err
	}
	seen := map[string]bool{}
	for {
		rd.MaxToken = maxKeyBytes
		key, ok, err := rd.Key()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		name := string(key)
		if seen[name] {
			return fmt.Errorf("signature has member %s twice", Quote(name))
		}
		seen[name] = true
		var v []byte
		switch name {
		case "algorithm":
			v, err = readPlain(rd, MaxHeaderMemberBytes)
			sig.Algorithm = string(v)
		case "value":
			v, err = readPlain(rd, MaxHeaderMemberBytes)
			sig.Value = string(v)
		case "public_key":
			rd.MaxToken = MaxHeaderMemberBytes
			v, _, err = rd.String()
			sig.PublicKey = string(v)
		default:
			return fmt.Errorf("signature has unknown member %s", Quote(name))
		}
		if err != nil {
			return fmt.Errorf("signature member %s: %w", Quote(name), err)
		}
	}
	if len(seen) != 3 {
		return errors.New("signature must be an object of algorithm, public_key and value")
	}
	return nil
}

// finishHeader checks, once the export object is read, that every header member and the
// signature were present (seen), the header's shape and the signature's (see
// EnvelopeSignature.parse), and computes the bytes the envelope signature covers. Every
// fault it finds is step 0's malformed (docs/PROTOCOL.md §3), which wins over an entry
// that failed.
func finishHeader(sh *SignedHeader, seen map[string]bool) (*SignedHeader, error) {
	found := 0
	for _, m := range headerMembers {
		if seen[m] {
			found++
		}
	}
	if found != len(headerMembers) {
		return nil, fmt.Errorf("%w: header has %d of its %d members (%s)", ErrMalformed, found, len(headerMembers), strings.Join(headerMembers, ", "))
	}
	if !seen["signature"] {
		return nil, fmt.Errorf("%w: export has no signature", ErrMalformed)
	}
	if err := sh.Header.checkShape(); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrMalformed, err)
	}
	if _, _, err := sh.Signature.parse(); err != nil {
		return nil, err
	}
	var err error
	if sh.Signed, err = sh.Header.SignedBytes(); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrMalformed, err)
	}
	return sh, nil
}

func (h *ExportHeader) checkShape() error {
	switch {
	case h.Format != ExportFormat:
		return fmt.Errorf("format %s, want %q", Quote(h.Format), ExportFormat)
	case h.Version != ExportVersion:
		return fmt.Errorf("version %d, want %d", h.Version, ExportVersion)
	case h.FirstSeq < 1 || h.LastSeq < h.FirstSeq:
		return fmt.Errorf("first_seq %d and last_seq %d do not make a range", h.FirstSeq, h.LastSeq)
	case h.EntryCount != h.LastSeq:
		return fmt.Errorf("entry_count %d, want last_seq %d (seq starts at 1 without gaps)", h.EntryCount, h.LastSeq)
	case !isHex(h.FirstPrevHash, 64), !isHex(h.LastHMACHash, 64), !isHex(h.ChainSignature, 64), !isHex(h.EntriesRoot, 64):
		return fmt.Errorf("hashes must be 64 lowercase hex characters")
	}
	if t, err := time.Parse(time.RFC3339, h.ExportedAt); err != nil || t.Format(time.RFC3339) != h.ExportedAt || t.Location() != time.UTC {
		return fmt.Errorf("exported_at %s is not RFC 3339 UTC in whole seconds", Quote(h.ExportedAt))
	}
	return nil
}
