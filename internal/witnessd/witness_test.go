package witnessd_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	fnote "github.com/transparency-dev/formats/note"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-dev/cairn/internal/witnessd"
	"github.com/cairn-dev/cairn/pkg/witness"
)

const origin = "cairn.test/federation/witnessed"

// testLog is a log in memory: a Merkle tree and the key that signs its checkpoints.
type testLog struct {
	t      testing.TB
	tree   *testonly.Tree
	signer note.Signer
	key    witness.LogKey
}

func newTestLog(t testing.TB) *testLog {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := witness.ParseLogKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return &testLog{t: t, tree: testonly.New(rfc6962.DefaultHasher), signer: signer, key: key}
}

// grow appends n entries named by tag.
func (l *testLog) grow(n int, tag string) {
	for i := range n {
		l.tree.AppendData(fmt.Appendf(nil, "%s-%d-%d", tag, l.tree.Size(), i))
	}
}

// checkpoint signs the tree's checkpoint at its size.
func (l *testLog) checkpoint() []byte {
	text := fmt.Sprintf("%s\n%d\n%s\n", origin, l.tree.Size(), base64.StdEncoding.EncodeToString(l.tree.Hash()))
	signed, err := note.Sign(&note.Note{Text: text}, l.signer)
	if err != nil {
		l.t.Fatal(err)
	}
	return signed
}

// request is an add-checkpoint request from old to the tree's size.
func (l *testLog) request(old uint64) *witness.AddCheckpoint {
	r := &witness.AddCheckpoint{OldSize: old, Checkpoint: l.checkpoint()}
	if old > 0 && old <= l.tree.Size() {
		p, err := l.tree.ConsistencyProof(old, l.tree.Size())
		if err != nil {
			l.t.Fatal(err)
		}
		r.Proof = p
	}
	return r
}

type fixture struct {
	w      *witnessd.Witness
	client *witness.Client
	vkey   string
	path   string
	log    *testLog
}

func newFixture(t *testing.T, log *testLog) *fixture {
	t.Helper()
	skey, vkey, err := witness.GenerateSignerKey("member-a.example/witness", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cosigner, err := witness.ParseSignerKey(skey)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "witness.db")
	f := &fixture{vkey: vkey, path: path, log: log}
	f.w = f.open(t, cosigner)
	key, _ := witness.ParseKey(vkey)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { f.w.Handler().ServeHTTP(rw, r) }))
	t.Cleanup(srv.Close)
	f.client = &witness.Client{Witness: witness.Witness{Key: key, URL: srv.URL}}
	return f
}

func (f *fixture) open(t *testing.T, c *witness.Cosigner) *witnessd.Witness {
	t.Helper()
	w, err := witnessd.Open(witnessd.Options{Cosigner: c, Logs: []witness.LogKey{f.log.key}, StatePath: f.path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func (f *fixture) add(t *testing.T, r *witness.AddCheckpoint) ([]byte, error) {
	t.Helper()
	line, _, err := f.client.AddCheckpoint(context.Background(), r)
	return line, err
}

// The witness cosigns a growing log, and its cosignatures verify with
// transparency-dev's verifier as well as Cairn's policy.
func TestWitnessCosignsAGrowingLog(t *testing.T) {
	log := newTestLog(t)
	f := newFixture(t, log)
	verifier, err := fnote.NewVerifierForCosignatureV1(f.vkey)
	if err != nil {
		t.Fatal(err)
	}
	p, err := witness.ParsePolicy([]byte("witness a " + f.vkey + "\nquorum a\n"))
	if err != nil {
		t.Fatal(err)
	}
	old := uint64(0)
	for _, n := range []int{1, 1, 6, 100, 1} {
		log.grow(n, "honest")
		r := log.request(old)
		line, err := f.add(t, r)
		if err != nil {
			t.Fatalf("size %d from %d: %v", log.tree.Size(), old, err)
		}
		cosigned := append(slices.Clone(r.Checkpoint), line...)
		if _, err := note.Open(cosigned, note.VerifierList(verifier)); err != nil {
			t.Fatalf("formats does not verify the witness's cosignature: %v", err)
		}
		if v, err := p.Check(cosigned); err != nil || !v.Satisfied {
			t.Fatalf("policy: %+v %v", v, err)
		}
		old = log.tree.Size()
	}
	// The same checkpoint again is cosigned again; an older size is told the latest.
	if _, err := f.add(t, log.request(old)); err != nil {
		t.Fatalf("the same checkpoint again: %v", err)
	}
	if size, ok := witness.IsConflict(func() error { _, err := f.add(t, log.request(3)); return err }()); !ok || size != old {
		t.Fatalf("a stale old size: got size %d, %v; want a conflict naming %d", size, ok, old)
	}
}

func TestWitnessRefusals(t *testing.T) {
	log := newTestLog(t)
	f := newFixture(t, log)
	log.grow(4, "x")
	if _, err := f.add(t, log.request(0)); err != nil {
		t.Fatal(err)
	}
	stranger := newTestLog(t) // same origin, another key
	stranger.grow(6, "x")
	otherOrigin := log.request(0)
	otherOrigin.Checkpoint = []byte(strings.Replace(string(otherOrigin.Checkpoint), origin, "cairn.test/other", 1))
	wrongProof := func() *witness.AddCheckpoint {
		log.grow(3, "x")
		r := log.request(4)
		r.Proof[0][0] ^= 1
		return r
	}()
	for name, tc := range map[string]struct {
		body   string
		status int
	}{
		"malformed":           {"old x\n\n", http.StatusBadRequest},
		"not a note":          {"old 0\n\nhello\n", http.StatusBadRequest},
		"unknown origin":      {string(otherOrigin.Marshal()), http.StatusNotFound},
		"another key":         {string(stranger.request(4).Marshal()), http.StatusForbidden},
		"old past size":       {string((&witness.AddCheckpoint{OldSize: 9, Checkpoint: log.checkpoint()}).Marshal()), http.StatusBadRequest},
		"proof does not hold": {string(wrongProof.Marshal()), http.StatusUnprocessableEntity},
	} {
		resp, err := http.Post(f.client.Witness.URL+"/add-checkpoint", "text/plain", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: HTTP %d, want %d", name, resp.StatusCode, tc.status)
		}
	}
	huge := "old 0\n\n" + strings.Repeat("a", witness.MaxRequestBytes)
	resp, err := http.Post(f.client.Witness.URL+"/add-checkpoint", "text/plain", strings.NewReader(huge))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a huge body: HTTP %d", resp.StatusCode)
	}
}

// A log that forks (its directory restored from an old copy, then grown otherwise) is
// refused, and the witness keeps and states both checkpoints; so is another root for the
// size it cosigned. Its state is unchanged and survives a restart.
func TestWitnessCatchesAForkAndRemembersAcrossRestarts(t *testing.T) {
	log := newTestLog(t)
	f := newFixture(t, log)
	log.grow(3, "common")
	if _, err := f.add(t, log.request(0)); err != nil {
		t.Fatal(err)
	}
	fork := &testLog{t: t, tree: testonly.New(rfc6962.DefaultHasher), signer: log.signer, key: log.key}
	fork.grow(3, "common") // the copy of the directory
	log.grow(2, "honest")
	if _, err := f.add(t, log.request(3)); err != nil {
		t.Fatal(err)
	}
	honest := log.checkpoint()

	fork.grow(4, "rewritten")
	_, err := f.add(t, fork.request(5))
	var refused *witness.RefusedError
	if !errors.As(err, &refused) || refused.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(refused.Message, string(honest)) || !strings.Contains(refused.Message, strings.TrimSpace(string(fork.checkpoint()))) {
		t.Fatalf("the fork: %v; want 422 stating both checkpoints", err)
	}
	same := &testLog{t: t, tree: testonly.New(rfc6962.DefaultHasher), signer: log.signer, key: log.key}
	same.grow(5, "other")
	_, err = f.add(t, same.request(5))
	if !errors.As(err, &refused) || refused.Status != http.StatusConflict || !strings.Contains(refused.Message, "same size") {
		t.Fatalf("another root at the cosigned size: %v; want 409 split view", err)
	}
	cs, err := f.w.Conflicts(context.Background(), origin)
	if err != nil || len(cs) != 2 || cs[0].Cosigned != string(honest) || cs[0].Offered != string(fork.checkpoint()) {
		t.Fatalf("evidence: %+v, %v", cs, err)
	}
	// Offered again, the evidence is not kept twice.
	_, _ = f.add(t, fork.request(5))
	if cs, _ := f.w.Conflicts(context.Background(), origin); len(cs) != 2 {
		t.Fatalf("evidence kept twice: %d", len(cs))
	}

	// Restart: the witness remembers size 5, so a log restored from the copy is refused.
	if err := f.w.Close(); err != nil {
		t.Fatal(err)
	}
	skey, _, _ := witness.GenerateSignerKey("member-a.example/witness", rand.Reader) // any key: the state is what counts
	c, _ := witness.ParseSignerKey(skey)
	f.w = f.open(t, c)
	if size, ok := witness.IsConflict(func() error { _, err := f.add(t, fork.request(0)); return err }()); !ok || size != 5 {
		t.Fatalf("after a restart, a request from 0: %d %v; want the size 5 it cosigned", size, ok)
	}
	latest, ok, err := f.w.Latest(context.Background(), origin)
	if err != nil || !ok || !strings.HasPrefix(string(latest), string(honest)) {
		t.Fatalf("latest after restart: %q %v %v", latest, ok, err)
	}
}

// Requests that race from one old size: exactly one is cosigned, the rest are told the
// new size; a second witness process on the same state file sees the same state.
func TestWitnessUpdatesAtomically(t *testing.T) {
	log := newTestLog(t)
	f := newFixture(t, log)
	log.grow(5, "base")
	if _, err := f.add(t, log.request(0)); err != nil {
		t.Fatal(err)
	}
	var reqs []*witness.AddCheckpoint
	for range 16 {
		log.grow(1, "race")
		reqs = append(reqs, log.request(5))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for _, r := range reqs {
		wg.Go(func() {
			_, err := f.add(t, r)
			if _, conflict := witness.IsConflict(err); err != nil && !conflict {
				t.Errorf("racing request: %v", err)
			}
			mu.Lock()
			ok += map[bool]int{true: 1}[err == nil]
			mu.Unlock()
		})
	}
	wg.Wait()
	if ok != 1 {
		t.Fatalf("%d racing requests from size 5 were cosigned, want 1", ok)
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	c, _ := witness.NewCosigner("second.example/w", priv)
	second := f.open(t, c)
	a, b := mustLatest(t, f.w), mustLatest(t, second)
	if a != b {
		t.Fatalf("two processes on one state disagree:\n%s\n%s", a, b)
	}
}

func mustLatest(t *testing.T, w *witnessd.Witness) string {
	t.Helper()
	n, ok, err := w.Latest(context.Background(), origin)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	body, _, _ := strings.Cut(string(n), "\n\n")
	return body
}
