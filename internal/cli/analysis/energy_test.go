package analysis

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// energySpan is a call to seal for the energy tests: its model, region ("" names none)
// and tokens.
type energySpan struct {
	model, region string
	tokens        int
}

// sealEnergySpans seals spans into a new chain at db.
func sealEnergySpans(t *testing.T, db string, spans ...energySpan) {
	t.Helper()
	var b strings.Builder
	for i, s := range spans {
		region := ""
		if s.region != "" {
			region = fmt.Sprintf(`"cloud.region":%q,`, s.region)
		}
		start := int64(1795262400000000000) + int64(i)*1e9
		fmt.Fprintf(&b, `{"name":"chat","kind":"client","attributes":{"gen_ai.request.model":%q,%s"gen_ai.usage.input_tokens":%d,`+
			`"gen_ai.usage.output_tokens":%d},"status_code":"OK","status_description":"","start_time_ns":"%d","end_time_ns":"%d",`+
			`"trace_id":"%032x","span_id":"%016x"}`+"\n", s.model, region, s.tokens/2, s.tokens-s.tokens/2, start, start+800_000_000, i+1, i+1)
	}
	file := filepath.Join(filepath.Dir(db), "spans.jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runCairn(t, "chain", "seal", "--file", file, "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
}

// energyTotals are the documented members of a summary: the totals, and wh, co2_grams
// and calls by model and by region.
type energyTotals struct {
	TotalWh       *float64 `json:"total_wh"`
	TotalCO2Grams *float64 `json:"total_co2_grams"`
	TotalCalls    *int64   `json:"total_calls"`
	ByModel       map[string]struct {
		Wh       *float64 `json:"wh"`
		CO2Grams *float64 `json:"co2_grams"`
		Calls    *int64   `json:"calls"`
	} `json:"by_model"`
	ByRegion map[string]struct {
		Wh       *float64 `json:"wh"`
		CO2Grams *float64 `json:"co2_grams"`
		Calls    *int64   `json:"calls"`
	} `json:"by_region"`
}

// energySummary runs cairn energy summary on db and decodes its documented members,
// failing the test when one is missing.
func energySummary(t *testing.T, db string, args ...string) energyTotals {
	t.Helper()
	out, err := runCairn(t, append([]string{"energy", "summary", "--db", db}, args...)...)
	if err != nil {
		t.Fatalf("summary %v: %v\n%s", args, err, out)
	}
	var sum energyTotals
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.TotalWh == nil || sum.TotalCO2Grams == nil || sum.TotalCalls == nil ||
		sum.ByModel == nil || sum.ByRegion == nil {
		t.Fatalf("summary %v: the documented members are missing (%v):\n%s", args, err, out)
	}
	for name, m := range sum.ByModel {
		if m.Wh == nil || m.CO2Grams == nil || m.Calls == nil {
			t.Fatalf("by_model[%q] lacks wh, co2_grams or calls:\n%s", name, out)
		}
	}
	for name, r := range sum.ByRegion {
		if r.Wh == nil || r.CO2Grams == nil || r.Calls == nil {
			t.Fatalf("by_region[%q] lacks wh, co2_grams or calls:\n%s", name, out)
		}
	}
	return sum
}

// closeTo reports whether a and b agree to a relative 1e-9 (or both are about 0).
func TestEnergyCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	// gpt-4o (0.005 Wh per 1000 tokens) in eu-west-1 (300 g/kWh): 0.005 Wh, 0.0015 g.
	// Claude Sonnet 4 (0.003) naming no region, so in --region (default us-east, 380):
	// 0.006 Wh, 0.00228 g. An unknown model (0.003) in an unknown region, lab (world's
	// 450): 0.0015 Wh, 0.000675 g.
	sealEnergySpans(t, db, energySpan{"gpt-4o", "eu-west-1", 1000}, energySpan{"claude-sonnet-4", "", 2000}, energySpan{"my-model", "lab", 500})
	const wh, co2East, co2Lab = 0.0125, 0.0015 + 0.00228, 0.000675
	tests := map[string]struct {
		args []string
		co2  float64
		lab  float64 // CO2 of the lab call
	}{
		"the defaults":                {co2: co2East + co2Lab, lab: co2Lab},
		"another default region":      {args: []string{"--region", "eu-north"}, co2: 0.0015 + 0.006/1000*30 + co2Lab, lab: co2Lab},
		"a custom region":             {args: []string{"--intensity-overrides", "lab=10"}, co2: co2East + 0.0015/1000*10, lab: 0.0015 / 1000 * 10},
		"the old flag name":           {args: []string{"--intensity", "LAB=10"}, co2: co2East + 0.0015/1000*10, lab: 0.0015 / 1000 * 10},
		"both names, agreeing":        {args: []string{"--intensity", "lab=10", "--intensity-overrides", "lab=10"}, co2: co2East + 0.0015/1000*10, lab: 0.0015 / 1000 * 10},
		"an override of a table one":  {args: []string{"--intensity-overrides", "eu-west=100,us-east=0"}, co2: 0.0005 + co2Lab, lab: co2Lab},
		"an override of the fallback": {args: []string{"--intensity-overrides", "world=100"}, co2: co2East + 0.0015/1000*100, lab: 0.0015 / 1000 * 100},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sum := energySummary(t, db, tc.args...)
			if *sum.TotalCalls != 3 || !cmdtest.CloseTo(*sum.TotalWh, wh) || !cmdtest.CloseTo(*sum.TotalCO2Grams, tc.co2) {
				t.Errorf("totals %d, %v Wh, %v g; want 3, %v, %v", *sum.TotalCalls, *sum.TotalWh, *sum.TotalCO2Grams, wh, tc.co2)
			}
			if m := sum.ByModel["gpt-4o"]; *m.Calls != 1 || !cmdtest.CloseTo(*m.Wh, 0.005) {
				t.Errorf("by_model[gpt-4o] %v Wh, %d calls", *m.Wh, *m.Calls)
			}
			if r := sum.ByRegion["lab"]; *r.Calls != 1 || !cmdtest.CloseTo(*r.CO2Grams, tc.lab) {
				t.Errorf("by_region[lab] %v g, want %v", *r.CO2Grams, tc.lab)
			}
		})
	}
	// The environment sets the overrides as the flag does.
	t.Setenv("CAIRN_INTENSITY_OVERRIDES", "lab=10")
	if sum := energySummary(t, db); !cmdtest.CloseTo(*sum.ByRegion["lab"].CO2Grams, 0.0015/1000*10) {
		t.Errorf("CAIRN_INTENSITY_OVERRIDES: by_region[lab] %v g", *sum.ByRegion["lab"].CO2Grams)
	}
	t.Setenv("CAIRN_INTENSITY_OVERRIDES", "")
	// Cairn's additions say what fell back.
	out, err := runCairn(t, "energy", "summary", "--db", db)
	var sum analysis.EnergySummary
	if err != nil || json.Unmarshal([]byte(out), &sum) != nil || sum.TotalTokens != 3500 || sum.ModelFallbackCalls != 1 ||
		sum.RegionFallbackCalls != 1 || sum.ByModel["my-model"].Known || sum.ByRegion["lab"].Known || len(sum.Notes) != 2 {
		t.Errorf("additions: %v\n%s", err, out)
	}

	// Entries sealed by an older cairn have no energy log: backfill adds them, once.
	sqlDB, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.Exec(`DROP TABLE energy_log`); err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.Close(); err != nil {
		t.Fatal(err)
	}
	if sum := energySummary(t, db); *sum.TotalCalls != 0 {
		t.Fatalf("summary without a log: %d calls", *sum.TotalCalls)
	}
	withSecret := []string{"--db", db, "--secret-hex", testSecretHex}
	for _, want := range []string{"added 3 energy_log rows", "added 0 energy_log rows"} {
		out, err := runCairn(t, append([]string{"energy", "backfill"}, withSecret...)...)
		if err != nil || strings.TrimSpace(out) != want {
			t.Fatalf("backfill: %q, %v; want %q", out, err, want)
		}
	}
	if sum := energySummary(t, db); *sum.TotalCalls != 3 || !cmdtest.CloseTo(*sum.TotalCO2Grams, co2East+co2Lab) {
		t.Fatalf("summary after backfill: %d calls, %v g", *sum.TotalCalls, *sum.TotalCO2Grams)
	}

	for name, args := range map[string][]string{
		"backfill without secret":   {"energy", "backfill", "--db", db},
		"intensity not a number":    {"energy", "summary", "--db", db, "--intensity-overrides", "eu-west=lots"},
		"negative intensity":        {"energy", "summary", "--db", db, "--intensity-overrides", "eu-west=-5"},
		"intensity not a pair":      {"energy", "summary", "--db", db, "--intensity-overrides", "eu-west"},
		"a region twice":            {"energy", "summary", "--db", db, "--intensity-overrides", "lab=1,LAB=2"},
		"the two names, apart":      {"energy", "summary", "--db", db, "--intensity", "lab=1", "--intensity-overrides", "lab=2"},
		"serve with a bad override": {"serve", "--db", filepath.Join(dir, "other.db"), "--secret-hex", testSecretHex, "--intensity-overrides", "lab=-1"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := runCairn(t, args...); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
				t.Errorf("exit %d, want %d (%v)", cmdutil.ExitCode(err), cmdutil.ExitUsage, err)
			}
		})
	}
}

// TestEnergySummaryDefaultRegion checks that the CLI attributes calls naming no region to
// the region cairn serve does, so both give the same figures for the same chain.
func TestEnergySummaryDefaultRegion(t *testing.T) {
	db := filepath.Join(t.TempDir(), "chain.db")
	// 1,000 tokens of gpt-4o (0.005 Wh) with no cloud.region.
	sealEnergySpans(t, db, energySpan{"gpt-4o", "", 1000})
	for region, wantG := range map[string]float64{"": 0.005 / 1000 * 380, "--region=eu-north": 0.005 / 1000 * 30, "--region=": 0.005 / 1000 * analysis.FallbackGridIntensity} {
		var args []string
		if region != "" {
			args = append(args, region)
		}
		if sum := energySummary(t, db, args...); *sum.TotalCalls != 1 || !cmdtest.CloseTo(*sum.TotalCO2Grams, wantG) {
			t.Errorf("%v: %d calls, %v g; want %.8f g", args, *sum.TotalCalls, *sum.TotalCO2Grams, wantG)
		}
	}
}

// TestServeIntensityOverrides: cairn serve's --intensity-overrides define custom regions
// for the estimate and the summary.
func TestServeIntensityOverrides(t *testing.T) {
	db := filepath.Join(t.TempDir(), "chain.db")
	sealEnergySpans(t, db, energySpan{"gpt-4o", "on-prem", 1000})
	ctx, cancel := context.WithCancel(t.Context())
	base, done := startServe(t, ctx, "--db", db, "--secret-hex", testSecretHex, "--intensity-overrides", "on-prem=20,us-east=100")
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	var est struct {
		Wh       float64 `json:"wh"`
		CO2Grams float64 `json:"co2_grams"`
		Region   string  `json:"region"`
	}
	// 1,000 tokens of gpt-4o: 0.005 Wh; at 20 g/kWh, 0.0001 g; in the default region
	// us-east, overridden to 100, 0.0005 g.
	for body, want := range map[string]float64{
		`{"model":"gpt-4o","tokens":1000,"region":"on-prem"}`: 0.0001,
		`{"model":"gpt-4o","tokens":1000}`:                    0.0005,
	} {
		if status := cmdtest.PostJSON(t, base+"/api/energy/estimate", "", body, &est); status != http.StatusOK ||
			!cmdtest.CloseTo(est.Wh, 0.005) || !cmdtest.CloseTo(est.CO2Grams, want) {
			t.Errorf("%s: %d %+v, want %v g", body, status, est, want)
		}
	}
	status, body := cmdtest.GetURL(t, base+"/api/energy/summary", "")
	var sum energyTotals
	if err := json.Unmarshal([]byte(body), &sum); err != nil || status != http.StatusOK || sum.TotalCO2Grams == nil || !cmdtest.CloseTo(*sum.TotalCO2Grams, 0.0001) {
		t.Errorf("summary: %d %s", status, body)
	}
}
