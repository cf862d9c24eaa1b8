package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// energyRow is a row of energy_log.
type energyRow struct {
	seq, tokens   int64
	model, region string
	wh, co2g      float64
}

// energyLog reads the whole energy log of the chain at path.
func energyLog(t *testing.T, path string) []energyRow {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	rows, err := db.Query(`SELECT seq, model, region, tokens, wh, co2_g FROM energy_log ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var out []energyRow
	for rows.Next() {
		var r energyRow
		if err := rows.Scan(&r.seq, &r.model, &r.region, &r.tokens, &r.wh, &r.co2g); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// runSQL runs statements on the chain at path outside the store, as another program
// (or an older cairn) would.
func runSQL(t *testing.T, path string, statements ...string) {
	t.Helper()
	db := rawDB(t, path)
	for _, q := range statements {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// energyBodies are spans for the energy log: every third has no token counts, the others
// alternate between models and regions.
func energyBodies(first, n int64) []protocol.SpanBody {
	bodies := testBodies(first, n)
	for i := range bodies {
		a := bodies[i].Attributes
		seq := first + int64(i)
		switch seq % 3 {
		case 0:
			delete(a, "gen_ai.usage.input_tokens")
			delete(a, "gen_ai.usage.output_tokens")
		case 1:
			a["gen_ai.response.model"] = "claude-haiku-4-5-20251001"
			a["cloud.region"] = "eu-north-1"
		}
	}
	return bodies
}

func TestSealFillsTheEnergyLog(t *testing.T) {
	s, path := newStore(t)
	const n = 250 // more than insertRows, in two Seals, so that partial statements run too
	if _, err := s.Seal(t.Context(), energyBodies(1, 130)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Seal(t.Context(), energyBodies(131, n-130)); err != nil {
		t.Fatal(err)
	}
	got := energyLog(t, path)
	var want []energyRow
	for seq := int64(1); seq <= n; seq++ {
		if seq%3 == 0 {
			continue
		}
		tokens := seq%1000 + seq%313
		r := energyRow{seq: seq, tokens: tokens, model: "gpt-4o"}
		// gpt-4o: 0.005 Wh per 1000 tokens, no region: the world's 450 g/kWh. Haiku 4.5:
		// 0.001, eu-north: 30.
		r.wh, r.co2g = float64(tokens)/1000*0.005, float64(tokens)/1000*0.005/1000*450
		if seq%3 == 1 {
			r.model, r.region = "claude-haiku-4-5-20251001", "eu-north-1"
			r.wh, r.co2g = float64(tokens)/1000*0.001, float64(tokens)/1000*0.001/1000*30
		}
		want = append(want, r)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.seq != w.seq || g.tokens != w.tokens || g.model != w.model || g.region != w.region || !near(g.wh, w.wh) || !near(g.co2g, w.co2g) {
			t.Fatalf("row %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestFailedSealLogsNothing(t *testing.T) {
	s, path := newStore(t)
	seal(t, s, 5, 5)
	bodies := testBodies(6, 3)
	bodies[2].TraceID = "not hex"
	if _, err := s.Seal(t.Context(), bodies); !errors.Is(err, protocol.ErrMalformed) {
		t.Fatalf("seal: %v", err)
	}
	if rows := energyLog(t, path); len(rows) != 5 || rows[4].seq != 5 {
		t.Fatalf("rows %+v", rows)
	}
}

func TestBackfillEnergy(t *testing.T) {
	s, path := newStore(t)
	if _, err := s.Seal(t.Context(), energyBodies(1, 2500)); err != nil {
		t.Fatal(err)
	}
	sealed := energyLog(t, path)
	// An older cairn sealed these: no energy log at all, then a hole in it.
	runSQL(t, path, `DROP TABLE energy_log`)
	added, err := s.BackfillEnergy(t.Context())
	if err != nil || added != int64(len(sealed)) {
		t.Fatalf("first backfill: %d, %v; want %d", added, err, len(sealed))
	}
	if again, err := s.BackfillEnergy(t.Context()); err != nil || again != 0 {
		t.Fatalf("second backfill: %d, %v; want 0", again, err)
	}
	if got := energyLog(t, path); !reflect.DeepEqual(got, sealed) {
		t.Fatalf("the backfill's rows differ from Seal's")
	}
	runSQL(t, path, `DELETE FROM energy_log WHERE seq BETWEEN 1200 AND 1300`)
	if added, err := s.BackfillEnergy(t.Context()); err != nil || added != 67 { // 101 seqs, 34 without tokens
		t.Fatalf("refill: %d, %v", added, err)
	}
	if got := energyLog(t, path); !reflect.DeepEqual(got, sealed) {
		t.Fatalf("the refilled rows differ from Seal's")
	}

	ro := openStore(t, path, nil)
	if _, err := ro.BackfillEnergy(t.Context()); !errors.Is(err, ErrNoSecret) {
		t.Errorf("read-only backfill: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.BackfillEnergy(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled backfill: %v", err)
	}
}

func TestBackfillRefusesABodyThatIsNotJSON(t *testing.T) {
	s, path := newStore(t)
	seal(t, s, 3, 3)
	runSQL(t, path, `DROP TABLE energy_log`, `UPDATE chain SET canonical_body = CAST('{oops' AS BLOB) WHERE seq = 2`)
	added, err := s.BackfillEnergy(t.Context())
	if err == nil || added != 0 {
		t.Fatalf("backfill: %d, %v", added, err)
	}
	t.Log(err)
}

func TestEnergySummary(t *testing.T) {
	s, path := newStore(t)
	ro := openStore(t, path, nil)
	sum, err := ro.EnergySummary(t.Context(), analysis.EnergySummaryOptions{})
	if err != nil || sum.TotalCalls != 0 || len(sum.ByModel) != 0 {
		t.Fatalf("summary without an energy log: %+v, %v", sum, err)
	}
	if _, err := s.Seal(t.Context(), energyBodies(1, 300)); err != nil {
		t.Fatal(err)
	}
	rows := energyLog(t, path)
	var tokens int64
	var wh, co2 float64
	for _, r := range rows {
		tokens += r.tokens
		wh += r.wh
		co2 += r.co2g
	}
	sum, err = ro.EnergySummary(t.Context(), analysis.EnergySummaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// With no options and unchanged tables the summary is the sum of the logged wh and
	// co2_g.
	if sum.TotalCalls != int64(len(rows)) || sum.TotalTokens != tokens || !near(sum.TotalWh, wh) || !near(sum.TotalCO2Grams, co2) {
		t.Errorf("summary %+v, want %d calls, %d tokens, %v Wh, %v g", sum, len(rows), tokens, wh, co2)
	}
	if sum.RegionFallbackCalls != 100 || sum.ModelFallbackCalls != 0 || len(sum.ByModel) != 2 || len(sum.ByRegion) != 2 {
		t.Errorf("breakdown %+v", sum)
	}
	// With a default region, the entries without one (gpt-4o) move to it.
	sum, err = ro.EnergySummary(t.Context(), analysis.EnergySummaryOptions{DefaultRegion: "us-west"})
	if west := sum.ByRegion["us-west"]; err != nil || sum.FallbackCalls != 0 || west.Calls != 100 || !near(west.CO2Grams, west.Wh/1000*250) {
		t.Errorf("default region: %+v, %v", sum, err)
	}
	if _, err := ro.EnergySummary(t.Context(), analysis.EnergySummaryOptions{IntensityOverrides: map[string]float64{"x": -1}}); !errors.Is(err, analysis.ErrInvalidInput) {
		t.Errorf("bad override: %v", err)
	}
}

// BenchmarkEnergySummary100k totals an energy log of 100,000 entries (12 models ×
// 5 regions), sealed once per process.
func BenchmarkEnergySummary100k(b *testing.B) {
	const entries = 100_000
	path := filepath.Join(b.TempDir(), "chain.db")
	s, err := Open(path, testSecret)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	models := []string{"gpt-4o", "gpt-4o-mini", "gpt-4-turbo", "gpt-4", "claude-opus-4-7", "claude-sonnet-4",
		"claude-haiku-4-5", "claude-opus-4", "llama-3-8b", "llama-3-70b", "mistral-large", "in-house-7b"}
	regions := []string{"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", ""}
	for first := int64(1); first <= entries; first += 1000 {
		bodies := testBodies(first, 1000)
		for i := range bodies {
			seq := first + int64(i)
			bodies[i].Attributes["gen_ai.request.model"] = models[seq%int64(len(models))]
			if r := regions[seq%int64(len(regions))]; r != "" {
				bodies[i].Attributes["cloud.region"] = r
			}
		}
		if _, err := s.Seal(b.Context(), bodies); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		sum, err := s.EnergySummary(b.Context(), analysis.EnergySummaryOptions{DefaultRegion: "eu-north"})
		if err != nil || sum.TotalCalls != entries {
			b.Fatalf("%+v, %v", sum, err)
		}
	}
	b.ReportMetric(float64(entries*b.N)/b.Elapsed().Seconds(), "entries/s")
}
