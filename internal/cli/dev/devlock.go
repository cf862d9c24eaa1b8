package dev

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cairn-dev/cairn/internal/devenv"
)

// devLockFile is the file in the state directory that one `cairn dev` holds locked for as
// long as it runs.
const devLockFile = "dev.lock"

// lockDevDir takes the lock of the state directory dir, making it when absent, and
// returns the function that releases it. Two control planes on one etcd data directory
// would fight over it (the second waited on etcd, printing stack traces): a second
// `cairn dev` in the same directory says so at once, naming the first's pid and where it
// answers, and touches none of its files. So does one that finds an etcd left running on
// the directory's data by a cairn dev that was killed.
func lockDevDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, devLockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		pid, _ := os.ReadFile(path)
		return nil, fmt.Errorf("another cairn dev (pid %s) runs in %s%s", strings.TrimSpace(string(pid)), dir, describeRunningDev(dir))
	}
	// An etcd whose cairn dev was killed (kill -9) still holds the data: a second one
	// would wait on it for a minute and a half, then time out.
	if err := devenv.CheckEtcdFree(dir); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { _ = f.Close() }, nil
}
