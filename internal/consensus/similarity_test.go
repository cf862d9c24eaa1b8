package consensus

import (
	"math"
	"strings"
	"testing"
)

func TestSimilarity(t *testing.T) {
	cases := []struct {
		name, a, b string
		want       float64
	}{
		// {cat, sat, mat} vs {cat, sat}: 2 / (√3·√2).
		{"subset", "The cat sat on the mat.", "the CAT sat", 2 / (math.Sqrt(3) * math.Sqrt(2))},
		{"same words, other order and case", "Paris is the capital of France", "france: capital, PARIS!", 1},
		// {yes: 2} vs {yes: 1, no: 1}: 2 / (2·√2).
		{"counts matter", "yes yes", "yes no", 2 / (2 * math.Sqrt(2))},
		{"negation kept", "it is safe", "it is not safe", 1 / math.Sqrt(2)},
		{"nothing shared", "apples", "oranges", 0},
		{"both only stopwords", "the of and", "it is", 1},
		{"one empty", "", "words", 0},
		{"unicode letters", "Größe Straße 東京", "straße größe 東京", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Similarity(tc.a, tc.b)
			if math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Similarity = %v, want %v", got, tc.want)
			}
			if back := Similarity(tc.b, tc.a); back != got {
				t.Errorf("not symmetric: %v vs %v", got, back)
			}
		})
	}
}

func TestSimilarityIsDeterministicAndBounded(t *testing.T) {
	a := strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa ", 50)
	b := strings.Repeat("kappa iota theta eta zeta epsilon delta gamma beta alpha lambda ", 40)
	first := Similarity(a, b)
	for range 50 { // map iteration order differs between runs; the integer sums do not
		if s := Similarity(a, b); s != first {
			t.Fatalf("Similarity changed between calls: %v then %v", first, s)
		}
	}
	if s := Similarity(a, a); s != 1 {
		t.Errorf("self-similarity %v", s)
	}
	if first <= 0 || first >= 1 {
		t.Errorf("similarity %v out of (0,1)", first)
	}
}
