package client

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// steppingClock is a clock that advances a second each time it is read.
type steppingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (s *steppingClock) now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t = s.t.Add(time.Second)
	return s.t
}

// failThen answers the first n requests with status and code (and Retry-After
// retryAfter when not empty), then 200 with ok.
func failThen(n, status int, code, retryAfter string, ok any) func(http.ResponseWriter, *http.Request, []byte) {
	var mu sync.Mutex
	seen := 0
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		mu.Lock()
		seen++
		fail := seen <= n
		mu.Unlock()
		if fail {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			writeTestJSON(w, status, map[string]any{"error": code, "message": "later"})
			return
		}
		writeTestJSON(w, http.StatusOK, ok)
	}
}

// TestRetry429HonoursRetryAfter checks a 429 is retried after the server's Retry-After,
// with a fresh, valid token bound to the same body on each attempt.
func TestRetry429HonoursRetryAfter(t *testing.T) {
	key, id := testKey(1), testID(1)
	clock := &steppingClock{t: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	f := newFake(t, key, id, failThen(1, http.StatusTooManyRequests, "rate_limited", "2",
		map[string]any{"submission_id": "sub-1", "verified": true, "last_seq": 7}))
	f.now = func() time.Time { return clock.t }
	var waits []time.Duration
	c := newTestClient(t, f, key, id, &waits, WithClock(clock.now))
	export := []byte(`{"format":"cairn-chain-v2"}` + "\n")
	res, err := c.Submit(context.Background(), export)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if res.SubmissionID != "sub-1" || !res.Verified || res.LastSeq != 7 {
		t.Errorf("answer %+v", res)
	}
	if len(waits) != 1 || waits[0] != 2*time.Second {
		t.Errorf("waits %v, want [2s]", waits)
	}
	if n := f.requests("POST /federation/submit"); n != 2 {
		t.Fatalf("%d posts, want 2", n)
	}
	if f.tokens[0] == f.tokens[1] {
		t.Error("the retry reused the first attempt's token")
	}
	for i, b := range f.bodies {
		if string(b) != string(export) {
			t.Errorf("attempt %d sent %q, want the export verbatim", i, b)
		}
	}
}

// TestRetry503UpToMax checks a 503 is retried with doubling backoff up to the attempts
// allowed, then returned.
func TestRetry503UpToMax(t *testing.T) {
	f := newFake(t, testKey(1), testID(1), failThen(100, http.StatusServiceUnavailable, "api_server_unavailable", "", nil))
	var waits []time.Duration
	c := newTestClient(t, f, testKey(1), testID(1), &waits, WithRetry(4, 10*time.Millisecond))
	_, err := c.Status(context.Background())
	if !IsCode(err, "api_server_unavailable") || StatusOf(err) != 503 {
		t.Fatalf("error %v, want 503 api_server_unavailable", err)
	}
	if n := f.total(); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	if len(waits) != len(want) || waits[0] != want[0] || waits[1] != want[1] || waits[2] != want[2] {
		t.Errorf("waits %v, want %v", waits, want)
	}
}

// TestRetryAfterForms checks Retry-After in seconds and as an HTTP date, and that one
// past MaxBackoff is answered at once, not waited for.
func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	f := newFake(t, testKey(1), testID(1), failThen(1, http.StatusTooManyRequests, "registration_rate_limited", "3600", map[string]any{}))
	var longWaits []time.Duration
	c := newTestClient(t, f, testKey(1), testID(1), &longWaits, WithClock(func() time.Time { return now }))
	if _, err := c.Status(context.Background()); !IsCode(err, "registration_rate_limited") || len(longWaits) != 0 || f.total() != 1 {
		t.Errorf("Retry-After an hour: error %v after %d requests and waits %v, want the 429 at once", err, f.total(), longWaits)
	}
	for header, want := range map[string]time.Duration{
		"3": 3 * time.Second,
		now.Add(5 * time.Second).Format(http.TimeFormat): 5 * time.Second,
		"soon": 10 * time.Millisecond, // unreadable: the client's own backoff
		"-4":   10 * time.Millisecond,
	} {
		f := newFake(t, testKey(1), testID(1), failThen(1, http.StatusTooManyRequests, "rate_limited", header, map[string]any{}))
		var waits []time.Duration
		c := newTestClient(t, f, testKey(1), testID(1), &waits, WithClock(func() time.Time { return now }))
		if _, err := c.Status(context.Background()); err != nil {
			t.Fatalf("Retry-After %q: %v", header, err)
		}
		if len(waits) != 1 || waits[0] != want {
			t.Errorf("Retry-After %q: waits %v, want [%s]", header, waits, want)
		}
	}
}

// TestNoRetryOn4xx checks no other 4xx is sent again, whatever Retry-After says.
func TestNoRetryOn4xx(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 405, 409, 413, 422, 500, 504} {
		f := newFake(t, testKey(1), testID(1), failThen(100, status, "some_code", "1", nil))
		var waits []time.Duration
		c := newTestClient(t, f, testKey(1), testID(1), &waits)
		if _, err := c.Submit(context.Background(), []byte("{}")); StatusOf(err) != status {
			t.Errorf("%d: error %v", status, err)
		}
		if _, err := c.Status(context.Background()); StatusOf(err) != status {
			t.Errorf("%d: error %v", status, err)
		}
		if n := f.total(); n != 2 || len(waits) != 0 {
			t.Errorf("%d: %d requests and waits %v, want 2 and none", status, n, waits)
		}
	}
}

// TestCancelStopsRetrying checks a context cancelled during the wait ends the call at
// once with both the context's error and the last refusal.
func TestCancelStopsRetrying(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake(t, testKey(1), testID(1), func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		time.AfterFunc(20*time.Millisecond, cancel) // once the client waits for its retry
		writeTestJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "federation_not_ready", "message": "wait"})
	})
	c := newTestClient(t, f, testKey(1), testID(1), nil, WithRetry(5, time.Hour))
	c.sleep = sleepCtx // the real wait: an hour unless the context ends it
	start := time.Now()
	_, err := c.Status(ctx)
	if !errors.Is(err, context.Canceled) || !IsCode(err, "federation_not_ready") {
		t.Fatalf("error %v, want context.Canceled and federation_not_ready", err)
	}
	if f.total() != 1 || time.Since(start) > 5*time.Second {
		t.Errorf("%d requests in %s, want 1 at once", f.total(), time.Since(start))
	}
}

// TestRealBackoffSleeps checks the real wait between attempts (a few milliseconds).
func TestRealBackoffSleeps(t *testing.T) {
	f := newFake(t, testKey(1), testID(1), failThen(2, http.StatusServiceUnavailable, "api_server_unavailable", "", map[string]any{"version": "v1"}))
	c := newTestClient(t, f, testKey(1), testID(1), nil, WithRetry(3, 5*time.Millisecond))
	c.sleep = sleepCtx
	start := time.Now()
	st, err := c.Status(context.Background())
	if err != nil || st.Version != "v1" {
		t.Fatalf("Status: %+v, %v", st, err)
	}
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Errorf("took %s, want at least the 5+10 ms of backoff", d)
	}
}

// TestTransportErrorRetriedForGETOnly drops the connection of the first request: a GET
// is sent again, a POST is not (the server may have acted on it).
func TestTransportErrorRetriedForGETOnly(t *testing.T) {
	drop := func() func(http.ResponseWriter, *http.Request, []byte) {
		var mu sync.Mutex
		n := 0
		return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			mu.Lock()
			n++
			first := n == 1
			mu.Unlock()
			if first {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Errorf("hijack: %v", err)
					return
				}
				_ = conn.Close()
				return
			}
			writeTestJSON(w, http.StatusOK, map[string]any{"operators_total": 3})
		}
	}
	f := newFake(t, testKey(1), testID(1), drop())
	st, err := newTestClient(t, f, testKey(1), testID(1), nil).Status(context.Background())
	if err != nil || st.OperatorsTotal != 3 || f.total() != 2 {
		t.Errorf("GET: %+v, %v after %d requests; want the answer after 2", st, err, f.total())
	}
	f = newFake(t, testKey(1), testID(1), drop())
	_, err = newTestClient(t, f, testKey(1), testID(1), nil).Submit(context.Background(), []byte("{}"))
	var ae *APIError
	if err == nil || errors.As(err, &ae) || f.total() != 1 {
		t.Errorf("POST: error %v after %d requests; want a transport error after 1", err, f.total())
	}
}

// TestResponseLimit checks an answer over MaxResponseBytes is refused.
func TestResponseLimit(t *testing.T) {
	f := newFake(t, testKey(1), testID(1), func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Length", strconv.Itoa(MaxResponseBytes+1))
		chunk := make([]byte, 1<<20)
		for i := 0; i <= MaxResponseBytes>>20; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	_, err := newTestClient(t, f, testKey(1), testID(1), nil).Status(context.Background())
	if err == nil || f.total() != 1 {
		t.Fatalf("error %v after %d requests, want a refusal after 1", err, f.total())
	}
}
