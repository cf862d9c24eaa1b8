package store

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// sealOnce is SealOnce that fails the test on an error.
func sealOnce(t *testing.T, s *Store, bodies []protocol.SpanBody) *SealReport {
	t.Helper()
	r, err := s.SealOnce(t.Context(), bodies)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// verifyFull verifies s fully and checks that it holds want entries.
func verifyFull(t *testing.T, s *Store, want int64) {
	t.Helper()
	r, err := s.Verify(t.Context(), VerifyOptions{Full: true})
	if err != nil || r.Checked != want {
		t.Fatalf("verify: %+v, %v; want %d entries checked", r, err, want)
	}
}

// TestSealOnceSkipsSealedSpans seals the same bodies twice, across chunks, and then
// again among new ones: nothing is sealed twice and the new ones follow the chain.
func TestSealOnceSkipsSealedSpans(t *testing.T) {
	s, _ := newStore(t)
	const n = 3*insertRows + 7
	first := sealOnce(t, s, testBodies(1, n))
	if len(first.Entries) != n || first.Duplicates != 0 || len(first.Conflicts) != 0 {
		t.Fatalf("first seal: %d entries, %d duplicates, %v", len(first.Entries), first.Duplicates, first.Conflicts)
	}
	again := sealOnce(t, s, testBodies(1, n))
	if len(again.Entries) != 0 || again.Duplicates != n || len(again.Conflicts) != 0 {
		t.Fatalf("second seal: %d entries, %d duplicates, %v", len(again.Entries), again.Duplicates, again.Conflicts)
	}
	mixed := sealOnce(t, s, testBodies(n-50, 100)) // 51 sealed, 49 new
	if len(mixed.Entries) != 49 || mixed.Duplicates != 51 {
		t.Fatalf("overlapping seal: %d entries, %d duplicates", len(mixed.Entries), mixed.Duplicates)
	}
	if mixed.Entries[0].Seq != n+1 || mixed.Entries[0].SpanID != testBody(n+1).SpanID {
		t.Fatalf("first new entry is seq %d span %s", mixed.Entries[0].Seq, mixed.Entries[0].SpanID)
	}
	verifyFull(t, s, n+49)
}

// TestSealOnceRefusesConflicts seals spans whose ids were sealed with other content: they
// are refused and named, the others sealed.
func TestSealOnceRefusesConflicts(t *testing.T) {
	s, _ := newStore(t)
	sealOnce(t, s, testBodies(1, 10))
	bodies := testBodies(5, 10)                                       // 5..10 sealed, 11..14 new
	bodies[2].Attributes = map[string]any{"gen_ai.system": "changed"} // span 7
	r := sealOnce(t, s, bodies)
	if len(r.Entries) != 4 || r.Duplicates != 5 || len(r.Conflicts) != 1 {
		t.Fatalf("%d entries, %d duplicates, conflicts %v", len(r.Entries), r.Duplicates, r.Conflicts)
	}
	c := r.Conflicts[0]
	if c.Index != 2 || c.Seq != 7 || c.Earlier != -1 || c.SpanID != bodies[2].SpanID || c.TraceID != bodies[2].TraceID {
		t.Fatalf("conflict %+v", c)
	}
	if msg := c.Error(); !strings.Contains(msg, "entry seq 7") || !strings.Contains(msg, bodies[2].SpanID) {
		t.Fatalf("conflict message %q", msg)
	}
	verifyFull(t, s, 14)
}

// TestSealOnceWithinOneCall seals a batch that holds the same span twice, and another span
// twice with different content: the first of each is sealed once, the repeat counted,
// the changed one refused.
func TestSealOnceWithinOneCall(t *testing.T) {
	s, _ := newStore(t)
	bodies := testBodies(1, 2*insertRows)
	bodies = append(bodies, testBody(3))    // same chunk as nothing else: a later chunk
	bodies[5] = testBody(1)                 // same chunk as body 0
	bodies[6] = testBody(2)                 // conflicts with body 1 in the same chunk:
	bodies[6].Attributes = map[string]any{} //   other content, same ids
	r := sealOnce(t, s, bodies)
	if r.Duplicates != 2 || len(r.Conflicts) != 1 || len(r.Entries) != len(bodies)-3 {
		t.Fatalf("%d entries of %d, %d duplicates, conflicts %v", len(r.Entries), len(bodies), r.Duplicates, r.Conflicts)
	}
	if c := r.Conflicts[0]; c.Index != 6 || c.Earlier != 1 || c.Seq != 2 {
		t.Fatalf("conflict %+v", c)
	}
	for i, e := range r.Entries {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
	verifyFull(t, s, int64(len(r.Entries)))
}

// TestSealOnceOnAChainWithDuplicates seals into a chain that already holds a span twice,
// as a chain sealed by an older cairn can, with different contents: SealOnce indexes it
// without failing, takes either content as sealed, and refuses a third.
func TestSealOnceOnAChainWithDuplicates(t *testing.T) {
	s, _ := newStore(t)
	changed := testBody(2)
	changed.Attributes = map[string]any{"x": "y"}
	for _, bodies := range [][]protocol.SpanBody{testBodies(1, 3), testBodies(1, 3), {changed}} {
		if _, err := s.Seal(t.Context(), bodies); err != nil { // the old way: no look-up
			t.Fatal(err)
		}
	}
	third := testBody(2)
	third.Name = "third"
	r := sealOnce(t, s, []protocol.SpanBody{testBody(1), changed, testBody(2), third, testBody(4)})
	if len(r.Entries) != 1 || r.Entries[0].Seq != 8 || r.Duplicates != 3 || len(r.Conflicts) != 1 {
		t.Fatalf("%d entries, %d duplicates, conflicts %v", len(r.Entries), r.Duplicates, r.Conflicts)
	}
	verifyFull(t, s, 8)
}

// TestSealOnceIndexIsUsed checks that the look-up probes the index rather than scanning
// the chain: INDEXED BY makes a statement that cannot use it an error.
func TestSealOnceIndexIsUsed(t *testing.T) {
	s, _ := newStore(t)
	sealOnce(t, s, testBodies(1, 3))
	rows, err := s.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+lookupSQL, `["a","b","c"]`)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "USING INDEX chain_span_ids (trace_id=? AND span_id=?)") {
		t.Fatalf("plan: %s", got)
	}
}

// TestSealOnceAfterImport seals exactly once into a chain imported from BIJOTEL: the
// index is built over the legacy rows (whose ids the original product never looked up)
// without failing, and sealing the same spans twice seals them once.
func TestSealOnceAfterImport(t *testing.T) {
	s, _ := newStore(t)
	importInto(t, s, newLegacyImport(testSecret, 20))
	for range 2 {
		sealOnce(t, s, testBodies(1, 5))
	}
	if last, err := s.LastSeq(t.Context()); err != nil || last != 26 {
		t.Fatalf("last seq %d, %v; want 26", last, err)
	}
	verifyFull(t, s, 26)
}

// The seals after the first take its index and tables, and their prepared statements,
// for granted (stmtcache.go). Another program dropping them costs at most the one seal
// that finds them gone: the next creates them again, and sealing once still holds.
func TestSealOnceAfterItsSchemaIsDropped(t *testing.T) {
	s, path := newStore(t)
	sealOnce(t, s, testBodies(1, 150))
	db := rawDB(t, path)
	for _, drop := range []string{`DROP INDEX chain_span_ids`, `DROP TABLE energy_log`} {
		if _, err := db.Exec(drop); err != nil {
			t.Fatal(err)
		}
		if r, err := s.SealOnce(t.Context(), testBodies(1, 150)); err == nil && len(r.Entries) > 0 {
			t.Fatalf("after %s: %d spans sealed again", drop, len(r.Entries))
		}
		if r := sealOnce(t, s, testBodies(1, 150)); len(r.Entries) != 0 || r.Duplicates != 150 {
			t.Fatalf("after %s: %d sealed, %d duplicates", drop, len(r.Entries), r.Duplicates)
		}
	}
	r := sealOnce(t, s, testBodies(150, 60))
	if len(r.Entries) != 59 || r.Duplicates != 1 {
		t.Fatalf("%d sealed, %d duplicates", len(r.Entries), r.Duplicates)
	}
	verifyFull(t, s, 209)
}
