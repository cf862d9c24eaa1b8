package dev

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/devenv"
)

func TestDevChainService(t *testing.T) {
	var said []string
	say := func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }
	dir := filepath.Join(t.TempDir(), ".cairn-dev")
	o := newDevOptions()
	o.env.Dir, o.serveAddr, o.apiKey = dir, "127.0.0.1:0", "dev-key"

	url, stop := startDevChain(t.Context(), o, say)
	if url == "" {
		t.Fatalf("the chain service did not start: %v", said)
	}
	if status, _ := cmdtest.GetURL(t, url+"/api/chain", ""); status != http.StatusUnauthorized {
		t.Errorf("/api/chain without the key: %d", status)
	}
	// Exports are signed with the operator key kept in the state directory.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/api/export", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer dev-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusConflict { // signed, but the new chain is empty
		t.Errorf("export of the empty dev chain: %d, want 409 empty_chain", resp.StatusCode)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{devenv.ChainDBFile, devenv.ChainSecretFile, devenv.OperatorKeyFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was not kept: %v", name, err)
		}
	}

	// A taken port leaves dev running without the chain service, saying why.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	o.serveAddr = l.Addr().String()
	said = nil
	if url, stop := startDevChain(t.Context(), o, say); url != "" || stop() != nil {
		t.Fatalf("started on a taken port: %q", url)
	}
	if len(said) != 1 || !strings.Contains(said[0], "not started") || !strings.Contains(said[0], "--serve-addr") {
		t.Errorf("said %q", said)
	}

	// --serve-addr 0 runs none.
	o.serveAddr = "0"
	if url, _ := startDevChain(t.Context(), o, say); url != "" {
		t.Errorf("--serve-addr 0 started %s", url)
	}
}

func TestDevRejectsABadServeAddress(t *testing.T) {
	_, err := runCairn(t, "dev", "--assets", t.TempDir(), "--serve-addr", "8080")
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "--serve-addr") {
		t.Fatalf("cairn dev --serve-addr 8080: %v", err)
	}
}
