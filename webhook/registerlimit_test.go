package webhook

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestRegistrationLimiterWindowSlides(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)}
	l := newRegistrationLimiter(3, time.Hour, clock.now)
	for i := range 3 {
		if _, _, ok := l.reserve("198.51.100.7"); !ok {
			t.Fatalf("registration %d refused under the limit", i+1)
		}
		clock.t = clock.t.Add(10 * time.Minute)
	}
	// 06:30: the charges are 06:00, 06:10, 06:20.
	if _, wait, ok := l.reserve("198.51.100.7"); ok || wait != 30*time.Minute {
		t.Fatalf("4th registration at 06:30: ok %v, wait %s; want refused, 30m until 06:00's charge leaves the window", ok, wait)
	}
	if _, _, ok := l.reserve("198.51.100.8"); !ok {
		t.Fatal("another address was refused")
	}
	clock.t = clock.t.Add(30*time.Minute + time.Nanosecond)
	if _, _, ok := l.reserve("198.51.100.7"); !ok {
		t.Fatal("refused once the oldest charge left the window")
	}
	if _, wait, ok := l.reserve("198.51.100.7"); ok || wait != 10*time.Minute-time.Nanosecond {
		t.Fatalf("at the limit again: ok %v, wait %s", ok, wait)
	}
}

func TestRegistrationLimiterReleaseGivesTheChargeBack(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	l := newRegistrationLimiter(2, time.Hour, clock.now)
	for range 10 { // failed attempts: each given back
		release, _, ok := l.reserve("2001:db8::/64")
		if !ok {
			t.Fatal("a failed attempt's charge was not given back")
		}
		release()
		release() // twice does nothing more
	}
	if n := l.size(); n != 0 {
		t.Fatalf("%d keys remembered after every charge was given back, want 0", n)
	}
	keep, _, _ := l.reserve("a")
	_, _, _ = l.reserve("a")
	if _, _, ok := l.reserve("a"); ok {
		t.Fatal("past the limit")
	}
	keep()
	if _, _, ok := l.reserve("a"); !ok {
		t.Fatal("a released charge still counted")
	}
}

func TestRegistrationLimiterMemoryIsBounded(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	l := newRegistrationLimiter(DefaultRegistrationLimit, time.Hour, clock.now)
	for i := range 5 * maxRegistrationAddresses {
		if _, _, ok := l.reserve(fmt.Sprintf("key-%d", i)); !ok {
			t.Fatalf("a new key was refused")
		}
		if n := l.size(); n > maxRegistrationAddresses {
			t.Fatalf("%d keys remembered, want at most %d", n, maxRegistrationAddresses)
		}
	}
	// The oldest went first: the last maxRegistrationAddresses keys are still charged.
	last := fmt.Sprintf("key-%d", 5*maxRegistrationAddresses-1)
	for range DefaultRegistrationLimit - 1 {
		if _, _, ok := l.reserve(last); !ok {
			t.Fatal("the newest key was forgotten")
		}
	}
	if _, _, ok := l.reserve(last); ok {
		t.Fatal("the newest key's first charge was forgotten")
	}
}

func TestAddressKey(t *testing.T) {
	tests := map[string]struct{ a, b string }{
		"IPv4":                     {"198.51.100.7", "198.51.100.7"},
		"IPv4-mapped IPv6":         {"::ffff:198.51.100.7", "198.51.100.7"},
		"one IPv6 /64":             {"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"},
		"an IPv6 zone":             {"fe80::1%eth0", "fe80::2"},
		"not an address, as it is": {"@", "@"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if a, b := addressKey(tc.a), addressKey(tc.b); a != b {
				t.Errorf("%s keyed %q, %s keyed %q: want one key", tc.a, a, tc.b, b)
			}
		})
	}
	if a, b := addressKey("2001:db8:1:2::1"), addressKey("2001:db8:1:3::1"); a == b {
		t.Errorf("two /64s share the key %q", a)
	}
	if a, b := addressKey("198.51.100.7"), addressKey("198.51.100.8"); a == b {
		t.Errorf("two IPv4 addresses share the key %q", a)
	}
}

func TestClientAddress(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	tests := map[string]struct {
		trusted []netip.Prefix
		remote  string
		xff     []string
		want    string
	}{
		"no proxies: the connection's, whatever the header": {remote: "203.0.113.9:5555", xff: []string{"198.51.100.1"}, want: "203.0.113.9"},
		"an untrusted peer cannot choose its address":       {trusted: proxies, remote: "203.0.113.9:5555", xff: []string{"198.51.100.1"}, want: "203.0.113.9"},
		"behind one proxy": {trusted: proxies, remote: "10.1.2.3:80", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		"a client's own header left of the proxy's hop": {trusted: proxies, remote: "10.1.2.3:80", xff: []string{"1.2.3.4, 198.51.100.1"}, want: "198.51.100.1"},
		"two proxies, two headers":                      {trusted: proxies, remote: "10.1.2.3:80", xff: []string{"1.2.3.4", "198.51.100.1, 10.9.9.9"}, want: "198.51.100.1"},
		"a hop with a port":                             {trusted: proxies, remote: "[fd00::1]:80", xff: []string{"198.51.100.1:4711"}, want: "198.51.100.1"},
		"IPv6 hop":                                      {trusted: proxies, remote: "10.1.2.3:80", xff: []string{"2001:db8::7"}, want: "2001:db8::7"},
		"a malformed hop: the proxy's":                  {trusted: proxies, remote: "10.1.2.3:80", xff: []string{"198.51.100.1, unknown"}, want: "10.1.2.3"},
		"no header: the proxy's":                        {trusted: proxies, remote: "10.1.2.3:80", want: "10.1.2.3"},
		"only proxies: the proxy's":                     {trusted: proxies, remote: "10.1.2.3:80", xff: []string{"10.4.4.4"}, want: "10.1.2.3"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := &Server{trustedProxies: tc.trusted}
			r := httptest.NewRequest(http.MethodPost, "/federation/register", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.clientAddress(r); got != tc.want {
				t.Errorf("client address %q, want %q", got, tc.want)
			}
		})
	}
}
