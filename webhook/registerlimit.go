package webhook

import (
	"container/list"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// The per-address registration limit. Registration needs no account, so without a limit
// one address registers as many operators as it can sign keys for (one registered ~2,000
// in minutes). POST /federation/register charges each registration to its client
// address before checking it, and gives the charge back when the registration fails
// before the FederationOperator is created; past Limit registrations in Window the
// answer is 429 registration_rate_limited with Retry-After, the time until the oldest
// charge leaves the window. The window slides: no address has more than Limit charges
// in any Window.
//
// An IPv4 address is its own key; an IPv6 address is keyed by its /64, the block one
// subscriber is usually given, so that walking through one's own /64 gains nothing.
// The limiter remembers at most maxRegistrationAddresses keys, each at most Limit times:
// bounded in total whatever the traffic. Past that many, the key charged least recently
// is forgotten. An attacker who wants its own key forgotten must first have that many
// other keys charged, each with a registration of its own, so eviction gains it at most
// Limit registrations per maxRegistrationAddresses registrations made elsewhere.
//
// The client address is the connection's (RemoteAddr). Behind a reverse proxy that would
// make every client one address; Options.TrustedProxies names the proxies whose
// X-Forwarded-For is read: from the right, the first address that is not a trusted
// proxy's is the client's. A request from any other address is keyed by its own
// address, whatever headers it sends.

// Defaults and bounds of the registration limit.
const (
	// DefaultRegistrationLimit is how many registrations one address may make in
	// DefaultRegistrationWindow: an organization registers once, and an office behind one
	// NAT rarely registers ten organizations in an hour; the limit caps one address at
	// 240 operators a day.
	DefaultRegistrationLimit = 10
	// DefaultRegistrationWindow is the window of DefaultRegistrationLimit.
	DefaultRegistrationWindow = time.Hour
	// MaxRegistrationLimit bounds Options.RegistrationLimit, and with it the limiter's
	// memory: maxRegistrationAddresses keys of at most this many times each.
	MaxRegistrationLimit = 100
	// MaxRegistrationWindow bounds Options.RegistrationWindow.
	MaxRegistrationWindow = 7 * 24 * time.Hour
	// maxRegistrationAddresses is how many keys the limiter remembers.
	maxRegistrationAddresses = 10000
)

// registrationLimiter is a sliding-window log of registrations per address key, with a
// fixed maximum of keys, the least recently charged forgotten first. It is safe for
// concurrent use.
type registrationLimiter struct {
	limit    int
	window   time.Duration
	capacity int
	now      func() time.Time

	mu   sync.Mutex
	keys map[string]*list.Element // of *chargedKey
	lru  *list.List               // front: charged least recently
}

// chargedKey is one key's charges, oldest first, as Unix nanoseconds.
type chargedKey struct {
	key   string
	times []int64
}

func newRegistrationLimiter(limit int, window time.Duration, now func() time.Time) *registrationLimiter {
	return &registrationLimiter{limit: limit, window: window, capacity: maxRegistrationAddresses, now: now,
		keys: map[string]*list.Element{}, lru: list.New()}
}

// reserve charges one registration to key. When key has limit charges in the window it
// charges nothing and returns how long until the oldest leaves it. release gives the
// charge back; it may be called once, and does nothing once the key was forgotten.
func (l *registrationLimiter) reserve(key string) (release func(), wait time.Duration, ok bool) {
	now := l.now().UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	var k *chargedKey
	if el := l.keys[key]; el != nil {
		k = el.Value.(*chargedKey)
		k.expire(now - int64(l.window))
		if len(k.times) >= l.limit {
			return nil, time.Duration(k.times[0] + int64(l.window) - now), false
		}
		l.lru.MoveToBack(el)
	} else {
		for len(l.keys) >= l.capacity {
			oldest := l.lru.Front()
			l.lru.Remove(oldest)
			delete(l.keys, oldest.Value.(*chargedKey).key)
		}
		k = &chargedKey{key: key}
		l.keys[key] = l.lru.PushBack(k)
	}
	k.times = append(k.times, now)
	var once sync.Once
	return func() { once.Do(func() { l.release(k, now) }) }, 0, true
}

// release removes the charge at of k, and k itself when it has none left.
func (l *registrationLimiter) release(k *chargedKey, at int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.keys[k.key]
	if el == nil || el.Value != k {
		return // forgotten meanwhile
	}
	for i := len(k.times) - 1; i >= 0; i-- {
		if k.times[i] == at {
			k.times = append(k.times[:i], k.times[i+1:]...)
			break
		}
	}
	if len(k.times) == 0 {
		l.lru.Remove(el)
		delete(l.keys, k.key)
	}
}

// size is how many keys the limiter remembers.
func (l *registrationLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// expire drops the charges made before since.
func (k *chargedKey) expire(since int64) {
	n := 0
	for n < len(k.times) && k.times[n] < since {
		n++
	}
	k.times = k.times[n:]
}

// addressKey is the limit's key of a client address without its port: an IPv4 address
// (an IPv4-mapped IPv6 one too) itself, an IPv6 address's /64; anything that does not
// parse as an address, itself.
func addressKey(host string) string {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return ip.String()
	}
	return p.String()
}

// clientAddress is the address r came from, without its port: the connection's, or, when
// the connection is a trusted proxy's, the first address from the right of
// X-Forwarded-For that is not a trusted proxy's. A hop that does not parse ends the walk
// at the proxy's own address: a malformed header shares the proxy's limit rather than
// choosing one.
func (s *Server) clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if len(s.trustedProxies) == 0 || !s.trustedProxy(host) {
		return host
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parseHop(hops[i])
		if !ok {
			return host
		}
		if !s.trustedProxy(hop.String()) {
			return hop.String()
		}
	}
	return host
}

// trustedProxy reports whether host is an address of Options.TrustedProxies.
func (s *Server) trustedProxy(host string) bool {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.WithZone("").Unmap()
	for _, p := range s.trustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// parseHop parses one X-Forwarded-For element: an address, or an address and a port.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip.WithZone("").Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().WithZone("").Unmap(), true
	}
	return netip.Addr{}, false
}
