package store

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

func TestRegressionWindow(t *testing.T) {
	s, _ := newStore(t)
	got, err := s.RegressionWindow(t.Context(), 10)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty chain: %v, %v", got, err)
	}
	sealed := seal(t, s, 250, 100)
	for _, n := range []int{1, 7, 250, 1000} {
		got, err := s.RegressionWindow(t.Context(), n)
		if err != nil {
			t.Fatal(err)
		}
		want := sealed[max(0, 250-n):]
		if len(got) != len(want) {
			t.Fatalf("n %d: %d entries", n, len(got))
		}
		for i := range want {
			if got[i].Seq != want[i].Seq || !bytes.Equal(got[i].Body, want[i].CanonicalBody) {
				t.Fatalf("n %d: entry %d differs", n, i)
			}
		}
	}
	if _, err := s.RegressionWindow(t.Context(), 0); err == nil {
		t.Error("n 0 accepted")
	}
}

// testRun is a run as analysis.Regress makes it over the last 50 entries, with a time.
func testRun(t *testing.T, s *Store) *analysis.Run {
	t.Helper()
	entries, err := s.RegressionWindow(t.Context(), 50)
	if err != nil {
		t.Fatal(err)
	}
	run, err := analysis.Regress(entries, analysis.RegressionOptions{Window: 50})
	if err != nil {
		t.Fatal(err)
	}
	run.RanAt = time.Date(2026, 11, 21, 12, 0, 0, 123456789, time.UTC)
	return run
}

func TestSaveAndReadRegressionRuns(t *testing.T) {
	s, path := newStore(t)
	if _, err := s.LatestRegression(t.Context()); !errors.Is(err, ErrNoRegressionRun) {
		t.Fatalf("latest of none: %v", err)
	}
	if runs, err := s.RegressionHistory(t.Context(), 10); err != nil || runs == nil || len(runs) != 0 {
		t.Fatalf("history of none: %v, %v", runs, err)
	}
	seal(t, s, 60, 60)
	var saved []*analysis.Run
	for i := range 3 {
		run := testRun(t, s)
		run.RanAt = run.RanAt.Add(time.Duration(i) * time.Minute)
		if err := s.SaveRegression(t.Context(), run); err != nil {
			t.Fatal(err)
		}
		if run.ID != int64(i+1) {
			t.Fatalf("run %d got id %d", i, run.ID)
		}
		saved = append(saved, run)
	}
	latest, err := s.LatestRegression(t.Context())
	if err != nil || !reflect.DeepEqual(latest, saved[2]) {
		t.Fatalf("latest:\n got %+v (%v)\nwant %+v", latest, err, saved[2])
	}
	history, err := s.RegressionHistory(t.Context(), 2)
	if err != nil || len(history) != 2 || !reflect.DeepEqual(history[0], saved[2]) || !reflect.DeepEqual(history[1], saved[1]) {
		t.Fatalf("history: %+v, %v", history, err)
	}
	if run, err := s.Regression(t.Context(), 1); err != nil || !reflect.DeepEqual(run, saved[0]) {
		t.Fatalf("run 1: %+v, %v", run, err)
	}
	if _, err := s.Regression(t.Context(), 4); !errors.Is(err, ErrNoRegressionRun) {
		t.Fatalf("run 4: %v", err)
	}
	for _, limit := range []int{0, -1, MaxRegressionHistory + 1} {
		if _, err := s.RegressionHistory(t.Context(), limit); err == nil {
			t.Errorf("limit %d accepted", limit)
		}
	}

	// The row holds the start time and the run as JSON, its id included.
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var created, result string
	if err := db.QueryRow(`SELECT created_at, result FROM regression_runs WHERE id = 2`).Scan(&created, &result); err != nil {
		t.Fatal(err)
	}
	var stored analysis.Run
	if err := json.Unmarshal([]byte(result), &stored); err != nil || stored.ID != 2 || created != "2026-11-21T12:01:00.123456789Z" {
		t.Errorf("row: %s %s (%v)", created, result, err)
	}
}

func TestRegressionRunsReadOnly(t *testing.T) {
	s, path := newStore(t)
	seal(t, s, 10, 10)
	if err := s.SaveRegression(t.Context(), testRun(t, s)); err != nil {
		t.Fatal(err)
	}
	ro := openStore(t, path, nil)
	if err := ro.SaveRegression(t.Context(), testRun(t, s)); !errors.Is(err, ErrNoSecret) {
		t.Errorf("read-only save: %v", err)
	}
	if run, err := ro.LatestRegression(t.Context()); err != nil || run.ID != 1 {
		t.Errorf("read-only latest: %+v, %v", run, err)
	}
}

// TestRegressionOnAFileWithoutTheTable opens, read-only, a chain written before the
// table existed: readers find no runs, and a writer creates the table.
func TestRegressionOnAFileWithoutTheTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.db")
	s := openStore(t, path, testSecret)
	ro := openStore(t, path, nil)
	if _, err := ro.LatestRegression(t.Context()); !errors.Is(err, ErrNoRegressionRun) {
		t.Fatalf("latest: %v", err)
	}
	if _, err := ro.Regression(t.Context(), 1); !errors.Is(err, ErrNoRegressionRun) {
		t.Fatalf("run 1: %v", err)
	}
	run, err := analysis.RunRegression(t.Context(), s, analysis.RegressionOptions{})
	if err != nil || run.ID != 1 || run.EntriesConsidered != 0 {
		t.Fatalf("run on an empty chain: %+v, %v", run, err)
	}
	if got, err := ro.LatestRegression(t.Context()); err != nil || got.ID != 1 {
		t.Fatalf("latest after a run: %+v, %v", got, err)
	}
}

// TestRunRegressionExaminesTheWholeWindow plants an outlier in the middle of the window,
// and a body that is not JSON just before it: the run reports the outlier with its seq
// and never reads the broken entry.
func TestRunRegressionExaminesTheWholeWindow(t *testing.T) {
	s, path := newStore(t)
	seal(t, s, 150, 150) // input tokens i%1000, output tokens i%313: ordinary
	body := testBody(151)
	body.Attributes["gen_ai.usage.output_tokens"] = "90000"
	if _, err := s.Seal(t.Context(), []protocol.SpanBody{body}); err != nil {
		t.Fatal(err)
	}
	seal(t, s, 49, 49)
	execSQL(t, rawDB(t, path), `UPDATE chain SET canonical_body = CAST('{oops' AS BLOB) WHERE seq = 100`)

	run, err := analysis.RunRegression(t.Context(), s, analysis.RegressionOptions{Window: 100})
	if err != nil {
		t.Fatal(err)
	}
	if run.ID != 1 || run.EntriesConsidered != 100 || run.FirstSeq != 101 || run.LastSeq != 200 || !run.Flagged || run.RanAt.IsZero() {
		t.Fatalf("run %+v", run)
	}
	out := run.Dimensions[analysis.DimOutputTokens]
	if len(out.AnomaliesZ) != 1 || out.AnomaliesZ[0].Seq != 151 || out.AnomaliesZ[0].Value != 90000 ||
		len(out.AnomaliesIQR) != 1 || out.AnomaliesIQR[0].Seq != 151 {
		t.Errorf("output tokens: %+v", out)
	}
	if got := run.FlaggedDimensions(); len(got) != 1 || got[0] != analysis.DimOutputTokens || run.TotalAnomalies != 1 {
		t.Errorf("flagged %v, total %d", got, run.TotalAnomalies)
	}
	if _, err := analysis.RunRegression(t.Context(), s, analysis.RegressionOptions{Window: 101}); err == nil || !strings.Contains(err.Error(), "seq 100") {
		t.Errorf("a window reaching the broken entry: %v", err)
	}
	if _, err := analysis.RunRegression(t.Context(), s, analysis.RegressionOptions{Window: 4}); !errors.Is(err, analysis.ErrInvalidInput) {
		t.Errorf("window 4: %v", err)
	}
}

// TestLegacyRunsStillRead stores a run in the shape saved before issue 17 and reads it
// back in the current one.
func TestLegacyRunsStillRead(t *testing.T) {
	s, path := newStore(t)
	seal(t, s, 10, 10)
	if err := s.SaveRegression(t.Context(), testRun(t, s)); err != nil { // creates the table
		t.Fatal(err)
	}
	runSQL(t, path, `INSERT INTO regression_runs (id, created_at, result) VALUES (2, '2026-11-20T10:00:00Z', '{"id":2,`+
		`"started_at":"2026-11-20T10:00:00Z","window":100,"z_threshold":3,"min_baseline":4,"entries_considered":10,"first_seq":1,"last_seq":10,`+
		`"dimensions":[{"name":"input_tokens","status":"ok","n":10,"seq":10,"value":900,"mean":5,"stddev":2,"z":447.5,"q1":3,"q3":7,"iqr":4,`+
		`"lower_fence":-3,"upper_fence":13,"z_flagged":true,"iqr_flagged":true,"flagged":true},`+
		`{"name":"cost_usd","status":"insufficient_data","n":0,"seq":0,"z_flagged":false,"iqr_flagged":false,"flagged":false}],"flagged":true}')`)
	history, err := s.RegressionHistory(t.Context(), 5)
	if err != nil || len(history) != 2 {
		t.Fatalf("history: %+v, %v", history, err)
	}
	old := history[0]
	in := old.Dimensions[analysis.DimInputTokens]
	if old.ID != 2 || !old.RanAt.Equal(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)) || old.MinValues != 5 || old.TotalAnomalies != 1 ||
		in == nil || in.Stdev != 2 || len(in.AnomaliesZ) != 1 || in.AnomaliesZ[0] != (analysis.ZAnomaly{Seq: 10, Value: 900, Z: 447.5}) ||
		len(in.AnomaliesIQR) != 1 || in.AnomaliesIQR[0].Seq != 10 || old.Dimensions[analysis.DimCostUSD].Flagged {
		t.Errorf("legacy run: %+v, input %+v", old, in)
	}
}

// TestRegressionWindowInParts: a large window, read in parts, is every row of the window
// once, in seq order.
func TestRegressionWindowInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	s, _ := newStore(t)
	sealed := seal(t, s, 3*minWindowPart+20, 1000)
	for _, n := range []int{2 * minWindowPart, 3*minWindowPart + 1, 10 * minWindowPart} {
		got, err := s.RegressionWindow(t.Context(), n)
		if err != nil {
			t.Fatal(err)
		}
		want := sealed[max(0, len(sealed)-n):]
		if len(got) != len(want) {
			t.Fatalf("n %d: %d entries, want %d", n, len(got), len(want))
		}
		for i := range want {
			if got[i].Seq != want[i].Seq || !bytes.Equal(got[i].Body, want[i].CanonicalBody) {
				t.Fatalf("n %d: entry %d is seq %d, want %d", n, i, got[i].Seq, want[i].Seq)
			}
		}
	}
}
