package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
)

func TestEnergyCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	withSecret := []string{"--db", db, "--secret-hex", testSecretHex}
	outputs := []int{400, 900, 1900} // with 100 input tokens each: 500, 1000 and 2000 tokens
	if _, err := runCairn(t, append([]string{"chain", "seal", "--file", tokenSpans(t, dir, "a.jsonl", 1, outputs...)}, withSecret...)...); err != nil {
		t.Fatal(err)
	}
	summary := func(args ...string) analysis.EnergySummary {
		t.Helper()
		out, err := runCairn(t, append([]string{"energy", "summary", "--db", db}, args...)...)
		if err != nil {
			t.Fatalf("summary: %v\n%s", err, out)
		}
		var sum analysis.EnergySummary
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatalf("summary: %v\n%s", err, out)
		}
		return sum
	}
	// 3,500 tokens of gpt-4o: 3.5 · 0.6 = 2.1 Wh; in eu-west, 2.1/1000 · 300 = 0.63 g,
	// and with eu-west overridden to 100 g/kWh, 0.21 g.
	sum := summary()
	if sum.Entries != 3 || sum.Tokens != 3500 || !closeTo(sum.Wh, 2.1) || !closeTo(sum.CO2g, 0.63) || sum.FallbackEntries != 0 {
		t.Fatalf("summary %+v", sum)
	}
	if sum := summary("--intensity", "eu-west=100"); !closeTo(sum.CO2g, 0.21) {
		t.Fatalf("with an override: %+v", sum)
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
	if sum := summary(); sum.Entries != 0 {
		t.Fatalf("summary without a log: %+v", sum)
	}
	for _, want := range []string{"added 3 energy_log rows", "added 0 energy_log rows"} {
		out, err := runCairn(t, append([]string{"energy", "backfill"}, withSecret...)...)
		if err != nil || strings.TrimSpace(out) != want {
			t.Fatalf("backfill: %q, %v; want %q", out, err, want)
		}
	}
	if sum := summary(); sum.Entries != 3 || !closeTo(sum.CO2g, 0.63) {
		t.Fatalf("summary after backfill: %+v", sum)
	}

	for name, args := range map[string][]string{
		"backfill without secret": {"energy", "backfill", "--db", db},
		"intensity not a number":  {"energy", "summary", "--db", db, "--intensity", "eu-west=lots"},
		"negative intensity":      {"energy", "summary", "--db", db, "--intensity", "eu-west=-5"},
		"intensity not a pair":    {"energy", "summary", "--db", db, "--intensity", "eu-west"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := runCairn(t, args...); exitCode(err) != ExitUsage {
				t.Errorf("exit %d, want %d (%v)", exitCode(err), ExitUsage, err)
			}
		})
	}
}

func closeTo(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestEnergySummaryDefaultRegion checks that the CLI attributes calls naming no region to
// the region cairn serve does, so both give the same figures for the same chain.
func TestEnergySummaryDefaultRegion(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	spans := filepath.Join(dir, "spans.jsonl")
	// 1,000 tokens of gpt-4o (0.6 Wh) with no cloud.region.
	span := `{"name":"chat gpt-4o","kind":"client","attributes":{"gen_ai.request.model":"gpt-4o","gen_ai.usage.input_tokens":400,` +
		`"gen_ai.usage.output_tokens":600},"status_code":"OK","status_description":"","start_time_ns":"1795262400000000000",` +
		`"end_time_ns":"1795262400800000000","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"}` + "\n"
	if err := os.WriteFile(spans, []byte(span), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runCairn(t, "chain", "seal", "--file", spans, "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
	for region, wantG := range map[string]float64{"": 0.6 / 1000 * 380, "--region=eu-north": 0.6 / 1000 * 30, "--region=": 0.6 / 1000 * analysis.FallbackGridIntensity} {
		args := []string{"energy", "summary", "--db", db}
		if region != "" {
			args = append(args, region)
		}
		out, err := runCairn(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var sum analysis.EnergySummary
		if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Entries != 1 || !closeTo(sum.CO2g, wantG) {
			t.Errorf("%v: %+v, %v; want %.6f g", args, sum, err, wantG)
		}
	}
}
