package policy

import (
	"strings"
	"testing"
)

// benchPrompt builds a prompt of n bytes from ordinary prose with numbers, dates,
// punctuation and code-like words, the kind of text the rules run over all day.
func benchPrompt(n int) string {
	const para = "Summarize the quarterly report for the operations team. Revenue grew 12.5% to 4,310,000 " +
		"in Q3 2024 (see table 7, rows 12-40); costs rose 3.1%. The on-call rota changed on 2024-09-30 and " +
		"the deploy script now runs `make release VERSION=1.4.2` before the smoke tests. Please act on the " +
		"open items, keep the tone neutral and mention the system upgrade planned for next month.\n"
	return repeatTo(para, n)
}

// adversarialPrompt repeats every prefilter literal, so that every pattern runs over
// the whole text: the worst case of the prefilter.
func adversarialPrompt(n int) string {
	const chunk = "ignore previous mode jailbreak pretend system bypass anything dan sk- akia gh xox aiza k_live_ " +
		"private key----- key token secret pass @ + - 555-123-4567 rm curl chmod : mkfs of=/dev/ /dev/ os. " +
		"subprocess eval exec pickle __import__ drop truncate delete ; ' or and -- union nc netcat /dev/tcp/ mkfifo dup2\n"
	return repeatTo(chunk, n)
}

// repeatTo repeats s to exactly n bytes.
func repeatTo(s string, n int) string {
	return strings.Repeat(s, n/len(s)+1)[:n]
}

func benchmarkEvaluate(b *testing.B, prompt string) {
	e := defaultEngine(b)
	req := Request{Model: "gpt-4o", Prompt: prompt, CostUSD: usd(0.01)}
	b.SetBytes(int64(len(prompt)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Evaluate(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluate4KiB(b *testing.B)  { benchmarkEvaluate(b, benchPrompt(4<<10)) }
func BenchmarkEvaluate64KiB(b *testing.B) { benchmarkEvaluate(b, benchPrompt(64<<10)) }

// BenchmarkEvaluate64KiBAdversarial defeats every prefilter.
func BenchmarkEvaluate64KiBAdversarial(b *testing.B) { benchmarkEvaluate(b, adversarialPrompt(64<<10)) }

func BenchmarkContain64KiB(b *testing.B) {
	e := defaultEngine(b)
	req := Request{Model: "gpt-4o", Prompt: benchPrompt(64 << 10)}
	b.SetBytes(int64(len(req.Prompt)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Contain(req); err != nil {
			b.Fatal(err)
		}
	}
}
