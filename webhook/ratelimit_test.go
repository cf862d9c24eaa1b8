package webhook

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// An attacker with many addresses (an IPv6 /64 holds 2^64) must neither grow the limiter
// past its bound nor make each new address cost a walk over every bucket.
func TestLimiterHoldsAtMostItsBoundOfBuckets(t *testing.T) {
	now := time.Unix(1795262401, 0)
	l := newAddressLimiter(1, 1, func() time.Time { return now })
	for i := range maxAddresses + 5000 {
		if _, ok := l.allow(fmt.Sprintf("198.51.%d.%d", i/256, i%256)); !ok {
			t.Fatalf("address %d refused on its first request", i)
		}
	}
	if n := l.len(); n > maxAddresses {
		t.Fatalf("the limiter holds %d buckets after %d busy addresses, bound %d", n, maxAddresses+5000, maxAddresses)
	}
}

// The bucket forgotten first is the one seen longest ago: a client that keeps asking keeps
// its (empty) bucket while a flood of new addresses passes.
func TestLimiterForgetsTheLeastRecentlySeen(t *testing.T) {
	now := time.Unix(1795262401, 0)
	l := newAddressLimiter(0.001, 1, func() time.Time { return now })
	if _, ok := l.allow("203.0.113.7"); !ok {
		t.Fatal("first request refused")
	}
	for i := range 3 * maxAddresses {
		if i%1000 == 0 {
			if _, ok := l.allow("203.0.113.7"); ok {
				t.Fatalf("after %d other addresses the busy client's bucket was forgotten and refilled", i)
			}
		}
		l.allow(fmt.Sprintf("198.51.%d.%d/%d", i/256%256, i%256, i))
	}
}

func TestAddressKeyGroupsAnIPv6Slash64(t *testing.T) {
	a, b := "2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"
	if addressKey(a) != addressKey(b) {
		t.Fatalf("%s and %s, one /64, have keys %q and %q", a, b, addressKey(a), addressKey(b))
	}
	if addressKey("2001:db8:1:3::1") == addressKey(a) {
		t.Fatal("two /64s share a key")
	}
	if _, err := netip.ParsePrefix(addressKey(a)); err != nil {
		t.Fatalf("key %q: %v", addressKey(a), err)
	}
	if addressKey("192.0.2.1") == addressKey("192.0.2.2") {
		t.Fatal("two IPv4 addresses share a key")
	}
}

// Every address of one IPv6 /64 draws on one bucket of the per-address limit.
var _ = Describe("The per-address limit", func() {
	It("counts the addresses of one IPv6 /64 as one client", func() {
		s := submitServer(Options{RatePerSecond: 0.001, RateBurst: 2})
		var codes []int
		for i := range 3 {
			codes = append(codes, doFrom(s, fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1), http.MethodGet, "/federation/status", nil).status)
		}
		Expect(codes[2]).To(Equal(http.StatusTooManyRequests), "answers %v", codes)
		Expect(doFrom(s, "[2001:db8:1:3::1]:443", http.MethodGet, "/federation/status", nil).status).NotTo(Equal(http.StatusTooManyRequests), "another /64 has its own bucket")
	})
})
