package api

import (
	"bytes"
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/version"
	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var (
	testSecret  = bytes.Repeat([]byte{0x5c}, 32)
	testKey     = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	testVersion = version.Info{Version: "v9.8.7-test", GoVersion: "go1.26", Platform: "linux/amd64"}
	testTime    = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
)

const testAPIKey = "k3y-for-tests"

// testOutput is the model output recorded in entry i.
func testOutput(i int64) string { return fmt.Sprintf("answer number %d", i) }

// testBody is span i: a model call. Entries with i%5 == 0 carry no replay context; the
// others record testOutput(i), with a seed (deterministic) when i is even.
func testBody(i int64) protocol.SpanBody {
	start := testTime.UnixNano() + i*int64(time.Second)
	attrs := map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": i % 300}
	if i%5 != 0 {
		var seed *int64
		if i%2 == 0 {
			seed = &i
		}
		for k, v := range chain.RecordReplayContext(fmt.Sprintf("prompt %d", i), testOutput(i), "gpt-4o", seed, 0.2, 1) {
			attrs[k] = v
		}
	}
	return protocol.SpanBody{Name: "chat gpt-4o", Kind: "client", Attributes: attrs, StatusCode: "OK",
		StartTimeNS: start, EndTimeNS: start + 900_000_000,
		TraceID: fmt.Sprintf("%032x", i+1<<40), SpanID: fmt.Sprintf("%016x", i)}
}

// fixture is a server over a real chain in a temporary directory, behind a real HTTP
// server on loopback.
type fixture struct {
	t      *testing.T
	store  *store.Store
	dbPath string
	srv    *Server
	http   *httptest.Server
	logs   *syncBuffer
}

// newFixture seals n spans and starts a server with the test secret and signing key;
// edit changes the options first.
func newFixture(t *testing.T, n int64, edit func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, dbPath: filepath.Join(t.TempDir(), "chain.db"), logs: &syncBuffer{}}
	var err error
	if f.store, err = store.Open(f.dbPath, testSecret); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.store.Close() })
	f.seal(n)
	o := Options{Store: f.store, DBPath: f.dbPath, Secret: testSecret, SigningKey: testKey, Version: testVersion,
		Logger: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if edit != nil {
		edit(&o)
	}
	if f.srv, err = New(o); err != nil {
		t.Fatal(err)
	}
	f.http = httptest.NewServer(f.srv)
	t.Cleanup(f.http.Close)
	return f
}

// seal appends n spans to the chain.
func (f *fixture) seal(n int64) {
	f.t.Helper()
	last, err := f.store.LastSeq(f.t.Context())
	if err != nil {
		f.t.Fatal(err)
	}
	bodies := make([]protocol.SpanBody, n)
	for i := range bodies {
		bodies[i] = testBody(last + int64(i) + 1)
	}
	if n > 0 {
		if _, err := f.store.Seal(f.t.Context(), bodies); err != nil {
			f.t.Fatal(err)
		}
	}
}

// answer is what a request got back, its body read and closed.
type answer struct {
	StatusCode int
	Header     http.Header
}

// do sends a request; headers are name, value pairs. It returns the answer and its body.
func (f *fixture) do(method, path, contentType string, body io.Reader, headers ...string) (*answer, []byte) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.t.Context(), method, f.http.URL+path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return &answer{StatusCode: resp.StatusCode, Header: resp.Header}, out
}

// postJSON posts a JSON body.
func (f *fixture) postJSON(path, body string, headers ...string) (*answer, []byte) {
	f.t.Helper()
	return f.do(http.MethodPost, path, "application/json", strings.NewReader(body), headers...)
}

// decode decodes a JSON answer into v, strictly.
func decode(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

// wantError fails unless the answer is a JSON error with status and code.
func wantError(t *testing.T, resp *answer, body []byte, status int, code string) errorBody {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q, want application/json: %s", ct, body)
	}
	var e errorBody
	decode(t, body, &e)
	if e.Error != code || e.Code != code || e.Message == "" {
		t.Fatalf("error %+v, want error and code %q and a message", e, code)
	}
	return e
}

// tamper runs an UPDATE on the chain file behind the store's back.
func (f *fixture) tamper(query string, args ...any) {
	f.t.Helper()
	db, err := sql.Open("sqlite", f.dbPath)
	if err != nil {
		f.t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Exec(query, args...); err != nil {
		f.t.Fatal(err)
	}
}

// syncBuffer is a log sink that tests read while the server writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
