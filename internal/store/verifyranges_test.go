package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

func TestSplitRanges(t *testing.T) {
	for _, c := range []struct {
		head, lo, hi int64
		n            int
		want         []span
	}{
		{1, 1, 1200, 3, []span{{1, 400}, {401, 800}, {801, 1200}}},
		{5, 5, 11, 2, []span{{5, 7}, {8, 11}}},
		{1, 1, 2, 7, []span{{1, 1}, {2, 2}}},
		{1, 101, 300, 2, []span{{1, 200}, {201, 300}}}, // 1..100 imported: in the first range
		{1, 300, 300, 4, []span{{1, 300}}},
	} {
		if got := splitRanges(c.head, c.lo, c.hi, c.n); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("splitRanges(%d, %d, %d, %d) = %v, want %v", c.head, c.lo, c.hi, c.n, got, c.want)
		}
	}
}

// verdict is what a verification reports, to compare two ways of verifying.
type verdict struct {
	checked     int64
	err         string
	wrongSecret bool
}

func verifyWith(t *testing.T, s *Store, o VerifyOptions) verdict {
	t.Helper()
	r, err := s.Verify(t.Context(), o)
	v := verdict{wrongSecret: errors.Is(err, ErrWrongSecret)}
	if err != nil {
		v.err = err.Error()
	}
	if r != nil {
		v.checked = r.Checked
	}
	return v
}

// rangeSplits are the numbers of ranges the equivalence tests cut the chain into.
var rangeSplits = []int{2, 3, 7}

// boundaryRows returns the rows on either side of the boundaries between ranges when the
// chain of tamperChain rows is cut in two and in three: where a range ends, where the next
// begins (whose link only the join checks), and the row after.
func boundaryRows() []int64 {
	var out []int64
	for _, n := range []int{2, 3} {
		sp := splitRanges(1, 1, tamperChain, n)[1]
		out = append(out, sp.lo-1, sp.lo, sp.lo+1)
	}
	return out
}

// TestRangesAgreeWithOnePass runs every tamper kind of TestTamperingIsFoundAtItsSeq at
// the rows around every boundary between ranges (the last row of a range, the first of
// the next, whose link only the join checks, and the one after), and checks that the
// verification in ranges reports exactly what the single pass does: the same error text,
// the same count of entries that passed, the same wrong-secret verdict, with the secret
// and without, for the whole chain and for a window starting at the tampered row.
func TestRangesAgreeWithOnePass(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template.db")
	s := openStore(t, template, testSecret)
	seal(t, s, tamperChain, 1000)
	if err := s.Close(); err != nil { // checkpoints the WAL: the file alone holds the chain
		t.Fatal(err)
	}
	clean, err := os.ReadFile(template)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range boundaryRows() {
		for _, c := range tamperCases(at) {
			if c.last > tamperChain {
				continue
			}
			t.Run(fmt.Sprintf("%s at %d", c.name, at), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "chain.db")
				if err := os.WriteFile(path, clean, 0o600); err != nil {
					t.Fatal(err)
				}
				c.tamper(t, rawDB(t, path))
				seq := c.seq
				if seq == 0 {
					seq = at
				}
				for _, secret := range [][]byte{testSecret, nil} {
					st := openStore(t, path, secret)
					for _, from := range []int64{0, seq} {
						one := verifyWith(t, st, VerifyOptions{Full: true, From: from, Ranges: 1})
						if secret != nil && from == 0 {
							r, err := st.Verify(t.Context(), VerifyOptions{Full: true, Ranges: 2})
							wantEntryError(t, err, seq, c.reason)
							if r.Checked != seq-1 {
								t.Errorf("%d entries passed, want %d", r.Checked, seq-1)
							}
						}
						for _, n := range rangeSplits {
							if got := verifyWith(t, st, VerifyOptions{Full: true, From: from, Ranges: n}); got != one {
								t.Errorf("secret %v, from %d, %d ranges: %+v; one pass: %+v", secret != nil, from, n, got, one)
							}
						}
					}
				}
			})
		}
	}
}

// TestRangesPassAnIntactChain: every split of an intact chain passes, every entry counted
// once, and windows that start or end at a boundary pass too.
func TestRangesPassAnIntactChain(t *testing.T) {
	s, _ := newStore(t)
	seal(t, s, tamperChain, 1000)
	var calls int
	for _, n := range append(rangeSplits, 0, 64) {
		for _, w := range [][2]int64{{0, 0}, {401, 0}, {400, 801}, {1199, 1200}, {1200, 1200}} {
			r, err := s.Verify(t.Context(), VerifyOptions{Full: true, From: w[0], To: w[1], Ranges: n,
				Progress: func(done, total int64) { calls++ }})
			if err != nil {
				t.Fatalf("%d ranges, window %v: %v", n, w, err)
			}
			if want := r.To - r.From + 1; r.Checked != want || !r.Full {
				t.Errorf("%d ranges, window %v: %+v, want %d checked", n, w, r, want)
			}
		}
	}
	if calls == 0 {
		t.Error("progress was never reported")
	}
}

// TestRangesAgreeOnImportedChains: a chain imported from the original product keeps its
// import check (which follows the legacy chain row by row) in the first range, and the
// ranges after it report what one pass does, intact and tampered after the imports.
func TestRangesAgreeOnImportedChains(t *testing.T) {
	s, path := newStore(t)
	l := newLegacyImport(testSecret, 500)
	importInto(t, s, l)
	seal(t, s, 700, 350)
	for _, from := range []int64{0, 2, 300, 501, 502, 900} {
		one := verifyWith(t, s, VerifyOptions{Full: true, From: from, Ranges: 1})
		if one.err != "" {
			t.Fatalf("from %d, one pass: %s", from, one.err)
		}
		for _, n := range rangeSplits {
			if got := verifyWith(t, s, VerifyOptions{Full: true, From: from, Ranges: n}); got != one {
				t.Errorf("from %d, %d ranges: %+v; one pass: %+v", from, n, got, one)
			}
		}
		r, err := s.Verify(t.Context(), VerifyOptions{Full: true, From: from, Ranges: 3})
		if err != nil || r.Import == nil || (from <= 2 && !r.Import.ColumnsChecked) {
			t.Errorf("from %d: import report %+v, %v", from, r.Import, err)
		}
	}
	flipText(t, rawDB(t, path), "canonical_body", 900)
	one := verifyWith(t, s, VerifyOptions{Full: true, Ranges: 1})
	for _, n := range rangeSplits {
		if got := verifyWith(t, s, VerifyOptions{Full: true, Ranges: n}); got != one {
			t.Errorf("tampered, %d ranges: %+v; one pass: %+v", n, got, one)
		}
	}
	_, err := s.Verify(t.Context(), VerifyOptions{Full: true, Ranges: 3})
	wantEntryError(t, err, 900, protocol.ReasonBodyHash)
}
