package chain

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// failingReader reads r, then fails with err.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

// replaceNth replaces the nth instance of old in s, counting from 1.
func replaceNth(s, old, new string, n int) string {
	at := 0
	for range n - 1 {
		at += strings.Index(s[at:], old) + len(old)
	}
	return s[:at] + strings.Replace(s[at:], old, new, 1)
}

// TestSealLinesStopsAtTheBatchOfABadLine checks the pipeline's order: whatever the parsers
// and the reader do ahead, the batches before a bad line, or before a read error, are
// sealed, and nothing from the batch that holds it or after.
func TestSealLinesStopsAtTheBatchOfABadLine(t *testing.T) {
	lines := strings.SplitAfter(string(genAISpanLines(3500)), "\n")
	withBlank := strings.Join(lines[:1200], "") + "  \n" + strings.Join(lines[1200:], "") // line 1201 is blank
	readErr := errors.New("disk gone")
	for _, c := range []struct {
		name   string
		in     func() io.Reader
		sealed int
		err    string
	}{
		{"a bad line in the third batch", func() io.Reader {
			return strings.NewReader(replaceNth(withBlank, `{"name":"chat`, `{"nome":"chat`, 2502)) // line 2503
		}, 2000, "line 2503: json: unknown field \"nome\""},
		{"a read error", func() io.Reader {
			return &failingReader{strings.NewReader(strings.Join(lines[:1500], "")), readErr}
		}, 1000, "read spans: disk gone"},
		{"a body the store refuses", func() io.Reader {
			return strings.NewReader(replaceNth(withBlank, `"span_id":"`, `"span_id":"X`, 1001))
		}, 1000, "seal spans up to line 2001: seal: body 0: malformed input: span_id"},
		{"every span", func() io.Reader { return strings.NewReader(withBlank) }, 3500, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := store.Open(filepath.Join(t.TempDir(), "chain.db"), bytes.Repeat([]byte{0x5c}, 32))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			n, last, err := sealLines(t.Context(), s, c.in())
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("error %v, want one with %q", err, c.err)
			}
			st, statErr := s.Stats(t.Context())
			if statErr != nil {
				t.Fatal(statErr)
			}
			if n != c.sealed || st.Entries != int64(c.sealed) || (n > 0 && last.Seq != int64(n)) {
				t.Fatalf("sealed %d (last %+v), chain holds %d; want %d", n, last, st.Entries, c.sealed)
			}
			// Malformed input exits 1, a body the store refuses included: it is no entry of
			// the chain that failed a verification (exit 3).
			if c.err != "" && c.err != "read spans: disk gone" && (!errors.Is(err, protocol.ErrMalformed) || cmdutil.ExitCode(err) != cmdutil.ExitError) {
				t.Errorf("%v: exit %d, want %d (malformed input)", err, cmdutil.ExitCode(err), cmdutil.ExitError)
			}
		})
	}
}
