package consensus

import (
	"strings"
	"testing"
)

func BenchmarkClassifyStakes4KiB(b *testing.B) {
	text := strings.Repeat("Please review the contract terms and the patient's dosage notes before the meeting. ", 50)[:4<<10]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if ClassifyStakes(text).Level != LevelHigh {
			b.Fatal("wrong level")
		}
	}
}

func BenchmarkSimilarity1KiB(b *testing.B) {
	x := strings.Repeat("The capital of France is Paris, a city on the Seine. ", 20)[:1<<10]
	y := strings.Repeat("Paris, on the river Seine, is the French capital city. ", 20)[:1<<10]
	b.SetBytes(int64(len(x) + len(y)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Similarity(x, y)
	}
}
