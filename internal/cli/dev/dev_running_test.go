package dev

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clitest"
	"github.com/cairn-dev/cairn/internal/testaddr"
)

// freePort returns a loopback address nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	return testaddr.Free(t, 1)[0]
}

// devFiles lists every file and directory under dir with its mtime and size, so a test
// can say that nothing there was touched.
func devFiles(t *testing.T, dir string, skip func(string, fs.DirEntry) bool) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || skip(path, d) {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files[path] = fmt.Sprintf("%s %d", info.ModTime(), info.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// changedFiles lists what differs between two devFiles listings.
func changedFiles(before, after map[string]string) []string {
	var changed []string
	for path, was := range before {
		if now, ok := after[path]; !ok {
			changed = append(changed, path+" removed")
		} else if now != was {
			changed = append(changed, path+": "+was+" -> "+now)
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok {
			changed = append(changed, path+" created")
		}
	}
	return changed
}

// TestSecondDevInTheSameDirectory: a second cairn dev in a running one's directory is
// refused at once, saying where the first answers, and touches none of its files; the
// first still answers. Once the first is killed (kill -9) and its etcd left running, a
// new one says so at once instead of waiting 100 s on etcd's lock.
func TestSecondDevInTheSameDirectory(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run `make test`, or export KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh)")
	}
	dir := filepath.Join(t.TempDir(), "dev")
	fed := freePort(t)
	args := []string{"dev", "--dir", dir, "--serve-addr", freePort(t), "--health-probe-bind-address", freePort(t),
		"--metrics-bind-address", freePort(t), "--federation-bind-address", fed}
	first := exec.Command(clitest.Binary(t), args...)
	log, err := os.Create(filepath.Join(t.TempDir(), "first.log"))
	if err != nil {
		t.Fatal(err)
	}
	first.Stdout, first.Stderr = log, log
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	var children []int // the control plane the first started, read before it is killed
	t.Cleanup(func() {
		_ = first.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = first.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = first.Process.Kill()
		}
		for _, pid := range children { // left running by the kill -9 below
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, devStateFile)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("the first cairn dev was not ready in 3 minutes:\n%s", out)
		}
	}
	answers := func() bool {
		resp, err := http.Get("http://" + fed + "/federation/status")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	for deadline := time.Now().Add(time.Minute); !answers(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first cairn dev's federation API did not answer 200 in a minute")
		}
	}
	// etcd writes its own database and log as it likes; everything else, and etcd's
	// directories (a second etcd created and removed files there), must stay as they are.
	// The state directory's own mtime moves with the first's files (chain.db-journal):
	// what the second would create or remove there shows as a created or removed file.
	ownWrites := func(path string, d fs.DirEntry) bool {
		return path == dir || (strings.HasPrefix(path, filepath.Join(dir, "etcd")) && !d.IsDir()) ||
			strings.HasPrefix(path, filepath.Join(dir, "tlog")) || strings.HasPrefix(path, filepath.Join(dir, "chain.db"))
	}
	before := devFiles(t, dir, ownWrites)

	env := []string{"KUBEBUILDER_ASSETS=" + assets}
	r := clitest.Run(t, nil, env, args...)
	for _, want := range []string{fmt.Sprintf("another cairn dev (pid %d) runs in %s", first.Process.Pid, dir),
		"federation API http://" + fed + "/federation/status", "API server     https://", "kubeconfig     " + filepath.Join(dir, "kubeconfig")} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("the second cairn dev's refusal lacks %q:\n%s", want, r.Stderr)
		}
	}
	if r.Code != cmdutil.ExitError || r.Took > 10*time.Second {
		t.Errorf("the second cairn dev: exit %d after %s, want 1 at once", r.Code, r.Took)
	}
	if changed := changedFiles(before, devFiles(t, dir, ownWrites)); len(changed) > 0 {
		t.Errorf("the second cairn dev touched the first's files: %v", changed)
	}
	if !answers() {
		t.Fatal("the first cairn dev no longer answers")
	}

	// kill -9: its etcd and kube-apiserver live on, etcd holding the data.
	// Its children, from every process's parent in /proc/PID/stat ("pid (comm) state ppid").
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var etcd int
	for _, path := range stats {
		raw, _ := os.ReadFile(path)
		_, rest, _ := strings.Cut(string(raw), ") ")
		if fields := strings.Fields(rest); len(fields) < 2 || fields[1] != strconv.Itoa(first.Process.Pid) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		children = append(children, pid)
		if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); filepath.Base(strings.Split(string(cmdline), "\x00")[0]) == "etcd" {
			etcd = pid
		}
	}
	if etcd == 0 || len(children) < 2 {
		t.Skipf("cannot find the control plane's processes (%v) to clean up after a kill -9", children)
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	before = devFiles(t, dir, ownWrites)
	r = clitest.Run(t, nil, env, args...)
	if want := fmt.Sprintf("an etcd (pid %d) still runs on %s", etcd, filepath.Join(dir, "etcd")); r.Code != cmdutil.ExitError ||
		!strings.Contains(r.Stderr, want) || r.Took > 10*time.Second {
		t.Errorf("cairn dev over a left etcd: exit %d after %s, want 1 at once saying %q:\n%s", r.Code, r.Took, want, r.Stderr)
	}
	if changed := changedFiles(before, devFiles(t, dir, ownWrites)); len(changed) > 0 {
		t.Errorf("cairn dev over a left etcd touched its files: %v", changed)
	}
}
