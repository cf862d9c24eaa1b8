package consensus

import (
	"math"
	"strings"
	"unicode"
)

// SimilarityMethod names the pairwise measure, as results report it.
const SimilarityMethod = "cosine_word_counts"

// words lower-cases text and splits it into runs of Unicode letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// stopwords are English function words left out of similarity. Negations ("not", "no",
// "never") stay: they carry the meaning of an answer.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if then so of to in on at by for with from as into
		is are was were be been being am it its this that these those there here
		i you he she we they me him her us them my your his our their
		do does did has have had can could will would shall should may might must
		what which who whom whose when where why how about over under than too very just also`) {
		m[w] = true
	}
	return m
}()

// wordCounts counts the words of text that are not stopwords.
func wordCounts(text string) map[string]int64 {
	counts := map[string]int64{}
	for _, w := range words(text) {
		if !stopwords[w] {
			counts[w]++
		}
	}
	return counts
}

// cosine is the cosine similarity of two word-count vectors (see the package comment).
// Sums are exact integers, so the result does not depend on map order.
func cosine(a, b map[string]int64) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(b) < len(a) {
		a, b = b, a
	}
	var dot, normA, normB int64
	for w, ca := range a {
		normA += ca * ca
		dot += ca * b[w]
	}
	for _, cb := range b {
		normB += cb * cb
	}
	// One square root of the product: for equal vectors it is exactly the norm (for
	// norms below 2^26), so an answer compared with itself scores exactly 1.
	s := float64(dot) / math.Sqrt(float64(normA)*float64(normB))
	return min(1, s)
}

// Similarity compares two texts the way Evaluate compares answers.
func Similarity(a, b string) float64 {
	return cosine(wordCounts(a), wordCounts(b))
}
