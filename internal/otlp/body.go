package otlp

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The media types of the two OTLP/HTTP encodings.
const (
	contentTypeProtobuf = "application/x-protobuf"
	contentTypeJSON     = "application/json"
)

// encoding is how a request's payload, and so its response, is encoded.
type encoding int

const (
	encodingProtobuf encoding = iota + 1
	encodingJSON
)

// encodingOf returns the encoding named by a Content-Type header; parameters such as
// charset are ignored.
func encodingOf(contentType string) (encoding, error) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return 0, fmt.Errorf("unsupported Content-Type %s (send %s or %s): %w", protocol.Quote(contentType), contentTypeProtobuf, contentTypeJSON, err)
	}
	switch mediaType {
	case contentTypeProtobuf:
		return encodingProtobuf, nil
	case contentTypeJSON:
		return encodingJSON, nil
	}
	return 0, fmt.Errorf("unsupported Content-Type %s: send %s or %s", protocol.Quote(contentType), contentTypeProtobuf, contentTypeJSON)
}

// contentType is the media type of e.
func (e encoding) contentType() string {
	if e == encodingJSON {
		return contentTypeJSON
	}
	return contentTypeProtobuf
}

// decode decodes an ExportTraceServiceRequest encoded as e.
func (e encoding) decode(data []byte) (ptraceotlp.ExportRequest, error) {
	req := ptraceotlp.NewExportRequest()
	if err := e.checkNesting(data); err != nil {
		return req, fmt.Errorf("decode %s ExportTraceServiceRequest: %w", e.contentType(), err)
	}
	var err error
	if e == encodingJSON {
		err = req.UnmarshalJSON(data)
	} else {
		err = req.UnmarshalProto(data)
	}
	if err != nil {
		return req, fmt.Errorf("decode %s ExportTraceServiceRequest: %w", e.contentType(), err)
	}
	return req, nil
}

// errTooLarge is wrapped by readBody's error for a body over the cap.
var errTooLarge = errors.New("request body too large")

// errUnsupportedEncoding is wrapped by readBody's error for a Content-Encoding other than
// gzip or identity.
var errUnsupportedEncoding = errors.New("unsupported Content-Encoding")

// readBody reads r's body into buf, decompressing it when Content-Encoding is gzip. Both
// the body as sent and the decompressed payload may be at most limit bytes; the error for
// either wraps errTooLarge.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, buf *bytes.Buffer) error {
	gzipped := false
	switch ce := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); ce {
	case "", "identity":
	case "gzip", "x-gzip":
		gzipped = true
	default:
		return fmt.Errorf("%w %s: send the body uncompressed or gzip-compressed", errUnsupportedEncoding, protocol.Quote(ce))
	}
	if r.ContentLength > limit {
		return fmt.Errorf("%w: Content-Length %d exceeds the limit of %d bytes", errTooLarge, r.ContentLength, limit)
	}
	var body io.Reader = http.MaxBytesReader(w, r.Body, limit)
	if gzipped {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return bodyError("gzip header", err, limit)
		}
		body = zr
	} else if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	// One byte past the limit tells a payload that ends there from one that goes on.
	n, err := buf.ReadFrom(io.LimitReader(body, limit+1))
	if err != nil {
		return bodyError("read body", err, limit)
	}
	if n > limit {
		return fmt.Errorf("%w: the decompressed payload exceeds the limit of %d bytes", errTooLarge, limit)
	}
	return nil
}

// bodyError describes an error from reading a body, saying whether it was the cap.
func bodyError(step string, err error, limit int64) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return fmt.Errorf("%w: the body exceeds the limit of %d bytes", errTooLarge, limit)
	}
	return fmt.Errorf("%s: %w", step, err)
}
