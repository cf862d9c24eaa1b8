package otlp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// DefaultMaxBodyBytes caps a request body, and separately its decompressed payload, when
// no WithMaxBodyBytes option is given: 16 MiB.
const DefaultMaxBodyBytes = 16 << 20

// retryAfterSeconds is the Retry-After of a 503: how long a client should wait before
// sending a batch the chain could not take again.
const retryAfterSeconds = 5

// pooledBufferCap is the largest body buffer kept for reuse between requests.
const pooledBufferCap = 4 << 20

// Handler is an http.Handler for OTLP/HTTP trace export (POST /v1/traces) that seals
// generative-AI spans into a chain; see the package documentation for what is sealed.
//
// It answers:
//
//   - 200 with an ExportTraceServiceResponse in the request's encoding, after the accepted
//     spans are sealed (or when none are). Spans not sealed are counted in
//     partial_success.rejected_spans, with the reasons in partial_success.error_message.
//     With a store.Store as Sealer, a span is sealed once (store.Store.SealOnce): one whose
//     trace and span ID the chain already holds with the same content is accepted and not
//     sealed again, silently (an exporter retrying a request is normal traffic); one the
//     chain holds with other content is rejected, counted and named in the partial success.
//   - 400 for a body that cannot be decoded (malformed protobuf or JSON, an id of the wrong
//     length, a broken gzip stream), 413 for a body or a decompressed payload over the cap,
//     415 for a Content-Type other than application/x-protobuf or application/json, or a
//     Content-Encoding other than gzip. 4xx responses are not to be retried.
//   - 503 with Retry-After when the chain could not seal the batch and may later (the
//     database was busy or failed to write, the request was cancelled), 500 when it never
//     will (the store has no secret, the chain's last entry is damaged). Nothing of the
//     request is sealed then.
//
// 4xx and 5xx responses carry a google.rpc.Status in the request's encoding, as OTLP/HTTP
// asks, except 405 (a method other than POST) and 415 for an unknown Content-Type, which
// are plain text. A Handler is safe for concurrent use if its Sealer is.
type Handler struct {
	sealer   chain.Sealer
	maxBody  int64
	allSpans bool
	log      *slog.Logger
	buffers  sync.Pool // *bytes.Buffer holding request bodies
}

// Option configures a Handler.
type Option func(*Handler)

// WithMaxBodyBytes caps a request body, and separately its decompressed payload, at n
// bytes (n > 0) in place of DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) Option {
	return func(h *Handler) { h.maxBody = n }
}

// AllSpans seals every valid span, not only those carrying a "gen_ai." attribute.
func AllSpans() Option {
	return func(h *Handler) { h.allSpans = true }
}

// WithLogger sets the logger that sealing failures (5xx answers) are reported to, in
// place of slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) { h.log = l }
}

// NewHandler returns a Handler that seals through s.
func NewHandler(s chain.Sealer, opts ...Option) (*Handler, error) {
	h := &Handler{sealer: s, maxBody: DefaultMaxBodyBytes, log: slog.Default()}
	for _, opt := range opts {
		opt(h)
	}
	switch {
	case s == nil:
		return nil, errors.New("otlp: no sealer")
	case h.maxBody <= 0:
		return nil, fmt.Errorf("otlp: WithMaxBodyBytes(%d): the cap must be positive", h.maxBody)
	case h.log == nil:
		return nil, errors.New("otlp: WithLogger(nil): give a logger")
	}
	return h, nil
}

// ServeHTTP handles one export request; see Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeText(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed: send traces with POST", r.Method))
		return
	}
	enc, err := encodingOf(r.Header.Get("Content-Type"))
	if err != nil {
		writeText(w, http.StatusUnsupportedMediaType, err.Error())
		return
	}
	buf := h.buffer()
	defer h.release(buf)
	if err := readBody(w, r, h.maxBody, buf); err != nil {
		code := http.StatusBadRequest
		switch {
		case errors.Is(err, errTooLarge):
			code = http.StatusRequestEntityTooLarge
		case errors.Is(err, errUnsupportedEncoding):
			code = http.StatusUnsupportedMediaType
		}
		writeStatus(w, enc, code, err.Error(), 0)
		return
	}
	req, err := enc.decode(buf.Bytes())
	if err != nil {
		writeStatus(w, enc, http.StatusBadRequest, err.Error(), 0)
		return
	}
	bodies, rejected := h.collect(req.Traces())
	if err := h.seal(r.Context(), bodies, rejected); err != nil {
		h.sealFailed(r.Context(), w, enc, len(bodies), err)
		return
	}
	if err := writeExportResponse(w, enc, rejected.count(), rejected.message()); err != nil {
		h.log.ErrorContext(r.Context(), "otlp: encode export response", "error", err)
		writeStatus(w, enc, http.StatusInternalServerError, "encode export response: "+err.Error(), 0)
	}
}

// sealFailed answers a failed Seal of n spans: 500 if retrying cannot help, else 503.
func (h *Handler) sealFailed(ctx context.Context, w http.ResponseWriter, enc encoding, n int, err error) {
	h.log.ErrorContext(ctx, "otlp: sealing spans failed; nothing was sealed", "spans", n, "error", err)
	msg := fmt.Sprintf("sealing %d spans failed, nothing was sealed: %v", n, err)
	if errors.Is(err, store.ErrNoSecret) || errors.Is(err, protocol.ErrMalformed) {
		writeStatus(w, enc, http.StatusInternalServerError, msg, 0)
		return
	}
	writeStatus(w, enc, http.StatusServiceUnavailable, msg, retryAfterSeconds)
}

// buffer returns an empty buffer for a request body.
func (h *Handler) buffer() *bytes.Buffer {
	if b, ok := h.buffers.Get().(*bytes.Buffer); ok {
		return b
	}
	return new(bytes.Buffer)
}

// release returns buf for reuse, unless it grew too large to keep.
func (h *Handler) release(buf *bytes.Buffer) {
	if buf.Cap() <= pooledBufferCap {
		buf.Reset()
		h.buffers.Put(buf)
	}
}
