package otlp_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/cairn-dev/cairn/internal/otlp"
	"github.com/cairn-dev/cairn/internal/otlp/genaispans"
	"github.com/cairn-dev/cairn/pkg/chain"
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
		td := genaispans.Batch(r, benchSpansPerRequest, "billing-assistant", 1795262401000000000+uint64(r)*1e9)
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
// conversion, checks), which BenchmarkIngestHandler measures alone.
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
			n := ingest(b, st, bodies, bc.headers, bc.clients)
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

// ingest sends bodies, in turn, through a handler sealing into s over real HTTP, clients
// requests at a time, for b's loop, and returns the number of requests sent.
func ingest(b *testing.B, s chain.Sealer, bodies [][]byte, headers map[string]string, clients int) int {
	h, err := otlp.NewHandler(s)
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
		for k, v := range headers {
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
	b.SetBytes(int64(len(bodies[0]) * clients))
	n := 0
	for b.Loop() {
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() { send(n + c) })
		}
		wg.Wait()
		n += clients
	}
	return n
}

// countingSealer counts the bodies it is given and seals nothing.
type countingSealer struct{ bodies atomic.Int64 }

func (s *countingSealer) Seal(_ context.Context, bodies []protocol.SpanBody) ([]*protocol.Entry, error) {
	s.bodies.Add(int64(len(bodies)))
	return nil, nil
}

// BenchmarkIngestHandler is BenchmarkIngest/protobuf into a Sealer that only counts the
// bodies: what the handler itself costs (HTTP, decoding, conversion, checks), without the
// store's canonical JSON, hashing and SQLite. See spans/s.
func BenchmarkIngestHandler(b *testing.B) {
	bodies := benchRequests(b, 16, func(r ptraceotlp.ExportRequest) ([]byte, error) { return r.MarshalProto() })
	var s countingSealer
	n := ingest(b, &s, bodies, map[string]string{"Content-Type": protobufType}, 1)
	b.ReportMetric(float64(n*benchSpansPerRequest)/b.Elapsed().Seconds(), "spans/s")
	if got := s.bodies.Load(); got != int64(n*benchSpansPerRequest) {
		b.Fatalf("the handler passed on %d bodies, want %d", got, n*benchSpansPerRequest)
	}
}
