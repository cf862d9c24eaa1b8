package chain

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// TestVerifyExportHeaderOnlySecretSaysWhatItChecked is hole 8 of issue 14: verify-export
// of a header-only export with only the secret checks chain_signature (over
// last_hmac_hash and entry_count) and nothing else the caller trusts, so it must not say
// "valid" or "HMACs checked: true", and must name the members nothing authenticated.
func TestVerifyExportHeaderOnlySecretSaysWhatItChecked(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	if out, err := runCairn(t, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 5), "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
	keys := filepath.Join(dir, "keys")
	if _, err := runCairn(t, "keygen", "--output-dir", keys); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "header.json")
	if out, err := runCairn(t, "export", "--sign-key", filepath.Join(keys, "private.pem"), "--header-only", "--output", export,
		"--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	out, err := runCairn(t, "verify-export", export, "--secret-hex", testSecretHex)
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitOK {
		t.Fatalf("exit %d, want %d (%v)\n%s", code, cmdutil.ExitOK, err, out)
	}
	for _, bad := range []string{"valid", "HMACs checked: true"} {
		if strings.Contains(out, bad) {
			t.Errorf("output says %q for a header-only export checked with the secret only:\n%s", bad, out)
		}
	}
	for _, want := range []string{"chain_signature checked: true",
		"not authenticated: exported_at, first_seq, first_prev_hash, entries_root"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// With the public key as well, every member is authenticated and the verdict is valid.
	out, err = runCairn(t, "verify-export", export, "--secret-hex", testSecretHex, "--public-key", filepath.Join(keys, "public.pem"))
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitOK || !strings.HasPrefix(out, "valid: ") || strings.Contains(out, "not authenticated") {
		t.Errorf("with both: exit %d (%v)\n%s", code, err, out)
	}
}
