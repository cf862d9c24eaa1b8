package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

func TestTailEntries(t *testing.T) {
	s, _ := newStore(t)
	got, err := s.TailEntries(t.Context(), 10)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty chain: %v, %v", got, err)
	}
	sealed := seal(t, s, 250, 100)
	for _, n := range []int{1, 7, 250, 1000} {
		got, err := s.TailEntries(t.Context(), n)
		if err != nil {
			t.Fatal(err)
		}
		want := sealed[max(0, 250-n):]
		if len(got) != len(want) {
			t.Fatalf("n %d: %d entries", n, len(got))
		}
		for i := range want {
			if !reflect.DeepEqual(&got[i], want[i]) {
				t.Fatalf("n %d: entry %d differs", n, i)
			}
		}
	}
	if _, err := s.TailEntries(t.Context(), 0); err == nil {
		t.Error("n 0 accepted")
	}
}

// testRun is a run as analysis.Regress makes it, with a start time.
func testRun(t *testing.T, entries []protocol.Entry) *analysis.Run {
	t.Helper()
	run, err := analysis.Regress(entries, analysis.RegressionOptions{Window: 50})
	if err != nil {
		t.Fatal(err)
	}
	run.StartedAt = time.Date(2026, 11, 21, 12, 0, 0, 123456789, time.UTC)
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
	entries, err := s.TailEntries(t.Context(), 50)
	if err != nil {
		t.Fatal(err)
	}
	var saved []*analysis.Run
	for i := range 3 {
		run := testRun(t, entries)
		run.StartedAt = run.StartedAt.Add(time.Duration(i) * time.Minute)
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
	if err := s.SaveRegression(t.Context(), testRun(t, nil)); err != nil {
		t.Fatal(err)
	}
	ro := openStore(t, path, nil)
	if err := ro.SaveRegression(t.Context(), testRun(t, nil)); !errors.Is(err, ErrNoSecret) {
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

func TestRunRegressionFlagsTheLastCall(t *testing.T) {
	s, _ := newStore(t)
	seal(t, s, 200, 200) // input tokens i%1000, output tokens i%313: ordinary
	body := testBody(201)
	body.Attributes["gen_ai.usage.output_tokens"] = "90000"
	if _, err := s.Seal(t.Context(), []protocol.SpanBody{body}); err != nil {
		t.Fatal(err)
	}
	run, err := analysis.RunRegression(t.Context(), s, analysis.RegressionOptions{Window: 100})
	if err != nil {
		t.Fatal(err)
	}
	if run.ID != 1 || run.EntriesConsidered != 100 || run.FirstSeq != 102 || run.LastSeq != 201 || !run.Flagged || run.StartedAt.IsZero() {
		t.Fatalf("run %+v", run)
	}
	for _, d := range run.Dimensions {
		if want := d.Name == analysis.DimOutputTokens; d.Flagged != want {
			t.Errorf("%s flagged %v: %+v", d.Name, d.Flagged, d.Stats)
		}
	}
	if _, err := analysis.RunRegression(t.Context(), s, analysis.RegressionOptions{Window: 3}); !errors.Is(err, analysis.ErrInvalidInput) {
		t.Errorf("window 3: %v", err)
	}
}
