package devenv

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// etcdDBFile is etcd's database under the state directory; the etcd that serves it holds
// an exclusive flock on it for as long as it runs.
var etcdDBFile = filepath.Join("etcd", "member", "snap", "db")

// ErrEtcdInUse says that an etcd still runs on the state directory's data: one a `cairn
// dev` left running when it was killed. Starting another etcd on the same data would wait
// for its lock and time out, after a minute and a half of retries.
var ErrEtcdInUse = errors.New("etcd data in use")

// CheckEtcdFree returns an error wrapping ErrEtcdInUse, naming the etcd's pid when the
// system says it, if a process holds etcd's database in dir. It only tests the lock: it
// opens the database read-only and writes nothing to the directory.
func CheckEtcdFree(dir string) error {
	path := filepath.Join(dir, etcdDBFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no data yet: nothing can run on it
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("test the lock of %s: %w", path, err)
	}
	holder := "a process"
	if pid := lockHolder(f); pid > 0 {
		holder = "pid " + strconv.Itoa(pid)
	}
	return fmt.Errorf("%w: an etcd (%s) still runs on %s, left by a cairn dev that did not stop it: stop it (kill it, and the kube-apiserver left with it), then start again",
		ErrEtcdInUse, holder, filepath.Join(dir, "etcd"))
}

// lockHolder returns the pid that /proc/locks says holds a lock on f, 0 when it cannot
// tell (another system, or the file is gone).
func lockHolder(f *os.File) int {
	info, err := f.Stat()
	if err != nil {
		return 0
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer func() { _ = locks.Close() }()
	// "1: FLOCK  ADVISORY  WRITE 24920 00:3a:1234567 0 EOF": the pid, then
	// major:minor:inode of the file.
	inode := ":" + strconv.FormatUint(st.Ino, 10)
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" || !strings.HasSuffix(fields[5], inode) {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil {
			return pid
		}
	}
	return 0
}
