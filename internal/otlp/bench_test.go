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

// benchRequest builds request r of a stream of requests of benchSpansPerRequest chat
// spans each, with the attributes a typical gen_ai instrumentation records, and returns it
// encoded. Every request's spans have their own ids: sent again, they would be sealed once.
func benchRequest(b *testing.B, r int, encode func(ptraceotlp.ExportRequest) ([]byte, error)) []byte {
	b.Helper()
	td := genaispans.Batch(r, benchSpansPerRequest, "billing-assistant", 1795262401000000000+uint64(r)*1e9)
	body, err := encode(ptraceotlp.NewExportRequestFromTraces(td))
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// benchRequests returns requests 0 to n-1 of benchRequest's stream.
func benchRequests(b *testing.B, n int, encode func(ptraceotlp.ExportRequest) ([]byte, error)) [][]byte {
	b.Helper()
	out := make([][]byte, n)
	for r := range out {
		out[r] = benchRequest(b, r, encode)
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
			request := func(i int) []byte { // a new request each time: see benchRequest
				body := benchRequest(b, i, bc.encode)
				if bc.gzip {
					body = gzipped(b, body)
				}
				return body
			}
			st := openStore(b, testSecret)
			n := ingest(b, st, request, bc.headers, bc.clients)
			b.ReportMetric(float64(n*benchSpansPerRequest)/b.Elapsed().Seconds(), "spans/s")
			if stats, err := st.Stats(context.Background()); err != nil || stats.Entries != int64(n*benchSpansPerRequest) {
				b.Fatalf("chain has %d entries (%v), want %d", stats.Entries, err, n*benchSpansPerRequest)
			}
		})
	}

	b.Run("seal only", func(b *testing.B) {
		st := openStore(b, testSecret)
		batch := func(r int) []protocol.SpanBody { // a new batch each time: see benchRequest
			var out []protocol.SpanBody
			td := genaispans.Batch(r, benchSpansPerRequest, "billing-assistant", 1795262401000000000+uint64(r)*1e9)
			for _, span := range td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().All() {
				sb, err := otlp.SpanBody(span)
				if err != nil {
					b.Fatal(err)
				}
				out = append(out, sb)
			}
			return out
		}
		n := 0
		for b.Loop() {
			b.StopTimer()
			bodies := batch(n)
			b.StartTimer()
			if _, err := st.SealOnce(b.Context(), bodies); err != nil {
				b.Fatal(err)
			}
			n++
		}
		b.ReportMetric(float64(n*benchSpansPerRequest)/b.Elapsed().Seconds(), "spans/s")
	})
}

// ingest sends request(0), request(1), ... through a handler sealing into s over real
// HTTP, clients requests at a time, for b's loop, and returns the number of requests
// sent. The requests are made with the timer stopped.
func ingest(b *testing.B, s chain.Sealer, request func(i int) []byte, headers map[string]string, clients int) int {
	h, err := otlp.NewHandler(s)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	send := func(body []byte) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/traces", bytes.NewReader(body))
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
			b.Errorf("request: %s", resp.Status)
		}
	}
	b.SetBytes(int64(len(request(0)) * clients))
	n := 0
	bodies := make([][]byte, clients)
	for b.Loop() {
		b.StopTimer()
		for c := range bodies {
			bodies[c] = request(n + c)
		}
		b.StartTimer()
		var wg sync.WaitGroup
		for _, body := range bodies {
			wg.Go(func() { send(body) })
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
	n := ingest(b, &s, func(i int) []byte { return bodies[i%len(bodies)] }, map[string]string{"Content-Type": protobufType}, 1)
	b.ReportMetric(float64(n*benchSpansPerRequest)/b.Elapsed().Seconds(), "spans/s")
	if got := s.bodies.Load(); got != int64(n*benchSpansPerRequest) {
		b.Fatalf("the handler passed on %d bodies, want %d", got, n*benchSpansPerRequest)
	}
}
