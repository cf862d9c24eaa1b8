package store

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

var (
	testSecret  = bytes.Repeat([]byte{0x5c}, 32)
	otherSecret = bytes.Repeat([]byte{0x36}, 32)
	testKey     = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	testTime    = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
)

// testBody is the span body of synthetic entry i: about 500 bytes of canonical JSON.
func testBody(i int64) protocol.SpanBody {
	start := testTime.UnixNano() + i*int64(time.Millisecond)
	return protocol.SpanBody{
		Name: fmt.Sprintf("chat gpt-4o-%d", i%7),
		Kind: "client",
		Attributes: map[string]any{
			"gen_ai.system":              "openai",
			"gen_ai.request.model":       "gpt-4o",
			"gen_ai.usage.input_tokens":  i % 1000,
			"gen_ai.usage.output_tokens": i % 313,
			"gen_ai.prompt.digest":       fmt.Sprintf("%064x", i),
			"note":                       "naïve \"quoted\" ✓ " + strings.Repeat("p", 10),
		},
		StatusCode:  "OK",
		StartTimeNS: start,
		EndTimeNS:   start + 850_000_000,
		TraceID:     fmt.Sprintf("%032x", i+1<<40),
		SpanID:      fmt.Sprintf("%016x", i+1),
	}
}

func testBodies(first, n int64) []protocol.SpanBody {
	out := make([]protocol.SpanBody, n)
	for i := range out {
		out[i] = testBody(first + int64(i))
	}
	return out
}

// newStore opens a new chain in a temporary directory, with the test secret.
func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chain.db")
	return openStore(t, path, testSecret), path
}

func openStore(t *testing.T, path string, secret []byte) *Store {
	t.Helper()
	s, err := Open(path, secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// seal seals n bodies in batches of batch, numbering bodies after the chain's last seq.
func seal(t *testing.T, s *Store, n, batch int64) []*protocol.Entry {
	t.Helper()
	st, err := s.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []*protocol.Entry
	for done := int64(0); done < n; done += batch {
		es, err := s.Seal(t.Context(), testBodies(st.LastSeq+done+1, min(batch, n-done)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, es...)
	}
	return out
}

// wantEntryError fails unless err is an *EntryError for seq with reason.
func wantEntryError(t *testing.T, err error, seq int64, reason string) {
	t.Helper()
	var ee *protocol.EntryError
	if !errors.As(err, &ee) {
		t.Fatalf("got %v, want an entry error (seq %d, %s)", err, seq, reason)
	}
	if ee.Seq != seq || ee.Reason != reason {
		t.Fatalf("got seq %d %s (%v), want seq %d %s", ee.Seq, ee.Reason, err, seq, reason)
	}
}

func TestSealedEntriesAreProtocolEntries(t *testing.T) {
	s, _ := newStore(t)
	got := seal(t, s, 1, 1)
	got = append(got, seal(t, s, 250, 250)...)
	got = append(got, seal(t, s, 7, 3)...)
	prev := protocol.GenesisPrevHash
	for i, e := range got {
		want, err := protocol.NewEntry(testSecret, int64(i+1), prev, testBody(int64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e, want) {
			t.Fatalf("entry %d:\n got %+v\nwant %+v", i+1, e, want)
		}
		prev = e.HMACHash
	}
	st, err := s.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	last := got[len(got)-1]
	want := Stats{Entries: 258, FirstSeq: 1, LastSeq: 258, LastHMACHash: last.HMACHash,
		FirstTimestampNS: testBody(1).StartTimeNS, LastTimestampNS: testBody(258).StartTimeNS, FileBytes: st.FileBytes}
	if st != want || st.FileBytes < 258*500 {
		t.Errorf("stats %+v, want %+v", st, want)
	}
}

func TestVerifyWindows(t *testing.T) {
	s, _ := newStore(t)
	seal(t, s, 3000, 1000)
	for _, c := range []struct {
		from, to, checkedSmoke, wantFrom, wantTo int64
	}{
		{0, 0, 2, 1, 3000},
		{1, 1, 1, 1, 1},
		{0, 10, 2, 1, 10},
		{1500, 0, 2, 1500, 3000},
		{2999, 3000, 2, 2999, 3000},
		{3000, 3000, 1, 3000, 3000},
		{513, 2049, 2, 513, 2049}, // windows that do not start or end on a batch boundary
	} {
		for _, full := range []bool{false, true} {
			var calls, lastDone, lastTotal int64
			r, err := s.Verify(t.Context(), VerifyOptions{Full: full, From: c.from, To: c.to, Progress: func(done, total int64) {
				calls, lastDone, lastTotal = calls+1, done, total
			}})
			if err != nil {
				t.Fatalf("window %d-%d full=%v: %v", c.from, c.to, full, err)
			}
			checked := c.checkedSmoke
			if full {
				checked = c.wantTo - c.wantFrom + 1
			}
			passed := []SeqRange{{c.wantFrom, c.wantTo}}
			if !full {
				passed = []SeqRange{{c.wantFrom, c.wantFrom}, {c.wantTo, c.wantTo}}[:checked]
			}
			want := VerifyReport{From: c.wantFrom, To: c.wantTo, Checked: checked, HMACsChecked: true, Full: full,
				Passed: passed, NotChecked: c.wantTo - c.wantFrom + 1 - checked}
			if !reflect.DeepEqual(*r, want) {
				t.Errorf("window %d-%d: report %+v, want %+v", c.from, c.to, *r, want)
			}
			if calls == 0 || lastDone != checked || lastTotal != checked {
				t.Errorf("window %d-%d full=%v: %d progress calls, last (%d, %d)", c.from, c.to, full, calls, lastDone, lastTotal)
			}
		}
	}
	for _, w := range [][2]int64{{-1, 0}, {0, -1}, {5, 4}, {1, 3001}, {3001, 0}} {
		if _, err := s.Verify(t.Context(), VerifyOptions{From: w[0], To: w[1]}); err == nil {
			t.Errorf("window %d-%d: no error", w[0], w[1])
		}
	}
}

func TestEmptyChain(t *testing.T) {
	s, _ := newStore(t)
	r, err := s.Verify(t.Context(), VerifyOptions{Full: true})
	if err != nil || !reflect.DeepEqual(*r, VerifyReport{HMACsChecked: true, Full: true}) {
		t.Errorf("verify: %+v, %v", r, err)
	}
	if st, err := s.Stats(t.Context()); err != nil || st.Entries != 0 || st.LastSeq != 0 || st.LastHMACHash != "" {
		t.Errorf("stats: %+v, %v", st, err)
	}
	if _, err := s.Export(t.Context(), &bytes.Buffer{}, ExportOptions{Key: testKey}); err == nil {
		t.Error("export of an empty chain: no error")
	}
	if es, err := s.Seal(t.Context(), nil); es != nil || err != nil {
		t.Errorf("seal of nothing: %v, %v", es, err)
	}
}

func TestSealRefusesMalformedBodies(t *testing.T) {
	s, _ := newStore(t)
	seal(t, s, 3, 3)
	for name, edit := range map[string]func(b *protocol.SpanBody){
		"upper-case trace_id": func(b *protocol.SpanBody) { b.TraceID = strings.Repeat("AB", 16) },
		"short span_id":       func(b *protocol.SpanBody) { b.SpanID = "abc" },
		"negative start":      func(b *protocol.SpanBody) { b.StartTimeNS = -1 },
		"invalid UTF-8 name":  func(b *protocol.SpanBody) { b.Name = "\xff" },
		"unencodable value":   func(b *protocol.SpanBody) { b.Attributes = map[string]any{"f": func() {}} },
	} {
		bodies := testBodies(4, 5)
		edit(&bodies[3])
		_, err := s.Seal(t.Context(), bodies)
		if !errors.Is(err, protocol.ErrMalformed) || !strings.Contains(err.Error(), "body 3") {
			t.Errorf("%s: got %v, want a malformed body 3", name, err)
		}
	}
	// Nothing was sealed, and an empty name and kind are fine.
	bodies := testBodies(4, 1)
	bodies[0].Name, bodies[0].Kind, bodies[0].Attributes = "", "", nil
	es, err := s.Seal(t.Context(), bodies)
	if err != nil || es[0].Seq != 4 {
		t.Fatalf("seal: %v", err)
	}
	if _, err := s.Verify(t.Context(), VerifyOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "chain.db")
	s := openStore(t, path, testSecret)
	seal(t, s, 10, 10)
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", p, fi.Mode(), err)
		}
	}
	if _, err := Open(path, testSecret[:15]); err == nil {
		t.Error("a 15-byte secret was accepted")
	}
	if _, err := Open(filepath.Join(dir, "missing.db"), nil); err == nil {
		t.Error("a missing chain was opened read-only")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("opening read-only created the file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(dir, "other.db"), nil); err == nil {
		t.Error("a file without a chain table was opened read-only")
	}

	// Read-only: verify without HMACs, while the writer goes on.
	ro := openStore(t, path, nil)
	r, err := ro.Verify(t.Context(), VerifyOptions{Full: true})
	if err != nil || r.Checked != 10 || r.HMACsChecked {
		t.Errorf("read-only verify: %+v, %v", r, err)
	}
	if _, err := ro.Seal(t.Context(), testBodies(11, 1)); !errors.Is(err, ErrNoSecret) {
		t.Errorf("read-only seal: %v", err)
	}
	if _, err := ro.Export(t.Context(), &bytes.Buffer{}, ExportOptions{Key: testKey}); !errors.Is(err, ErrNoSecret) {
		t.Errorf("read-only export: %v", err)
	}
	seal(t, s, 5, 5)
	if st, err := ro.Stats(t.Context()); err != nil || st.LastSeq != 15 {
		t.Errorf("read-only stats after the writer sealed more: %+v, %v", st, err)
	}
}

func TestVerifyStopsWhenCanceled(t *testing.T) {
	s, _ := newStore(t)
	seal(t, s, 5000, 1000)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Verify(ctx, VerifyOptions{Full: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("verify with a canceled context: %v", err)
	}

	// Canceled while rows are streaming: the rows the workers skipped must not pass.
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	tx, err := s.readTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var seen int
	err = s.scan(ctx, tx, 1, 5000, false, func(*row) error {
		if seen++; seen == 100 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || seen >= 5000 {
		t.Errorf("scan canceled after 100 rows: %v after %d rows", err, seen)
	}
}
