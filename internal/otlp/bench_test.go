package otlp_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/cairn-dev/cairn/internal/otlp"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// benchSpansPerRequest is the size of one benchmark request: the Go SDK batch processor's
// default maximum export batch.
const benchSpansPerRequest = 512

// benchRequests builds n distinct requests of benchSpansPerRequest chat spans each, with
// the attributes a typical gen_ai instrumentation records, and returns them encoded.
func benchRequests(b *testing.B, n int, encode func(ptraceotlp.ExportRequest) ([]byte, error)) [][]byte {
	b.Helper()
	out := make([][]byte, n)
	for r := range out {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "billing-assistant")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range benchSpansPerRequest {
			span := spans.AppendEmpty()
			var id [16]byte
			binary.BigEndian.PutUint64(id[:8], uint64(r+1))
			binary.BigEndian.PutUint64(id[8:], uint64(i+1))
			span.SetTraceID(id)
			span.SetSpanID([8]byte(id[8:]))
			span.SetName("chat gpt-4o")
			span.SetKind(ptrace.SpanKindClient)
			start := uint64(1795262401000000000 + r*1e9 + i*1e6)
			span.SetStartTimestamp(pcommon.Timestamp(start))
			span.SetEndTimestamp(pcommon.Timestamp(start + 850e6))
			a := span.Attributes()
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.system", "openai")
			a.PutStr("gen_ai.request.model", "gpt-4o")
			a.PutStr("gen_ai.response.model", "gpt-4o-2024-08-06")
			a.PutStr("gen_ai.response.id", fmt.Sprintf("chatcmpl-%d-%d", r, i))
			a.PutDouble("gen_ai.request.temperature", 0.2)
			a.PutInt("gen_ai.request.max_tokens", 1024)
			a.PutInt("gen_ai.usage.input_tokens", int64(100+i))
			a.PutInt("gen_ai.usage.output_tokens", int64(200+i))
			a.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")
			a.PutStr("server.address", "api.example.invalid")
			span.Status().SetCode(ptrace.StatusCodeOk)
		}
		body, err := encode(ptraceotlp.NewExportRequestFromTraces(td))
		if err != nil {
			b.Fatal(err)
		}
		out[r] = body
	}
	return out
}

// BenchmarkIngest sends requests of 512 gen_ai spans through the real handler, over real
// HTTP, into a real SQLite chain (synchronous=FULL: one fsync per request), and reports
// spans sealed per second. Each request waits for the one before, as an SDK batch
// processor sends them, except in "2 clients", where two clients send at once.
//
// "seal only" is the baseline: the same bodies, converted beforehand, sealed straight into
// the store, 512 a call. The difference is what the handler costs (HTTP, decoding,
// conversion, checks).
func BenchmarkIngest(b *testing.B) {
	protobuf := func(r ptraceotlp.ExportRequest) ([]byte, error) { return r.MarshalProto() }
	json := func(r ptraceotlp.ExportRequest) ([]byte, error) { return r.MarshalJSON() }
	for _, bc := range []struct {
		name    string
		encode  func(ptraceotlp.ExportRequest) ([]byte, error)
		headers map[string]string
		gzip    bool
		clients int
	}{
		{"protobuf", protobuf, map[string]string{"Content-Type": protobufType}, false, 1},
		{"protobuf+gzip", protobuf, map[string]string{"Content-Type": protobufType, "Content-Encoding": "gzip"}, true, 1},
		{"json", json, map[string]string{"Content-Type": jsonType}, false, 1},
		{"protobuf/2 clients", protobuf, map[string]string{"Content-Type": protobufType}, false, 2},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bodies := benchRequests(b, 16, bc.encode)
			if bc.gzip {
				for i := range bodies {
					bodies[i] = gzipped(b, bodies[i])
				}
			}
			st := openStore(b, testSecret)
			h, err := otlp.NewHandler(st)
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			client := srv.Client()
			send := func(i int) {
				req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/traces", bytes.NewReader(bodies[i%len(bodies)]))
				if err != nil {
					b.Error(err)
					return
				}
				for k, v := range bc.headers {
					req.Header.Set(k, v)
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("request %d: %s", i, resp.Status)
				}
			}
			b.SetBytes(int64(len(bodies[0]) * bc.clients))
			n := 0
			for b.Loop() {
				var wg sync.WaitGroup
				for c := range bc.clients {
					wg.Go(func() { send(n + c) })
				}
				wg.Wait()
				n += bc.clients
			}
			b.ReportMetric(float64(n*benchSpansPerRequest)/b.Elapsed().Seconds(), "spans/s")
			if stats, err := st.Stats(context.Background()); err != nil || stats.Entries != int64(n*benchSpansPerRequest) {
				b.Fatalf("chain has %d entries (%v), want %d", stats.Entries, err, n*benchSpansPerRequest)
			}
		})
	}

	b.Run("seal only", func(b *testing.B) {
		st := openStore(b, testSecret)
		var batches [][]protocol.SpanBody
		for _, body := range benchRequests(b, 16, func(r ptraceotlp.ExportRequest) ([]byte, error) { return r.MarshalProto() }) {
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(body); err != nil {
				b.Fatal(err)
			}
			var batch []protocol.SpanBody
			for _, span := range req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().All() {
				sb, err := otlp.SpanBody(span)
				if err != nil {
					b.Fatal(err)
				}
				batch = append(batch, sb)
			}
			batches = append(batches, batch)
		}
		n := 0
		for b.Loop() {
			if _, err := st.Seal(b.Context(), batches[n%len(batches)]); err != nil {
				b.Fatal(err)
			}
			n++
		}
		b.ReportMetric(float64(n*benchSpansPerRequest)/b.Elapsed().Seconds(), "spans/s")
	})
}
