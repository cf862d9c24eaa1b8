package api

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// codeHostNotAllowed is the error code of a request whose Host header the server does
// not answer to.
const codeHostNotAllowed = "host_not_allowed"

// hostOpenPaths are served whatever the Host header: they say nothing about the chain.
var hostOpenPaths = map[string]bool{"/health": true, "/api/health": true}

// NormalizeHost returns the host of a Host header or an allowed-hosts entry, without its
// port or IPv6 brackets, in lower case, without a final dot, and an IP address in its
// canonical form, so that "[::1]:8080" and "0:0::1" compare equal.
func NormalizeHost(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return h
}

// newHostSet returns the normalized set of hosts, or nil when there are none.
func newHostSet(hosts []string) map[string]bool {
	if len(hosts) == 0 {
		return nil
	}
	set := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		set[NormalizeHost(h)] = true
	}
	return set
}

// checkHost answers 421 with a JSON error to a request whose Host header names none of
// the allowed hosts (the port is not compared), except on the health routes. A web page
// that rebinds its own name to 127.0.0.1 sends its own name as Host, so it is refused:
// without this, any page a user opens could drive the service on loopback.
func (s *Server) checkHost(next http.Handler) http.Handler {
	if s.allowedHosts == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.allowedHosts[NormalizeHost(r.Host)] && !hostOpenPaths[r.URL.Path] {
			writeError(w, http.StatusMisdirectedRequest, codeHostNotAllowed,
				fmt.Sprintf("this server does not answer to host %s: add it to cairn serve --allowed-hosts", protocol.Quote(r.Host)))
			return
		}
		next.ServeHTTP(w, r)
	})
}
