package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// BenchmarkReads times every anonymous read route (and the operator's GET /receipts) as a
// replica serves it, from a real manager's cache over a real API server (readsStore):
// 1,000 registered operators, each in a 1,000-participant anchor that a real embedded log
// recorded, and one submission each (1,000 submissions, 100 anchors), then ten each
// (10,000 submissions, 1,000 anchors). Each op is one request through the Server's
// handler (rate limits off): what the cache, the checks and the answer cost, with
// ns/op, B/op and allocs/op (run with -benchmem). The store is filled once (about a
// minute per size on two cores) and is not timed.
//
//	go test ./webhook -run '^$' -bench Reads -benchmem -benchtime 20x
func BenchmarkReads(b *testing.B) {
	for _, perOperator := range []int{1, 10} {
		b.Run("submissions="+strconv.Itoa(perOperator*readsOperators), func(b *testing.B) {
			st := startReadsStore(b, perOperator)
			s, err := st.server()
			if err != nil {
				b.Fatal(err)
			}
			op := st.ops[0]
			tok, err := protocol.SignToken(op.key, protocol.BodyNonce(time.Now(), nil))
			if err != nil {
				b.Fatal(err)
			}
			for _, rt := range []struct{ name, path, auth string }{
				{"status", "/federation/status", ""},
				{"operator", "/federation/operator/" + string(op.id), ""},
				{"verify-1000", "/federation/verify/" + readsVerifyAnchor, ""},
				{"anchor-1000", "/federation/anchor/" + readsVerifyAnchor, ""},
				{"page", "/", ""},
				{"sidecar", "/federation/sidecar/" + st.sidecarDigest, ""},
				{"receipts", "/receipts", "Bearer " + tok},
			} {
				b.Run(rt.name, func(b *testing.B) {
					serve := func() {
						req := httptest.NewRequest(http.MethodGet, rt.path, nil)
						if rt.auth != "" {
							req.Header.Set("Authorization", rt.auth)
						}
						rec := httptest.NewRecorder()
						s.ServeHTTP(rec, req)
						if rec.Code != http.StatusOK {
							b.Fatalf("%s: %d %s", rt.path, rec.Code, rec.Body)
						}
					}
					serve() // the first request of a route may fill what later ones reuse
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						serve()
					}
				})
			}
		})
	}
}

// registerReadsIndexes gives the bench manager's cache the indexes the API reads through.
func registerReadsIndexes(ctx context.Context, mgr ctrl.Manager) error {
	return federation.RegisterIndexes(ctx, mgr.GetFieldIndexer())
}

// readsServerOptions are the bench API server's options.
func readsServerOptions(st *readsStore) Options {
	return Options{Client: st.mgr.GetClient(), APIReader: st.mgr.GetAPIReader(), Informers: st.mgr.GetCache(), Federation: st.fed, LogDir: st.logDir,
		SidecarDir: st.sides, RatePerSecond: -1, OperatorRatePerSecond: -1}
}
