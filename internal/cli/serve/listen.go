package serve

import (
	"fmt"
	"net"
	"strings"
)

// CheckListen refuses to serve the chain beyond loopback without an API key: there, any
// host that can reach the port could read the chain, seal spans into it and have the
// server check HMACs for it. flag names the address flag in the message.
func CheckListen(flag, addr, apiKey string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: want host:port", flag, addr)
	}
	if apiKey != "" || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("%s %q listens beyond loopback without an API key: set CAIRN_API_KEY (or --api-key), or listen on 127.0.0.1", flag, addr)
}

// isLoopback reports whether host names only loopback addresses: "localhost" or a
// loopback IP. Other names are not resolved, so they count as beyond loopback.
func isLoopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// AllowedHosts is the Host headers the chain service answers to when it listens on
// addr: the loopback names, the listen host (every interface address when it listens
// on all of them), and extra (--allowed-hosts).
func AllowedHosts(addr string, extra []string) ([]string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		addrs, err := net.InterfaceAddrs()
		if err != nil {
			return nil, fmt.Errorf("list interface addresses: %w", err)
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				hosts = append(hosts, n.IP.String())
			}
		}
	} else {
		hosts = append(hosts, host)
	}
	for _, h := range extra {
		if h = strings.TrimSpace(h); h == "" || strings.ContainsAny(h, "/* ") {
			return nil, fmt.Errorf("--allowed-hosts: %q is not a host name or address", h)
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// DialAddress turns a bind address such as ":8081" into one a client can dial.
func DialAddress(bind string) string {
	host, port, err := net.SplitHostPort(bind)
	if err != nil || (host != "" && host != "0.0.0.0" && host != "::") {
		return bind
	}
	return net.JoinHostPort("127.0.0.1", port)
}
