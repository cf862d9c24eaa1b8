package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// TestSmallLoad is the load test in miniature, so that `make test` keeps the harness
// working: 16 operators (one of each cadence) for one simulated day in hourly steps with the chain service beside them. It
// requires what `make loadtest` requires: nothing lost or refused, every accepted
// submission in its one anchor, every anchor logged, the sampled receipts verified.
func TestSmallLoad(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, or export KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh)")
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	cfg, err := parseFlags([]string{"-operators", "16", "-days", "1", "-step", "1h", "-sample", "4", "-chain-max-spans", "20000",
		"-deadline", "3m", "-dir", t.TempDir(), "-assets", assets})
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
	case v.anchors < 4:
		t.Fatalf("%d anchors in a simulated day anchored every 6h, want at least 4", v.anchors)
	case v.receiptsVerified < 4:
		t.Fatalf("%d receipts verified, want at least one for each of the 4 sampled operators", v.receiptsVerified)
	case res.chain == nil || res.chain.spans < spansPerRequest || res.chain.spans > 20000+spansPerRequest || len(res.chain.reads) == 0:
		// The chain service seals until the simulated day ends or its cap is reached,
		// whichever is first: how far it got depends on the host, not on the code.
		t.Fatalf("the chain service sealed %v, want at least one batch, at most the cap (to a whole batch), and some reads", res.chain)
	}
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
