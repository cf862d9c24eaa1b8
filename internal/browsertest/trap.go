package browsertest

import (
	"fmt"
	"net"
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
	seen    []trapped
	dropped int
}

// trapped is one request a trap refused.
type trapped struct {
	what string // "CONNECT example.com:443", "GET example.invalid/y", "POST (service URL)/ListAccounts"
	host string // the host it was for, without a port; empty for a service URL
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

// describe names a request the trap received: its method, host and path as a proxy
// sees them, or, for a request sent to the trap's own address by a service flag, its
// method and path after "(service URL)".
func describe(r *http.Request) trapped {
	if r.Method != http.MethodConnect && r.URL.Host == "" {
		return trapped{what: r.Method + " (service URL)" + r.URL.Path}
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return trapped{what: r.Method + " " + r.Host + r.URL.Path, host: host}
}

// received returns what the trap refused, in order.
func (tr *trap) received() (seen []trapped, dropped int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.seen), tr.dropped
}

// requests returns what the trap refused as text, in order, and a last line counting
// those past maxTrapped.
func (tr *trap) requests() []string {
	seen, dropped := tr.received()
	lines := make([]string, 0, len(seen)+1)
	for _, s := range seen {
		lines = append(lines, s.what)
	}
	if dropped > 0 {
		lines = append(lines, fmt.Sprintf("... and %d more", dropped))
	}
	return lines
}
