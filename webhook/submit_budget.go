package webhook

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// What a submission may hold while it is in flight, bounded per operator and per replica
// in total, so that neither one operator nor many (registration may be open) can hold a
// replica's memory or the volume: a submission takes a slot before its body is read and
// is refused at once without one; the sidecar bytes it receives (streamed to the store's
// temporary files, or, in the JSON form, decoded in memory one sidecar at a time) are
// charged as they arrive and refused as soon as a budget is crossed. Every answer is a
// 429 (the operator's own bound) or a 503 (the replica's) with Retry-After.

// Defaults of the in-flight bounds (Options).
const (
	// DefaultMaxSubmissionsInFlight is how many submissions one replica reads and
	// waits on at once, and DefaultMaxOperatorSubmissionsInFlight how many of one
	// operator's.
	DefaultMaxSubmissionsInFlight         = 64
	DefaultMaxOperatorSubmissionsInFlight = 4
	// DefaultSidecarBytesInFlight is how many sidecar bytes the submissions in flight on
	// one replica may hold, and DefaultOperatorSidecarBytesInFlight one operator's: two
	// submissions of 8 full sidecars.
	DefaultSidecarBytesInFlight         = 64 << 20
	DefaultOperatorSidecarBytesInFlight = 16 << 20
)

// busyRetry is the Retry-After of an answer refused for want of room: submissions end
// in seconds.
const busyRetry = 5 * time.Second

// inFlight counts the submissions in flight and the sidecar bytes they hold. It is safe
// for concurrent use; it holds an entry for an operator only while one of its
// submissions is in flight.
type inFlight struct {
	maxRequests, maxOperatorRequests int
	maxBytes, maxOperatorBytes       int64

	mu       sync.Mutex
	total    usage
	operator map[string]*usage
}

// usage is what the submissions of one operator, or all, hold.
type usage struct {
	requests int
	bytes    int64
}

// newInFlight returns the bounds of o, with the defaults for zero values.
func newInFlight(o Options) *inFlight {
	return &inFlight{
		maxRequests:         orDefault(o.MaxSubmissionsInFlight, DefaultMaxSubmissionsInFlight),
		maxOperatorRequests: orDefault(o.MaxOperatorSubmissionsInFlight, DefaultMaxOperatorSubmissionsInFlight),
		maxBytes:            orDefault(o.SidecarBytesInFlight, DefaultSidecarBytesInFlight),
		maxOperatorBytes:    orDefault(o.OperatorSidecarBytesInFlight, DefaultOperatorSidecarBytesInFlight),
		operator:            map[string]*usage{},
	}
}

// slot is one submission's place in flight; release it once, when the answer is given.
type slot struct {
	f        *inFlight
	operator string
	bytes    int64
	released bool
}

// admit takes a slot for a submission of operator, or refuses: 429
// too_many_submissions_in_flight for the operator's bound, 503 server_busy for the
// replica's.
func (f *inFlight) admit(operator string) (*slot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	op := f.operator[operator]
	if op != nil && op.requests >= f.maxOperatorRequests {
		return nil, &apiError{status: http.StatusTooManyRequests, code: "too_many_submissions_in_flight", retryAfter: busyRetry,
			message: fmt.Sprintf("this operator already has %d submissions in flight; retry after the Retry-After seconds", op.requests),
			extra:   map[string]any{"max_in_flight": f.maxOperatorRequests}}
	}
	if f.total.requests >= f.maxRequests {
		return nil, serverBusy("submissions")
	}
	if op == nil {
		op = &usage{}
		f.operator[operator] = op
	}
	op.requests++
	f.total.requests++
	return &slot{f: f, operator: operator}, nil
}

// charge counts n more sidecar bytes held by the slot's submission, or refuses them:
// 429 sidecar_budget_exceeded past the operator's bound, 503 server_busy past the
// replica's. A refused charge is not counted.
func (s *slot) charge(n int64) error {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	op := f.operator[s.operator]
	if op.bytes+n > f.maxOperatorBytes {
		return limitError{&apiError{status: http.StatusTooManyRequests, code: "sidecar_budget_exceeded", retryAfter: busyRetry,
			message: fmt.Sprintf("this operator's submissions in flight hold %d bytes of sidecars, the most they may; retry after the Retry-After seconds", op.bytes),
			extra:   map[string]any{"max_bytes_in_flight": f.maxOperatorBytes}}}
	}
	if f.total.bytes+n > f.maxBytes {
		return limitError{serverBusy("sidecar bytes")}
	}
	op.bytes += n
	f.total.bytes += n
	s.bytes += n
	return nil
}

// release gives back the slot and the bytes charged to it; later calls do nothing.
func (s *slot) release() {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.released {
		return
	}
	s.released = true
	op := f.operator[s.operator]
	op.requests--
	op.bytes -= s.bytes
	f.total.requests--
	f.total.bytes -= s.bytes
	if op.requests == 0 {
		delete(f.operator, s.operator)
	}
}

// held is what the replica's submissions in flight hold now.
func (f *inFlight) held() usage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total
}

// serverBusy is the 503 of a replica whose submissions in flight hold all of what.
func serverBusy(what string) *apiError {
	return &apiError{status: http.StatusServiceUnavailable, code: "server_busy", retryAfter: busyRetry,
		message: "the submissions in flight on this server hold all the " + what + " it allows; retry after the Retry-After seconds"}
}
