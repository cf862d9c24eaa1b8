package browsertest

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
)

// maxTrapped bounds what a trap remembers; it counts the requests past it.
const maxTrapped = 200

// trap is a proxy that lets nothing through: it records what arrives (plain HTTP
// requests, HTTPS and WebSocket CONNECTs, and requests sent to it directly by a service
// URL that points here) and refuses each with a 403, so nothing leaves the machine.
type trap struct {
	mu      sync.Mutex
	seen    []string
	dropped int
}

func (tr *trap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tr.mu.Lock()
	if len(tr.seen) < maxTrapped {
		tr.seen = append(tr.seen, describe(r))
	} else {
		tr.dropped++
	}
	tr.mu.Unlock()
	http.Error(w, "browser tests allow no network but loopback", http.StatusForbidden)
}

// requests returns what the trap received, in order, and a last line counting those
// past maxTrapped.
func (tr *trap) requests() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	seen := slices.Clone(tr.seen)
	if tr.dropped > 0 {
		seen = append(seen, fmt.Sprintf("... and %d more", tr.dropped))
	}
	return seen
}

// describe names a request the trap received: its method, host and path as a proxy
// sees them, or, for a request sent to the trap's own address by a service flag, its
// method and path after "(service URL)".
func describe(r *http.Request) string {
	if r.Method != http.MethodConnect && r.URL.Host == "" {
		return r.Method + " (service URL)" + r.URL.Path
	}
	return r.Method + " " + r.Host + r.URL.Path
}
