package analysis

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"testing"
)

// FuzzParseEnergyRequest: a request either fails with ErrInvalidInput or gives an
// estimate with finite, non-negative figures that encode as JSON.
func FuzzParseEnergyRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"gpt-4o","input_tokens":10,"output_tokens":5,"region":"eu-west"}`,
		`{"model":"x","tokens":1125899906842624,"intensity_overrides":{"mars":2000}}`,
		`{"tokens":1} {}`, `{"tokens":-1}`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := ParseEnergyRequest(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v does not wrap ErrInvalidInput", err)
			}
			return
		}
		est, err := EstimateEnergy(req)
		if err != nil {
			t.Fatalf("a parsed request fails: %v", err)
		}
		for _, v := range []float64{est.Wh, est.CO2Grams} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("figure %v in %+v", v, est)
			}
		}
		if _, err := json.Marshal(est); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzCountText: a count is a non-negative integer that the text holds exactly when it
// is written as an integer.
func FuzzCountText(f *testing.F) {
	for _, seed := range []string{"0", "12", "1.2e3", "12.5", "-3", "0x10", "9223372036854775807", "1e19", "01"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := countText(s)
		if !ok {
			return
		}
		if n < 0 || !isDecimal(s) {
			t.Fatalf("countText(%q) = %d", s, n)
		}
		if exact, err := strconv.ParseInt(s, 10, 64); err == nil && exact != n {
			t.Fatalf("countText(%q) = %d, want %d", s, n, exact)
		}
		if v, ok := numberText(s); !ok || math.Abs(v-float64(n)) > 1e-9*math.Max(1, v) {
			t.Fatalf("countText(%q) = %d but numberText gives %v, %v", s, n, v, ok)
		}
	})
}
