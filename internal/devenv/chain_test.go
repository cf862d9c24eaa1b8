package devenv

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadChainMakesItsFilesOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".cairn-dev")
	first, err := LoadChain(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Secret) != chainSecretBytes || first.DB != filepath.Join(dir, ChainDBFile) || first.Key == nil {
		t.Fatalf("LoadChain: %+v", first)
	}
	for _, name := range []string{ChainSecretFile, OperatorKeyFile} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v", name, err, fi.Mode())
		}
	}
	again, err := LoadChain(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Secret, first.Secret) || !again.Key.Equal(first.Key) {
		t.Error("a second start made a new secret or key")
	}
	other, err := LoadChain(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(other.Secret, first.Secret) {
		t.Error("two state directories got the same secret")
	}
}

func TestLoadChainRefusesABrokenSecret(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ChainSecretFile), []byte("not hex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadChain(dir); err == nil || !strings.Contains(err.Error(), "not hex") {
		t.Fatalf("LoadChain with a broken secret: %v", err)
	}
}
