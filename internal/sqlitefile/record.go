package sqlitefile

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Kind is a value's storage class in a record.
type Kind uint8

// The storage classes.
const (
	Null Kind = iota
	Integer
	Float
	Text
	Blob
)

// A Value is one column of a record. Bytes (of Text and Blob) points into the record.
type Value struct {
	Kind  Kind
	Int   int64   // Integer
	Float float64 // Float
	Bytes []byte  // Text, Blob
}

// Record decodes the record rec into cols, one value a column, and returns how many
// columns it holds (a row written before a column was added holds fewer; the rest of cols
// is left Null). A column past len(cols) is not decoded.
func Record(rec []byte, cols []Value) (int, error) {
	hdrSize, n := varint(rec)
	if n == 0 || hdrSize < uint64(n) || hdrSize > uint64(len(rec)) {
		return 0, fmt.Errorf("%w: a record header of %d bytes in %d", ErrCorrupt, hdrSize, len(rec))
	}
	hdr, data := rec[n:hdrSize], rec[hdrSize:]
	i := 0
	for ; len(hdr) > 0; i++ {
		t, m := varint(hdr)
		if m == 0 {
			return 0, fmt.Errorf("%w: a record header ends inside a serial type", ErrCorrupt)
		}
		hdr = hdr[m:]
		size := serialSize(t)
		if size < 0 || size > len(data) {
			return 0, fmt.Errorf("%w: column %d of serial type %d runs past its record", ErrCorrupt, i, t)
		}
		if i < len(cols) {
			cols[i] = decode(t, data[:size])
		}
		data = data[size:]
	}
	for j := i; j < len(cols); j++ {
		cols[j] = Value{}
	}
	return i, nil
}

// serialSize is the size of a value of serial type t, or -1 for the reserved types.
func serialSize(t uint64) int {
	switch {
	case t <= 4:
		return [...]int{0, 1, 2, 3, 4}[t]
	case t == 5:
		return 6
	case t == 6 || t == 7:
		return 8
	case t == 8 || t == 9:
		return 0
	case t >= 12 && t < 1<<40:
		return int(t-12) / 2
	}
	return -1
}

// decode is the value of serial type t stored in b.
func decode(t uint64, b []byte) Value {
	switch {
	case t == 0:
		return Value{}
	case t <= 6:
		var v int64
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		shift := 64 - 8*uint(len(b)) // sign-extend from the value's width
		return Value{Kind: Integer, Int: v << shift >> shift}
	case t == 7:
		return Value{Kind: Float, Float: math.Float64frombits(binary.BigEndian.Uint64(b))}
	case t == 8 || t == 9:
		return Value{Kind: Integer, Int: int64(t - 8)}
	case t%2 == 0:
		return Value{Kind: Blob, Bytes: b}
	}
	return Value{Kind: Text, Bytes: b}
}
