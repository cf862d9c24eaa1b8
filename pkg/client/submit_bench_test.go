package client

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSubmitStream50MB sends a 50 MB export file with SubmitStream to a server that
// reads and discards it: B/op shows the client holds none of it (hashing and sending
// stream through fixed buffers), MB/s the cost of hashing it once and sending it.
func BenchmarkSubmitStream50MB(b *testing.B) {
	const size = 50 << 20
	key, id := testKey(4), testID(4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			b.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"submission_id":"sub-1"}`))
	}))
	defer srv.Close()
	c, err := New(srv.URL, WithOperator(id, key))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "export.json")
	if err := os.WriteFile(path, bytes.Repeat([]byte("0123456789abcdef"), size/16), 0o600); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.SubmitStream(context.Background(), f, size); err != nil {
			b.Fatal(err)
		}
	}
}
