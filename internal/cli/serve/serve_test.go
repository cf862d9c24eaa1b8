package serve

import (
	"context"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/api"
	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/cli/keygen"
)

func TestChainServiceServesUntilCanceled(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	if _, err := runCairn(t, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 4), "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatal(err)
	}
	secret, err := hex.DecodeString(testSecretHex)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := OpenChainService(db, secret, api.Options{APIKey: "the-key"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, "127.0.0.1:0", func(url string) { urls <- url }) }()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("serve ended before it listened: %v", err)
	}
	if status, body := cmdtest.GetURL(t, url+"/health", ""); status != http.StatusOK || !strings.Contains(body, `"db_exists":true`) {
		t.Errorf("/health: %d %s", status, body)
	}
	if status, _ := cmdtest.GetURL(t, url+"/api/chain", ""); status != http.StatusUnauthorized {
		t.Errorf("/api/chain without the key: %d", status)
	}
	if status, body := cmdtest.GetURL(t, url+"/api/chain", "the-key"); status != http.StatusOK || !strings.Contains(body, `"total":4`) {
		t.Errorf("/api/chain: %d %s", status, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop after its context was canceled")
	}
	if resp, err := http.Get(url + "/health"); err == nil {
		_ = resp.Body.Close()
		t.Error("the server still answers after shutting down")
	}
}

func TestServeHelpListsItsEnvironment(t *testing.T) {
	out, err := runCairn(t, "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"CAIRN_API_KEY", "CAIRN_REGION", "CAIRN_POLICY_RULES", "CAIRN_CONSENSUS_URL",
		"CAIRN_CONSENSUS_API_KEY", "CAIRN_CONSENSUS_MODELS"} {
		if !strings.Contains(out, v) {
			t.Errorf("cairn serve --help does not list %s", v)
		}
	}
}

func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	emptyRules := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(emptyRules, []byte("rules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Without the secret, or with a bad address, key, rule file or consensus flags,
	// serve refuses to start.
	tests := map[string]struct {
		args []string
		code int
		want string
	}{
		"no secret":          {args: []string{"serve", "--db", db}, code: cmdutil.ExitUsage, want: "CAIRN_HMAC_SECRET"},
		"bad address":        {args: []string{"serve", "--db", db, "--secret-hex", testSecretHex, "--addr", "8080"}, code: cmdutil.ExitUsage, want: "host:port"},
		"missing sign key":   {args: []string{"serve", "--db", db, "--secret-hex", testSecretHex, "--sign-key", filepath.Join(dir, "nope.pem")}, code: cmdutil.ExitError, want: "signing key"},
		"key with a newline": {args: []string{"serve", "--db", db, "--secret-hex", testSecretHex, "--api-key", "k\n"}, code: cmdutil.ExitUsage, want: "white space"},
		"models without a URL": {args: []string{"serve", "--db", db, "--secret-hex", testSecretHex, "--consensus-models", "a,b"},
			code: cmdutil.ExitUsage, want: "need --consensus-url"},
		"a key without a URL": {args: []string{"serve", "--db", db, "--secret-hex", testSecretHex, "--consensus-api-key", "k"},
			code: cmdutil.ExitUsage, want: "need --consensus-url"},
		"a consensus URL that is not http": {args: []string{"serve", "--db", db, "--secret-hex", testSecretHex, "--consensus-url", "ftp://models.test/v1"},
			code: cmdutil.ExitUsage, want: "--consensus-url"},
		"one default model": {args: []string{"serve", "--db", db, "--secret-hex", testSecretHex, "--consensus-url", "http://127.0.0.1:9/v1", "--consensus-models", "a"},
			code: cmdutil.ExitUsage, want: "default consensus models"},
		"a missing rule file": {args: []string{"serve", "--db", db, "--secret-hex", testSecretHex, "--policy-rules", filepath.Join(dir, "nope.yaml")},
			code: cmdutil.ExitError, want: "--policy-rules"},
		"an empty rule file": {args: []string{"serve", "--db", db, "--secret-hex", testSecretHex, "--policy-rules", emptyRules},
			code: cmdutil.ExitError, want: "no rules"},
		"a long region": {args: []string{"serve", "--db", db, "--secret-hex", testSecretHex, "--region", strings.Repeat("r", 300)},
			code: cmdutil.ExitUsage, want: "default region"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runCairn(t, tc.args...)
			if cmdutil.ExitCode(err) != tc.code || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("exit %d (%v), want %d and %q", cmdutil.ExitCode(err), err, tc.code, tc.want)
			}
		})
	}

	// It serves on the address given, with the signing key, until its context ends.
	keys := filepath.Join(dir, "keys")
	if _, err := runCairn(t, "keygen", "--output-dir", keys); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	base, done := startServe(t, ctx, "--db", db, "--secret-hex", testSecretHex, "--sign-key", filepath.Join(keys, keygen.PrivateKeyFile))
	if status, body := cmdtest.GetURL(t, base+"/docs", ""); status != http.StatusOK || !strings.Contains(body, "<html") {
		t.Errorf("/docs: %d", status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("cairn serve after cancel: %v", err)
	}
}
