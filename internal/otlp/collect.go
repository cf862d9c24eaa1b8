package otlp

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// collect converts the spans of td that pass the filter to bodies, in request order, and
// accounts for the others. The bodies pass every check of chain.ValidateSpanBody except,
// possibly, that their attributes have a canonical form: see seal. Spans are converted and
// checked on all cores, as the store seals them.
func (h *Handler) collect(td ptrace.Traces) ([]protocol.SpanBody, *rejections) {
	rejected := &rejections{}
	spans := make([]ptrace.Span, 0, td.SpanCount())
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				if !h.allSpans && !HasGenAIAttribute(span.Attributes()) {
					rejected.filtered++
					continue
				}
				spans = append(spans, span)
			}
		}
	}
	bodies := make([]protocol.SpanBody, len(spans))
	errs := make([]error, len(spans))
	inChunks(len(spans), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			body, err := SpanBody(spans[i])
			if err != nil {
				errs[i] = fmt.Errorf("%w %s: %w", chain.ErrInvalidSpan, protocol.Quote(spans[i].Name()), err)
				continue
			}
			bodies[i], errs[i] = body, checkFields(body)
		}
	})
	valid := bodies[:0]
	for i, err := range errs {
		if err != nil {
			rejected.invalid(err)
			continue
		}
		valid = append(valid, bodies[i])
	}
	return valid, rejected
}

// chunkSize is how many spans a collect worker takes at a time.
const chunkSize = 64

// inChunks calls do for consecutive chunks [lo, hi) of chunkSize covering [0, n), from
// one goroutine per core, and returns when all are done.
func inChunks(n int, do func(lo, hi int)) {
	chunks := (n + chunkSize - 1) / chunkSize
	var next atomic.Int64
	work := func() {
		for c := int(next.Add(1) - 1); c < chunks; c = int(next.Add(1) - 1) {
			do(c*chunkSize, min((c+1)*chunkSize, n))
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), chunks) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// checkFields runs chain.ValidateSpanFields on body (chain.ValidateSpanBody without its
// attributes), and refuses the all-zero ids OTLP calls invalid. Whether the attributes
// have a canonical form is left to seal: finding out costs as much as sealing them, which
// finds out anyway.
func checkFields(body protocol.SpanBody) error {
	const zeroTraceID, zeroSpanID = "00000000000000000000000000000000", "0000000000000000"
	switch {
	case body.TraceID == zeroTraceID:
		return fmt.Errorf("%w %s: trace_id is all zeros", chain.ErrInvalidSpan, protocol.Quote(body.Name))
	case body.SpanID == zeroSpanID:
		return fmt.Errorf("%w %s: span_id is all zeros", chain.ErrInvalidSpan, protocol.Quote(body.Name))
	}
	return chain.ValidateSpanFields(body)
}

// seal seals bodies, which collect checked, with one Seal call, so they become
// consecutive entries or none do.
//
// collect did not check that every body has a canonical form (chain.ValidateSpanBody's
// costliest check, which only attributes can fail, and only in corner cases such as two
// keys that differ in invalid UTF-8 alone): the Sealer computes that form anyway, and
// refuses the whole batch, sealing nothing, with an error wrapping protocol.ErrMalformed
// if a body has none. Then, and only then, seal runs chain.ValidateSpanBody on every
// body, rejects those it refuses, and seals the others with a second call. So the spans
// sealed are exactly those chain.ValidateSpanBody accepts, as on the SDK path.
func (h *Handler) seal(ctx context.Context, bodies []protocol.SpanBody, rejected *rejections) error {
	if len(bodies) == 0 {
		return nil
	}
	err := h.sealBodies(ctx, bodies, rejected)
	if !errors.Is(err, protocol.ErrMalformed) {
		return err
	}
	valid := make([]protocol.SpanBody, 0, len(bodies))
	for _, body := range bodies {
		if verr := chain.ValidateSpanBody(body); verr != nil {
			rejected.invalid(verr)
			continue
		}
		valid = append(valid, body)
	}
	switch {
	case len(valid) == len(bodies): // every body is fine: the chain refused for its own reasons
		return err
	case len(valid) == 0:
		return nil
	}
	return h.sealBodies(ctx, valid, rejected)
}

// maxReasons is how many invalid spans an error_message describes one by one.
const maxReasons = 3

// rejections counts the spans of a request that were not sealed, and why.
type rejections struct {
	filtered  int64    // no gen_ai (or bijotel.mcp) attribute
	invalids  int64    // failed conversion or validation
	reasons   []string // the first maxReasons invalid spans, described
	conflicts int64    // ids sealed before with other content (store.Conflict)
	clashes   []string // the first maxReasons conflicts, described
}

// conflict counts a span refused because its ids were sealed with other content.
func (r *rejections) conflict(c store.Conflict) {
	r.conflicts++
	if len(r.clashes) < maxReasons {
		r.clashes = append(r.clashes, c.Error())
	}
}

// invalid counts an invalid span; err says which and why.
func (r *rejections) invalid(err error) {
	r.invalids++
	if len(r.reasons) < maxReasons {
		r.reasons = append(r.reasons, err.Error())
	}
}

// count is the number of spans rejected.
func (r *rejections) count() int64 {
	return r.filtered + r.invalids + r.conflicts
}

// message is the partial success error_message, or "" when nothing was rejected.
func (r *rejections) message() string {
	var parts []string
	if r.filtered > 0 {
		parts = append(parts, fmt.Sprintf("%d spans carry no %s* or %s* attribute and were not sealed",
			r.filtered, chain.GenAIAttributePrefix, chain.MCPAttributePrefix))
	}
	if r.invalids > 0 {
		parts = append(parts, listed(fmt.Sprintf("%d invalid spans were not sealed", r.invalids), r.reasons, r.invalids))
	}
	if r.conflicts > 0 {
		parts = append(parts, listed(fmt.Sprintf("%d spans were not sealed: their trace_id and span_id "+
			"were sealed before with other content", r.conflicts), r.clashes, r.conflicts))
	}
	return strings.Join(parts, "; ")
}

// listed is head, the first reasons of n, and how many more there are.
func listed(head string, reasons []string, n int64) string {
	s := head + ": " + strings.Join(reasons, "; ")
	if more := n - int64(len(reasons)); more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return s
}
