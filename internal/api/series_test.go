package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/analysis"
)

func TestRegressionSeries(t *testing.T) {
	f := newFixture(t, 40, func(o *Options) { o.APIKey = testAPIKey })
	auth := []string{"Authorization", "Bearer " + testAPIKey}
	resp, body := f.do(http.MethodGet, "/api/regression/series?dimension=input_tokens", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	resp, body = f.do(http.MethodGet, "/api/regression/series?dimension=input_tokens", "", nil, auth...)
	wantError(t, resp, body, http.StatusNotFound, codeNotFound)

	f.sealOutlier(90000) // seq 41
	f.seal(4)            // seq 42 to 45
	if resp, body := f.postJSON("/api/regression/run", `{"window":30}`, auth...); resp.StatusCode != http.StatusOK {
		t.Fatalf("regression run: %d %s", resp.StatusCode, body)
	}
	f.seal(10) // the chain grows past the run's window, which the series keeps to

	resp, body = f.do(http.MethodGet, "/api/regression/series?dimension=input_tokens&points=7", "", nil, auth...)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("series: %d %s", resp.StatusCode, body)
	}
	var s seriesResponse
	decode(t, body, &s)
	if s.FirstSeq != 16 || s.LastSeq != 45 || s.Unit != "tokens" || s.Status != analysis.StatusOK || s.RunID != 1 {
		t.Fatalf("series of seq %d to %d, unit %q, status %q, run %d", s.FirstSeq, s.LastSeq, s.Unit, s.Status, s.RunID)
	}
	if len(s.Points) == 0 || len(s.Points) > 7 {
		t.Fatalf("%d points, want 1 to 7", len(s.Points))
	}
	n, iqr := 0, 0
	prev := int64(0)
	for _, p := range s.Points {
		n += p.N
		iqr += p.AnomaliesIQR
		if p.FirstSeq <= prev || p.LastSeq < p.FirstSeq || p.Min > p.Mean || p.Mean > p.Max {
			t.Errorf("point %+v after seq %d", p, prev)
		}
		prev = p.LastSeq
		if want := testTime.Add(time.Duration(p.FirstSeq) * time.Second).Format(time.RFC3339); p.Time != want {
			t.Errorf("point at seq %d: time %q, want %q", p.FirstSeq, p.Time, want)
		}
		if p.FirstSeq <= 41 && 41 <= p.LastSeq && (p.Max != 90000 || p.AnomaliesIQR == 0) {
			t.Errorf("the outlier's point %+v", p)
		}
	}
	if n != 30 || iqr != s.AnomaliesIQRTotal || s.AnomaliesIQRTotal == 0 {
		t.Errorf("points hold %d values and %d IQR anomalies, want 30 and %d (>0)", n, iqr, s.AnomaliesIQRTotal)
	}
	if len(s.AnomaliesIQR) == 0 || s.AnomaliesIQR[0].Seq != 41 || s.AnomaliesIQR[0].Value != 90000 {
		t.Errorf("the farthest IQR anomaly: %+v", s.AnomaliesIQR)
	}

	// One point: everything in it; the anomaly lists are capped too.
	resp, body = f.do(http.MethodGet, "/api/regression/series?dimension=input_tokens&points=1", "", nil, auth...)
	decode(t, body, &s)
	if resp.StatusCode != http.StatusOK || len(s.Points) != 1 || s.Points[0].N != 30 || len(s.AnomaliesIQR) > 1 || len(s.AnomaliesZ) > 1 {
		t.Errorf("points=1: %d %+v", resp.StatusCode, s)
	}

	for _, q := range []string{"", "?dimension=tokens", "?dimension=latency_ms&points=0", "?dimension=latency_ms&points=1001", "?dimension=cost_usd&points=x"} {
		resp, body := f.do(http.MethodGet, "/api/regression/series"+q, "", nil, auth...)
		wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
	}
}
