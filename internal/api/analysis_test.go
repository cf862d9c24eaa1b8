package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var auth = []string{"Authorization", "Bearer " + testAPIKey}

// sealOutlier seals a call of gpt-4o with far more input tokens than testBody's.
func (f *fixture) sealOutlier(tokens int64) {
	f.t.Helper()
	last, err := f.store.LastSeq(f.t.Context())
	if err != nil {
		f.t.Fatal(err)
	}
	body := testBody(last + 1)
	body.Attributes = map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": tokens}
	if _, err := f.store.Seal(f.t.Context(), []protocol.SpanBody{body}); err != nil {
		f.t.Fatal(err)
	}
}

func TestRegressionRoutes(t *testing.T) {
	f := newFixture(t, 12, func(o *Options) { o.APIKey = testAPIKey })

	// Without the key, nothing; with it, 404 until a run is saved.
	resp, body := f.do(http.MethodGet, "/api/regression/latest", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	resp, body = f.do(http.MethodGet, "/api/regression/latest", "", nil, auth...)
	if e := wantError(t, resp, body, http.StatusNotFound, codeNotFound); !strings.Contains(e.Error, "POST /api/regression/run") {
		t.Errorf("404 says %q", e.Error)
	}
	resp, body = f.do(http.MethodGet, "/api/regression/history", "", nil, auth...)
	var history regressionHistory
	decode(t, body, &history)
	if resp.StatusCode != http.StatusOK || len(history.Runs) != 0 || history.Limit != defaultHistoryLimit {
		t.Fatalf("history before any run: %d %s", resp.StatusCode, body)
	}
	resp, body = f.postJSON("/api/regression/run", "", "Authorization", "Bearer wrong")
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)

	// A run over testBody's steady window flags nothing and is saved.
	resp, body = f.postJSON("/api/regression/run", "", auth...)
	var first analysis.Run
	decode(t, body, &first)
	if resp.StatusCode != http.StatusOK || first.ID != 1 || first.Flagged || first.EntriesConsidered != 12 ||
		first.Window != analysis.DefaultWindow || first.LastSeq != 12 || len(first.Dimensions) != 4 {
		t.Fatalf("first run: %d %s", resp.StatusCode, body)
	}
	input := first.Dimensions[0]
	if input.Name != analysis.DimInputTokens || input.Status != analysis.StatusOK || input.Stats == nil || input.Value != 12 || input.N != 12 {
		t.Fatalf("input tokens: %+v", input)
	}

	// An outlier, tested over a window of 8 with a lower threshold, is flagged.
	f.sealOutlier(5000)
	resp, body = f.postJSON("/api/regression/run", `{"window": 8, "z_threshold": 2.5}`, auth...)
	var second analysis.Run
	decode(t, body, &second)
	if resp.StatusCode != http.StatusOK || second.ID != 2 || !second.Flagged || second.Window != 8 || second.ZThreshold != 2.5 ||
		second.FirstSeq != 6 || second.LastSeq != 13 || !second.Dimensions[0].ZFlagged || !second.Dimensions[0].IQRFlagged {
		t.Fatalf("second run: %d %s", resp.StatusCode, body)
	}

	resp, body = f.do(http.MethodGet, "/api/regression/latest", "", nil, auth...)
	var latest analysis.Run
	decode(t, body, &latest)
	if resp.StatusCode != http.StatusOK || latest.ID != 2 || !latest.Flagged || !latest.StartedAt.Equal(second.StartedAt) {
		t.Fatalf("latest: %d %s", resp.StatusCode, body)
	}
	for query, want := range map[string][]int64{"": {2, 1}, "?limit=1": {2}, "?limit=1000": {2, 1}} {
		resp, body = f.do(http.MethodGet, "/api/regression/history"+query, "", nil, auth...)
		history = regressionHistory{}
		decode(t, body, &history)
		var ids []int64
		for _, r := range history.Runs {
			ids = append(ids, r.ID)
		}
		if resp.StatusCode != http.StatusOK || fmt.Sprint(ids) != fmt.Sprint(want) {
			t.Errorf("history%s: %d ids %v, want %v", query, resp.StatusCode, ids, want)
		}
	}

	// Bad input: 400 with a JSON error, and nothing saved.
	for name, tc := range map[string]struct {
		path, body, code string
	}{
		"not JSON":          {"/api/regression/run", `{"window":`, codeBadJSON},
		"an unknown member": {"/api/regression/run", `{"windows": 10}`, codeBadJSON},
		"a string window":   {"/api/regression/run", `{"window": "10"}`, codeBadJSON},
		"a tiny window":     {"/api/regression/run", `{"window": 3}`, codeBadParameter},
		"a huge window":     {"/api/regression/run", `{"window": 100001}`, codeBadParameter},
		"a negative z":      {"/api/regression/run", `{"z_threshold": -1}`, codeBadParameter},
	} {
		resp, body := f.postJSON(tc.path, tc.body, auth...)
		if e := wantError(t, resp, body, http.StatusBadRequest, tc.code); e.Error == "" {
			t.Errorf("%s: no message", name)
		}
	}
	for _, query := range []string{"?limit=0", "?limit=1001", "?limit=-1", "?limit=x"} {
		resp, body := f.do(http.MethodGet, "/api/regression/history"+query, "", nil, auth...)
		wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
	}
	if runs, err := f.store.RegressionHistory(t.Context(), 10); err != nil || len(runs) != 2 {
		t.Fatalf("saved runs after bad requests: %d, %v", len(runs), err)
	}
}

func ptr[T any](v T) *T { return &v }

// The regression run's time is stored with the run: it survives the round trip.
func TestRegressionRunTimeIsUTC(t *testing.T) {
	f := newFixture(t, 6, nil)
	before := time.Now().UTC().Add(-time.Second)
	resp, body := f.postJSON("/api/regression/run", `{}`)
	var run analysis.Run
	decode(t, body, &run)
	if resp.StatusCode != http.StatusOK || run.StartedAt.Before(before) || run.StartedAt.Location() != time.UTC {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}
