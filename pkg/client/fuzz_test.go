package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

// answerTransport answers every request with one response.
type answerTransport struct {
	status      int
	retryAfter  string
	contentType string
	body        []byte
}

func (a answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h := http.Header{}
	h.Set("Retry-After", a.retryAfter)
	h.Set("Content-Type", a.contentType)
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(bytes.NewReader(a.body)), Request: r}, nil
}

// FuzzAnswers has a federation answer the client's calls with arbitrary statuses, headers
// and bodies (which picks the call). Nothing panics; a 2xx answer is decoded or refused
// with an error; any other status is an *APIError of that status, whose Retry-After wait
// is within [0, MaxBackoff], and whose code and message are the body's when the body is
// the API's error shape.
func FuzzAnswers(f *testing.F) {
	f.Add(uint8(0), uint16(200), "", "application/json", []byte(`{"federation":"f","version":"v"}`))
	f.Add(uint8(1), uint16(429), "3", "application/json", []byte(`{"error":"rate_limited","message":"slow down"}`))
	f.Add(uint8(2), uint16(503), "Wed, 21 Oct 2099 07:28:00 GMT", "text/plain", []byte("down"))
	f.Add(uint8(3), uint16(404), "-1", "application/json", []byte(`{"error":"not_found","message":"no","operator_id":"op_1"}`))
	f.Add(uint8(4), uint16(200), "", "application/json", []byte(`{"snapshots":[{"week":"2026-W48"}]}`))
	f.Add(uint8(5), uint16(400), "", "application/json", []byte(`{"error":7}`))
	f.Add(uint8(6), uint16(200), "", "application/json", []byte(`{"nonce":"cairn-challenge:x"}`))
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, which uint8, status uint16, retryAfter, contentType string, body []byte) {
		if status < 100 || status > 999 {
			return
		}
		hc := &http.Client{Transport: answerTransport{int(status), retryAfter, contentType, body}}
		c, err := New("http://federation.example.invalid", WithHTTPClient(hc), WithRetry(1, 0), WithClock(func() time.Time { return now }),
			WithOperator(testID(1), testKey(1)), WithAdminToken("admin"))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		calls := []func() error{
			func() error { _, err := c.Status(ctx); return err },
			func() error { _, err := c.Operator(ctx, testID(1), PageOptions{}); return err },
			func() error { _, err := c.AnchorRecord(ctx, "anchor-1"); return err },
			func() error { _, err := c.VerifyAnchor(ctx, "anchor-1"); return err },
			func() error { _, err := c.LogSnapshots(ctx); return err },
			func() error { _, err := c.Receipts(ctx, ReceiptsOptions{}); return err },
			func() error { _, err := c.Challenge(ctx); return err },
			func() error { _, err := c.Anchor(ctx); return err },
			func() error { _, err := c.Withdraw(ctx); return err },
		}
		err = calls[int(which)%len(calls)]()
		if status >= 200 && status < 300 {
			var ae *APIError
			if errors.As(err, &ae) {
				t.Fatalf("a %d answer gave an APIError: %v", status, err)
			}
			return
		}
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != int(status) || StatusOf(err) != int(status) {
			t.Fatalf("a %d answer gave %v, want an APIError of that status", status, err)
		}
		if ae.RetryAfter < 0 || ae.RetryAfter > maxRetryAfter {
			t.Fatalf("Retry-After %q gave a wait of %v", retryAfter, ae.RetryAfter)
		}
		var shape struct {
			Error   string  `json:"error"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(body, &shape) == nil && shape.Error != "" && shape.Message != nil && ae.Code != shape.Error {
			t.Fatalf("the error body %q gave code %q", body, ae.Code)
		}
	})
}
