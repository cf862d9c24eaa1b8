package dev

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLockDevDir checks that a second cairn dev in one state directory is refused at
// once, naming the first's pid, and that the directory is free again once the first
// releases it.
func TestLockDevDir(t *testing.T) {
	dir := t.TempDir() + "/state"
	release, err := lockDevDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockDevDir(dir); err == nil || !strings.Contains(err.Error(), "another cairn dev (pid "+strconv.Itoa(os.Getpid())+")") {
		t.Fatalf("a second lock: %v, want a refusal naming this pid", err)
	}
	release()
	again, err := lockDevDir(dir)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	again()
}
