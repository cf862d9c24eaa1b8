// Package benchheap reports the peak of the Go heap while a benchmark runs: a
// memory bound such as "a run of a million participants under 512 MiB" is read from it.
package benchheap

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// Sample collects garbage and records the largest heap every 10 ms (each reading stops
// the world briefly); the function it returns reports that peak as MiB-peak-heap. It
// leaves b's timer alone.
func Sample(b *testing.B) (report func()) {
	runtime.GC()
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&m)
			peak.Store(max(peak.Load(), m.HeapAlloc))
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		b.ReportMetric(float64(peak.Load())/(1<<20), "MiB-peak-heap")
	}
}
