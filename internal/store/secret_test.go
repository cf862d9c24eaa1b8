package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadSecret(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := strings.Repeat("5c", 32)
	goodFile := file("good", "\n  "+good+"\n")
	for _, c := range []struct {
		name, value, file string
		wantErr           string // "" for success
	}{
		{"value", good, "", ""},
		{"value wins over file", good, filepath.Join(dir, "missing"), ""},
		{"file, whitespace ignored", "", goodFile, ""},
		{"neither", "", "", "set CAIRN_HMAC_SECRET or give a secret file"},
		{"missing file", "", filepath.Join(dir, "missing"), "no such file"},
		{"empty file", "", file("empty", " \n"), "is empty"},
		{"not hex", strings.Repeat("zz", 16), "", "CAIRN_HMAC_SECRET is not hex"},
		{"odd length", good[:33], "", "not hex"},
		{"short value", strings.Repeat("ab", 15), "", "is 15 bytes, want at least 16"},
		{"short file", "", file("short", "abcd"), "secret file " + filepath.Join(dir, "short") + " is 2 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := LoadSecret(c.value, c.file)
			switch {
			case c.wantErr == "" && (err != nil || !bytes.Equal(got, testSecret)):
				t.Errorf("got %x, %v; want the test secret", got, err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("got %v, want an error containing %q", err, c.wantErr)
			case err != nil && strings.Contains(err.Error(), "zz"):
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}
