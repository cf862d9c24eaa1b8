package bijotel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ReadExport reads a bijotel-chain-v1 or -v2 export from r as a stream, pretty-printed as
// the original writes it or compact, calling each for every entry in order (the Row is
// reused: copy what must outlive the call), and returns the other members. It checks the
// JSON and the shape of every member, and verifies nothing (see VerifyExport).
//
// Stricter than the original's json.load: integers are read exactly (never as float64)
// and must be integer literals; a member name repeated or not in the format, a hash that
// is not 64 lowercase hex digits, base64 with a line break or wrong padding, data after
// the object, or an entry or header member longer than MaxValueBytes is an error wrapping
// protocol.ErrMalformed. An error from each is returned as is.
func ReadExport(r io.Reader, each func(*Row) error) (*Envelope, error) {
	d := &exportDecoder{src: &budgetReader{r: r, left: MaxValueBytes}}
	d.dec = json.NewDecoder(d.src)
	d.dec.UseNumber()
	env, err := d.readEnvelope(each)
	if err != nil {
		var cbErr callbackError
		if errors.As(err, &cbErr) {
			return nil, cbErr.err
		}
		return nil, err
	}
	return env, nil
}

// errTooLarge is what the budget reader answers once a value has used its budget.
var errTooLarge = fmt.Errorf("%w: an entry or header member of the export is larger than %d bytes", protocol.ErrMalformed, MaxValueBytes)

// budgetReader fails once left bytes have been read since the last reset, so that one
// JSON value cannot make the decoder buffer more than about that much.
type budgetReader struct {
	r    io.Reader
	left int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *budgetReader) reset() { b.left = MaxValueBytes }

// callbackError carries an error of ReadExport's callback through the decoder.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

type exportDecoder struct {
	src *budgetReader
	dec *json.Decoder
}

func malformedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{protocol.ErrMalformed}, args...)...)
}

// token reads the next token; a read or syntax error wraps protocol.ErrMalformed.
func (d *exportDecoder) token() (json.Token, error) {
	t, err := d.dec.Token()
	switch {
	case err == nil:
		return t, nil
	case errors.Is(err, errTooLarge):
		return nil, errTooLarge
	case errors.Is(err, io.EOF):
		return nil, malformedf("export ends early")
	}
	return nil, malformedf("export is not JSON: %w", err)
}

// delim reads the delimiter want.
func (d *exportDecoder) delim(want json.Delim, what string) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	if got, ok := t.(json.Delim); !ok || got != want {
		return malformedf("%s: want %q, got %s", what, want, tokenKind(t))
	}
	return nil
}

// members reads an object's members, calling member for each name (once per name: a
// repeated name is an error).
func (d *exportDecoder) members(what string, member func(name string) error) error {
	if err := d.delim('{', what); err != nil {
		return err
	}
	seen := map[string]bool{}
	for d.dec.More() {
		t, err := d.token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		if seen[name] {
			return malformedf("%s: member %s repeated", what, protocol.Quote(name))
		}
		seen[name] = true
		if err := member(name); err != nil {
			return err
		}
	}
	return d.delim('}', what)
}

func (d *exportDecoder) readEnvelope(each func(*Row) error) (*Envelope, error) {
	env := &Envelope{}
	seen := map[string]bool{}
	err := d.members("export", func(name string) error {
		seen[name] = true
		switch name {
		case "version":
			return d.str(&env.Version, name)
		case "format":
			return d.str(&env.Format, name)
		case "created_at":
			return d.str(&env.CreatedAt, name)
		case "entries_count":
			return d.integer(&env.EntriesCount, name, 0)
		case "head_hash":
			return d.hash(&env.HeadHash, name)
		case "chain_signature":
			return d.hash(&env.ChainSignature, name)
		case "entries":
			return d.entries(env, each)
		case "segment":
			env.Segment = &Segment{}
			return d.segment(env.Segment)
		case "ed25519_signature":
			env.Signature = &Signature{}
			return d.signature(env.Signature)
		}
		return malformedf("unknown member %s: the original's exports have none", protocol.Quote(name))
	})
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"version", "format", "created_at", "entries_count", "head_hash", "chain_signature", "entries"} {
		if !seen[name] {
			return nil, malformedf("export has no %q member", name)
		}
	}
	if t, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, malformedf("data after the export object (%s)", tokenKind(t))
	}
	return env, nil
}

func (d *exportDecoder) entries(env *Envelope, each func(*Row) error) error {
	if err := d.delim('[', "entries"); err != nil {
		return err
	}
	var row Row
	for d.dec.More() {
		d.src.reset()
		if err := d.entry(&row, env.Entries); err != nil {
			return err
		}
		env.Entries++
		if err := each(&row); err != nil {
			return callbackError{err}
		}
	}
	d.src.reset()
	return d.delim(']', "entries")
}

// entryMembers are the members of an entry, each required once (§2.2).
var entryMembers = [...]string{"seq", "timestamp_ns", "trace_id", "span_id", "span_name", "span_kind",
	"canonical_body_b64", "canonical_hash", "semantic_body_hash", "prev_hash", "hmac_hash"}

// entry reads entry number index (0-based) into r.
func (d *exportDecoder) entry(r *Row, index int64) error {
	*r = Row{}
	var b64 string
	what := fmt.Sprintf("entry %d", index)
	seen := 0
	err := d.members(what, func(name string) error {
		seen++
		switch name {
		case "seq":
			return d.integer(&r.Seq, what+" seq", 1)
		case "timestamp_ns":
			return d.integer(&r.TimestampNS, what+" timestamp_ns", -1<<63)
		case "trace_id":
			return d.str(&r.TraceID, what+" trace_id")
		case "span_id":
			return d.str(&r.SpanID, what+" span_id")
		case "span_name":
			return d.str(&r.SpanName, what+" span_name")
		case "span_kind":
			return d.nullableStr(&r.SpanKind, what+" span_kind")
		case "canonical_body_b64":
			return d.str(&b64, what+" canonical_body_b64")
		case "canonical_hash":
			return d.hash(&r.CanonicalHash, what+" canonical_hash")
		case "semantic_body_hash":
			if err := d.nullableStr(&r.SemanticBodyHash, what+" semantic_body_hash"); err != nil {
				return err
			}
			if r.SemanticBodyHash != nil && !isHash(*r.SemanticBodyHash) {
				return malformedf("%s semantic_body_hash is not 64 lowercase hex digits", what)
			}
			return nil
		case "prev_hash":
			return d.hash(&r.PrevHash, what+" prev_hash")
		case "hmac_hash":
			return d.hash(&r.HMACHash, what+" hmac_hash")
		}
		seen--
		return malformedf("%s: unknown member %s", what, protocol.Quote(name))
	})
	if err != nil {
		return err
	}
	if seen != len(entryMembers) {
		return malformedf("%s: want the members %v", what, entryMembers)
	}
	body, err := decodeBase64(b64)
	if err != nil {
		return malformedf("canonical_body_b64 not decodable at seq=%d: %v", r.Seq, err)
	}
	r.CanonicalBody = body
	return nil
}

func (d *exportDecoder) segment(s *Segment) error {
	n := 0
	err := d.members("segment", func(name string) error {
		n++
		switch name {
		case "first_seq":
			return d.integer(&s.FirstSeq, "segment first_seq", 1)
		case "last_seq":
			return d.integer(&s.LastSeq, "segment last_seq", 1)
		case "total_in_segment":
			return d.integer(&s.TotalInSegment, "segment total_in_segment", 0)
		case "total_in_full_chain":
			return d.integer(&s.TotalInFullChain, "segment total_in_full_chain", 0)
		case "boundary_prev_hash":
			return d.hash(&s.BoundaryPrevHash, "segment boundary_prev_hash")
		case "is_complete_chain":
			return d.boolean(&s.IsCompleteChain, "segment is_complete_chain")
		}
		return malformedf("segment: unknown member %s", protocol.Quote(name))
	})
	if err == nil && n != 6 {
		err = malformedf("segment: want first_seq, last_seq, total_in_segment, total_in_full_chain, boundary_prev_hash and is_complete_chain")
	}
	return err
}

func (d *exportDecoder) signature(s *Signature) error {
	return d.members("ed25519_signature", func(name string) error {
		switch name {
		case "public_key":
			return d.str(&s.PublicKey, "ed25519_signature public_key")
		case "signature":
			return d.str(&s.Signature, "ed25519_signature signature")
		case "signed_over":
			return d.str(&s.SignedOver, "ed25519_signature signed_over")
		case "algorithm":
			return d.str(&s.Algorithm, "ed25519_signature algorithm")
		}
		return malformedf("ed25519_signature: unknown member %s", protocol.Quote(name))
	})
}

func (d *exportDecoder) str(dst *string, what string) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	s, ok := t.(string)
	if !ok {
		return malformedf("%s: want a string, got %s", what, tokenKind(t))
	}
	*dst = s
	return nil
}

func (d *exportDecoder) nullableStr(dst **string, what string) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	switch v := t.(type) {
	case nil:
		*dst = nil
	case string:
		*dst = &v
	default:
		return malformedf("%s: want a string or null, got %s", what, tokenKind(t))
	}
	return nil
}

func (d *exportDecoder) hash(dst *string, what string) error {
	if err := d.str(dst, what); err != nil {
		return err
	}
	if !isHash(*dst) {
		return malformedf("%s is not 64 lowercase hex digits", what)
	}
	return nil
}

// integer reads an integer literal of at least least into dst, exactly.
func (d *exportDecoder) integer(dst *int64, what string, least int64) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	*dst, err = integerToken(t, what, least)
	return err
}

// integerToken is the token t as an integer literal of at least least.
func integerToken(t json.Token, what string, least int64) (int64, error) {
	num, ok := t.(json.Number)
	if !ok {
		return 0, malformedf("%s: want an integer, got %s", what, tokenKind(t))
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || n < least {
		return 0, malformedf("%s: %.40s is not an integer of at least %d (within int64)", what, num, least)
	}
	return n, nil
}

func (d *exportDecoder) boolean(dst *bool, what string) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	b, ok := t.(bool)
	if !ok {
		return malformedf("%s: want true or false, got %s", what, tokenKind(t))
	}
	*dst = b
	return nil
}

// tokenKind names what a token is, without its content (which may be long).
func tokenKind(t json.Token) string {
	switch v := t.(type) {
	case nil:
		return "null"
	case json.Delim:
		return fmt.Sprintf("%q", v.String())
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", t)
}

// SniffExportFormat returns the format member of the export whose first bytes are
// prefix when it is FormatV1 or FormatV2, and "" otherwise (another format, no format
// member before the entries, or not JSON). It reads only the top-level members before
// "entries" and verifies nothing.
func SniffExportFormat(prefix []byte) string {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil || key == "entries" {
			return ""
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return ""
		}
		if key != "format" {
			continue
		}
		var format string
		if json.Unmarshal(value, &format) != nil || format != FormatV1 && format != FormatV2 {
			return ""
		}
		return format
	}
	return ""
}
