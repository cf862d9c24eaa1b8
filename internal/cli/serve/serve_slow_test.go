package serve

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/api"
	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/slowloris"
)

// TestServeCutsOffSlowClients serves the chain service with short timeouts and attacks
// it: slowloris headers (a byte at a time, never ending) and bodies trickled to
// /v1/traces and /api/export/verify are cut off by the read-header and read timeouts, an
// idle keep-alive connection by the idle timeout, while other clients are served.
func TestServeCutsOffSlowClients(t *testing.T) {
	secret, err := hex.DecodeString(testSecretHex)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := OpenChainService(filepath.Join(t.TempDir(), "chain.db"), secret, api.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc.timeouts = serverTimeouts{readHeader: time.Second, read: 2 * time.Second, write: 4 * time.Second, idle: 2 * time.Second}
	ctx, cancel := context.WithCancel(t.Context())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, "127.0.0.1:0", func(url string) { urls <- url }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("serve ended before it listened: %v", err)
	}
	served := func() error {
		status, body := cmdtest.GetURL(t, url+"/api/chain/stats", "")
		if status != http.StatusOK {
			return fmt.Errorf("GET /api/chain/stats: %d %s", status, body)
		}
		return nil
	}
	for _, post := range []struct{ path, contentType string }{
		{"/v1/traces", "application/x-protobuf"},
		{"/api/export/verify", "application/json"},
	} {
		t.Run(strings.TrimPrefix(post.path, "/"), func(t *testing.T) {
			err := slowloris.Run(slowloris.Target{Addr: strings.TrimPrefix(url, "http://"), GetPath: "/health",
				PostPath: post.path, ContentType: post.contentType,
				ReadHeaderTimeout: svc.timeouts.readHeader, ReadTimeout: svc.timeouts.read, IdleTimeout: svc.timeouts.idle,
				Served: served})
			if err != nil {
				t.Error(err)
			}
		})
	}
	if err := served(); err != nil {
		t.Errorf("after the attack: %v", err)
	}
}
