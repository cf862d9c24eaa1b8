package client

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestRefusedConnectionIsNotRetried: nobody listening is reported at once as an
// UnreachableError naming the federation's URL, without the retries that cannot help.
func TestRefusedConnectionIsNotRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	_ = l.Close()
	var notices int
	c, err := New(url, WithRetryNotice(func(RetryNotice) { notices++ }))
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	_, err = c.Status(context.Background())
	var unreachable *UnreachableError
	if !errors.As(err, &unreachable) || unreachable.URL != url {
		t.Fatalf("Status of a closed port: %v, want an UnreachableError for %s", err, url)
	}
	if want := "cannot reach the federation at " + url + ": connection refused"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if len(waits) != 0 || notices != 0 {
		t.Errorf("retried %d times (%d notices)", len(waits), notices)
	}
}

// TestRetryNotice: each retry of a 503 is announced before its wait.
func TestRetryNotice(t *testing.T) {
	key, id := testKey(1), testID(1)
	f := newFake(t, key, id, failThen(2, 503, "unavailable", "", map[string]any{"version": "x"}))
	var notices []RetryNotice
	var waits []time.Duration
	c := newTestClient(t, f, key, id, &waits, WithRetryNotice(func(n RetryNotice) { notices = append(notices, n) }))
	if _, err := c.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 2 || notices[0].Attempt != 1 || notices[1].Wait != waits[1] || !strings.Contains(notices[0].Err.Error(), "503") {
		t.Fatalf("notices %+v, waits %v", notices, waits)
	}
}
