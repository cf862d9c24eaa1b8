package browsertest

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// logged holds the artifact directories already logged, so each is logged once.
var logged sync.Map

// ArtifactsDir returns the directory for the test's artifacts (screenshots), creating
// it: root/<test name> (Settings.ArtifactsRoot), or <os.TempDir()>/cairn-artifacts/<test
// name> when root is empty, the name made safe for a path. It is kept
// after the test so people can look; its path is logged once per test.
func ArtifactsDir(t testing.TB, root string) string {
	t.Helper()
	if root == "" {
		root = filepath.Join(os.TempDir(), "cairn-artifacts")
	}
	dir := filepath.Join(root, sanitize(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts directory: %v", err)
	}
	if _, seen := logged.LoadOrStore(dir, true); !seen {
		t.Logf("artifacts in %s", dir)
	}
	return dir
}

// sanitize keeps letters, digits, '.', '-' and '_' and turns anything else (the '/' of
// subtests, spaces) into '_'.
func sanitize(name string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, name)
	if strings.Trim(s, ".") == "" {
		return "_"
	}
	return s
}
