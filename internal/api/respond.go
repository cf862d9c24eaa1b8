package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// maxJSONBodyBytes caps a JSON request body. The largest is a replayed model output.
const maxJSONBodyBytes = 4 << 20

// Error codes: the code member of an error body, one per kind of failure.
const (
	codeBadJSON          = "bad_json"
	codeBadParameter     = "bad_parameter"
	codeBadRequest       = "bad_request"
	codeBodyTooLarge     = "body_too_large"
	codeUnsupportedMedia = "unsupported_media_type"
	codeUnauthorized     = "unauthorized"
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
	codeEmptyChain       = "empty_chain"
	codeNoSigningKey     = "no_signing_key"
	codeNoSecret         = "no_secret"
	codeChainInvalid     = "chain_invalid"
	codeNoProvider       = "no_provider"
	codeInternal         = "internal"
)

// errorBody is every error answer, in the federation's shape: error is the code and
// message the text. Code repeats the code under the name earlier releases gave it, so
// clients that read code keep working.
type errorBody struct {
	Error   string `json:"error" doc:"what went wrong, for programs: bad_json, bad_parameter, bad_request, body_too_large, unsupported_media_type, unauthorized, cross_origin_refused, not_found, method_not_allowed, host_not_allowed, empty_chain, no_signing_key, no_secret, chain_invalid, no_provider or internal (earlier releases put the message here; it is in message now)" example:"\"not_found\""`
	Message string `json:"message" doc:"what went wrong, for people" example:"\"the chain has no entry with seq 12\""`
	Code    string `json:"code" doc:"the same code as error, under the name earlier releases gave it" example:"\"not_found\""`
}

// writeJSON writes v as the answer with the given status. Strings are written as they
// are: "<", ">" and "&" are not escaped, since the answer is application/json (never
// sniffed: see the nosniff header) and its messages are meant to be read.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only a bug puts an unencodable value here; say so rather than send half a body.
		status = http.StatusInternalServerError
		buf.Reset()
		msg := "encode response: " + err.Error()
		_ = enc.Encode(errorBody{Error: codeInternal, Message: msg, Code: codeInternal})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeError writes an error answer.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorBody{Error: code, Message: message, Code: code})
}

// internalError logs err and answers 500 without the details, which may name files.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.log.ErrorContext(r.Context(), "Request failed", "method", r.Method, "path", r.URL.Path, "what", what, "err", err)
	writeError(w, http.StatusInternalServerError, codeInternal, what+" failed; the server log has the details")
}

// requestError is a request the handler refuses, with the status and code to answer.
type requestError struct {
	status int
	code   string
	err    error
}

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// badRequest is a requestError for a malformed request.
func badRequest(code, format string, args ...any) *requestError {
	return &requestError{status: http.StatusBadRequest, code: code, err: fmt.Errorf(format, args...)}
}

// writeRequestError answers a *requestError as it says, and any other error with 500.
func (s *Server) writeRequestError(w http.ResponseWriter, r *http.Request, what string, err error) {
	var re *requestError
	if errors.As(err, &re) {
		writeError(w, re.status, re.code, re.err.Error())
		return
	}
	s.internalError(w, r, what, err)
}

// decodeJSON decodes the request body, one JSON object, into dst. Unknown members,
// trailing data, bodies over maxJSONBodyBytes and content types other than JSON (a body
// without a Content-Type too) are refused. An empty body leaves dst as it is when emptyOK, and is refused otherwise.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any, emptyOK bool) error {
	return decodeJSONLimit(w, r, dst, emptyOK, maxJSONBodyBytes)
}

// decodeJSONLimit is decodeJSON with a body cap of limit bytes.
func decodeJSONLimit(w http.ResponseWriter, r *http.Request, dst any, emptyOK bool, limit int64) error {
	switch ct := r.Header.Get("Content-Type"); {
	case ct == "" && r.ContentLength != 0:
		// A body without a type is what a page of another origin can send without the
		// browser asking first (a typeless Blob): it is never taken for JSON.
		return &requestError{status: http.StatusUnsupportedMediaType, code: codeUnsupportedMedia,
			err: errors.New("the body has no content type: send it as application/json")}
	case ct != "":
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return &requestError{status: http.StatusUnsupportedMediaType, code: codeUnsupportedMedia,
				err: fmt.Errorf("content type %s: send the body as application/json", protocol.Quote(ct))}
		}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if errors.Is(err, io.EOF) && emptyOK {
		return nil
	}
	var tooLarge *http.MaxBytesError
	if err == nil {
		if _, tailErr := dec.Token(); errors.As(tailErr, &tooLarge) {
			err = tailErr
		} else if !errors.Is(tailErr, io.EOF) {
			err = errors.New("data after the JSON object")
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooLarge):
		return &requestError{status: http.StatusRequestEntityTooLarge, code: codeBodyTooLarge,
			err: fmt.Errorf("request body is over %d bytes", tooLarge.Limit)}
	case errors.Is(err, io.EOF):
		return badRequest(codeBadJSON, "request body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest(codeBadJSON, "request body is not valid JSON: it ends early")
	}
	return badRequest(codeBadJSON, "request body is not valid JSON: %v", err)
}

// logRequests logs every request at debug level, with its status and size.
func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		log.DebugContext(r.Context(), "Served request", "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "bytes", rec.bytes, "remote", r.RemoteAddr)
	})
}

// statusRecorder remembers the status and size of an answer.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (w *statusRecorder) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(p []byte) (int, error) {
	w.wrote = true
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (to flush a streamed export).
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
