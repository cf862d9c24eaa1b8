// Package jsonread is the one JSON tokenizer of pkg/protocol: the export stream, span
// bodies, receipts and both canonical forms are read through it, so every reader of Cairn
// bytes follows the same rules.
//
// A Reader reads one JSON text (RFC 8259) from a byte slice or from a stream. Both are the
// same code: a byte slice is a stream whose buffer never refills. The rules:
//
//   - the grammar is RFC 8259's, with whitespace (space, tab, line feed, carriage return)
//     allowed between any two tokens and nowhere else, and nothing but whitespace after
//     the value (End);
//   - strings are strict UTF-8: invalid UTF-8 (including UTF-8-encoded surrogates and
//     overlong forms), a raw control character below U+0020, an unknown escape, and a
//     \u escape of a lone surrogate (\ud800 not followed by an escaped low surrogate, or
//     \udc00 alone) are errors, where encoding/json would substitute U+FFFD. Escapes are
//     decoded wherever they fall, across any number of buffer refills;
//   - numbers are checked against the grammar -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
//     and returned as written: the range a number may have is the caller's rule (see
//     canonical and the export reader);
//   - arrays and objects may nest MaxDepth levels (the outermost container is level 1);
//   - with RefuseDuplicates, an object whose member names repeat (after unescaping) is an
//     error; callers that check names themselves leave it off;
//   - with RefuseSpace, any whitespace is an error (canonical.Check).
//
// Errors wrap ErrSyntax and give the byte offset. A Reader never panics on input.
package jsonread

import (
	"errors"
	"fmt"
	"io"
)

// ErrSyntax is wrapped by every error about the input.
var ErrSyntax = errors.New("invalid JSON")

// Errors wrapped, with ErrSyntax, by the errors about input that encoding/json would
// accept: Cairn's reader is deliberately stricter there.
var (
	// ErrUTF8 is invalid UTF-8 in a string, or a \u escape of a lone surrogate, which
	// encoding/json would replace with U+FFFD.
	ErrUTF8 = errors.New("not UTF-8")
	// ErrDuplicate is a member name repeated in one object, with RefuseDuplicates.
	ErrDuplicate = errors.New("duplicate member name")
	// ErrDepth is nesting deeper than MaxDepth.
	ErrDepth = errors.New("nested too deeply")
)

// DefaultBufferSize is how many bytes a stream Reader asks of its source at a time.
const DefaultBufferSize = 64 << 10

// DefaultMaxDepth is the nesting limit of a new Reader.
const DefaultMaxDepth = 1000

// Kind is the type of the next value, from its first byte.
type Kind byte

// The kinds of value. Invalid means the next byte starts no value.
const (
	Invalid Kind = iota
	Object
	Array
	String
	Number
	True
	False
	Null
)

// Reader reads JSON tokens. Its zero value is not usable; use NewBytes or NewStream.
type Reader struct {
	src     io.Reader // nil when buf is the whole input
	buf     []byte
	pos     int    // next unread byte of buf
	base    int64  // input offset of buf[0]
	eof     bool   // src has nothing more
	readErr error  // src's error other than io.EOF
	chunk   int    // bytes asked of src per read
	scratch []byte // decoded strings
	key     []byte // a stream's member name, copied out of the buffer

	// stack holds, per open container, its closing byte; first says whether the
	// container has had no element yet.
	stack    []container
	stackBuf [8]container // the stack's first levels, without an allocation

	// MaxDepth bounds nesting; DefaultMaxDepth unless set.
	MaxDepth int
	// MaxToken bounds the bytes of one string or number as written; 0 means no bound
	// beyond memory. A stream Reader holds a whole token in its buffer.
	MaxToken int
	// RefuseDuplicates makes a repeated member name in any object an error.
	RefuseDuplicates bool
	// RefuseSpace makes whitespace anywhere an error: canonical text has none.
	RefuseSpace bool
}

type container struct {
	closer byte
	first  bool
	names  map[string]struct{} // with RefuseDuplicates
}

// NewBytes returns a Reader of b. Strings and numbers it returns may alias b.
func NewBytes(b []byte) *Reader {
	r := &Reader{}
	r.ResetBytes(b)
	return r
}

// ResetBytes makes r a Reader of b with the default settings, keeping its memory.
func (r *Reader) ResetBytes(b []byte) {
	scratch := r.scratch[:0]
	*r = Reader{buf: b, eof: true, MaxDepth: DefaultMaxDepth, scratch: scratch}
	r.stack = r.stackBuf[:0]
}

// NewStream returns a Reader of src that reads bufferSize bytes at a time (at least 1;
// DefaultBufferSize when 0 or less).
func NewStream(src io.Reader, bufferSize int) *Reader {
	if bufferSize <= 0 {
		bufferSize = DefaultBufferSize
	}
	r := &Reader{src: src, buf: make([]byte, 0, bufferSize), chunk: bufferSize, MaxDepth: DefaultMaxDepth}
	r.stack = r.stackBuf[:0]
	return r
}

// Offset returns the input offset of the next unread byte.
func (r *Reader) Offset() int64 { return r.base + int64(r.pos) }

// Depth returns how many containers are open.
func (r *Reader) Depth() int { return len(r.stack) }

func (r *Reader) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrSyntax, r.Offset(), fmt.Sprintf(format, args...))
}

// failf is errorf for an error that also wraps kind.
func (r *Reader) failf(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %w: %s", ErrSyntax, r.Offset(), kind, fmt.Sprintf(format, args...))
}

// fill reads more input, keeping buf[keep:] (keep ≤ pos), and returns how far the kept
// bytes moved toward the start. It reports false when there is no more input.
func (r *Reader) fill(keep int) (shift int, more bool, err error) {
	if r.eof {
		return 0, false, r.readErr
	}
	if keep > 0 {
		n := copy(r.buf, r.buf[keep:])
		r.buf = r.buf[:n]
		r.pos -= keep
		r.base += int64(keep)
		shift = keep
	}
	if len(r.buf) == cap(r.buf) { // one token fills the buffer: make room for more of it
		grown := make([]byte, len(r.buf), 2*cap(r.buf))
		copy(grown, r.buf)
		r.buf = grown
	}
	for empty := 0; ; empty++ {
		if empty == 100 { // as bufio does with a source that returns nothing, forever
			r.eof, r.readErr = true, io.ErrNoProgress
			return shift, false, r.readErr
		}
		n, err := r.src.Read(r.buf[len(r.buf):min(cap(r.buf), len(r.buf)+r.chunk)])
		r.buf = r.buf[:len(r.buf)+n]
		if err != nil {
			r.eof = true
			if !errors.Is(err, io.EOF) {
				r.readErr = err
			}
			if n == 0 {
				return shift, false, r.readErr
			}
		}
		if n > 0 {
			return shift, true, nil
		}
	}
}

// need makes at least n bytes from pos available if the input has them, keeping
// buf[keep:]. It returns how far the kept bytes moved.
func (r *Reader) need(n, keep int) (int, error) {
	total := 0
	for len(r.buf)-r.pos < n {
		shift, more, err := r.fill(keep)
		total += shift
		keep -= shift
		if err != nil {
			return total, err
		}
		if !more {
			break
		}
	}
	return total, nil
}

// skipSpace skips whitespace and returns the next byte without consuming it; ok is
// false at the end of the input.
func (r *Reader) skipSpace() (c byte, ok bool, err error) {
	for {
		for r.pos < len(r.buf) {
			switch c := r.buf[r.pos]; c {
			case ' ', '\t', '\n', '\r':
				if r.RefuseSpace {
					return 0, false, r.errorf("whitespace %q where canonical JSON has none", c)
				}
				r.pos++
			default:
				return c, true, nil
			}
		}
		_, more, err := r.fill(r.pos)
		if err != nil || !more {
			return 0, false, err
		}
	}
}

// next returns the next byte that is not whitespace, an error at the end of the input.
func (r *Reader) next() (byte, error) {
	c, ok, err := r.skipSpace()
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("%w: at byte %d: %w", ErrSyntax, r.Offset(), io.ErrUnexpectedEOF)
	}
	return c, nil
}

// Peek skips whitespace and returns the kind of the next value without consuming it.
func (r *Reader) Peek() (Kind, error) {
	c, err := r.next()
	if err != nil {
		return Invalid, err
	}
	switch {
	case c == '{':
		return Object, nil
	case c == '[':
		return Array, nil
	case c == '"':
		return String, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return Number, nil
	case c == 't':
		return True, nil
	case c == 'f':
		return False, nil
	case c == 'n':
		return Null, nil
	}
	return Invalid, nil
}

// expect consumes want as the next byte that is not whitespace.
func (r *Reader) expect(want byte) error {
	c, err := r.next()
	if err != nil {
		return err
	}
	if c != want {
		return r.errorf("got %q, want %q", c, want)
	}
	r.pos++
	return nil
}

// Begin consumes the '{' or '[' that opens the next value, which must be of kind k
// (Object or Array).
func (r *Reader) Begin(k Kind) error {
	open, closer := byte('{'), byte('}')
	if k == Array {
		open, closer = '[', ']'
	}
	if err := r.expect(open); err != nil {
		return err
	}
	if len(r.stack) >= r.MaxDepth {
		return r.failf(ErrDepth, "more than %d levels", r.MaxDepth)
	}
	r.stack = append(r.stack, container{closer: closer, first: true})
	return nil
}

// more consumes the ',' before the next element of the open container, or its closer.
func (r *Reader) more(closer byte) (bool, error) {
	if len(r.stack) == 0 || r.stack[len(r.stack)-1].closer != closer {
		return false, fmt.Errorf("%w: no open %q container", ErrSyntax, closer)
	}
	top := &r.stack[len(r.stack)-1]
	c, err := r.next()
	if err != nil {
		return false, err
	}
	switch {
	case c == closer:
		r.pos++
		r.stack = r.stack[:len(r.stack)-1]
		return false, nil
	case top.first:
		top.first = false
		return true, nil
	case c == ',':
		r.pos++
		return true, nil
	}
	return false, r.errorf("got %q, want ',' or %q", c, closer)
}

// More reports whether the open array has another element, consuming the ',' before
// it; at ']' it closes the array and reports false.
func (r *Reader) More() (bool, error) { return r.more(']') }

// Key reads the next member name of the open object and its ':', or closes the object
// at '}' and reports false. The name is decoded, and valid until the next call.
func (r *Reader) Key() (name []byte, ok bool, err error) {
	if ok, err = r.more('}'); !ok || err != nil {
		return nil, false, err
	}
	if c, err := r.next(); err != nil {
		return nil, false, err
	} else if c != '"' {
		return nil, false, r.errorf("got %q, want a member name", c)
	}
	if name, _, err = r.String(); err != nil {
		return nil, false, err
	}
	if r.RefuseDuplicates {
		top := &r.stack[len(r.stack)-1]
		if top.names == nil {
			top.names = map[string]struct{}{}
		}
		if _, dup := top.names[string(name)]; dup {
			return nil, false, r.failf(ErrDuplicate, "%q", name)
		}
		top.names[string(name)] = struct{}{}
	}
	if r.src != nil { // reading the ':' may refill the buffer the name lies in
		r.key = append(r.key[:0], name...)
		name = r.key
	}
	return name, true, r.expect(':')
}

// End checks that no container is open and nothing but whitespace is left.
func (r *Reader) End() error {
	if len(r.stack) > 0 {
		return r.errorf("%d containers still open", len(r.stack))
	}
	c, ok, err := r.skipSpace()
	if err != nil {
		return err
	}
	if ok {
		return r.errorf("%q after the JSON value", c)
	}
	return nil
}

// Literal consumes the literal true, false or null of kind k.
func (r *Reader) Literal(k Kind) error {
	var word string
	switch k {
	case True:
		word = "true"
	case False:
		word = "false"
	case Null:
		word = "null"
	}
	if _, err := r.next(); err != nil {
		return err
	}
	if _, err := r.need(len(word), r.pos); err != nil {
		return err
	}
	if word == "" || len(r.buf)-r.pos < len(word) || string(r.buf[r.pos:r.pos+len(word)]) != word {
		return r.errorf("bad literal, want %q", word)
	}
	r.pos += len(word)
	return nil
}

// Skip consumes one value of any kind, checking it as fully as reading it would.
func (r *Reader) Skip() error {
	depth := len(r.stack)
	for {
		k, err := r.Peek()
		if err != nil {
			return err
		}
		switch k {
		case Object, Array:
			err = r.Begin(k)
		case String:
			_, _, err = r.String()
		case Number:
			_, err = r.Number()
		case True, False, Null:
			err = r.Literal(k)
		default:
			return r.errorf("no value starts with %q", r.buf[r.pos])
		}
		if err != nil {
			return err
		}
		// Close what is finished and find the next value to skip, if any.
		for len(r.stack) > depth {
			var more bool
			if r.stack[len(r.stack)-1].closer == '}' {
				_, more, err = r.Key()
			} else {
				more, err = r.More()
			}
			if err != nil {
				return err
			}
			if more {
				break
			}
		}
		if len(r.stack) == depth {
			return nil
		}
	}
}
