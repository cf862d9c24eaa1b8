// Package testaddr hands tests loopback addresses for processes they start on a fixed
// port (cairn dev, the manager): addresses that nothing listens on and that the kernel
// will not hand to anyone else while the process starts.
//
// An address from a listener on port 0 is free only until that listener closes: the
// kernel draws the ports of every later port-0 listener and every outgoing connection
// from the same ephemeral range, so on a busy machine a parallel test's API server or
// a client's connection can take it before the process binds it. The ports here come
// from below that range, where only tests like these ever bind.
package testaddr

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// span is how many ports below the ephemeral range the addresses are drawn from.
const span = 12000

// Free returns n distinct loopback addresses that nothing listens on now, outside the
// kernel's ephemeral port range.
func Free(t testing.TB, n int) []string {
	t.Helper()
	low, high := portRange()
	var addrs []string
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for attempts := 0; len(addrs) < n; attempts++ {
		if attempts > 1000 {
			t.Fatalf("testaddr: no free loopback port in %d..%d after %d attempts", low, high, attempts)
		}
		port := low + rand.IntN(high-low)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		held = append(held, l)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}

// portRange is the span of ports just below the kernel's ephemeral range, or below
// Linux's default range where the kernel does not say.
func portRange() (low, high int) {
	high = 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var first, last int
		if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &first, &last); err == nil && first > span+1024 {
			high = first
		}
	}
	return high - span, high
}
