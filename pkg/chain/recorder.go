package chain

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Sealer appends span bodies to a chain as consecutive entries, atomically.
type Sealer interface {
	Seal(ctx context.Context, bodies []protocol.SpanBody) ([]*protocol.Entry, error)
}

// ErrInvalidSpan is wrapped by the error returned for a span body that cannot be sealed
// as it is: see [ValidateSpanBody].
var ErrInvalidSpan = errors.New("invalid span")

// ErrExporterShutdown is returned by [SpanExporter.ExportSpans] after Shutdown.
var ErrExporterShutdown = errors.New("chain: span exporter is shut down")

// Recorder seals spans one at a time through a Sealer. It is safe for concurrent use if
// its Sealer is.
type Recorder struct {
	sealer Sealer
}

// NewRecorder returns a Recorder that seals through s.
func NewRecorder(s Sealer) *Recorder {
	return &Recorder{sealer: s}
}

// Record checks body with [ValidateSpanBody] and seals it as one entry, which it returns.
// Nothing is sealed when the body is invalid; the error then wraps ErrInvalidSpan. Errors
// from the Sealer are returned wrapped.
func (r *Recorder) Record(ctx context.Context, body protocol.SpanBody) (*protocol.Entry, error) {
	if r == nil || r.sealer == nil {
		return nil, errors.New("chain: recorder has no sealer")
	}
	if err := ValidateSpanBody(body); err != nil {
		return nil, err
	}
	entries, err := r.sealer.Seal(ctx, []protocol.SpanBody{body})
	if err != nil {
		return nil, fmt.Errorf("chain: seal span %q: %w", body.Name, err)
	}
	if len(entries) != 1 || entries[0] == nil {
		return nil, fmt.Errorf("chain: seal span %q: sealer returned %d entries for 1 body", body.Name, len(entries))
	}
	return entries[0], nil
}

// ValidateSpanBody reports whether body can be sealed as an entry that verifies: the name
// is non-empty, name and kind are valid UTF-8, trace_id is 32 and span_id 16 lowercase hex
// characters, start_time_ns is not negative and end_time_ns is not before it, and the body
// has a canonical form (every attribute value is one RFC 8785 JSON can hold exactly; see
// [SpanExporter] for how OpenTelemetry values are made so). The error wraps
// ErrInvalidSpan and names the first problem found.
func ValidateSpanBody(body protocol.SpanBody) error {
	problem := fieldProblem(body)
	if problem == "" {
		if _, err := body.Canonical(); err != nil {
			problem = fmt.Sprintf("attributes have no canonical JSON form: %v", err)
		}
	}
	return spanError(body, problem)
}

// ValidateSpanFields is ValidateSpanBody without the attributes: it runs every check of
// ValidateSpanBody except that the body has a canonical form. A body without attributes
// that passes it has one (its other members are strings made valid UTF-8 as they are
// written, and two decimal integers, under fixed keys), so for such a body it is
// ValidateSpanBody, at a fraction of the cost; FuzzValidateSpanFieldsIsValidateSpanBody
// holds the two together.
func ValidateSpanFields(body protocol.SpanBody) error {
	return spanError(body, fieldProblem(body))
}

// fieldProblem describes the first problem ValidateSpanFields finds with body, or is "".
func fieldProblem(body protocol.SpanBody) string {
	switch {
	case body.Name == "":
		return "name is empty"
	case !utf8.ValidString(body.Name):
		return "name is not valid UTF-8"
	case !utf8.ValidString(body.Kind):
		return "kind is not valid UTF-8"
	case !isLowerHex(body.TraceID, 32):
		return fmt.Sprintf("trace_id %q is not 32 lowercase hex characters", body.TraceID)
	case !isLowerHex(body.SpanID, 16):
		return fmt.Sprintf("span_id %q is not 16 lowercase hex characters", body.SpanID)
	case body.StartTimeNS < 0:
		return fmt.Sprintf("start_time_ns %d is before the Unix epoch", body.StartTimeNS)
	case body.EndTimeNS < body.StartTimeNS:
		return fmt.Sprintf("end_time_ns %d is before start_time_ns %d", body.EndTimeNS, body.StartTimeNS)
	}
	return ""
}

// spanError is the error for problem with body, or nil when problem is "".
func spanError(body protocol.SpanBody, problem string) error {
	if problem != "" {
		return fmt.Errorf("chain: %w %q: %s", ErrInvalidSpan, body.Name, problem)
	}
	return nil
}

// isLowerHex reports whether s is n lowercase hex characters.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
