package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// apiError is every error answer: {"error": code, "message": message, ...extra}.
type apiError struct {
	status  int
	code    string
	message string
	extra   map[string]any // more members, such as the seed names for some errors
	// header are response headers to set, such as WWW-Authenticate.
	header map[string]string
	// retryAfter, when positive, is sent as Retry-After, rounded up to whole seconds.
	retryAfter time.Duration
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

// errorBody is the JSON shape of every error answer, as the OpenAPI document states it.
type errorBody struct {
	Error   string `json:"error" doc:"A stable code, such as challenge_replayed."`
	Message string `json:"message" doc:"What went wrong, for people."`
}

// writeError answers e in the one error shape.
func writeError(w http.ResponseWriter, e *apiError) {
	for k, v := range e.header {
		w.Header().Set(k, v)
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.retryAfter+time.Second-1)/time.Second)))
	}
	body := make(map[string]any, len(e.extra)+2)
	for k, v := range e.extra {
		body[k] = v
	}
	body["error"], body["message"] = e.code, e.message
	writeJSON(w, e.status, body)
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // application/json, which no browser renders as HTML: messages are meant to be read
	_ = enc.Encode(v)
}

// fail answers err: an *apiError as it is, a failure to reach the API server as 503
// api_server_unavailable, anything else as 500 internal, logged and not shown to the
// client (it may name a Secret or an object).
func (s *Server) fail(ctx context.Context, w http.ResponseWriter, doing string, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case unreachable(err):
		s.log.WarnContext(ctx, "Failed to reach the API server", "doing", doing, "error", err)
		ae = &apiError{status: http.StatusServiceUnavailable, code: "api_server_unavailable",
			message: "the federation cannot reach its Kubernetes API server; retry later"}
	default:
		s.log.ErrorContext(ctx, "Failed to serve a request", "doing", doing, "error", err)
		ae = &apiError{status: http.StatusInternalServerError, code: "internal", message: doing + " failed"}
	}
	writeError(w, ae)
}

// unreachable reports whether err means the API server did not answer, or answered that
// it cannot serve now: a transport error, a timeout, 429, 503 or 504. A refusal (403, 404,
// 409, 422) is not.
func unreachable(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
			apierrors.IsTooManyRequests(err)
	}
	return isTransport(err) || errors.Is(err, context.DeadlineExceeded)
}

// isTransport reports whether err is a failed HTTP round trip or connection.
func isTransport(err error) bool {
	var ue *url.Error
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.As(err, &oe)
}

// decodeJSON reads r's body, bounded by the server's limit, into v: 413 body_too_large
// past the limit, 400 malformed_json for anything that is not one JSON object of v's shape.
func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	err := dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			err = errors.New("more than one JSON value")
		}
	}
	if err == nil {
		return nil
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &apiError{status: http.StatusRequestEntityTooLarge, code: "body_too_large",
			message: fmt.Sprintf("the request body is over %d bytes", tooBig.Limit)}
	}
	return &apiError{status: http.StatusBadRequest, code: "malformed_json", message: "the body is not the expected JSON object: " + err.Error()}
}
