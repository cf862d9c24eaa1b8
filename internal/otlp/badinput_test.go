package otlp_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/cairn-dev/cairn/internal/otlp"
)

const (
	protobufType = "application/x-protobuf"
	jsonType     = "application/json"
)

// protoRequest encodes spans as a protobuf ExportTraceServiceRequest with the reference
// OTLP types, which check nothing about the values.
func protoRequest(t testing.TB, spans ...*tracepb.Span) []byte {
	t.Helper()
	out, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// genAISpan is a valid span with a gen_ai attribute.
func genAISpan(name string) *tracepb.Span {
	return &tracepb.Span{
		TraceId:           bytes.Repeat([]byte{0x4b}, 16),
		SpanId:            bytes.Repeat([]byte{0x0f}, 8),
		Name:              name,
		Kind:              tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: 1795262401000000000,
		EndTimeUnixNano:   1795262401850000000,
		Attributes: []*commonpb.KeyValue{{Key: "gen_ai.request.model",
			Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "gpt-4o"}}}},
	}
}

// gzipped compresses b.
func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodeStatus decodes the google.rpc.Status of an error response.
func decodeStatus(t testing.TB, resp *http.Response, body []byte) *status.Status {
	t.Helper()
	st := &status.Status{}
	var err error
	switch resp.Header.Get("Content-Type") {
	case protobufType:
		err = proto.Unmarshal(body, st)
	case jsonType:
		err = protojson.Unmarshal(body, st)
	default:
		t.Fatalf("error response of type %q: %s", resp.Header.Get("Content-Type"), body)
	}
	if err != nil {
		t.Fatalf("error response %q does not decode as a google.rpc.Status: %v", body, err)
	}
	return st
}

func TestBadRequests(t *testing.T) {
	zeros := make([]byte, 4<<20) // 4 MiB that gzip to about 4 KiB
	withShortTraceID := genAISpan("short trace id")
	withShortTraceID.TraceId = []byte{1, 2, 3}
	withLongSpanID := genAISpan("long span id")
	withLongSpanID.SpanId = make([]byte, 9)
	validJSON := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"%s","spanId":"%s","name":"chat",` +
		`"startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"gen_ai.system","value":{"stringValue":"openai"}}]}]}]}]}`
	jsonWithIDs := func(traceID, spanID string) []byte {
		return []byte(strings.Replace(strings.Replace(validJSON, "%s", traceID, 1), "%s", spanID, 1))
	}
	if resp, out := post(t, newServerOnly(t), jsonWithIDs("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b1"),
		map[string]string{"Content-Type": jsonType}); resp.StatusCode != http.StatusOK {
		t.Fatalf("the valid JSON template is refused: %s %s", resp.Status, out) // so the cases below fail for their one change
	}

	tests := []struct {
		name     string
		method   string
		headers  map[string]string
		body     []byte
		chunked  bool // send without Content-Length
		wantCode int
		wantMsg  string
	}{
		{name: "GET", method: http.MethodGet, wantCode: http.StatusMethodNotAllowed, wantMsg: "POST"},
		{name: "no content type", body: protoRequest(t, genAISpan("a")), wantCode: http.StatusUnsupportedMediaType, wantMsg: "Content-Type"},
		{name: "text/plain", headers: map[string]string{"Content-Type": "text/plain"}, body: []byte("hi"),
			wantCode: http.StatusUnsupportedMediaType, wantMsg: `unsupported Content-Type "text/plain"`},
		{name: "grpc", headers: map[string]string{"Content-Type": "application/grpc"}, body: protoRequest(t, genAISpan("a")),
			wantCode: http.StatusUnsupportedMediaType, wantMsg: "application/x-protobuf or application/json"},
		{name: "brotli", headers: map[string]string{"Content-Type": protobufType, "Content-Encoding": "br"},
			body: protoRequest(t, genAISpan("a")), wantCode: http.StatusUnsupportedMediaType, wantMsg: `Content-Encoding "br"`},
		{name: "malformed protobuf", headers: map[string]string{"Content-Type": protobufType},
			body: []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, wantCode: http.StatusBadRequest, wantMsg: "decode application/x-protobuf"},
		{name: "truncated protobuf", headers: map[string]string{"Content-Type": protobufType},
			body: protoRequest(t, genAISpan("a"))[:20], wantCode: http.StatusBadRequest, wantMsg: "decode application/x-protobuf"},
		{name: "malformed JSON", headers: map[string]string{"Content-Type": jsonType},
			body: []byte(`{"resourceSpans": [{"scopeSpans": [`), wantCode: http.StatusBadRequest, wantMsg: "decode application/json"},
		{name: "JSON of the wrong shape", headers: map[string]string{"Content-Type": jsonType},
			body: []byte(`{"resourceSpans": "all of them"}`), wantCode: http.StatusBadRequest, wantMsg: "decode application/json"},
		{name: "not JSON", headers: map[string]string{"Content-Type": jsonType},
			body: protoRequest(t, genAISpan("a")), wantCode: http.StatusBadRequest, wantMsg: "decode application/json"},
		{name: "protobuf trace id of 3 bytes", headers: map[string]string{"Content-Type": protobufType},
			body: protoRequest(t, withShortTraceID), wantCode: http.StatusBadRequest, wantMsg: "decode application/x-protobuf"},
		{name: "protobuf span id of 9 bytes", headers: map[string]string{"Content-Type": protobufType},
			body: protoRequest(t, withLongSpanID), wantCode: http.StatusBadRequest, wantMsg: "decode application/x-protobuf"},
		{name: "JSON trace id of 30 hex", headers: map[string]string{"Content-Type": jsonType},
			body: jsonWithIDs("4bf92f3577b34da6a3ce929d0e0e47", "00f067aa0ba902b1"), wantCode: http.StatusBadRequest, wantMsg: "length"},
		{name: "JSON span id of 18 hex", headers: map[string]string{"Content-Type": jsonType},
			body: jsonWithIDs("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b1ff"), wantCode: http.StatusBadRequest, wantMsg: "length"},
		{name: "JSON trace id not hex", headers: map[string]string{"Content-Type": jsonType},
			body: jsonWithIDs("zzf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b1"), wantCode: http.StatusBadRequest, wantMsg: "invalid byte"},
		{name: "not gzip", headers: map[string]string{"Content-Type": protobufType, "Content-Encoding": "gzip"},
			body: protoRequest(t, genAISpan("a")), wantCode: http.StatusBadRequest, wantMsg: "gzip"},
		{name: "truncated gzip", headers: map[string]string{"Content-Type": protobufType, "Content-Encoding": "gzip"},
			body: gzipped(t, protoRequest(t, genAISpan("a")))[:30], wantCode: http.StatusBadRequest, wantMsg: "read body"},
		{name: "oversized", headers: map[string]string{"Content-Type": protobufType},
			body: make([]byte, 64<<10+1), wantCode: http.StatusRequestEntityTooLarge, wantMsg: "Content-Length 65537 exceeds the limit of 65536 bytes"},
		{name: "oversized chunked", headers: map[string]string{"Content-Type": protobufType},
			body: make([]byte, 64<<10+1), chunked: true, wantCode: http.StatusRequestEntityTooLarge, wantMsg: "the body exceeds the limit of 65536 bytes"},
		{name: "oversized gzip", headers: map[string]string{"Content-Type": protobufType, "Content-Encoding": "gzip"},
			body: bytes.Repeat([]byte("x"), 64<<10+1), wantCode: http.StatusRequestEntityTooLarge, wantMsg: "exceeds the limit"},
		{name: "gzip bomb", headers: map[string]string{"Content-Type": protobufType, "Content-Encoding": "gzip"},
			body: gzipped(t, zeros), wantCode: http.StatusRequestEntityTooLarge, wantMsg: "decompressed payload exceeds the limit of 65536 bytes"},
		{name: "gzip bomb chunked", headers: map[string]string{"Content-Type": jsonType, "Content-Encoding": "gzip"},
			body: gzipped(t, zeros), chunked: true, wantCode: http.StatusRequestEntityTooLarge, wantMsg: "decompressed payload exceeds"},
	}
	srv, sealer := newServer(t, otlp.WithMaxBodyBytes(64<<10))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			var body io.Reader = bytes.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // hides the length: sent chunked
			}
			req, err := http.NewRequest(method, srv.URL+"/v1/traces", body)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			out, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("%s: %s, want %d", resp.Status, out, tc.wantCode)
			}
			msg := string(out)
			switch {
			case tc.wantCode == http.StatusMethodNotAllowed:
				if resp.Header.Get("Allow") != http.MethodPost {
					t.Errorf("Allow %q, want POST", resp.Header.Get("Allow"))
				}
			case strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain"):
			default: // a google.rpc.Status in the request's encoding
				if got, want := resp.Header.Get("Content-Type"), tc.headers["Content-Type"]; got != want {
					t.Errorf("response Content-Type %q, want the request's %q", got, want)
				}
				st := decodeStatus(t, resp, out)
				if codes.Code(st.GetCode()) != codes.InvalidArgument {
					t.Errorf("status code %d, want InvalidArgument", st.GetCode())
				}
				msg = st.GetMessage()
			}
			if !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("message %q, want it to say %q", msg, tc.wantMsg)
			}
		})
	}
	if calls, _ := sealer.sealed(); len(calls) != 0 {
		t.Fatalf("bad requests made Seal calls %v", calls)
	}
}

// newServerOnly is newServer for a test that needs only the server.
func newServerOnly(t testing.TB, opts ...otlp.Option) *httptest.Server {
	t.Helper()
	srv, _ := newServer(t, opts...)
	return srv
}

func TestNewHandlerRefusesBadOptions(t *testing.T) {
	s := &recordingSealer{store: openStore(t, testSecret)}
	for name, f := range map[string]func() (*otlp.Handler, error){
		"nil sealer":   func() (*otlp.Handler, error) { return otlp.NewHandler(nil) },
		"zero cap":     func() (*otlp.Handler, error) { return otlp.NewHandler(s, otlp.WithMaxBodyBytes(0)) },
		"negative cap": func() (*otlp.Handler, error) { return otlp.NewHandler(s, otlp.WithMaxBodyBytes(-1)) },
		"nil logger":   func() (*otlp.Handler, error) { return otlp.NewHandler(s, otlp.WithLogger(nil)) },
	} {
		if h, err := f(); err == nil || h != nil {
			t.Errorf("%s: NewHandler gave %v, %v; want an error", name, h, err)
		}
	}
}
