package client

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// testKey returns the Ed25519 key of seed byte b.
func testKey(b byte) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte{b})
	return ed25519.NewKeyFromSeed(seed[:])
}

// testID is the operator ID of testKey(b).
func testID(b byte) string { return protocol.OperatorID(testKey(b).Public().(ed25519.PublicKey)) }

// fakeFederation is an httptest server that counts requests, checks every operator
// bearer token and answers with handler.
type fakeFederation struct {
	*httptest.Server
	t       *testing.T
	pub     ed25519.PublicKey // the operator key tokens must verify under
	opID    string            // the operator ID tokens must name
	now     func() time.Time  // the server's clock
	mu      sync.Mutex
	count   map[string]int // "METHOD path" -> requests
	tokens  []string       // every Authorization header, in order
	bodies  [][]byte       // every request body, in order
	handler func(w http.ResponseWriter, r *http.Request, body []byte)
}

// newFake starts a fake federation answering with h; tokens must be key's (op ID id).
func newFake(t *testing.T, key ed25519.PrivateKey, id string, h func(w http.ResponseWriter, r *http.Request, body []byte)) *fakeFederation {
	t.Helper()
	f := &fakeFederation{t: t, pub: key.Public().(ed25519.PublicKey), opID: id, now: time.Now, count: map[string]int{}, handler: h}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// serve records the request, verifies an operator token when the path needs one, and
// hands over to the handler.
func (f *fakeFederation) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("read the body: %v", err)
	}
	f.mu.Lock()
	f.count[r.Method+" "+r.URL.Path]++
	f.tokens = append(f.tokens, r.Header.Get("Authorization"))
	f.bodies = append(f.bodies, body)
	f.mu.Unlock()
	if r.URL.Path == "/federation/submit" || r.URL.Path == "/federation/receipts" {
		if err := f.checkToken(r.Header.Get("Authorization"), body); err != nil {
			f.t.Errorf("%s %s: token: %v", r.Method, r.URL.Path, err)
			writeTestJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_token", "message": err.Error()})
			return
		}
	}
	f.handler(w, r, body)
}

// checkToken is the server's check: shape, signature under the operator's key, the ID
// it names, and a body nonce binding body, fresh on the server's clock.
func (f *fakeFederation) checkToken(header string, body []byte) error {
	tok, err := protocol.ParseToken(header)
	if err != nil {
		return err
	}
	if tok.OperatorID != f.opID {
		return &APIError{Message: "token names " + tok.OperatorID + ", want " + f.opID}
	}
	// Verify binds the ID to the key; a rotated operator's ID is not its key's.
	check := *tok
	check.OperatorID = protocol.OperatorID(f.pub)
	if err := check.Verify(f.pub); err != nil {
		return err
	}
	return tok.CheckBodyNonce(f.now(), body, protocol.TokenMaxAge)
}

// requests returns how many requests "METHOD path" got.
func (f *fakeFederation) requests(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[key]
}

// total returns how many requests the server got.
func (f *fakeFederation) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.count {
		n += c
	}
	return n
}

// writeTestJSON answers v as JSON with status.
func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// newTestClient returns a client of f acting as operator key (ID id), retrying up to 3
// attempts, whose waits are recorded in *waits instead of slept.
func newTestClient(t *testing.T, f *fakeFederation, key ed25519.PrivateKey, id string, waits *[]time.Duration, opts ...Option) *Client {
	t.Helper()
	all := append([]Option{WithOperator(id, key), WithRetry(3, 10*time.Millisecond), WithAdminToken("admin-secret")}, opts...)
	c, err := New(f.URL, all...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var mu sync.Mutex
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		if waits != nil {
			*waits = append(*waits, d)
		}
		mu.Unlock()
		return ctx.Err()
	}
	return c
}
