package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file seals spans exactly once (SealOnce): a span is known by its trace_id and
// span_id, and its content by its entry's canonical_hash, the SHA-256 of its canonical
// body (every member of the span: name, kind, attributes, status, times and the two ids;
// none of the seal-time columns seq, prev_hash, hmac_hash). A span whose ids the chain
// already holds is not sealed again: with the same canonical_hash it is a duplicate,
// skipped and counted (OTLP exporters retry, so duplicates are normal traffic); with
// another it is a conflict, refused and reported.
//
// The chain's index chain_span_ids on (trace_id, span_id) finds them. It is not UNIQUE:
// chains sealed before it existed, and chains imported from BIJOTEL, may hold the same ids
// twice, and CREATE UNIQUE INDEX would fail on them (and a UNIQUE violation would fail a
// whole batch's INSERT). SealOnce creates it in its first transaction, so a chain written
// by an older cairn is indexed once, when it is first sealed into this way; readers never
// write it. Rows of an older chain with the same ids count as one span: a new span is a
// duplicate when any of them has its canonical_hash, a conflict otherwise.

// spanIndexSchema creates the index SealOnce looks spans up by.
const spanIndexSchema = `CREATE INDEX IF NOT EXISTS chain_span_ids ON chain (trace_id, span_id)`

// SealReport says what SealOnce did with each body.
type SealReport struct {
	// Entries are the entries sealed, consecutive and in the order of their bodies.
	Entries []*protocol.Entry
	// Duplicates counts the bodies not sealed because a span with the same ids and the
	// same canonical_hash was sealed before, or came earlier in the same call.
	Duplicates int
	// Conflicts are the bodies refused because their ids were sealed (or came earlier in
	// the same call) with other content, in body order.
	Conflicts []Conflict
}

// A Conflict is a body that SealOnce refused: its trace_id and span_id are those of a
// span sealed before, or earlier in the same call, whose content differs.
type Conflict struct {
	Index   int    // the body's index in the call
	Name    string // the body's span name
	TraceID string
	SpanID  string
	// Seq is the entry that holds the ids.
	Seq int64
	// Earlier is the index of the body of the same call that entry Seq was sealed from,
	// or -1 when the chain held it before the call.
	Earlier int
}

// Error describes the conflict.
func (c Conflict) Error() string {
	where := fmt.Sprintf("entry seq %d", c.Seq)
	if c.Earlier >= 0 {
		where += " (sealed from an earlier span of the same batch)"
	}
	return fmt.Sprintf("span %s (trace_id %s, span_id %s) has other content than %s with the same ids: not sealed",
		protocol.Quote(c.Name), c.TraceID, c.SpanID, where)
}

// SealOnce is Seal of the bodies not sealed before: see this file's comment. Bodies sealed
// before (or earlier in bodies) with the same content are skipped; with other content they
// are refused. The others are sealed as Seal seals, all or none, in one transaction that
// also does the look-ups, so that two processes sealing the same span seal it once.
func (s *Store) SealOnce(ctx context.Context, bodies []protocol.SpanBody) (*SealReport, error) {
	if s.secret == nil {
		return nil, ErrNoSecret
	}
	return s.SealBatchOnce(ctx, s.Prepare(bodies))
}

// SealBatchOnce is SealOnce of the bodies b was prepared from.
func (s *Store) SealBatchOnce(ctx context.Context, b *Batch) (*SealReport, error) {
	r := &SealReport{}
	if err := s.sealBatch(ctx, b, r); err != nil {
		return nil, err
	}
	return r, nil
}

// spanKey is a span's ids.
type spanKey struct{ traceID, spanID string }

// batchSpan is a span of the batch being sealed: the entries that hold its ids, those of
// the chain before the call, or the one sealed from body index of the call.
type batchSpan struct {
	index   int // -1 for entries of the chain before the call
	entries []knownSpan
}

// onceFilter decides, chunk by chunk inside the sealing transaction, which entries of a
// batch to seal, and fills report.
type onceFilter struct {
	report *SealReport
	seen   map[spanKey]*batchSpan  // the batch's spans so far
	cache  *stmtCache              // where the look-up's statement comes from
	known  map[spanKey][]knownSpan // the chain's entries holding the batch's ids
}

// knownSpan is an entry of the chain holding some ids.
type knownSpan struct {
	seq  int64
	hash string
}

// newOnceFilter creates the span index in tx unless created says it exists (an earlier
// SealOnce of this Store created it), and returns a filter for report.
func newOnceFilter(ctx context.Context, tx *sql.Tx, report *SealReport, n int, created bool, cache *stmtCache) (*onceFilter, error) {
	if !created {
		if _, err := tx.ExecContext(ctx, spanIndexSchema); err != nil {
			return nil, fmt.Errorf("create index chain_span_ids: %w", err)
		}
	}
	return &onceFilter{report: report, seen: make(map[spanKey]*batchSpan, n), cache: cache,
		known: make(map[spanKey][]knownSpan)}, nil
}

// lookupSQL selects the entries holding any of the pairs of ids its one parameter lists,
// a JSON array of trace_id || span_id texts (both lowercase hex, 32 and 16 characters):
// one index probe a pair. One text for the whole batch, rather than two parameters a
// span, because binding a text costs the driver an allocation and a copy in SQLite's
// memory each: 2,000 of them a batch of 1,000 spans.
const lookupSQL = `SELECT c.trace_id, c.span_id, c.seq, c.canonical_hash FROM json_each(?) AS v ` +
	`CROSS JOIN chain AS c INDEXED BY chain_span_ids ON c.trace_id = substr(v.value, 1, 32) AND c.span_id = substr(v.value, 33)`

// lookup reads into f.known the chain's entries holding the ids of bodies, once for the
// batch, while the workers are still making its entries. A body whose ids are not of the
// protocol's shape is not looked up: its entry fails, and with it the batch, before any
// is kept.
func (f *onceFilter) lookup(ctx context.Context, tx *sql.Tx, bodies []protocol.SpanBody) error {
	keys := make([]byte, 0, 2+len(bodies)*51)
	keys = append(keys, '[')
	for i := range bodies {
		b := &bodies[i]
		if !protocol.IsSpanIDs(b.TraceID, b.SpanID) {
			continue
		}
		if len(keys) > 1 {
			keys = append(keys, ',')
		}
		keys = append(append(append(append(keys, '"'), b.TraceID...), b.SpanID...), '"')
	}
	keys = append(keys, ']')
	st, err := f.cache.stmt(ctx, tx, lookupSQL)
	if err != nil {
		return fmt.Errorf("prepare span look-up: %w", err)
	}
	rows, err := st.QueryContext(ctx, string(keys))
	if err != nil {
		return fmt.Errorf("look up spans: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var k spanKey
		var ks knownSpan
		if err := rows.Scan(&k.traceID, &k.spanID, &ks.seq, &ks.hash); err != nil {
			return fmt.Errorf("look up spans: %w", err)
		}
		f.known[k] = append(f.known[k], ks)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("look up spans: %w", err)
	}
	return nil
}

// keep reports whether the entry of body index, in the chunk lookup read, is to be sealed,
// and otherwise counts it as a duplicate or a conflict. A kept entry must be given to
// linked as soon as it is linked, before the next keep.
func (f *onceFilter) keep(index int, e *protocol.Entry) bool {
	k := spanKey{e.TraceID, e.SpanID}
	prior, ok := f.seen[k]
	if !ok {
		if known := f.known[k]; len(known) > 0 {
			prior = &batchSpan{index: -1, entries: known}
			f.seen[k] = prior
		}
	}
	if prior == nil {
		f.seen[k] = &batchSpan{index: index, entries: []knownSpan{{hash: e.CanonicalHash}}}
		return true
	}
	for _, ks := range prior.entries {
		if ks.hash == e.CanonicalHash {
			f.report.Duplicates++
			return false
		}
	}
	f.report.Conflicts = append(f.report.Conflicts, Conflict{Index: index, Name: e.SpanName,
		TraceID: e.TraceID, SpanID: e.SpanID, Seq: prior.entries[0].seq, Earlier: prior.index})
	return false
}

// linked records the seq of an entry keep kept.
func (f *onceFilter) linked(e *protocol.Entry) {
	f.seen[spanKey{e.TraceID, e.SpanID}].entries[0].seq = e.Seq
	f.report.Entries = append(f.report.Entries, e)
}
