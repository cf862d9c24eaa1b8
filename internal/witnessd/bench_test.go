package witnessd_test

import (
	"context"
	"crypto/rand"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/witnessd"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// BenchmarkAddCheckpoint is the witness's cost of one checkpoint of a growing log: parse,
// the log's signature, a consistency proof, the synced SQLite commit and the cosignature;
// over HTTP on loopback with the client's check of the answer, and in process.
func BenchmarkAddCheckpoint(b *testing.B) {
	for _, viaHTTP := range []bool{false, true} {
		name := "in-process"
		if viaHTTP {
			name = "http"
		}
		b.Run(name, func(b *testing.B) {
			log := newTestLog(b)
			skey, vkey, err := witness.GenerateSignerKey("bench.example/w", rand.Reader)
			if err != nil {
				b.Fatal(err)
			}
			c, err := witness.ParseSignerKey(skey)
			if err != nil {
				b.Fatal(err)
			}
			w, err := witnessd.Open(witnessd.Options{Cosigner: c, Logs: []witness.LogKey{log.key}, StatePath: filepath.Join(b.TempDir(), "w.db")})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = w.Close() }()
			srv := httptest.NewServer(w.Handler())
			defer srv.Close()
			key, _ := witness.ParseKey(vkey)
			client := &witness.Client{Witness: witness.Witness{Key: key, URL: srv.URL}}
			log.grow(1000, "base")
			reqs := make([]*witness.AddCheckpoint, b.N+1)
			reqs[0] = log.request(0)
			old := log.tree.Size()
			for i := 1; i <= b.N; i++ {
				log.grow(3, "bench")
				reqs[i] = log.request(old)
				old = log.tree.Size()
			}
			ctx := context.Background()
			if _, err := w.AddCheckpoint(ctx, reqs[0].Marshal()); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				if viaHTTP {
					if _, _, err := client.AddCheckpoint(ctx, reqs[i]); err != nil {
						b.Fatal(err)
					}
					continue
				}
				a, err := w.AddCheckpoint(ctx, reqs[i].Marshal())
				if err != nil || a.Status != 200 {
					b.Fatalf("%v %d %s", err, a.Status, a.Body)
				}
			}
		})
	}
}
