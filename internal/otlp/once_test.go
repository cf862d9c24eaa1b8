package otlp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/cairn-dev/cairn/internal/otlp"
	"github.com/cairn-dev/cairn/internal/otlp/genaispans"
	"github.com/cairn-dev/cairn/internal/store"
)

// onceEncodings are the two encodings of an export request and its response.
var onceEncodings = []struct {
	name        string
	contentType string
	encode      func(ptraceotlp.ExportRequest) ([]byte, error)
	decode      func(ptraceotlp.ExportResponse, []byte) error
}{
	{"protobuf", protobufType,
		func(r ptraceotlp.ExportRequest) ([]byte, error) { return r.MarshalProto() },
		func(r ptraceotlp.ExportResponse, b []byte) error { return r.UnmarshalProto(b) }},
	{"json", jsonType,
		func(r ptraceotlp.ExportRequest) ([]byte, error) { return r.MarshalJSON() },
		func(r ptraceotlp.ExportResponse, b []byte) error { return r.UnmarshalJSON(b) }},
}

// exportTo posts td to a handler sealing straight into s, in the encoding enc, and returns
// the decoded response, failing unless it is a 200.
func exportTo(t *testing.T, s *store.Store, enc int, td ptrace.Traces) ptraceotlp.ExportResponse {
	t.Helper()
	e := onceEncodings[enc]
	body, err := e.encode(ptraceotlp.NewExportRequestFromTraces(td))
	if err != nil {
		t.Fatal(err)
	}
	h, err := otlp.NewHandler(s)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, out := post(t, srv, body, map[string]string{"Content-Type": e.contentType})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %q", resp.Status, out)
	}
	decoded := ptraceotlp.NewExportResponse()
	if err := e.decode(decoded, out); err != nil {
		t.Fatalf("response %q: %v", out, err)
	}
	return decoded
}

// entries is the number of entries in s.
func entries(t *testing.T, s *store.Store) int64 {
	t.Helper()
	n, err := s.LastSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRetriedRequestIsSealedOnce sends the same request twice, as a collector retrying
// an export whose answer it lost: the second seals nothing and is a full success.
func TestRetriedRequestIsSealedOnce(t *testing.T) {
	for enc, e := range onceEncodings {
		t.Run(e.name, func(t *testing.T) {
			s := openStore(t, testSecret)
			td := genaispans.Batch(1, 300, "retry", 1795262401000000000)
			for try := range 2 {
				resp := exportTo(t, s, enc, td)
				if ps := resp.PartialSuccess(); ps.RejectedSpans() != 0 || ps.ErrorMessage() != "" {
					t.Fatalf("try %d: partial success %d %q", try, ps.RejectedSpans(), ps.ErrorMessage())
				}
				if n := entries(t, s); n != 300 {
					t.Fatalf("after try %d the chain has %d entries, want 300", try, n)
				}
			}
			if n := verifyFull(t, s); n != 300 {
				t.Fatalf("verified %d entries", n)
			}
		})
	}
}

// TestConflictingSpanIsRejected sends spans again with one changed, its ids kept, beside
// a new one: the new one is sealed, the changed one is rejected as a partial success that
// names it, and the ones sent before are skipped.
func TestConflictingSpanIsRejected(t *testing.T) {
	for enc, e := range onceEncodings {
		t.Run(e.name, func(t *testing.T) {
			s := openStore(t, testSecret)
			exportTo(t, s, enc, genaispans.Batch(1, 10, "conflict", 1795262401000000000))
			td := genaispans.Batch(1, 11, "conflict", 1795262401000000000)
			spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			changed := spans.At(4)
			changed.Attributes().PutInt("gen_ai.usage.output_tokens", 999_999)
			resp := exportTo(t, s, enc, td)
			ps := resp.PartialSuccess()
			want := []string{"1 span", changed.TraceID().String(), changed.SpanID().String(),
				"other content", "entry seq 5"}
			for _, w := range want {
				if !strings.Contains(ps.ErrorMessage(), w) {
					t.Errorf("error_message %q does not say %q", ps.ErrorMessage(), w)
				}
			}
			if ps.RejectedSpans() != 1 {
				t.Errorf("rejected_spans %d, want 1", ps.RejectedSpans())
			}
			if n := entries(t, s); n != 11 {
				t.Fatalf("the chain has %d entries, want 11", n)
			}
			if n := verifyFull(t, s); n != 11 {
				t.Fatalf("verified %d entries", n)
			}
		})
	}
}
