package otlp_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/otlp"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// testSecret is the HMAC secret of every test chain.
var testSecret = []byte("cairn-otlp-test-secret-32-bytes!")

// recordingSealer seals through a real SQLite store and records every Seal call: the
// number of bodies and the entries sealed. When err is set, Seal returns it and seals
// nothing.
type recordingSealer struct {
	store *store.Store

	mu      sync.Mutex
	calls   []int
	entries []*protocol.Entry
	err     error
}

func (s *recordingSealer) Seal(ctx context.Context, bodies []protocol.SpanBody) ([]*protocol.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, len(bodies))
	if s.err != nil {
		return nil, s.err
	}
	entries, err := s.store.Seal(ctx, bodies)
	s.entries = append(s.entries, entries...)
	return entries, err
}

// sealed returns the Seal calls' sizes and the entries sealed so far.
func (s *recordingSealer) sealed() ([]int, []*protocol.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.calls...), append([]*protocol.Entry(nil), s.entries...)
}

// openStore opens a new chain in a temporary directory.
func openStore(t testing.TB, secret []byte) *store.Store {
	t.Helper()
	s, err := store.Open(filepath.Join(t.TempDir(), "chain.db"), secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newServer serves a Handler sealing into a new chain at /v1/traces, and returns the
// server and the chain's recording sealer.
func newServer(t testing.TB, opts ...otlp.Option) (*httptest.Server, *recordingSealer) {
	t.Helper()
	return serve(t, &recordingSealer{store: openStore(t, testSecret)}, opts...)
}

// serve serves a Handler sealing through sealer at /v1/traces.
func serve(t testing.TB, sealer *recordingSealer, opts ...otlp.Option) (*httptest.Server, *recordingSealer) {
	t.Helper()
	opts = append([]otlp.Option{otlp.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	h, err := otlp.NewHandler(sealer, opts...)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/traces", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, sealer
}

// post sends body to the server's /v1/traces with the given headers and returns the
// response and its body.
func post(t testing.TB, srv *httptest.Server, body []byte, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// verifyFull runs a full verification of the store and returns how many entries it checked.
func verifyFull(t testing.TB, s *store.Store) int64 {
	t.Helper()
	report, err := s.Verify(context.Background(), store.VerifyOptions{Full: true})
	if err != nil {
		t.Fatalf("full verify: %v", err)
	}
	if !report.HMACsChecked {
		t.Fatal("full verify did not check HMACs")
	}
	return report.Checked
}
