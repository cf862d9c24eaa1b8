package canonical

import (
	"bytes"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol/internal/jsonread"
)

// maxDepth bounds the nesting of arrays and objects the parser accepts.
const maxDepth = 1000

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindFalse
	kindTrue
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is one parsed JSON value. Strings hold their unescaped text, which is always valid
// UTF-8; numbers hold their literal exactly as written, which matches the JSON grammar.
type node struct {
	kind    kind
	integer bool     // number literal has neither fraction nor exponent
	text    string   // string value or number literal
	elems   []node   // array elements
	members []member // object members, in input order until a writer sorts them
}

type member struct {
	key string
	val node
}

// parse parses exactly one JSON value, with optional surrounding whitespace, with the
// package pkg/protocol's one tokenizer (internal/jsonread) and its rules.
func parse(in []byte) (node, error) {
	rd := jsonread.NewBytes(in)
	rd.MaxDepth = maxDepth
	v, err := readNode(rd)
	if err == nil {
		err = rd.End()
	}
	if err != nil {
		return node{}, invalid(err)
	}
	return v, nil
}

// invalid wraps a tokenizer error in ErrInvalid.
func invalid(err error) error { return fmt.Errorf("%w: %w", ErrInvalid, err) }

// readNode reads one value.
func readNode(rd *jsonread.Reader) (node, error) {
	k, err := rd.Peek()
	if err != nil {
		return node{}, err
	}
	switch k {
	case jsonread.Object:
		n := node{kind: kindObject}
		if err := rd.Begin(k); err != nil {
			return node{}, err
		}
		for {
			name, ok, err := rd.Key()
			if err != nil || !ok {
				return n, err
			}
			key := string(name)
			v, err := readNode(rd)
			if err != nil {
				return node{}, err
			}
			n.members = append(n.members, member{key: key, val: v})
		}
	case jsonread.Array:
		n := node{kind: kindArray}
		if err := rd.Begin(k); err != nil {
			return node{}, err
		}
		for {
			more, err := rd.More()
			if err != nil || !more {
				return n, err
			}
			v, err := readNode(rd)
			if err != nil {
				return node{}, err
			}
			n.elems = append(n.elems, v)
		}
	case jsonread.String:
		s, _, err := rd.String()
		return node{kind: kindString, text: string(s)}, err
	case jsonread.Number:
		t, err := rd.Number()
		return node{kind: kindNumber, integer: !bytes.ContainsAny(t, ".eE"), text: string(t)}, err
	case jsonread.True:
		return node{kind: kindTrue}, rd.Literal(k)
	case jsonread.False:
		return node{kind: kindFalse}, rd.Literal(k)
	case jsonread.Null:
		return node{kind: kindNull}, rd.Literal(k)
	}
	return node{}, fmt.Errorf("%w: at byte %d: no value starts here", jsonread.ErrSyntax, rd.Offset())
}
