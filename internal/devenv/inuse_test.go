package devenv

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestCheckEtcdFree: a database another open file holds locked, as a running etcd does,
// is in use, named with the holder's pid; once unlocked it is free, and no data is free.
func TestCheckEtcdFree(t *testing.T) {
	dir := t.TempDir()
	if err := CheckEtcdFree(dir); err != nil {
		t.Fatalf("no data: %v", err)
	}
	path := filepath.Join(dir, etcdDBFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("db"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	holder, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Close() }()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	err = CheckEtcdFree(dir)
	if !errors.Is(err, ErrEtcdInUse) {
		t.Fatalf("a locked database: %v, want ErrEtcdInUse", err)
	}
	if _, statErr := os.Stat("/proc/locks"); statErr == nil && !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("%v does not name this pid", err)
	}
	after, _ := os.Stat(path)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Error("the check changed the database's mtime")
	}
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := CheckEtcdFree(dir); err != nil {
		t.Fatalf("after the unlock: %v", err)
	}
}
