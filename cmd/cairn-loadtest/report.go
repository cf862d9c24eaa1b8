package main

import (
	"fmt"
	"io"
	"os"
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
		row("receipts verified offline, with their log entries", "%d, of all %d operators", v.receiptsVerified, cfg.Operators)
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
	every := 24 * time.Hour
	if cfg.Days > 14 {
		every = 5 * 24 * time.Hour
	}
	_, _ = fmt.Fprintf(w, "\n| Simulated time | Wall time | Submitted | Submission / CrossAnchor objects | Go heap in use | Go runtime memory (Sys) | Goroutines | etcd database in use / file / data dir | SQLite history |\n|---|---|---|---|---|---|---|---|---|\n")
	for i, s := range res.samples {
		if s.sim%every != 0 && i != len(res.samples)-1 {
			continue
		}
		_, _ = fmt.Fprintf(w, "| %gh | %s | %d | %d / %d | %s | %s | %d | %s / %s / %s | %s |\n", s.sim.Hours(), s.wall.Round(time.Second), s.submitted,
			s.submissions, s.anchors, mib(s.heapInuse), mib(s.sys), s.goroutines, mib(s.etcd.inUse), mib(s.etcd.file), mib(s.etcd.dir), mib(s.historyDB))
	}
	if g := res.growth(); g != nil {
		_, _ = fmt.Fprintf(w, "\nGrowth over the first and the second half of the simulated days:\n\n| Measure | first half | second half | second / first |\n|---|---|---|---|\n")
		for _, m := range g {
			_, _ = fmt.Fprintf(w, "| %s | %s | %s | %.1f %% |\n", m.name, m.format(m.first), m.format(m.second), 100*m.ratio())
		}
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

// growthOf is how much one measure grew over each half of the run.
type growthOf struct {
	name          string
	first, second float64
	format        func(float64) string
}

// ratio is the second half's growth over the first's (0 when the first did not grow).
func (g growthOf) ratio() float64 {
	if g.first <= 0 {
		return 0
	}
	return g.second / g.first
}

// growth compares, for etcd's database, the Submission objects and the Go heap, the
// growth over the first half of the simulated days with that over the second. Each
// measure at a time is the mean of the samples over the twelfth of the run that ends
// there (at the start: the first sample), so that a collection or a compaction just
// before one sample does not decide it; nil without samples at the start, the middle
// and the end.
func (res *result) growth() []growthOf {
	end := time.Duration(res.cfg.Days) * 24 * time.Hour
	window := end / 12
	var at [3][]*sample
	for i := range res.samples {
		s := &res.samples[i]
		for j, t := range [3]time.Duration{0, end / 2, end} {
			if s.sim <= t && s.sim >= t-window {
				at[j] = append(at[j], s)
			}
		}
	}
	if len(at[0]) == 0 || len(at[1]) == 0 || len(at[2]) == 0 {
		return nil
	}
	mean := func(ss []*sample, f func(*sample) float64) float64 {
		var sum float64
		for _, s := range ss {
			sum += f(s)
		}
		return sum / float64(len(ss))
	}
	bytes := func(v float64) string { return mib(int64(v)) }
	count := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	measure := func(name string, f func(*sample) float64, format func(float64) string) growthOf {
		start, mid, last := mean(at[0], f), mean(at[1], f), mean(at[2], f)
		return growthOf{name: name, first: mid - start, second: last - mid, format: format}
	}
	return []growthOf{
		measure("etcd database in use", func(s *sample) float64 { return float64(s.etcd.inUse) }, bytes),
		measure("etcd database file", func(s *sample) float64 { return float64(s.etcd.file) }, bytes),
		measure("Submission objects", func(s *sample) float64 { return float64(s.submissions) }, count),
		measure("CrossAnchor objects", func(s *sample) float64 { return float64(s.anchors) }, count),
		measure("Go heap in use", func(s *sample) float64 { return float64(s.heapInuse) }, bytes),
	}
}

// writeSamples writes samples to path, one a line, tab-separated with a header.
func writeSamples(path string, samples []sample) error {
	var b strings.Builder
	b.WriteString("sim_hours\twall_s\tsubmitted\tsubmission_objects\tcrossanchor_objects\theap_inuse\tsys\tgoroutines\tetcd_db\tetcd_dir\thistory_db\tetcd_in_use\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "%g\t%.1f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", s.sim.Hours(), s.wall.Seconds(), s.submitted,
			s.submissions, s.anchors, s.heapInuse, s.sys, s.goroutines, s.etcd.file, s.etcd.dir, s.historyDB, s.etcd.inUse)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
