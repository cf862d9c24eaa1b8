package witness

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	pw "github.com/cairn-dev/cairn/pkg/witness"
)

func root() *cobra.Command { return cmdutil.NewRoot("cairn", "test", NewCommand()) }

func TestKeygenWritesAKeyOnceAndPrintsItsVerifierKey(t *testing.T) {
	key := filepath.Join(t.TempDir(), "w.key")
	out, err := cmdtest.Run(t, root(), "witness", "keygen", "--name", "w.member.example", "--key", key)
	if err != nil {
		t.Fatal(err, out)
	}
	k, err := pw.ParseKey(strings.TrimSpace(out))
	if err != nil || k.Name != "w.member.example" {
		t.Fatalf("keygen printed %q: %v", out, err)
	}
	info, err := os.Stat(key)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", info, err)
	}
	raw, _ := os.ReadFile(key)
	c, err := pw.ParseSignerKey(string(raw))
	if err != nil || c.Key().String() != k.String() {
		t.Fatalf("the key file is not the printed key's: %v", err)
	}
	if _, err := cmdtest.Run(t, root(), "witness", "keygen", "--name", "w.member.example", "--key", key); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("a second keygen over the key: %v", err)
	}
	again, _ := os.ReadFile(key)
	if string(again) != string(raw) {
		t.Fatal("a refused keygen changed the key")
	}
}

func TestServeRefusesBadArguments(t *testing.T) {
	_, logVkey, err := note.GenerateKey(rand.Reader, "cairn.test/log")
	if err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"no log":         {"witness", "serve"},
		"not a log key":  {"witness", "serve", "--log", "bogus"},
		"a witness key":  {"witness", "serve", "--log", "w+00000000+BAAA"},
		"bad address":    {"witness", "serve", "--log", logVkey, "--addr", "8480"},
		"no such option": {"witness", "serve", "--lgo", logVkey},
	} {
		_, err := cmdtest.Run(t, root(), args...)
		if code := cmdutil.ExitCode(err); code != cmdutil.ExitUsage && !strings.Contains(name, "option") {
			t.Errorf("%s: exit %d (%v), want %d", name, code, err, cmdutil.ExitUsage)
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A missing key file is said as such.
	_, err = cmdtest.Run(t, root(), "witness", "serve", "--log", logVkey, "--key", filepath.Join(t.TempDir(), "none"), "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "cairn witness keygen") {
		t.Fatalf("serve without a key: %v", err)
	}
}
