package store

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

func TestSummariesPages(t *testing.T) {
	s, _ := newStore(t)
	sealed := seal(t, s, 23, 10)
	tests := map[string]struct {
		offset, limit int
		wantFirst     int64 // seq of the first entry, 0 for none
		wantLen       int
	}{
		"first page":               {offset: 0, limit: 10, wantFirst: 1, wantLen: 10},
		"middle page":              {offset: 10, limit: 10, wantFirst: 11, wantLen: 10},
		"last page is short":       {offset: 20, limit: 10, wantFirst: 21, wantLen: 3},
		"past the end is empty":    {offset: 23, limit: 10},
		"far past the end":         {offset: 1000, limit: 10},
		"limit zero reads nothing": {offset: 0, limit: 0},
		"huge limit cannot wrap":   {offset: 5, limit: math.MaxInt, wantFirst: 6, wantLen: 18},
		"huge offset cannot wrap":  {offset: math.MaxInt, limit: math.MaxInt},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, total, err := s.Summaries(t.Context(), tc.offset, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if total != 23 {
				t.Errorf("total %d, want 23", total)
			}
			if got == nil || len(got) != tc.wantLen {
				t.Fatalf("%d entries (nil: %t), want %d", len(got), got == nil, tc.wantLen)
			}
			for i := range got {
				if want := summaryOf(sealed[tc.wantFirst-1+int64(i)]); got[i] != want {
					t.Fatalf("entry %d:\n got %+v\nwant %+v", i, got[i], want)
				}
			}
		})
	}
	for _, bad := range [][2]int{{-1, 10}, {0, -1}} {
		if _, _, err := s.Summaries(t.Context(), bad[0], bad[1]); err == nil {
			t.Errorf("Summaries(%d, %d) did not fail", bad[0], bad[1])
		}
	}
}

// summaryOf is e's summary, built the plain way.
func summaryOf(e *protocol.Entry) Summary {
	return Summary{Seq: e.Seq, TimestampNS: e.TimestampNS, TraceID: e.TraceID, SpanID: e.SpanID,
		SpanName: e.SpanName, SpanKind: e.SpanKind, BodyBytes: int64(len(e.CanonicalBody)),
		CanonicalHash: e.CanonicalHash, PrevHash: e.PrevHash, HMACHash: e.HMACHash}
}

// TestSummariesReadsRowsThatDoNotUnpack seals columns holding the separator of the packed
// read; they are read column by column instead, and come back intact.
func TestSummariesReadsRowsThatDoNotUnpack(t *testing.T) {
	s, _ := newStore(t)
	bodies := testBodies(1, 6)
	bodies[2].Name = "a\x1fname"
	bodies[4].Kind = "\x1f"
	sealed, err := s.Seal(t.Context(), bodies)
	if err != nil {
		t.Fatal(err)
	}
	got, total, err := s.Summaries(t.Context(), 0, 6)
	if err != nil || len(got) != 6 || total != 6 {
		t.Fatalf("Summaries: %d entries of %d, %v", len(got), total, err)
	}
	for i := range got {
		if want := summaryOf(sealed[i]); got[i] != want {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i+1, got[i], want)
		}
	}
}

func TestEntryBySeq(t *testing.T) {
	s, _ := newStore(t)
	if _, err := s.Entry(t.Context(), 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Entry(1) of an empty chain: %v, want ErrNotFound", err)
	}
	if last, err := s.LastSeq(t.Context()); err != nil || last != 0 {
		t.Fatalf("LastSeq of an empty chain: %d, %v", last, err)
	}
	sealed := seal(t, s, 5, 5)
	got, err := s.Entry(t.Context(), 4)
	if err != nil || !reflect.DeepEqual(got, sealed[3]) {
		t.Fatalf("Entry(4): %+v, %v\nwant %+v", got, err, sealed[3])
	}
	for _, seq := range []int64{0, -3, 6, math.MaxInt64} {
		if _, err := s.Entry(t.Context(), seq); !errors.Is(err, ErrNotFound) {
			t.Errorf("Entry(%d): %v, want ErrNotFound", seq, err)
		}
	}
	if last, err := s.LastSeq(t.Context()); err != nil || last != 5 {
		t.Fatalf("LastSeq: %d, %v, want 5", last, err)
	}
}
