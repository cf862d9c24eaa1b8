package tlog

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transparency-dev/tessera"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// BenchmarkEmbeddedAppend uploads distinct records from many goroutines at once, as a
// federation's controllers and a burst of registrations would, each upload waiting for
// its proof. records/s is the throughput.
func BenchmarkEmbeddedAppend(b *testing.B) {
	l := openTestLog(b, b.TempDir())
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i], _ = record(b, i)
	}
	var next atomic.Int64
	b.SetParallelism(1536) // goroutines per GOMAXPROCS, within tessera's pushback limit of 4096
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Upload(context.Background(), bodies[next.Add(1)-1]); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}

// benchLog is an embedded log of 1,000,000 entries, built once per process. To keep it
// between runs, set CAIRN_TLOG_BENCH_LOG to a directory: it is built there unless it
// already holds the entries.
var benchLog = sync.OnceValues(func() (string, error) {
	dir := os.Getenv("CAIRN_TLOG_BENCH_LOG")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "cairn-tlog-bench-"); err != nil {
			return "", err
		}
	}
	ctx := context.Background()
	l, err := OpenEmbedded(ctx, EmbeddedOptions{Dir: dir, PrivateKey: benchLogKey})
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close(ctx) }()
	size, err := l.reader.IntegratedSize(ctx)
	if err != nil {
		return "", err
	}
	// Add the entries without waiting for each, then catch the leaf index up once.
	var last tessera.IndexFuture
	for i := size; i < benchLogSize; i++ {
		last = l.add(ctx, tessera.NewEntry(binary.BigEndian.AppendUint64(make([]byte, 0, 512), i)))
		if i%4096 == 0 {
			if _, err := last(); err != nil {
				return "", err
			}
		}
	}
	if last != nil {
		if _, _, err := l.await.Await(ctx, last); err != nil {
			return "", err
		}
	}
	return dir, l.index.catchUp(ctx, l.reader)
})

const benchLogSize = 1_000_000

// benchLogKey is fixed so that a kept CAIRN_TLOG_BENCH_LOG stays verifiable.
const benchLogKey = "PRIVATE+KEY+cairn.bench/embedded+23621235+ATqS/gCc4p4xg2NTrb7j0W0mVgh1bAOZDbboAeZcxLez"

// BenchmarkEmbeddedProof1M reads a random entry of a 1,000,000-entry log with an
// inclusion proof built from its tiles, then verifies the bundle offline as a receipt
// holder would (proof, checkpoint signature).
func BenchmarkEmbeddedProof1M(b *testing.B) {
	dir, err := benchLog()
	if err != nil {
		b.Fatal(err)
	}
	l := openTestLogWithKey(b, dir, benchLogKey)
	key, _ := l.PublicKey(b.Context())
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		e, err := l.Entry(b.Context(), rng.Int64N(benchLogSize))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := protocol.VerifyLogBundle(&e.Bundle, protocol.LogVerifyOptions{Key: key}); err != nil {
			b.Fatal(err)
		}
	}
}
