package chain

import (
	"bytes"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/store"
)

// genAISpanLines returns n JSON Lines spans of about 650 bytes each, shaped like a model
// call's (gen_ai attributes, token counts), times as numbers and as strings alternately.
func genAISpanLines(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		start := fmt.Sprintf("%d", 1795262400000000000+int64(i)*1e6)
		end := fmt.Sprintf(`"%d"`, 1795262400000000000+int64(i)*1e6+850_000_000)
		if i%2 == 0 {
			start, end = `"`+start+`"`, end[1:len(end)-1]
		}
		fmt.Fprintf(&b, `{"name":"chat gpt-4o-mini","kind":"client","attributes":{"gen_ai.system":"openai",`+
			`"gen_ai.request.model":"gpt-4o-mini","gen_ai.response.model":"gpt-4o-mini-2024-07-18",`+
			`"gen_ai.request.temperature":0.7,"gen_ai.request.max_tokens":1024,"gen_ai.usage.input_tokens":%d,`+
			`"gen_ai.usage.output_tokens":%d,"gen_ai.response.id":"chatcmpl-%016x","gen_ai.response.finish_reasons":["stop"],`+
			`"server.address":"api.openai.com","server.port":443,"cloud.region":"eu-west-1"},"status_code":"OK",`+
			`"status_description":"","start_time_ns":%s,"end_time_ns":%s,"trace_id":"%032x","span_id":"%016x"}`+"\n", 100+i%900, 20+i%300, i, start, end, i, i)
	}
	return b.Bytes()
}

// BenchmarkChainSealLines seals 200,000 lines of about 650 bytes as `cairn chain seal
// --file` does (sealLines), into a new chain; see spans/s, and cpu-us/span, the process's
// CPU time (user and system) a span, which other load on the machine changes less.
func BenchmarkChainSealLines(b *testing.B) {
	const spans = 200_000
	lines := genAISpanLines(spans)
	b.SetBytes(int64(len(lines)))
	secret := bytes.Repeat([]byte{0x5c}, 32)
	cpu := processCPU()
	for b.Loop() {
		b.StopTimer()
		s, err := store.Open(filepath.Join(b.TempDir(), "chain.db"), secret)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n, _, err := sealLines(b.Context(), s, bytes.NewReader(lines))
		if err != nil || n != spans {
			b.Fatalf("sealed %d: %v", n, err)
		}
		b.StopTimer()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(spans*b.N)/b.Elapsed().Seconds(), "spans/s")
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Microsecond)/float64(spans*b.N), "cpu-us/span")
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
