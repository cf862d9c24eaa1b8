package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	_ "github.com/cairn-dev/cairn/internal/history" // the pgx driver
)

// TestSmallLoad is the load test in miniature, so that `make test` keeps the harness
// working: 16 operators (one of each cadence) for three simulated days in hourly steps,
// the chain service beside them, finished records moving to the SQLite history store
// after a day. It requires what `make loadtest` requires: nothing lost or refused, every
// accepted submission answered by the API in its one anchor, every anchor logged, every
// receipt verified; and that etcd holds the working set only.
func TestSmallLoad(t *testing.T) {
	res := smallLoad(t, "-operators", "16", "-chain-max-spans", "20000")
	if c := res.chain; c == nil || c.spans < spansPerRequest || c.spans > 20000+spansPerRequest || len(c.reads) == 0 {
		// The chain service seals until the simulated days end or its cap is reached,
		// whichever is first: how far it got depends on the host, not on the code.
		t.Fatalf("the chain service sealed %v, want at least one batch, at most the cap (to a whole batch), and some reads", c)
	}
}

// TestSmallLoadOnPostgres is TestSmallLoad's story on PostgreSQL (hack/postgres-up.sh;
// make test requires it): 24 operators submitting hourly, without the chain service.
func TestSmallLoadOnPostgres(t *testing.T) {
	dsn := os.Getenv("CAIRN_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CAIRN_REQUIRE_POSTGRES") != "" {
			t.Fatal("CAIRN_REQUIRE_POSTGRES is set but CAIRN_POSTGRES_DSN is not: run hack/postgres-up.sh and source its env file")
		}
		t.Skip("CAIRN_POSTGRES_DSN is not set (make test starts a PostgreSQL)")
	}
	smallLoad(t, "-operators", "24", "-cadences", "1h", "-chain-load=false", "-history-store", "postgres", "-history-dsn", freshSchema(t, dsn))
}

// smallLoad runs three simulated days in hourly steps with a day's retention and the
// flags given, and checks the run's invariants and that the records in etcd stopped
// growing: the Submission objects grew less over the second half of the days than a
// tenth of their growth over the first.
func smallLoad(t *testing.T, flags ...string) *result {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, or export KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh)")
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	args := append([]string{"-days", "3", "-step", "1h", "-retention", "24h", "-history-interval", "100ms",
		"-deadline", "5m", "-dir", t.TempDir(), "-assets", assets}, flags...)
	cfg, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res.write(&out)
	t.Log(out.String())
	v := res.verdict
	switch {
	case !res.ok():
		t.Fatal("the run lost or refused submissions, or broke an invariant")
	case v.accepted == 0 || v.anchored != v.accepted:
		t.Fatalf("%d accepted, %d anchored: want every accepted submission anchored, and some", v.accepted, v.anchored)
	case v.anchors < 12:
		t.Fatalf("%d anchors in three simulated days anchored every 6h, want at least 12", v.anchors)
	case v.receiptsVerified < cfg.Operators:
		t.Fatalf("%d receipts verified, want at least one for each of the %d operators", v.receiptsVerified, cfg.Operators)
	}
	i := slices.IndexFunc(res.growth(), func(g growthOf) bool { return g.name == "Submission objects" })
	if i < 0 || res.growth()[i].first <= 0 {
		t.Fatalf("no growth of the Submission objects measured: %v", res.growth())
	}
	if g := res.growth()[i]; g.ratio() >= 0.1 {
		t.Fatalf("the Submission objects grew by %.0f over the second half of the days, %.0f%% of their %.0f over the first: want under 10%%",
			g.second, 100*g.ratio(), g.first)
	}
	return res
}

// freshSchema makes a schema of its own on the PostgreSQL dsn names, dropped when t
// ends, and returns dsn with that schema as its search path.
func freshSchema(t *testing.T, dsn string) string {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("loadtest_%d", time.Now().UnixNano())
	if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatalf("PostgreSQL at CAIRN_POSTGRES_DSN: %v", err)
	}
	t.Cleanup(func() {
		_, err := db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		if err := errors.Join(err, db.Close()); err != nil {
			t.Error(err)
		}
	})
	return dsn + " search_path=" + schema
}

// TestPercentile pins the nearest-rank percentiles the report prints.
func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for p, want := range map[float64]time.Duration{50: 5, 90: 9, 99: 10, 100: 10, 0: 1} {
		if got := percentile(ds, p); got != want {
			t.Errorf("percentile(1..10, %v) = %v, want %v", p, got, want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile(nil) = %v, want 0", got)
	}
}

// TestFlagsRefuse checks that a cadence shorter than a step and missing binaries are
// refused before anything starts.
func TestFlagsRefuse(t *testing.T) {
	for name, args := range map[string][]string{
		"cadence below step": {"-assets", "x", "-cadences", "5m", "-dir", t.TempDir()},
		"no operators":       {"-assets", "x", "-operators", "0", "-dir", t.TempDir()},
		"no binaries":        {"-assets", "", "-dir", t.TempDir()},
	} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("%s: parseFlags(%q) accepted it", name, args)
		}
	}
}
