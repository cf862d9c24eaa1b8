package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestChainStoreTwoWritersAndAKilledSeal runs `cairn serve` and `cairn chain seal` on one
// SQLite file at once: the service seals OTLP spans posted to it while the CLI seals a
// file, and then while a second, large seal is SIGKILLed in the middle of its batches.
// Every post is answered 200, the chain has no gap and no fork (`cairn chain verify
// --full` exits 0 with the secret, seq runs 1..entries), the killed seal left whole
// batches of 1,000 only, and the chain takes more spans after it.
func TestChainStoreTwoWritersAndAKilledSeal(t *testing.T) {
	skipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	secretEnv := "CAIRN_HMAC_SECRET=" + strings.Repeat("5a", 32)
	addr := freeAddresses(t, 1)[0]
	serve := exec.CommandContext(ctx, cairnBin, "serve", "--db", db, "--addr", addr)
	serve.Env = append(os.Environ(), secretEnv)
	var serveOut lockedBuffer
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = serve.Process.Signal(os.Interrupt)
		_ = serve.Wait()
		if t.Failed() {
			t.Logf("cairn serve printed:\n%s", serveOut.String())
		}
	})
	waitUntil(ctx, t, "cairn serve to answer /health", func() bool {
		code, _ := get(ctx, t, http.DefaultClient, "http://"+addr+"/health")
		return code == http.StatusOK
	})

	// The service's writer: OTLP posts until stopped, each of 20 spans.
	posted := make(chan int, 1)
	stopPosting := make(chan struct{})
	var acked atomic.Int64 // spans the service has answered 200 for so far
	go func() {
		n := 0
		defer func() { posted <- n }()
		for batch := 0; ; batch++ {
			select {
			case <-stopPosting:
				return
			default:
			}
			if code := postSpans(ctx, "http://"+addr+"/v1/traces", batch, 20); code != http.StatusOK {
				t.Errorf("OTLP post %d beside a seal: %d, want 200", batch, code)
				return
			}
			n += 20
			acked.Store(int64(n))
		}
	}()

	// The CLI's writer: one seal of 3,000 spans, and a seal of 50,000 killed half-way.
	seal := func(name string, from, n int) *exec.Cmd {
		cmd := exec.CommandContext(ctx, cairnBin, "chain", "seal", "--db", db, "--file", writeFile(t, dir, name, spanLines(from, n)))
		cmd.Env = append(os.Environ(), secretEnv)
		return cmd
	}
	if out, err := seal("a.jsonl", 0, 3000).CombinedOutput(); err != nil {
		t.Fatalf("cairn chain seal beside cairn serve: %v\n%s", err, out)
	}
	killed := seal("b.jsonl", 3000, 50000)
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	// The OTLP writer goes on meanwhile, so the chain's growth alone does not say the seal
	// committed: count what OTLP may have added (every span acknowledged, read after the
	// chain, and the one post of 20 in flight) against it.
	waitUntil(ctx, t, "the large seal to commit a batch", func() bool {
		entries := chainStats(t, db).Entries
		return entries-3000-acked.Load()-20 >= 1000
	})
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait()
	close(stopPosting)
	otlp := <-posted
	if t.Failed() {
		return
	}

	st := chainStats(t, db)
	fromKilled := st.Entries - int64(otlp) - 3000
	t.Logf("%d entries: %d from OTLP, 3000 from the first seal, %d from the killed one", st.Entries, otlp, fromKilled)
	if st.FirstSeq != 1 || st.LastSeq != st.Entries {
		t.Errorf("a gap: seq %d..%d holds %d entries", st.FirstSeq, st.LastSeq, st.Entries)
	}
	if fromKilled < 1000 || fromKilled >= 50000 || fromKilled%1000 != 0 {
		t.Errorf("the killed seal left %d entries, want whole batches of 1,000 short of 50,000", fromKilled)
	}
	verifyChain(t, db, secretEnv)

	if out, err := seal("c.jsonl", 60000, 10).CombinedOutput(); err != nil {
		t.Fatalf("cairn chain seal after the kill: %v\n%s", err, out)
	}
	if code := postSpans(ctx, "http://"+addr+"/v1/traces", 1<<20, 5); code != http.StatusOK {
		t.Fatalf("OTLP post after the kill: %d", code)
	}
	if got := chainStats(t, db).Entries; got != st.Entries+15 {
		t.Errorf("after the kill the chain took %d more entries, want 15", got-st.Entries)
	}
	verifyChain(t, db, secretEnv)
}

// postSpans posts n spans of batch as OTLP/JSON to url and returns the status.
func postSpans(ctx context.Context, url string, batch, n int) int {
	var spans []string
	for i := range n {
		start := int64(1795262400000000000) + int64(batch*n+i)*int64(time.Millisecond)
		spans = append(spans, fmt.Sprintf(`{"traceId":"%032x","spanId":"%016x","name":"chat","startTimeUnixNano":"%d","endTimeUnixNano":"%d",`+
			`"attributes":[{"key":"gen_ai.system","value":{"stringValue":"openai"}}]}`, 1<<40+batch, i+1, start, start+1000))
	}
	body := `{"resourceSpans":[{"scopeSpans":[{"spans":[` + strings.Join(spans, ",") + `]}]}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// chainStat is what `cairn chain stats --json` prints that the test reads.
type chainStat struct {
	Entries  int64 `json:"entries"`
	FirstSeq int64 `json:"first_seq"`
	LastSeq  int64 `json:"last_seq"`
}

var statsMu sync.Mutex

// chainStats runs `cairn chain stats --json` on db.
func chainStats(t *testing.T, db string) chainStat {
	t.Helper()
	statsMu.Lock()
	defer statsMu.Unlock()
	out, err := exec.Command(cairnBin, "chain", "stats", "--json", "--db", db).Output()
	if err != nil {
		t.Fatalf("cairn chain stats: %v\n%s", err, out)
	}
	var st chainStat
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("cairn chain stats: %v in %s", err, out)
	}
	return st
}

// verifyChain requires `cairn chain verify --full` with the secret to call db valid.
func verifyChain(t *testing.T, db, secretEnv string) {
	t.Helper()
	cmd := exec.Command(cairnBin, "chain", "verify", "--full", "--db", db)
	cmd.Env = append(os.Environ(), secretEnv)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "valid: full verify") || !strings.Contains(string(out), "HMACs checked") {
		t.Fatalf("cairn chain verify --full: %v\n%s", err, out)
	}
}
