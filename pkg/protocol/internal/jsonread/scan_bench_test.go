package jsonread

import (
	"bytes"
	"strings"
	"testing"
)

// BenchmarkScanPlain measures the string scan over base64-like text, the bulk of an export.
func BenchmarkScanPlain(b *testing.B) {
	s := []byte(strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0123456789+/", 40) + `"`)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if ScanPlain(s) != len(s)-1 {
			b.Fatal("wrong index")
		}
	}
}

// BenchmarkIndexQuote is the lower bound: the vectorized search for the closing quote alone.
func BenchmarkIndexQuote(b *testing.B) {
	s := []byte(strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0123456789+/", 40) + `"`)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if bytes.IndexByte(s, '"') != len(s)-1 {
			b.Fatal("wrong index")
		}
	}
}
