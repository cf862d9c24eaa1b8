package e2e

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// TestLogDownForAWholeAnchorCycle takes the Federation's transparency log away after the
// operators are registered, lets an anchor run, and requires the anchor to wait in
// PendingTLog over several failed uploads, then to be logged once when the log is back,
// with every invariant holding. The log goes away as:
//   - the embedded log's directory hidden under an empty read-only mount,
//   - the embedded log's disk full (a small tmpfs, filled up), freed again,
//   - the local Rekor behind a TCP proxy that is closed and reopened (other tests share
//     the Rekor, so it is not stopped).
func TestLogDownForAWholeAnchorCycle(t *testing.T) {
	skipShort(t)
	c, kubeconfig := startAPIServer(t)
	t.Run("embedded log directory gone", func(t *testing.T) {
		// An empty read-only file system mounted over the log's directory: its files are
		// gone and nothing can be written there, until it is unmounted.
		dir := t.TempDir()
		var over string
		logFault(t, c, kubeconfig, "down-gone", dir, fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded},
			func() { over = mountTmpfs(t, filepath.Join(dir, "down-gone", "fed"), "ro,size=1m") },
			func() { unmount(t, over) })
	})
	t.Run("embedded log disk full", func(t *testing.T) {
		dir := mountTmpfs(t, t.TempDir(), "size=4m")
		filler := filepath.Join(dir, "filler")
		logFault(t, c, kubeconfig, "down-diskfull", dir, fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded},
			func() { fill(t, filler) }, func() {
				if err := os.Remove(filler); err != nil {
					t.Fatal(err)
				}
			})
	})
	t.Run("rekor", func(t *testing.T) {
		url := localRekor(t)
		p := startProxy(t, strings.TrimPrefix(url, "http://"))
		logFault(t, c, kubeconfig, "down-rekor", t.TempDir(), fv1.TransparencyLog{Type: fv1.TransparencyLogRekor,
			URL: "http://" + p.addr, PublicKeyPEM: rekorPublicKey(t, url)}, p.close, func() { p.open(t) })
	})
}

// logFault runs one log-down story in namespace ns with the log of a manager in logDir:
// two operators registered, the log broken, two submissions anchored but not logged, the
// log healed, the anchor logged.
func logFault(t *testing.T, c client.Client, kubeconfig, ns, logDir string, log fv1.TransparencyLog, breakLog, healLog func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	faultFederation(ctx, t, c, ns, log, 2)
	m := runFaultManager(ctx, t, kubeconfig, logDir, ns, false)
	keys := addOperators(ctx, t, c, ns, 0, 2)
	waitRegistered(ctx, t, c, ns, 2)

	breakLog()
	addSubmissions(ctx, t, c, ns, 0, keys)
	ca := waitPendingTLog(ctx, t, c, ns)
	t.Logf("anchor %s pending its log after %d failed uploads", ca.Name, ca.Status.Attempts)
	healLog()

	waitAnchors(ctx, t, c, ns, 1)
	waitAPIReady(ctx, t, m.api)
	requireCaught(t, checkInvariants(ctx, t, c, ns, logDir, m.api))
}

// mountTmpfs mounts a tmpfs with options (mount's -o) on dir and unmounts it when the
// test ends, unless unmount did; it skips the test when it cannot mount (not root). CI
// runs as root.
func mountTmpfs(t *testing.T, dir, options string) string {
	t.Helper()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", options, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (the disk faults need root, as CI runs): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// unmount unmounts the file system mounted on dir.
func unmount(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
		t.Fatalf("umount %s: %v %s", dir, err, out)
	}
}

// fill writes zeros to path until its file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// proxy forwards TCP connections from addr to a target, and can be closed (every
// connection cut, nothing listening) and reopened on the same address.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	l            net.Listener
	conns        map[net.Conn]bool
}

// startProxy listens on a free loopback address and forwards to target (host:port).
func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{addr: freeAddresses(t, 1)[0], target: target, conns: map[net.Conn]bool{}}
	p.open(t)
	t.Cleanup(p.close)
	return p
}

// open listens on p.addr again and serves until close.
func (p *proxy) open(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = in.Close()
				continue
			}
			if !p.track(in, out) {
				return
			}
			go p.pipe(in, out)
			go p.pipe(out, in)
		}
	}()
}

// track records a forwarded pair; false (both closed) when the proxy was closed.
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l == nil {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = true
	}
	return true
}

func (p *proxy) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

// close stops listening and cuts every connection.
func (p *proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		_ = p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}
