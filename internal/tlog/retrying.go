package tlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// retrying sends requests to a log's HTTP API (Rekor v1 or v2), retrying while the log is
// unreachable or busy.
type retrying struct {
	base     *url.URL
	http     *http.Client
	attempts int
	backoff  time.Duration
}

// newRetrying checks rawURL (what names the log in errors) and fills in the defaults:
// timeout default and minimum 30s (a busy public log can be slow to answer), 4 attempts,
// waits doubling from 1s. hc, if set, sends the requests (its Timeout is left alone).
func newRetrying(what, rawURL string, timeout time.Duration, attempts int, backoff time.Duration, hc *http.Client) (retrying, error) {
	base, err := url.Parse(strings.TrimSuffix(rawURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return retrying{}, fmt.Errorf("%s URL %q: want http(s)://host[:port]", what, rawURL)
	}
	r := retrying{base: base, http: hc, attempts: attempts, backoff: backoff}
	if r.http == nil {
		r.http = &http.Client{Timeout: max(timeout, 30*time.Second)}
	}
	if r.attempts <= 0 {
		r.attempts = 4
	}
	if r.backoff <= 0 {
		r.backoff = time.Second
	}
	return r, nil
}

// URL returns the server's base URL.
func (r *retrying) URL() string { return r.base.String() }

// do sends a request, retrying while the log is unreachable or answers 408, 429 or 5xx.
// When every attempt fails that way, the error is an *UnavailableError. Any other answer
// is returned for the caller to read.
func (r *retrying) do(ctx context.Context, op, method, pathAndQuery string, body []byte) (*http.Response, error) {
	u, err := r.base.Parse(pathAndQuery)
	if err != nil {
		return nil, err
	}
	var last error
	for attempt := range r.attempts {
		if attempt > 0 {
			wait := r.backoff << (attempt - 1)
			if ra := retryAfter(last); ra > 0 {
				wait = ra
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, &UnavailableError{Op: op, Err: errors.Join(ctx.Err(), last)}
			}
		}
		req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		if strings.HasSuffix(u.Path, "/publicKey") {
			req.Header.Set("Accept", "application/x-pem-file") // else Rekor quotes it as a JSON string
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := r.http.Do(req)
		if err != nil {
			last = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500 {
			last = &retryableStatus{status: resp.StatusCode, msg: readMessage(resp), after: parseRetryAfter(resp.Header.Get("Retry-After"))}
			drain(resp)
			continue
		}
		return resp, nil
	}
	return nil, &UnavailableError{Op: op, Err: last}
}

// retryableStatus is an answer worth retrying.
type retryableStatus struct {
	status int
	msg    string
	after  time.Duration
}

func (e *retryableStatus) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.msg) }

func retryAfter(err error) time.Duration {
	var rs *retryableStatus
	if errors.As(err, &rs) {
		return min(rs.after, 5*time.Minute)
	}
	return 0
}

// parseRetryAfter reads a Retry-After header in seconds (the HTTP-date form is ignored).
func parseRetryAfter(v string) time.Duration {
	s, err := strconv.Atoi(v)
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}

// statusError describes an unexpected answer.
func statusError(resp *http.Response) error {
	return fmt.Errorf("HTTP %d: %s", resp.StatusCode, readMessage(resp))
}

// readMessage returns the message of Rekor's error body, or the start of the body.
func readMessage(resp *http.Response) string {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	return strings.TrimSpace(string(raw))
}

// drain reads what is left of a body, so the connection is reused, and closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}
