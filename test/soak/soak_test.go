package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/cairn-dev/cairn/internal/otlp/genaispans"
)

// The soak's load and tolerances.
const (
	// spansPerRequest spans every requestEvery: 500 spans/s.
	spansPerRequest = 50
	requestEvery    = 100 * time.Millisecond
	sampleEvery     = 10 * time.Second
	// rssTolerance is how much the resident memory of the last tenth of the run may exceed
	// that of the second tenth (after warm-up), relative and absolute: SQLite's page
	// cache and the Go heap settle in the first minutes, and a chain that grows by a
	// million rows should not grow the process beyond this.
	rssTolerance    = 0.25
	rssToleranceAbs = 8 << 20
	// fdTolerance is how many more file descriptors the server may hold at the end than
	// after warm-up (a keep-alive connection or two).
	fdTolerance = 4
)

// sample is one measure of the server process.
type sample struct {
	at      time.Duration
	sent    int64
	sealed  int64
	rss     int64 // bytes
	fds     int
	load    string // the machine's 1-minute load average
	lastErr string
}

// TestSoak runs `cairn serve` for SOAK_DURATION (default 30m) ingesting 500 spans/s over
// OTLP/HTTP protobuf, samples its VmRSS and open fds every 10 s, and fails if either grew
// beyond its tolerance, if any request failed, or if the chain does not hold every span
// sent. It prints the table of samples.
func TestSoak(t *testing.T) {
	if os.Getenv("CAIRN_SOAK") == "" {
		t.Skip("the soak runs with `make soak` (CAIRN_SOAK=1)")
	}
	duration := 30 * time.Minute
	if d := os.Getenv("SOAK_DURATION"); d != "" {
		var err error
		if duration, err = time.ParseDuration(d); err != nil {
			t.Fatalf("SOAK_DURATION: %v", err)
		}
	}
	if duration < 10*sampleEvery {
		t.Fatalf("SOAK_DURATION %v: at least %v, to have ten samples", duration, 10*sampleEvery)
	}
	srv := startServe(t)

	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()
	var sent, failed atomic.Int64
	var lastErr atomic.Value
	lastErr.Store("")
	sending := make(chan struct{})
	go func() {
		defer close(sending)
		tick := time.NewTicker(requestEvery)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := srv.export(ctx, n); err != nil {
				if ctx.Err() != nil {
					return
				}
				failed.Add(1)
				lastErr.Store(err.Error())
				continue
			}
			sent.Add(spansPerRequest)
		}
	}()

	start := time.Now()
	var samples []sample
	measure := func() {
		s := sample{at: time.Since(start).Round(time.Second), sent: sent.Load(), lastErr: lastErr.Load().(string)}
		var err error
		if s.rss, err = vmRSS(srv.pid()); err != nil {
			t.Fatal(err)
		}
		if s.fds, err = openFDs(srv.pid()); err != nil {
			t.Fatal(err)
		}
		s.load = loadAverage()
		if s.sealed, err = srv.lastSeq(t.Context()); err != nil {
			t.Fatal(err)
		}
		samples = append(samples, s)
	}
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			measure()
		}
	}
	<-sending
	measure()
	t.Log("\n" + table(samples))

	last := samples[len(samples)-1]
	if f := failed.Load(); f > 0 {
		t.Errorf("%d requests failed, the last with: %s", f, last.lastErr)
	}
	if last.sealed != last.sent {
		t.Errorf("the chain holds %d entries, %d spans were accepted", last.sealed, last.sent)
	}
	baseRSS, endRSS, baseFDs, endFDs := settled(samples)
	t.Logf("after warm-up: RSS %.1f MiB, %d fds; at the end: RSS %.1f MiB, %d fds; %d spans in %v",
		mib(baseRSS), baseFDs, mib(endRSS), endFDs, last.sent, duration)
	if limit := baseRSS + max(int64(float64(baseRSS)*rssTolerance), rssToleranceAbs); endRSS > limit {
		t.Errorf("resident memory grew from %.1f MiB to %.1f MiB (limit %.1f MiB)", mib(baseRSS), mib(endRSS), mib(limit))
	}
	if endFDs > baseFDs+fdTolerance {
		t.Errorf("open file descriptors grew from %d to %d (limit +%d)", baseFDs, endFDs, fdTolerance)
	}
}

// settled returns the median RSS and fds of the second tenth of the samples (after
// warm-up) and of the last tenth.
func settled(samples []sample) (baseRSS, endRSS int64, baseFDs, endFDs int) {
	tenth := max(len(samples)/10, 1)
	base, end := samples[tenth:2*tenth], samples[len(samples)-tenth:]
	median := func(ss []sample, f func(sample) int64) int64 {
		v := make([]int64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	rss := func(s sample) int64 { return s.rss }
	fds := func(s sample) int64 { return int64(s.fds) }
	return median(base, rss), median(end, rss), int(median(base, fds)), int(median(end, fds))
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// table prints the samples one a line.
func table(samples []sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%8s %10s %10s %9s %4s %5s\n", "time", "sent", "sealed", "RSS MiB", "fds", "load")
	for _, s := range samples {
		fmt.Fprintf(&b, "%8s %10d %10d %9.1f %4d %5s\n", s.at, s.sent, s.sealed, mib(s.rss), s.fds, s.load)
	}
	return b.String()
}

// vmRSS reads the resident set size of process pid from /proc.
func vmRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// loadAverage is the machine's 1-minute load average, as /proc/loadavg gives it.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data) + " ?")[0]
}

// openFDs counts the open file descriptors of process pid.
func openFDs(pid int) (int, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(fds), err
}

// server is a running `cairn serve`.
type server struct {
	cmd  *exec.Cmd
	url  string
	http *http.Client
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// startServe builds cmd/cairn and starts `cairn serve` on a new chain, and waits until it
// answers /health.
func startServe(t *testing.T) *server {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "cairn")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/cairn-dev/cairn/cmd/cairn").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/cairn: %v\n%s", err, out)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddress(t)
	cmd := exec.Command(bin, "serve", "--addr", addr, "--db", filepath.Join(dir, "chain.db"), "--secret-file", secret)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("cairn serve: %v\n%s", err, out.String())
		}
	})
	s := &server{cmd: cmd, url: "http://" + addr, http: &http.Client{Timeout: 30 * time.Second}}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		resp, err := s.http.Get(s.url + "/health")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cairn serve did not answer /health in a minute: %v\n%s", err, out.String())
		}
	}
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// export sends request n: spansPerRequest distinct gen_ai chat spans, OTLP protobuf.
func (s *server) export(ctx context.Context, n int) error {
	body, err := spans(n)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /v1/traces: %s: %.200s", resp.Status, data)
	}
	answer := ptraceotlp.NewExportResponse()
	if err := answer.UnmarshalProto(data); err != nil {
		return fmt.Errorf("POST /v1/traces: the answer: %w", err)
	}
	if r := answer.PartialSuccess().RejectedSpans(); r != 0 {
		return fmt.Errorf("POST /v1/traces: %d spans rejected: %s", r, answer.PartialSuccess().ErrorMessage())
	}
	return nil
}

// lastSeq asks the server for its chain's last seq (the number of entries of an unbroken
// chain), in constant time.
func (s *server) lastSeq(ctx context.Context) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/api/chain/stats?count=false", nil)
	if err != nil {
		return 0, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	var st struct {
		LastSeq int64 `json:"last_seq"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, errors.New("GET /api/chain/stats: " + resp.Status)
	}
	return st.LastSeq, json.NewDecoder(resp.Body).Decode(&st)
}

// spans encodes request n of the soak.
func spans(n int) ([]byte, error) {
	td := genaispans.Batch(n, spansPerRequest, "soak", uint64(time.Now().UnixNano()))
	return ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
}
