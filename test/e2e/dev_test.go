package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/test/testcluster"
)

// cairnBin is the cairn binary that TestMain builds for every test of the package.
var cairnBin string

func TestMain(m *testing.M) {
	os.Exit(runWithBinary(m))
}

func runWithBinary(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cairn-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	cairnBin = filepath.Join(dir, "cairn")
	out, err := exec.Command("go", "build", "-tags", "failpoints", "-o", cairnBin, "github.com/cairn-dev/cairn/cmd/cairn").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build cmd/cairn: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// assetsDir is the directory of kube-apiserver, etcd and kubectl.
func assetsDir(t *testing.T) string { return testcluster.AssetsDir(t) }

// freeAddresses returns n distinct loopback addresses that were free a moment ago.
func freeAddresses(t *testing.T, n int) []string { return testcluster.FreeAddresses(t, n) }

// devProcess is a running `cairn dev`.
type devProcess struct {
	// federationAddr is where the federation API listens.
	federationAddr string
	// witnessAddrs are where its two witnesses listen.
	witnessAddrs []string
	cmd          *exec.Cmd
	stdout       *bufio.Scanner
	stderr       *lockedBuffer
	seen         []string
}

// lockedBuffer collects a process's log while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startDev runs `cairn dev` in workDir, on free ports, and waits until it prints a line
// containing until. extra flags come last, so they override the free addresses it picks.
func startDev(ctx context.Context, t *testing.T, workDir, until string, extra ...string) *devProcess {
	t.Helper()
	addrs := freeAddresses(t, 6)
	args := []string{"dev",
		"--assets", assetsDir(t),
		"--health-probe-bind-address", addrs[0],
		"--metrics-bind-address", "0", // no test reads it: one port fewer to race other processes for
		"--federation-bind-address", addrs[2],
		"--serve-addr", addrs[3]}
	if !slices.Contains(extra, "--witness-addrs") { // a list flag given twice is one list
		args = append(args, "--witness-addrs", addrs[4]+","+addrs[5])
	}
	cmd := exec.CommandContext(ctx, cairnBin, append(args, extra...)...)
	cmd.Dir = workDir
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fedAddr := addrs[2]
	if i := slices.Index(extra, "--federation-bind-address"); i >= 0 && i+1 < len(extra) {
		fedAddr = extra[i+1]
	}
	p := &devProcess{federationAddr: fedAddr, witnessAddrs: addrs[4:6], cmd: cmd, stdout: bufio.NewScanner(out), stderr: stderr}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if !p.waitFor(until) {
		_ = cmd.Wait()
		t.Fatalf("cairn dev ended before it printed %q; it printed:\n%s\nand logged:\n%s", until, strings.Join(p.seen, "\n"), stderr.String())
	}
	return p
}

// waitFor reads stdout until a line contains s; false if stdout ends first.
func (p *devProcess) waitFor(s string) bool {
	for p.stdout.Scan() {
		p.seen = append(p.seen, p.stdout.Text())
		if strings.Contains(p.stdout.Text(), s) {
			return true
		}
	}
	return false
}

// interrupt sends Ctrl-C and requires a clean exit.
func (p *devProcess) interrupt(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	stopped := p.waitFor("stopped")
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("cairn dev exited with %v after Ctrl-C; it printed:\n%s", err, strings.Join(p.seen, "\n"))
	}
	if !stopped {
		t.Fatalf("cairn dev did not report that it stopped; it printed:\n%s", strings.Join(p.seen, "\n"))
	}
}

func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(assetsDir(t), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kubectlFails runs kubectl, requires it to fail, and returns what it printed.
func kubectlFails(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(assetsDir(t), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("kubectl %s succeeded:\n%s", strings.Join(args, " "), out)
	}
	return string(out)
}

func TestDevRunsControlPlaneAndKeepsState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	work := t.TempDir()
	kubeconfig := filepath.Join(work, ".cairn-dev", "kubeconfig")
	registered, stopWaiting := context.WithTimeout(ctx, time.Minute)
	defer stopWaiting()
	samples, err := filepath.Abs("../../config/samples/federation_v1alpha1_federationoperator.yaml")
	if err != nil {
		t.Fatal(err)
	}

	dev := startDev(ctx, t, work, "cairn dev: ready")
	crds := kubectl(t, kubeconfig, "get", "crd", "-o", "name")
	for _, kind := range []string{"federations", "federationoperators", "submissions", "crossanchors"} {
		want := fmt.Sprintf("customresourcedefinition.apiextensions.k8s.io/%s.federation.cairn.dev", kind)
		if !strings.Contains(crds, want) {
			t.Errorf("kubectl get crd does not list %s:\n%s", want, crds)
		}
	}
	kubectl(t, kubeconfig, "apply", "-f", samples)
	// The people's kubeconfig is an administrator's, yet only the manager makes
	// Submissions: the admission policy refuses it, naming the rule.
	refusal := kubectlFails(t, kubeconfig, "create", "-f", filepath.Join(filepath.Dir(samples), "federation_v1alpha1_submission.yaml"))
	if want := "only the federation manager (system:serviceaccount:cairn-system:cairn-manager) creates Submissions"; !strings.Contains(refusal, want) {
		t.Errorf("kubectl create of a Submission was refused with %q, want %q", refusal, want)
	}
	// The admission webhooks refuse at once, with 422, a registration the controller would
	// only reject later in status: a proof of possession signed over another name.
	sample := string(readFile(t, samples))
	forged := strings.NewReplacer("name: acme-research", "name: mallory", "orgName: Acme Research", "orgName: Mallory Research").Replace(sample)
	refusal = kubectlFails(t, kubeconfig, "apply", "-f", writeFile(t, work, "forged.yaml", []byte(forged)), "-v=6")
	for _, want := range []string{`status="422 Unprocessable Entity"`,
		`The FederationOperator "mallory" is invalid: spec.proofOfPossession: Invalid value: SignatureInvalid: signature does not verify`} {
		if !strings.Contains(refusal, want) {
			t.Errorf("kubectl apply of a forged registration was refused with %q, want %q in it", refusal, want)
		}
	}
	if out := kubectlFails(t, kubeconfig, "get", "fo", "mallory"); !strings.Contains(out, "NotFound") {
		t.Errorf("the forged registration was stored: %s", out)
	}
	for _, want := range []string{"webhooks       https://127.0.0.1:", "public page    http://127.0.0.1:", "demo           make demo"} {
		if !strings.Contains(strings.Join(dev.seen, "\n"), want) {
			t.Errorf("cairn dev did not print %q; it printed:\n%s", want, strings.Join(dev.seen, "\n"))
		}
	}
	// The default Federation and its embedded log take the registration.
	// The two records land in the log in either order.
	waitFor(registered, t, "the sample operator to be registered and logged", "Active true", func() string {
		out := kubectl(t, kubeconfig, "get", "fo", "acme-research", "-o", "jsonpath={.status.phase} {.status.registrationLogEntry.uuid}")
		phase, uuid, _ := strings.Cut(out, " ")
		return fmt.Sprintf("%s %t", phase, len(uuid) == 64)
	})
	waitFor(registered, t, "the default Federation's genesis record", "true", func() string {
		return fmt.Sprint(len(kubectl(t, kubeconfig, "get", "fed", "cairn", "-o", "jsonpath={.status.genesisLogEntry.uuid}")) == 64)
	})
	dev.interrupt(t)
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("kubeconfig of a stopped control plane was left behind: stat: %v", err)
	}

	// A second start finds what the first one stored.
	dev = startDev(ctx, t, work, "cairn dev: ready")
	got := kubectl(t, kubeconfig, "get", "fo", "acme-research", "-o", "jsonpath={.spec.orgName}")
	if got != "Acme Research" {
		t.Errorf("after restart, the operator's orgName is %q, want %q", got, "Acme Research")
	}
	dev.interrupt(t)
}

// waitFor polls get every 200ms until it returns want, failing the test when ctx ends.
func waitFor(ctx context.Context, t *testing.T, what, want string, get func() string) {
	t.Helper()
	for {
		got := get()
		if got == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v; last got %q, want %q", what, ctx.Err(), got, want)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func TestDevStopsCleanlyWhenInterruptedWhileStarting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	work := t.TempDir()
	dev := startDev(ctx, t, work, "starting control plane")
	dev.interrupt(t)
	if _, err := os.Stat(filepath.Join(work, ".cairn-dev", "kubeconfig")); !os.IsNotExist(err) {
		t.Errorf("kubeconfig of a stopped control plane was left behind: stat: %v", err)
	}
}

func TestDevWithoutAssetsSaysWhatToDo(t *testing.T) {
	cmd := exec.Command(cairnBin, "dev")
	cmd.Env = append(os.Environ(), "KUBEBUILDER_ASSETS=")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("cairn dev without assets succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "--assets (or KUBEBUILDER_ASSETS) is required") {
		t.Errorf("cairn dev without assets printed:\n%s", out)
	}
}
