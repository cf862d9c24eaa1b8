package dev

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/client"
)

// The demo's files in dev's state directory.
const (
	// devStateFile is written by a running cairn dev, and removed when it stops: where its
	// federation API answers, and which Federation it serves.
	devStateFile = "dev.json"
	// demoDir holds the demo's organizations, its auditor and its run counter.
	demoDir = "demo"
	// demoRunsFile counts the demo's runs, so a run continues the story of the last.
	demoRunsFile = "runs"
	// demoTimeout bounds one run of the demo.
	demoTimeout = 5 * time.Minute
)

// devState is what a running cairn dev writes to <dir>/dev.json for cairn demo.
type devState struct {
	// FederationURL is the federation API's base URL.
	FederationURL string `json:"federation_url"`
	// Federation is the Federation it serves, as namespace/name.
	Federation string `json:"federation"`

	// Where the rest answers, for a second cairn dev in the same directory to point at;
	// empty when off.
	PID          int    `json:"pid,omitempty"`
	APIServer    string `json:"api_server,omitempty"`
	Kubeconfig   string `json:"kubeconfig,omitempty"`
	Webhooks     string `json:"webhooks,omitempty"`
	ChainService string `json:"chain_service,omitempty"`
	Manager      string `json:"manager,omitempty"` // its readiness probe
	Metrics      string `json:"metrics,omitempty"`
}

// demoTarget is the running local system the demo tells its story against.
type demoTarget struct {
	// dir is dev's state directory; the demo keeps its own state under dir/demo.
	dir string
	// federationURL is the federation API's base URL.
	federationURL string
	// federation is the Federation that API serves.
	federation types.NamespacedName
	// kube reaches the API server as an administrator (dev's kubeconfig), to read the
	// Federation's admin token.
	kube *rest.Config
	// kubeconfig names where kube came from, for the story.
	kubeconfig string
}

// demoOptions are `cairn demo`'s.
type demoOptions struct {
	cmdutil.NoCompletion
	cmdutil.NoValidation
	dir   string
	check bool
}

// NewDemoCommand returns `cairn demo`.
func NewDemoCommand() *cobra.Command {
	o := &demoOptions{dir: ".cairn-dev"}
	cmd := &cobra.Command{
		Use:   "demo [--dir .cairn-dev]",
		Short: "Tell the whole story against a running cairn dev: three organizations, one federation",
		Long: `Run the demo against the cairn dev running in --dir (make dev): three organizations each
seal spans through OTLP into a chain service of their own, register with the federation,
submit, are anchored, fetch and verify their receipts; an auditor verifies the anchor live
and audits it with the three exports; one organization rotates its key and another
withdraws. Each step prints the cairn commands it runs and what it proved.

Every organization keeps its state in <dir>/demo/<org>/ (HMAC secret, keys, client
configuration, chain.db, receipts, exports), so running the demo again continues the
story: new spans and segments, a new anchor, the rotated key in use, the withdrawn
organization back under a new key. make dev DEV_FLAGS=--fresh starts it over.

--check only reports whether a cairn dev answers in --dir. cairn dev --demo starts one,
runs the demo and stops it.

Exit status: 0 every step held; 1 a step failed (the story names it), or no cairn dev
answers in --dir; 2 the arguments are wrong.`,
		Args: cmdutil.NoArgs,
		Example: `  # Tell the story against the cairn dev that make dev started
  cairn demo

  # Only check that a cairn dev answers in another state directory
  cairn demo --dir /tmp/cairn-dev --check`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	cmd.Flags().StringVar(&o.dir, "dir", o.dir, "state directory of the running cairn dev")
	cmd.Flags().BoolVar(&o.check, "check", false, "only check that a cairn dev answers in --dir")
	return cmd
}

// Run finds the running cairn dev and, unless --check, tells the story against it.
func (o *demoOptions) Run(cmd *cobra.Command) error {
	ctx := cmd.Context()
	t, err := loadDemoTarget(ctx, o.dir)
	if o.check || err != nil {
		return err
	}
	return runDemo(ctx, cmd.OutOrStdout(), t)
}

// loadDemoTarget finds the cairn dev running in dir: its state file, its kubeconfig and
// a federation API that answers.
func loadDemoTarget(ctx context.Context, dir string) (demoTarget, error) {
	notRunning := func(why string) (demoTarget, error) {
		return demoTarget{}, fmt.Errorf("no cairn dev answers in %s (%s): start one with make dev, or run cairn dev --demo", dir, why)
	}
	raw, err := os.ReadFile(filepath.Join(dir, devStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return notRunning(devStateFile + " is missing")
	}
	if err != nil {
		return demoTarget{}, err
	}
	var st devState
	if err := json.Unmarshal(raw, &st); err != nil {
		return demoTarget{}, fmt.Errorf("%s: %w", filepath.Join(dir, devStateFile), err)
	}
	ns, name, ok := strings.Cut(st.Federation, "/")
	if !ok || st.FederationURL == "" {
		return demoTarget{}, fmt.Errorf("%s names no federation API", filepath.Join(dir, devStateFile))
	}
	t := demoTarget{dir: dir, federationURL: st.FederationURL, federation: types.NamespacedName{Namespace: ns, Name: name},
		kubeconfig: filepath.Join(dir, "kubeconfig")}
	probe, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(probe, http.MethodGet, st.FederationURL+"/federation/status", nil)
	if err != nil {
		return demoTarget{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return notRunning(err.Error())
	}
	_ = resp.Body.Close()
	if t.kube, err = clientcmd.BuildConfigFromFlags("", t.kubeconfig); err != nil {
		return notRunning(err.Error())
	}
	return t, nil
}

// demoStep is one step of the story.
type demoStep struct {
	// name is how a failure names the step.
	name string
	// title says what happens.
	title string
	// run does it and returns what it proved.
	run func(context.Context) (string, error)
}

// runDemo tells the story once against t, printing it to out. It returns nil when every
// step held; otherwise it has printed which step failed and why, and returns that.
func runDemo(ctx context.Context, out io.Writer, t demoTarget) error {
	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()
	s, err := newDemoStory(ctx, out, t)
	if err != nil {
		return err
	}
	steps := s.steps()
	for i, st := range steps {
		s.sh.printf("\n%d. %s\n", i+1, st.title)
		held, err := st.run(ctx)
		if err != nil {
			s.sh.printf("%s\n\nThe demo FAILED at step %d (%s): run %d did not hold.\n", wrapError(err), i+1, st.name, s.run)
			return cmdutil.SilentError{Err: fmt.Errorf("demo step %d (%s): %w", i+1, st.name, err)}
		}
		s.sh.printf("%s\n", wrap("   ✓ ", held))
	}
	s.sh.printf("\nEvery step held (run %d, %d steps). The federation's public page shows it: %s/\n", s.run, len(steps), t.federationURL)
	s.sh.printf("Run the demo again to continue the story: new spans and segments, a new anchor.\n")
	return nil
}

// wrapError fills the first line of err's message like a held step's, and keeps the rest
// (a command's output) as it is.
func wrapError(err error) string {
	first, rest, found := strings.Cut(err.Error(), "\n")
	if !found {
		return wrap("   ✗ ", first)
	}
	return wrap("   ✗ ", first) + "\n" + rest
}

// nextRun counts this run in dir's run counter and returns its number.
func nextRun(dir string) (int, error) {
	path := filepath.Join(dir, demoRunsFile)
	run := 1
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s: not a run count", path)
		}
		run = n + 1
	case !errors.Is(err, fs.ErrNotExist):
		return 0, err
	}
	return run, atomicfile.Write(path, []byte(strconv.Itoa(run)+"\n"), 0o600)
}

// waitFederationReady waits until the federation presents its key: the Federation
// controller makes it just after cairn dev creates the Federation.
func waitFederationReady(ctx context.Context, c *client.Client) (*client.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		st, err := c.Status(ctx)
		if err == nil && st.FederationPublicKey != "" {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the federation did not present its key: %w", errors.Join(err, ctx.Err()))
		case <-time.After(200 * time.Millisecond):
		}
	}
}
