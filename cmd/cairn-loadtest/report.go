package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// percentile returns the p-th percentile (0..100) of ds, nearest rank; 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// ms prints d in milliseconds with one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// mib prints n bytes in MiB.
func mib[T int64 | uint64](n T) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// write prints the run's figures as the Markdown tables docs/BENCHMARKS.md copies.
func (res *result) write(w io.Writer) {
	cfg, v := res.cfg, res.verdict
	var cad []string
	for i := 0; i < len(cfg.Cadences); {
		j := i
		for j < len(cfg.Cadences) && cfg.Cadences[j] == cfg.Cadences[i] {
			j++
		}
		c := strings.TrimSuffix(strings.TrimSuffix(cfg.Cadences[i].String(), "0s"), "0m")
		if j-i > 1 {
			c += fmt.Sprintf("*%d", j-i)
		}
		cad, i = append(cad, c), j
	}
	_, _ = fmt.Fprintf(w, "\n%d operators, %d simulated days in steps of %s, anchorInterval %s, cadences %s (operator i takes cadence i mod %d), %d workers\n\n",
		cfg.Operators, cfg.Days, cfg.Step, cfg.AnchorEvery, strings.Join(cad, ","), len(cfg.Cadences), cfg.Workers)
	_, _ = fmt.Fprintf(w, "| Measure | Value |\n|---|---|\n")
	row := func(k string, format string, args ...any) {
		_, _ = fmt.Fprintf(w, "| %s | %s |\n", k, fmt.Sprintf(format, args...))
	}
	row("wall time: registration / simulated days / in all", "%s / %s / %s", res.registration.Round(time.Second), res.week.Round(time.Second), res.total.Round(time.Second))
	row("registrations (challenge flow, each logged)", "%d, %.1f/s", cfg.Operators, float64(cfg.Operators)/res.registration.Seconds())
	row("submissions sent / accepted (2xx) / refused", "%d / %d / %d", res.submitted, len(res.latencies), len(res.refused))
	row("exports sent again after 504 submission_pending (the documented retry)", "%d", res.resends)
	row("accepted submissions a second of wall time", "%.1f", float64(len(res.latencies))/res.week.Seconds())
	if v != nil {
		row("accepted and in exactly one anchor / lost", "%d / **%d**", v.anchored, v.lost)
		row("anchors (all Anchored with a log entry)", "%d", v.anchors)
		row("receipts verified offline, with their log entries", "%d, of %d sampled operators", v.receiptsVerified, min(cfg.Sample, cfg.Operators))
	}
	row("submit latency, first send to verdict, p50 / p90 / p99 / max", "%s / %s / %s / %s", ms(percentile(res.latencies, 50)), ms(percentile(res.latencies, 90)),
		ms(percentile(res.latencies, 99)), ms(percentile(res.latencies, 100)))
	var runs, logged []time.Duration
	parts := 0
	for _, a := range res.anchors {
		runs, logged = append(runs, a.run), append(logged, a.logged)
		parts = max(parts, a.participants)
	}
	row("anchor run p50 / max (tick to status)", "%s / %s", ms(percentile(runs, 50)), ms(percentile(runs, 100)))
	row("anchor logged p50 / max (tick to log entry)", "%s / %s", ms(percentile(logged, 50)), ms(percentile(logged, 100)))
	row("most participants in one anchor", "%d", parts)
	if c := res.chain; c != nil {
		row("chain service: spans sealed over OTLP", "%d in %s, %.0f spans/s", c.spans, c.elapsed.Round(time.Second), float64(c.spans)/c.elapsed.Seconds())
		row("chain service: API reads p50 / p90 / p99 / max", "%s / %s / %s / %s (%d reads)", ms(percentile(c.reads, 50)), ms(percentile(c.reads, 90)),
			ms(percentile(c.reads, 99)), ms(percentile(c.reads, 100)), len(c.reads))
	}
	_, _ = fmt.Fprintf(w, "\n| Simulated time | Wall time | Submitted | Go heap in use | Go runtime memory (Sys) | Goroutines | etcd database / data dir |\n|---|---|---|---|---|---|---|\n")
	for i, s := range res.samples {
		if s.sim%(24*time.Hour) != 0 && i != len(res.samples)-1 {
			continue
		}
		_, _ = fmt.Fprintf(w, "| %gh | %s | %d | %s | %s | %d | %s / %s |\n", s.sim.Hours(), s.wall.Round(time.Second), s.submitted,
			mib(s.heapInuse), mib(s.sys), s.goroutines, mib(s.etcdDB), mib(s.etcdBytes))
	}
	if len(res.refused) > 0 {
		_, _ = fmt.Fprintf(w, "\nrefused submissions (first 5):\n")
		for _, s := range res.refused[:min(5, len(res.refused))] {
			_, _ = fmt.Fprintf(w, "- %s: %v\n", s.operator.id, s.err)
		}
	}
	if v != nil && len(v.problems) > 0 {
		_, _ = fmt.Fprintf(w, "\nbroken invariants:\n")
		for _, p := range v.problems {
			_, _ = fmt.Fprintf(w, "- %s\n", p)
		}
	}
	if c := res.chain; c != nil {
		for _, err := range c.errs {
			if err != nil {
				_, _ = fmt.Fprintf(w, "\nchain service error: %v\n", err)
			}
		}
	}
}

// ok reports whether the run kept every invariant: nothing lost, nothing refused,
// nothing broken, and the chain service never failed.
func (res *result) ok() bool {
	if res.verdict == nil || res.verdict.lost != 0 || len(res.verdict.problems) != 0 || len(res.refused) != 0 {
		return false
	}
	if c := res.chain; c != nil {
		for _, err := range c.errs {
			if err != nil {
				return false
			}
		}
	}
	return true
}
