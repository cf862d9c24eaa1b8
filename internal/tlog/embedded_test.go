package tlog

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// federationKey signs the test records, as a federation signs its cross-anchors.
var federationKey = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))

// record returns the hashedrekord body of cross-anchor n, and what it logs.
func record(t testing.TB, n int) (body, content []byte) {
	t.Helper()
	sum := sha256.Sum256(fmt.Appendf(nil, "cross-anchor %d", n))
	content, err := protocol.CrossAnchorLogContent(hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	body, err = protocol.NewHashedRekord(content, federationKey)
	if err != nil {
		t.Fatal(err)
	}
	return body, content
}

// testLogKey is one embedded log key for the package's tests.
var testLogKey = func() string {
	k, err := GenerateLogKey("cairn.test/embedded")
	if err != nil {
		panic(err)
	}
	return k
}()

func openTestLog(t testing.TB, dir string) *Embedded {
	t.Helper()
	return openTestLogWithKey(t, dir, testLogKey)
}

func openTestLogWithKey(t testing.TB, dir, key string) *Embedded {
	t.Helper()
	l, err := OpenEmbedded(t.Context(), EmbeddedOptions{Dir: dir, PrivateKey: key, URL: "http://127.0.0.1/tlog"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

// Upload, fetch back by index and verify offline, as the controllers and receipts will.
func TestEmbeddedUploadFetchVerify(t *testing.T) {
	testUploadFetchVerify(t, openTestLog(t, t.TempDir()))
}

func testUploadFetchVerify(t *testing.T, l Log) {
	t.Helper()
	ctx := t.Context()
	first := -1
	for n := range 3 {
		body, content := record(t, n)
		e, err := l.Upload(ctx, body)
		if err != nil {
			t.Fatalf("upload %d: %v", n, err)
		}
		if first < 0 {
			first = int(e.Index)
		}
		got, err := l.Entry(ctx, e.Index)
		if err != nil {
			t.Fatalf("entry %d: %v", e.Index, err)
		}
		if got.UUID != e.UUID || got.Bundle.Body != e.Bundle.Body || got.IntegratedTime.Unix() != e.IntegratedTime.Unix() {
			t.Errorf("entry %d read back as %+v, uploaded as %+v", e.Index, got, e)
		}
		logged, err := l.Verify(ctx, &got.Bundle)
		if err != nil {
			t.Fatalf("verify entry %d: %v", e.Index, err)
		}
		if err := protocol.VerifyHashedRekord(logged, content, federationKey.Public().(ed25519.PublicKey)); err != nil {
			t.Errorf("entry %d does not log the record: %v", e.Index, err)
		}
	}
	if _, err := l.Entry(ctx, 1<<40); !errors.Is(err, ErrNotFound) {
		t.Errorf("entry past the end: %v, want ErrNotFound", err)
	}
}

// The same record uploaded again, before and after a restart, and with the leaf index
// lost (a crash between the log taking it and the index recording it), keeps its index.
func TestEmbeddedReuploadKeepsIndex(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir)
	body, _ := record(t, 7)
	first, err := l.Upload(t.Context(), body)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := record(t, 8)
	if _, err := l.Upload(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	again := func(l *Embedded, when string) {
		t.Helper()
		e, err := l.Upload(t.Context(), body)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if e.Index != first.Index || e.Bundle.Verification.InclusionProof.TreeSize != 2 {
			t.Errorf("%s: index %d in a log of %d, want index %d in a log of 2", when, e.Index,
				e.Bundle.Verification.InclusionProof.TreeSize, first.Index)
		}
	}
	again(l, "same process")
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	again(openTestLog(t, dir), "after a restart")
	for _, f := range []string{"leaf-index.db", "leaf-index.db-wal", "leaf-index.db-shm"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	again(openTestLog(t, dir), "with the leaf index lost")
}

// A closed log is unavailable, writes nothing, and works again once reopened.
func TestEmbeddedStoppedIsUnavailable(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir)
	body, _ := record(t, 1)
	if _, err := l.Upload(t.Context(), body); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	next, _ := record(t, 2)
	var unavailable *UnavailableError
	if _, err := l.Upload(t.Context(), next); !errors.As(err, &unavailable) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("upload to a closed log: %v, want *UnavailableError", err)
	}
	if err := l.Reachable(t.Context()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("reachable: %v", err)
	}
	l = openTestLog(t, dir)
	e, err := l.Upload(t.Context(), next)
	if err != nil {
		t.Fatal(err)
	}
	if e.Index != 1 || e.Bundle.Verification.InclusionProof.TreeSize != 2 {
		t.Errorf("after reopening: index %d of %d, want 1 of 2", e.Index, e.Bundle.Verification.InclusionProof.TreeSize)
	}
}

func TestEmbeddedRefusesOversizedEntry(t *testing.T) {
	l := openTestLog(t, t.TempDir())
	_, err := l.Upload(t.Context(), make([]byte, MaxEmbeddedEntry+1))
	var refused *RefusedError
	if !errors.As(err, &refused) || !errors.Is(err, ErrRefused) {
		t.Fatalf("oversized entry: %v, want *RefusedError", err)
	}
}

// The log is served as tlog-tiles: a checkpoint that verifies under the log's key, the
// entry bundles, and nothing else from the directory.
func TestEmbeddedServesTiles(t *testing.T) {
	l := openTestLog(t, t.TempDir())
	body, _ := record(t, 3)
	if _, err := l.Upload(t.Context(), body); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.StripPrefix("/tlog", l.Handler()))
	defer srv.Close()
	get := func(path string) (int, []byte) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	status, cp := get("/tlog/checkpoint")
	if status != http.StatusOK {
		t.Fatalf("checkpoint: HTTP %d", status)
	}
	parsed, err := protocol.OpenCheckpoint(cp, l.pub)
	if err != nil || parsed.Size != 1 || parsed.Origin != "cairn.test/embedded" {
		t.Fatalf("served checkpoint %q: %+v, %v", cp, parsed, err)
	}
	status, bundle := get("/tlog/tile/entries/000.p/1")
	if status != http.StatusOK || !strings.Contains(string(bundle), string(body)) {
		t.Errorf("entry bundle: HTTP %d, %q", status, bundle)
	}
	for _, path := range []string{"/tlog/leaf-index.db", "/tlog/tile/", "/tlog/.state/treeState", "/tlog/"} {
		if status, _ := get(path); status != http.StatusNotFound {
			t.Errorf("GET %s: HTTP %d, want 404", path, status)
		}
	}
}
