package chain

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// vcmdBenchRows is the size of the chain BenchmarkVerifyCommand200k verifies.
const vcmdBenchRows = 200_000

// vcmdBenchSpan is the body of span i of the benchmark chain: about 650 bytes of
// canonical JSON, shaped like an instrumented LLM call.
func vcmdBenchSpan(i int64) protocol.SpanBody {
	start := int64(1795262400000000000) + i*1_000_000
	return protocol.SpanBody{
		Name: fmt.Sprintf("chat gpt-4o-%d", i%7),
		Kind: "client",
		Attributes: map[string]any{
			"gen_ai.system":              "openai",
			"gen_ai.operation.name":      "chat",
			"gen_ai.request.model":       "gpt-4o",
			"gen_ai.response.model":      "gpt-4o-2024-08-06",
			"gen_ai.response.id":         fmt.Sprintf("chatcmpl-%024x", i),
			"gen_ai.usage.input_tokens":  i % 1000,
			"gen_ai.usage.output_tokens": i % 313,
			"gen_ai.prompt.digest":       fmt.Sprintf("%064x", i),
			"server.address":             "api.example.com",
			"service.name":               "checkout-assistant",
			"note":                       "naïve \"quoted\" ✓ " + strings.Repeat("p", 40),
		},
		StatusCode:  "OK",
		StartTimeNS: start,
		EndTimeNS:   start + 850_000_000,
		TraceID:     fmt.Sprintf("%032x", i+1<<40),
		SpanID:      fmt.Sprintf("%016x", i+1),
	}
}

// vcmdBenchChain returns the benchmark chain: at path CAIRN_VERIFY_BENCH_CHAIN, kept
// between runs and sealed there when that file does not hold it yet, or else sealed in
// dir. It seals in batches of 1,000 through the store, as `cairn chain seal` does.
func vcmdBenchChain(b *testing.B, dir string) string {
	b.Helper()
	path := os.Getenv("CAIRN_VERIFY_BENCH_CHAIN")
	if path == "" {
		path = filepath.Join(dir, "chain.db")
	}
	secret, err := hex.DecodeString(testSecretHex)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(path, secret)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	st, err := s.Stats(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	bodies := make([]protocol.SpanBody, 1000)
	for first := st.LastSeq + 1; first <= vcmdBenchRows; first += int64(len(bodies)) {
		for i := range bodies {
			bodies[i] = vcmdBenchSpan(first + int64(i))
		}
		if _, err := s.Seal(context.Background(), bodies); err != nil {
			b.Fatal(err)
		}
	}
	return path
}

// BenchmarkVerifyCommand200k runs `cairn chain verify --full` with the secret over a chain
// of 200,000 spans of about 650 bytes, in process (opening the store, reading the bridge
// record, the progress callback and printing included; process start excluded).
func BenchmarkVerifyCommand200k(b *testing.B) {
	path := vcmdBenchChain(b, b.TempDir())
	var out strings.Builder
	for b.Loop() {
		out.Reset()
		cmd := newRootCommand()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs([]string{"chain", "verify", "--full", "--db", path, "--secret-hex", testSecretHex})
		if err := cmd.ExecuteContext(cmdtest.Context(b.Context())); err != nil {
			b.Fatalf("%v\n%s", err, out.String())
		}
	}
	if want := fmt.Sprintf("%d entries checked, HMACs checked", vcmdBenchRows); !strings.Contains(out.String(), want) {
		b.Fatalf("output %q lacks %q", out.String(), want)
	}
	b.ReportMetric(float64(vcmdBenchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
