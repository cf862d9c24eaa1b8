package webhook

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Benchmarks of POST /federation/submit on envtest, over real HTTP on loopback, with the
// controllers judging every submission (docs/BENCHMARKS.md records the numbers).

// submitClients is how many clients submit at once; submitsPerClient how many exports
// each sends, one after the other, per iteration; submitEntries how many entries each
// export carries.
const (
	submitClients    = 50
	submitsPerClient = 10
	submitEntries    = 10
)

// BenchmarkSubmit50Clients has 50 operators submit at once, each its chain's next
// segments one after the other (a segment is accepted only once the previous one is), and
// reports the sustained requests a second and the 50th and 99th percentile latencies.
func BenchmarkSubmit50Clients(b *testing.B) {
	f := startBenchFederation(b)
	s, err := f.server()
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: submitClients}}
	chains := make([]*chain, submitClients)
	for i := range chains {
		key, err := f.register(fmt.Sprintf("Bench Org %d", i))
		if err != nil {
			b.Fatal(err)
		}
		chains[i] = &chain{key: key, secret: []byte(fmt.Sprintf("bench chain secret %02d......", i))}
	}
	var latencies []time.Duration
	var elapsed time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		bodies := make([][][]byte, len(chains))
		for i, c := range chains {
			for range submitsPerClient {
				first := int64(len(c.entries)) + 1
				if err := c.grow(submitEntries, 200); err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				if err := c.writeExport(&buf, first, first+submitEntries-1, time.Now().UTC(), c.key); err != nil {
					b.Fatal(err)
				}
				bodies[i] = append(bodies[i], buf.Bytes())
			}
		}
		b.StartTimer()
		lat, took := submitAll(b, hc, ts.URL, chains, bodies)
		latencies, elapsed = append(latencies, lat...), elapsed+took
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "req/s")
	b.ReportMetric(ms(latencies[len(latencies)/2]), "p50-ms")
	b.ReportMetric(ms(latencies[len(latencies)*99/100]), "p99-ms")
}

// submitAll sends each client's bodies in order, the clients at once, and returns every
// request's latency and the wall time of the whole.
func submitAll(b *testing.B, hc *http.Client, url string, chains []*chain, bodies [][][]byte) ([]time.Duration, time.Duration) {
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for i := range chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, body := range bodies[i] {
				t0 := time.Now()
				status, raw, err := post(hc, url, chains[i].key, body)
				d := time.Since(t0)
				if err != nil || status != http.StatusOK {
					b.Errorf("submit: %d %s %v", status, raw, err)
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start)
}

// post submits body signed by key with a body-bound token.
func post(hc *http.Client, url string, key ed25519.PrivateKey, body []byte) (int, []byte, error) {
	tok, err := protocol.SignToken(key, protocol.BodyNonce(time.Now(), body))
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest(http.MethodPost, url+"/federation/submit", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// largeExportBytes is the size of BenchmarkSubmit50MB's export; largeEntryPrompt the
// prompt of each of its entries.
const (
	largeExportBytes = 50 << 20
	largeEntryPrompt = 1000
)

// BenchmarkSubmit50MB streams a 50 MB export to the API, generated as it is sent by a
// child process (the test binary again, in TestSubmitExportChild, sealing one entry at a
// time), and reports how far this process's peak resident set and live heap rose above
// what they were before the request: what the server held to verify and record it. Each
// iteration is a new operator's first segment. The token is a challenge token, which
// binds no body, so the export need not be hashed before it is sent.
func BenchmarkSubmit50MB(b *testing.B) {
	f := startBenchFederation(b)
	s, err := f.server()
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	var peak, peakHeap, bytesSent int64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		key, err := f.register(fmt.Sprintf("Bench Large Org %d", i))
		if err != nil {
			b.Fatal(err)
		}
		nonce, err := getChallenge(ts.URL)
		if err != nil {
			b.Fatal(err)
		}
		tok, err := protocol.SignToken(key, nonce)
		if err != nil {
			b.Fatal(err)
		}
		child := exec.Command(os.Args[0], "-test.run=^TestSubmitExportChild$", "-test.count=1")
		child.Env = append(os.Environ(), exportChildEnv+"="+hex.EncodeToString(key.Seed()))
		// The export comes on the child's fd 3: its stdout also carries the test framework's words.
		out, pw, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		child.ExtraFiles, child.Stderr = []*os.File{pw}, os.Stderr
		if err := child.Start(); err != nil {
			b.Fatal(err)
		}
		_ = pw.Close()       // the child holds its own copy
		debug.FreeOSMemory() // so that the resident set is what is live, and its rise what the request held
		base, resetOK := resetPeakRSS()
		heap := startHeapWatch()
		b.StartTimer()
		counted := &countingReader{r: out}
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/federation/submit", counted)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		b.StopTimer()
		peakHeap = max(peakHeap, heap.stop())
		_ = out.Close()
		if err := child.Wait(); err != nil {
			b.Fatalf("export child: %v", err)
		}
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("submit: %d %s", resp.StatusCode, raw)
		}
		if !resetOK {
			b.Skip("cannot reset the peak resident set (/proc/self/clear_refs)")
		}
		peak = max(peak, vmKB("VmHWM")-base)
		bytesSent = counted.n
		b.StartTimer()
	}
	b.ReportMetric(float64(bytesSent)/(1<<20), "export-MB")
	b.ReportMetric(float64(peak)/1024, "extra-peak-RSS-MB")
	b.ReportMetric(float64(peakHeap)/(1<<20), "extra-peak-heap-MB")
}

// exportChildEnv carries the hex seed of the operator key to TestSubmitExportChild.
const exportChildEnv = "CAIRN_BENCH_EXPORT_SEED"

// TestSubmitExportChild writes BenchmarkSubmit50MB's export to fd 3; it does nothing
// unless that benchmark started it.
func TestSubmitExportChild(t *testing.T) {
	seed, ok := os.LookupEnv(exportChildEnv)
	if !ok {
		t.Skip("run by BenchmarkSubmit50MB")
	}
	raw, err := hex.DecodeString(seed)
	if err != nil || len(raw) != ed25519.SeedSize {
		t.Fatalf("%s: not an Ed25519 seed", exportChildEnv)
	}
	out := os.NewFile(3, "export")
	defer func() { _ = out.Close() }()
	w := bufio.NewWriterSize(out, 1<<16)
	c := &streamedChain{key: ed25519.NewKeyFromSeed(raw), secret: []byte("bench large chain secret"), prev: protocol.GenesisPrevHash}
	if err := c.write(w, largeExportBytes); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// streamedChain writes successive segments of a chain as exports, sealing each entry as
// it writes it.
type streamedChain struct {
	key    ed25519.PrivateKey
	secret []byte
	seq    int64
	prev   string
}

// write writes the next segment to w, entries until the export passes size bytes.
func (c *streamedChain) write(w io.Writer, size int64) error {
	sealer, err := protocol.NewEntrySealer(c.secret)
	if err != nil {
		return err
	}
	cw := &countingWriter{w: w}
	x, err := protocol.NewExportWriter(cw, protocol.ExportOptions{Secret: c.secret, Key: c.key, ExportedAt: time.Now()})
	if err != nil {
		return err
	}
	for cw.n < size {
		c.seq++
		e, err := sealer.Seal(c.seq, c.prev, spanBody(c.seq, largeEntryPrompt))
		if err != nil {
			return err
		}
		if err := x.Write(e); err != nil {
			return err
		}
		c.prev = e.HMACHash
	}
	_, err = x.Close()
	return err
}

// heapWatch samples the live heap's size every millisecond and keeps its peak.
type heapWatch struct {
	base, peak int64
	done       chan struct{}
	finished   sync.WaitGroup
}

// heapObjects is the runtime/metrics sample of the bytes of heap objects, live or not
// yet swept.
const heapObjects = "/memory/classes/heap/objects:bytes"

// startHeapWatch starts sampling, after a collection, from the heap's size now.
func startHeapWatch() *heapWatch {
	runtime.GC()
	h := &heapWatch{done: make(chan struct{})}
	h.base = readHeap()
	h.finished.Add(1)
	go func() {
		defer h.finished.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-t.C:
				h.peak = max(h.peak, readHeap())
			}
		}
	}()
	return h
}

// stop ends the sampling and returns how far the heap rose above its size at the start.
func (h *heapWatch) stop() int64 {
	close(h.done)
	h.finished.Wait()
	return max(0, h.peak-h.base)
}

func readHeap() int64 {
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// getChallenge gets a challenge nonce from the API at url.
func getChallenge(url string) (string, error) {
	resp, err := http.Get(url + "/federation/register/challenge")
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var c challengeResponse
	return c.Nonce, json.NewDecoder(resp.Body).Decode(&c)
}

// resetPeakRSS resets the process's peak resident set to its current one (Linux:
// clear_refs 5) and returns the current one, in kB.
func resetPeakRSS() (int64, bool) {
	err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return vmKB("VmRSS"), err == nil
}

// vmKB reads a kB field of /proc/self/status; 0 when there is none.
func vmKB(field string) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb
			}
		}
	}
	return 0
}

// countingReader and countingWriter count the bytes through them.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
