package otlp

import (
	"net/http"
	"strconv"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// writeExportResponse answers 200 with an ExportTraceServiceResponse encoded as enc. When
// rejected is not 0 or message is not empty, it carries them as partial_success; otherwise
// partial_success is left unset, as OTLP asks of a full success.
func writeExportResponse(w http.ResponseWriter, enc encoding, rejected int64, message string) error {
	if rejected == 0 && message == "" {
		writeBody(w, http.StatusOK, enc.contentType(), fullSuccess[enc])
		return nil
	}
	resp := ptraceotlp.NewExportResponse()
	resp.PartialSuccess().SetRejectedSpans(rejected)
	resp.PartialSuccess().SetErrorMessage(message)
	var out []byte
	var err error
	if enc == encodingJSON {
		out, err = resp.MarshalJSON()
	} else {
		out, err = resp.MarshalProto()
	}
	if err != nil {
		return err
	}
	writeBody(w, http.StatusOK, enc.contentType(), out)
	return nil
}

// fullSuccess is an ExportTraceServiceResponse with no field set, in each encoding.
var fullSuccess = map[encoding][]byte{encodingProtobuf: {}, encodingJSON: []byte("{}")}

// writeStatus answers an error with httpCode and a google.rpc.Status encoded as enc, as
// OTLP/HTTP asks of 4xx and 5xx responses. retryAfter, when not 0, is sent as Retry-After
// in seconds.
func writeStatus(w http.ResponseWriter, enc encoding, httpCode int, message string, retryAfter int) {
	st := &status.Status{Code: int32(grpcCode(httpCode)), Message: message}
	var out []byte
	var err error
	if enc == encodingJSON {
		out, err = protojson.Marshal(st)
	} else {
		out, err = proto.Marshal(st)
	}
	if err != nil { // not expected of a two-field message; say it in text instead
		writeText(w, httpCode, message)
		return
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	writeBody(w, httpCode, enc.contentType(), out)
}

// writeText answers httpCode with message as plain text: for requests whose encoding is
// not known.
func writeText(w http.ResponseWriter, httpCode int, message string) {
	writeBody(w, httpCode, "text/plain; charset=utf-8", []byte(message+"\n"))
}

// writeBody writes a complete response. A failed write means the client has gone; there
// is no one left to tell.
func writeBody(w http.ResponseWriter, httpCode int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(httpCode)
	_, _ = w.Write(body)
}

// grpcCode is the google.rpc.Code for an HTTP status this handler answers with: every
// 4xx is the request's fault and not to be retried, 503 may be retried, anything else is
// the server's.
func grpcCode(httpCode int) codes.Code {
	switch {
	case httpCode >= 400 && httpCode < 500:
		return codes.InvalidArgument
	case httpCode == http.StatusServiceUnavailable:
		return codes.Unavailable
	default:
		return codes.Internal
	}
}
