package serve

import (
	"slices"
	"strings"
	"testing"
)

// TestCheckListen: the chain service refuses to listen beyond loopback without an API
// key (issue 14, hole 1). Nothing binds here: the validation alone is tested.
func TestCheckListen(t *testing.T) {
	tests := map[string]struct {
		addr, key string
		ok        bool
	}{
		"loopback v4":               {addr: "127.0.0.1:8080", ok: true},
		"loopback v6":               {addr: "[::1]:8080", ok: true},
		"localhost":                 {addr: "localhost:8080", ok: true},
		"all interfaces":            {addr: ":8080"},
		"all interfaces v4":         {addr: "0.0.0.0:8080"},
		"all interfaces v6":         {addr: "[::]:8080"},
		"a LAN address":             {addr: "192.168.1.5:8080"},
		"a name is not resolved":    {addr: "chain.internal:8080"},
		"all interfaces with a key": {addr: "0.0.0.0:8080", key: "k", ok: true},
		"a LAN address with a key":  {addr: "192.168.1.5:8080", key: "k", ok: true},
		"not host:port":             {addr: "8080"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckListen("--addr", tc.addr, tc.key)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckListen(%q, key %v) = %v, want ok %v", tc.addr, tc.key != "", err, tc.ok)
			}
		})
	}
}

func TestServeRefusesNonLoopbackWithoutKey(t *testing.T) {
	t.Setenv("CAIRN_API_KEY", "")
	_, err := runCairn(t, "serve", "--addr", "0.0.0.0:0", "--db", t.TempDir()+"/chain.db", "--secret-hex", testSecretHex)
	if err == nil || !strings.Contains(err.Error(), "without an API key") {
		t.Fatalf("cairn serve on 0.0.0.0 without a key: %v", err)
	}
}

func TestAllowedHosts(t *testing.T) {
	got, err := AllowedHosts("127.0.0.1:8080", []string{"chain.example", " proxy.internal "})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"localhost", "127.0.0.1", "::1", "chain.example", "proxy.internal"} {
		if !slices.Contains(got, want) {
			t.Errorf("allowedHosts = %q, want %q in it", got, want)
		}
	}
	if slices.Contains(got, "evil.example") {
		t.Errorf("allowedHosts = %q", got)
	}
	all, err := AllowedHosts(":8080", nil)
	if err != nil || !slices.Contains(all, "127.0.0.1") {
		t.Errorf("AllowedHosts(:8080) = %q, %v", all, err)
	}
	for _, bad := range []string{"*", "a/b", ""} {
		if _, err := AllowedHosts("127.0.0.1:8080", []string{bad}); err == nil {
			t.Errorf("allowedHosts accepted %q", bad)
		}
	}
}

func TestDialAddress(t *testing.T) {
	tests := map[string]string{
		":8081":          "127.0.0.1:8081",
		"0.0.0.0:8081":   "127.0.0.1:8081",
		"[::]:8081":      "127.0.0.1:8081",
		"127.0.0.1:9000": "127.0.0.1:9000",
		"localhost:9000": "localhost:9000",
	}
	for bind, want := range tests {
		if got := DialAddress(bind); got != want {
			t.Errorf("DialAddress(%q) = %q, want %q", bind, got, want)
		}
	}
}
