package tlog

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestReadDirEntry reads entries of a log another goroutine writes, from its files: each
// verifies under the log's key and carries the body uploaded; an index past the log is
// ErrNotFound; another key's log, or no log, is refused.
func TestReadDirEntry(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir)
	pub, err := l.PublicKey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	entries := make([]*Entry, 300) // past one entry bundle and one tile
	var g errgroup.Group
	for n := range entries {
		body, _ := record(t, n)
		g.Go(func() (err error) {
			entries[n], err = l.Upload(t.Context(), body)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(entries, func(a, b *Entry) int { return cmp.Compare(a.Index, b.Index) })
	for _, want := range []*Entry{entries[0], entries[255], entries[256], entries[299]} {
		got, err := ReadDirEntry(t.Context(), dir, want.Index, pub)
		if err != nil {
			t.Fatalf("index %d: %v", want.Index, err)
		}
		if got.Bundle.Body != want.Bundle.Body || got.UUID != want.UUID {
			t.Errorf("index %d: read another entry than the one uploaded", want.Index)
		}
		body, err := protocol.VerifyLogBundle(&got.Bundle, protocol.LogVerifyOptions{Key: pub, AllowMissingSET: true})
		if err != nil {
			t.Fatalf("index %d: %v", want.Index, err)
		}
		raw, _ := base64.StdEncoding.DecodeString(want.Bundle.Body)
		if !bytes.Equal(body, raw) {
			t.Errorf("index %d: verified body differs", want.Index)
		}
	}
	if _, err := ReadDirEntry(t.Context(), dir, 300, pub); !errors.Is(err, ErrNotFound) {
		t.Errorf("index past the log: %v, want ErrNotFound", err)
	}
	if _, err := ReadDirEntry(t.Context(), dir, -1, pub); !errors.Is(err, ErrNotFound) {
		t.Errorf("negative index: %v, want ErrNotFound", err)
	}

	other := openTestLogWithKey(t, t.TempDir(), mustGenerate(t, "cairn.test/other"))
	otherPub, _ := other.PublicKey(t.Context())
	if _, err := ReadDirEntry(t.Context(), dir, 0, otherPub); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("a checkpoint under another key: %v, want a refusal", err)
	}
	if _, err := ReadDirEntry(t.Context(), filepath.Join(dir, "absent"), 0, pub); !errors.Is(err, ErrUnavailable) {
		t.Errorf("no log: %v, want ErrUnavailable", err)
	}

	// A log whose tile was altered: the proof no longer leads to the signed root.
	tile := filepath.Join(dir, "tile", "0", "000")
	raw, err := os.ReadFile(tile)
	if err != nil {
		t.Fatal(err)
	}
	raw[40] ^= 1
	if err := os.WriteFile(tile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDirEntry(t.Context(), dir, 0, pub); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("an altered tile: %v, want a refusal", err)
	}
}

func mustGenerate(t *testing.T, origin string) string {
	t.Helper()
	k, err := GenerateLogKey(origin)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestReadURLEntry reads the entries of a log served over HTTP as tlog-tiles (DirHandler,
// as the federation serves its log): each verifies and is the body uploaded; a server that
// is down, answers 500 or sends an endless tile is unavailable; an altered tile or another
// key's checkpoint is refused, not taken for an outage.
func TestReadURLEntry(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir)
	pub, err := l.PublicKey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var uploaded []*Entry
	for n := range 3 {
		body, _ := record(t, n)
		e, err := l.Upload(t.Context(), body)
		if err != nil {
			t.Fatal(err)
		}
		uploaded = append(uploaded, e)
	}
	mux := http.NewServeMux()
	mux.Handle("/federation/log/", http.StripPrefix("/federation/log", DirHandler(dir)))
	mux.HandleFunc("/broken/", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusInternalServerError) })
	mux.HandleFunc("/endless/", func(w http.ResponseWriter, _ *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for range MaxTileBytes/len(chunk) + 2 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	at := func(path string) *url.URL {
		u, err := url.Parse(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}

	for _, want := range uploaded {
		got, err := ReadURLEntry(t.Context(), at("/federation/log"), nil, want.Index, pub)
		if err != nil {
			t.Fatalf("index %d: %v", want.Index, err)
		}
		if got.Bundle.Body != want.Bundle.Body {
			t.Errorf("index %d: read another entry than the one uploaded", want.Index)
		}
	}
	if _, err := ReadURLEntry(t.Context(), at("/federation/log"), nil, 3, pub); !errors.Is(err, ErrNotFound) {
		t.Errorf("index past the log: %v, want ErrNotFound", err)
	}
	for _, path := range []string{"/broken", "/endless"} {
		if _, err := ReadURLEntry(t.Context(), at(path), nil, 0, pub); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", path, err)
		}
	}
	down := at("/federation/log")
	down.Host = "127.0.0.1:1"
	if _, err := ReadURLEntry(t.Context(), down, nil, 0, pub); !errors.Is(err, ErrUnavailable) {
		t.Errorf("nothing listening: %v, want ErrUnavailable", err)
	}
	otherPub, _ := openTestLogWithKey(t, t.TempDir(), mustGenerate(t, "cairn.test/other")).PublicKey(t.Context())
	if _, err := ReadURLEntry(t.Context(), at("/federation/log"), nil, 0, otherPub); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("a checkpoint under another key: %v, want a refusal", err)
	}
	tile := filepath.Join(dir, "tile", "0", "000.p", "3")
	raw, err := os.ReadFile(tile)
	if err != nil {
		t.Fatal(err)
	}
	raw[40] ^= 1
	if err := os.WriteFile(tile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadURLEntry(t.Context(), at("/federation/log"), nil, 0, pub); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("an altered tile: %v, want a refusal", err)
	}
}
