// Command cairn-loadtest is Cairn's load test (make loadtest): a simulated week of a
// federation on loopback. It runs the pieces of `cairn dev` in one process — etcd and
// kube-apiserver from the envtest binaries, the manager with its controllers and the
// federation API (manager) — on one simulated clock shared by the controllers,
// the API and the operators. Operators, each with its own Ed25519 key and chain, register
// through the challenge flow and submit signed exports over HTTP on their own cadences;
// the Federation anchors every anchorInterval of simulated time into its embedded log.
// Meanwhile a chain service (the `cairn serve` pieces) seals OTLP spans at full speed
// while its API is read. At the end it checks that every accepted submission is in
// exactly one anchor, every anchor is logged, and every operator's receipt verifies
// offline, and prints the figures docs/BENCHMARKS.md records. It exits 1 if anything was
// lost or refused.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() { os.Exit(loadtest(os.Args[1:])) }

// loadtest runs the command and returns its exit code.
func loadtest(args []string) int {
	cfg, err := parseFlags(args)
	if err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "cairn-loadtest:", err)
		return 2
	}
	if cfg.tempDir {
		defer func() { _ = os.RemoveAll(cfg.Dir) }()
	}
	// The controllers and the API log every submission and anchor, and every write
	// conflict they retry: quiet unless -v, which keeps their errors.
	logs := io.Discard
	if cfg.Verbose {
		logs = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel), zap.WriteTo(logs)))
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelError})))
	klog.SetOutput(logs)
	klog.LogToStderr(false)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := run(ctx, cfg, os.Stderr)
	if res != nil {
		res.write(os.Stdout)
		if cfg.SamplesFile != "" {
			if werr := writeSamples(cfg.SamplesFile, res.samples); werr != nil {
				err = errors.Join(err, werr)
			}
		}
	}
	if err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "cairn-loadtest:", err)
		return 1
	}
	if !res.ok() {
		_, _ = fmt.Fprintln(os.Stderr, "cairn-loadtest: FAILED: submissions lost or refused, or an invariant broken")
		return 1
	}
	return 0
}

// parseFlags reads the run's shape from args.
func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("cairn-loadtest", flag.ContinueOnError)
	cfg := config{}
	// Most operators submit daily, a few hourly: 1,000 of them send about 2,800 exports
	// a simulated day, which fits the 30 minutes on 2 shared cores (docs/BENCHMARKS.md).
	cadences := "1h,4h,12h,24h*13"
	fs.IntVar(&cfg.Operators, "operators", 1000, "operators, each with its own key and chain")
	fs.IntVar(&cfg.Days, "days", 7, "simulated days")
	fs.DurationVar(&cfg.Step, "step", 15*time.Minute, "simulated time between rounds of submissions")
	fs.DurationVar(&cfg.AnchorEvery, "anchor-interval", 6*time.Hour, "the Federation's anchorInterval")
	fs.StringVar(&cadences, "cadences", cadences, "comma-separated submission cadences, d*n for n times d; operator i takes the (i mod n)-th")
	fs.IntVar(&cfg.Workers, "workers", 8, "submissions and registrations in flight at once")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the keys, secrets and first submission times")
	fs.StringVar(&cfg.Dir, "dir", "", "state directory (etcd, logs, chain); default: a new temporary directory, removed after")
	fs.StringVar(&cfg.Assets, "assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory of the envtest binaries (hack/setup-envtest.sh prints it)")
	fs.DurationVar(&cfg.Deadline, "deadline", 30*time.Minute, "wall-time bound of the whole run; past it the run fails")
	fs.Int64Var(&cfg.ChainSpans, "chain-max-spans", 4_000_000, "spans the chain service seals at most (its chain grows about 1 KiB a span)")
	fs.BoolVar(&cfg.Verbose, "v", false, "print the controllers' and the API's error logs")
	fs.BoolVar(&cfg.ChainLoad, "chain-load", true, "run the chain service's OTLP load beside the federation")
	fs.StringVar(&cfg.SamplesFile, "samples", "", "write every sample (each simulated hour) to this file, tab-separated, for curves")
	fs.DurationVar(&cfg.DefragEvery, "etcd-defrag-every", 0, "defragment etcd every this much simulated time, as its operator's maintenance would (0: never)")
	fs.DurationVar(&cfg.History.Retention, "retention", 0, "the Federation's spec.history.retention (0: its default, 72h)")
	fs.StringVar(&cfg.History.Store, "history-store", "sqlite", "the manager's --history-store: sqlite (in the state directory), postgres or none")
	fs.StringVar(&cfg.History.DSN, "history-dsn", "", "the manager's --history-dsn (PostgreSQL's connection string)")
	fs.DurationVar(&cfg.History.Interval, "history-interval", time.Second, "how often, in wall time, the leader moves finished records")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	for _, c := range strings.Split(cadences, ",") {
		text, times, repeated := strings.Cut(strings.TrimSpace(c), "*")
		n, err := 1, error(nil)
		if repeated {
			n, err = strconv.Atoi(times)
		}
		d, derr := time.ParseDuration(text)
		if err != nil || derr != nil || d < cfg.Step || n < 1 || n > 1000 {
			return cfg, fmt.Errorf("-cadences %q: want durations of at least -step, each optionally *n (1..1000)", c)
		}
		for range n {
			cfg.Cadences = append(cfg.Cadences, d)
		}
	}
	switch {
	case cfg.Operators < 1 || cfg.Days < 1 || cfg.Workers < 1 || cfg.Step <= 0:
		return cfg, fmt.Errorf("-operators, -days, -workers and -step must be positive")
	case cfg.Assets == "":
		return cfg, fmt.Errorf("no envtest binaries: pass -assets or set KUBEBUILDER_ASSETS (hack/setup-envtest.sh prints the directory)")
	}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "cairn-loadtest-")
		if err != nil {
			return cfg, err
		}
		cfg.Dir, cfg.tempDir = dir, true
	}
	return cfg, nil
}
