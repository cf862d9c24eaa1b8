package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is a refusal from the federation: the one JSON error shape
// {"error": code, "message": text, ...extra fields}, with the HTTP status and the
// Retry-After header. For an error body that is not of that shape, Code is empty and
// Message says what the body held.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Code is the body's "error", such as "continuity_violation"; empty for a body
	// that is not the API's error shape (a proxy's page, for instance).
	Code string
	// Message is the body's "message".
	Message string
	// Fields are the body's other members, such as "expected_first_prev_hash"; nil when
	// there are none.
	Fields map[string]any
	// RetryAfter is the Retry-After header's wait, zero when absent or unreadable.
	RetryAfter time.Duration
}

// Error formats the status, the code and the message.
func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("federation API: HTTP %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("federation API: HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// Field returns the extra field name as a string, and whether it is one.
func (e *APIError) Field(name string) (string, bool) {
	s, ok := e.Fields[name].(string)
	return s, ok
}

// IsCode reports whether err is or wraps an *APIError whose Code is code.
func IsCode(err error, code string) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == code
}

// StatusOf returns the HTTP status of the *APIError err is or wraps, or 0.
func StatusOf(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// snippetLen is how much of a body that is not the error shape an APIError quotes.
const snippetLen = 200

// parseAPIError reads a non-2xx answer: status, Retry-After (given now, for an HTTP
// date) and body.
func parseAPIError(status int, header http.Header, body []byte, now time.Time) *APIError {
	e := &APIError{Status: status, RetryAfter: parseRetryAfter(header.Get("Retry-After"), now)}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&obj); err == nil && obj != nil {
		code, okCode := obj["error"].(string)
		msg, okMsg := obj["message"].(string)
		if okCode && code != "" && (okMsg || obj["message"] == nil) {
			e.Code, e.Message = code, msg
			delete(obj, "error")
			delete(obj, "message")
			if len(obj) > 0 {
				e.Fields = obj
			}
			return e
		}
	}
	e.Message = describeBody(header.Get("Content-Type"), body)
	return e
}

// describeBody says what an error body that is not the API's shape held.
func describeBody(contentType string, body []byte) string {
	text := strings.TrimSpace(string(body))
	if text == "" {
		return "empty error body, not the federation API's JSON error"
	}
	if len(text) > snippetLen {
		text = text[:snippetLen] + "…"
	}
	if contentType == "" {
		contentType = "no Content-Type"
	}
	return fmt.Sprintf("error body is not the federation API's JSON error (%s): %q", contentType, text)
}

// maxRetryAfter caps the Retry-After the client reads: a day, far past any wait it makes
// (MaxBackoff), and far from overflowing a Duration.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date, at most
// maxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return min(at.Sub(now), maxRetryAfter)
	}
	return 0
}
