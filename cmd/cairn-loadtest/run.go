package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// config is one load run's shape.
type config struct {
	Operators   int
	Days        int
	Step        time.Duration   // simulated time between two rounds of submissions
	AnchorEvery time.Duration   // the Federation's anchorInterval
	Cadences    []time.Duration // operator i submits every Cadences[i % len]
	Workers     int             // submissions and registrations in flight at once
	Seed        uint64
	Dir         string // state: etcd, the logs, the chain service's chain
	Assets      string // envtest binaries
	Deadline    time.Duration
	ChainLoad   bool  // run the chain service beside the federation
	ChainSpans  int64 // spans the chain service seals at most
	Verbose     bool  // print the controllers' error logs
	tempDir     bool  // Dir was made for the run and is removed after it
	History     historyConfig
	SamplesFile string        // where the samples are written, tab-separated; "" for nowhere
	DefragEvery time.Duration // simulated time between defragmentations of etcd; 0 for none
}

// historyConfig is where finished records go, and when.
type historyConfig struct {
	Retention time.Duration // the Federation's spec.history.retention; 0: its default
	Store     string        // the manager's --history-store
	DSN       string        // its --history-dsn
	Interval  time.Duration // its --history-interval, in wall time
}

// simClock is the simulated clock of the controllers, the API and the operators.
type simClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *simClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// sample is the manager's memory and etcd's size at one simulated time.
type sample struct {
	sim         time.Duration // since the start of the week
	wall        time.Duration
	submitted   int
	heapInuse   uint64 // after a collection: what is held, not what awaits collecting
	sys         uint64
	etcd        etcdSize
	goroutines  int
	submissions int   // Submission objects in etcd
	anchors     int   // CrossAnchor objects in etcd
	historyDB   int64 // the SQLite history store's file and its write-ahead log; 0 on PostgreSQL
}

// result is everything a run measured.
type result struct {
	cfg          config
	registration time.Duration
	week         time.Duration // wall time of the simulated days, registration excluded
	total        time.Duration
	submitted    int
	refused      []submission
	latencies    []time.Duration // of accepted submissions
	resends      int             // exports sent again after 504 submission_pending
	anchors      []*anchorRun
	samples      []sample
	verdict      *verdict
	chain        *chainLoad
}

// run runs the simulated week and checks its invariants. log receives progress lines.
func run(ctx context.Context, cfg config, log io.Writer) (*result, error) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.Deadline)
	defer cancel()
	clock := &simClock{t: time.Now().UTC().Truncate(time.Second)}
	start := clock.Now()
	f, err := startFederation(ctx, filepath.Join(cfg.Dir, "dev"), cfg, clock.Now)
	if err != nil {
		return nil, err
	}
	res := &result{cfg: cfg}
	err = res.simulate(ctx, f, clock, start, log)
	res.total = time.Since(began)
	return res, errors.Join(err, f.stop())
}

// simulate registers the operators, runs the days and checks the invariants.
func (res *result) simulate(ctx context.Context, f *federation, clock *simClock, start time.Time, log io.Writer) error {
	cfg := res.cfg
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	ops := make([]*simOperator, cfg.Operators)
	for i := range ops {
		var err error
		if ops[i], err = newSimOperator(i, rng, cfg.Cadences[i%len(cfg.Cadences)], start); err != nil {
			return err
		}
	}
	hc := httpClient(cfg.Workers)
	t0 := time.Now()
	if err := parallel(ctx, cfg.Workers, ops, func(o *simOperator) error { return o.register(ctx, f.base, hc, clock.Now) }); err != nil {
		return err
	}
	res.registration = time.Since(t0)
	_, _ = fmt.Fprintf(log, "registered %d operators in %s\n", len(ops), res.registration.Round(time.Millisecond))

	chainCtx, stopChain := context.WithCancel(ctx)
	defer stopChain()
	chainDone := make(chan error, 1)
	if cfg.ChainLoad {
		go func() {
			var err error
			res.chain, err = runChainService(chainCtx, filepath.Join(cfg.Dir, "chain"), cfg.ChainSpans)
			chainDone <- err
		}()
	} else {
		chainDone <- nil
	}

	accepted := 0
	weekBegan := time.Now()
	defer func() {
		if res.week == 0 {
			res.week = time.Since(weekBegan)
		}
	}()
	end := start.Add(time.Duration(cfg.Days) * 24 * time.Hour)
	tick := 0
	for now := start; now.Before(end); now = now.Add(cfg.Step) {
		clock.set(now)
		tick++
		if err := res.anchor(ctx, f, now, tick); err != nil {
			return err
		}
		if every := cfg.DefragEvery; every > 0 && now.After(start) && now.Sub(start)%every == 0 {
			if err := f.defragment(ctx); err != nil {
				return err
			}
		}
		if now.Sub(start)%time.Hour == 0 {
			if err := res.sample(ctx, f, now.Sub(start), weekBegan); err != nil {
				return err
			}
		}
		var due []*simOperator
		for _, o := range ops {
			if !o.next.After(now) {
				due = append(due, o)
				o.next = o.next.Add(o.cadence)
			}
		}
		outcomes := submitAll(ctx, cfg.Workers, due, now)
		for _, s := range outcomes {
			res.submitted++
			res.resends += s.resends
			if s.err != nil {
				res.refused = append(res.refused, s)
				continue
			}
			accepted++
			s.operator.accepted = append(s.operator.accepted, s.lastSeq)
			res.latencies = append(res.latencies, s.latency)
		}
		if now.Sub(start)%(24*time.Hour) == 0 {
			_, _ = fmt.Fprintf(log, "day %d: %d submitted, %d refused, %d anchors, %s wall\n", int(now.Sub(start)/(24*time.Hour)),
				res.submitted, len(res.refused), len(res.anchors), time.Since(weekBegan).Round(time.Second))
		}
	}
	res.week = time.Since(weekBegan)
	stopChain()
	if err := <-chainDone; err != nil {
		return fmt.Errorf("chain service: %w", err)
	}
	if err := res.sample(ctx, f, end.Sub(start), weekBegan); err != nil {
		return err
	}
	if err := res.settle(ctx, f, clock, &tick); err != nil {
		return err
	}
	var err error
	res.verdict, err = check(ctx, f, ops, cfg.Workers)
	return err
}

// anchor runs the anchor due at now, if any, and records it.
func (res *result) anchor(ctx context.Context, f *federation, now time.Time, tick int) error {
	run, err := f.anchorIfDue(ctx, now, tick)
	if run != nil {
		res.anchors = append(res.anchors, run)
	}
	return err
}

// settle waits until the controller has judged every Submission object, then moves the
// clock to the next anchor time until an anchor covers them all (at most three runs),
// and waits up to a minute for the Submission controller to mark them. (The records
// moved to the history store were judged and marked before they moved.)
func (res *result) settle(ctx context.Context, f *federation, clock *simClock, tick *int) error {
	counts := func() (waiting, unmarked int, err error) {
		subs, err := listAll(ctx, f.admin, &fv1.SubmissionList{}, func(l *fv1.SubmissionList) []fv1.Submission { return l.Items })
		for _, s := range subs {
			if !s.Status.Ed25519Verified {
				waiting++
			}
			if !s.Status.Anchored {
				unmarked++
			}
		}
		return waiting, unmarked, err
	}
	for round := 0; ; round++ {
		if err := poll(ctx, func() (bool, error) {
			waiting, _, err := counts()
			return waiting == 0, err
		}); err != nil {
			return err
		}
		fed, err := f.get(ctx)
		if err != nil {
			return err
		}
		if fed.Status.PendingCount == 0 || round == 3 {
			marked, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			err := poll(marked, func() (bool, error) {
				_, unmarked, err := counts()
				return unmarked == 0, err
			})
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return nil // the invariants say which are not marked
			}
			return err
		}
		if next := fed.Status.NextAnchorTime; next != nil && clock.Now().Before(next.Time) {
			clock.set(next.Time)
		}
		*tick++
		if err := res.anchor(ctx, f, clock.Now(), *tick); err != nil {
			return err
		}
	}
}

// sample records the manager's memory (this process's Go heap after a collection: the
// manager, its cache and the API, with the harness's small share: 16 bytes an accepted
// submission), etcd's size and how many records it holds.
func (res *result) sample(ctx context.Context, f *federation, sim time.Duration, weekBegan time.Time) error {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	etcd, err := f.etcdSize(ctx)
	if err != nil {
		return err
	}
	subs, err := f.count(ctx, "SubmissionList")
	if err != nil {
		return err
	}
	anchors, err := f.count(ctx, "CrossAnchorList")
	res.samples = append(res.samples, sample{sim: sim, wall: time.Since(weekBegan), submitted: res.submitted,
		heapInuse: m.HeapInuse, sys: m.Sys, etcd: etcd, goroutines: runtime.NumGoroutine(),
		submissions: subs, anchors: anchors, historyDB: f.historyBytes()})
	return err
}

// submitAll has each due operator submit, workers at a time.
func submitAll(ctx context.Context, workers int, due []*simOperator, now time.Time) []submission {
	out := make([]submission, len(due))
	idx := make(map[*simOperator]int, len(due))
	for i, o := range due {
		idx[o] = i
	}
	_ = parallel(ctx, workers, due, func(o *simOperator) error {
		out[idx[o]] = o.submit(ctx, max(1, int(o.cadence/time.Hour)), now)
		return nil
	})
	return out
}

// parallel calls fn on every item, workers at a time, and returns the first error.
func parallel[T any](ctx context.Context, workers int, items []T, fn func(T) error) error {
	ch := make(chan T)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range max(1, workers) {
		wg.Go(func() {
			for it := range ch {
				if err := fn(it); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		ch <- it
	}
	close(ch)
	wg.Wait()
	return cmpErr(first, ctx.Err())
}

// cmpErr returns a if set, else b.
func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
