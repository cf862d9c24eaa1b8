package dev

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/cli/serve"
)

// devLogFile is where cairn dev --demo sends the manager's logs, so that the terminal
// shows the story.
const devLogFile = "dev.log"

// addDemoFlags binds --demo.
func (o *devOptions) addDemoFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.demo, "demo", false, "once ready, run the demo (cairn demo), then stop; the exit status is the demo's")
}

// logDemoToFile makes cmd, when --demo is given, log to <dir>/dev.log instead of the
// terminal. The loggers are built by cmd's persistent pre-run (cmdutil.AddClusterFlags) from
// what os.Stderr is then, so it is pointed at the file for that call alone.
func (o *devOptions) logDemoToFile(cmd *cobra.Command) {
	pre := cmd.PersistentPreRunE
	cmd.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if !o.demo {
			return pre(c, args)
		}
		if err := cmdutil.ApplyEnv(c.Context(), c.Flags()); err != nil { // --dir may come from CAIRN_DEV_DIR
			return err
		}
		if err := o.completeWebhooks(); err != nil {
			return err
		}
		if o.validate() != nil { // write nothing for a command line that will be refused
			return pre(c, args)
		}
		if err := os.MkdirAll(o.env.Dir, 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(o.env.Dir, devLogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		stderr := os.Stderr
		os.Stderr = f
		defer func() { os.Stderr = stderr }()
		return pre(c, args)
	}
}

// startOver removes, for --fresh, what belongs to the cluster state devenv.Start
// deletes: the embedded log (when it is dev's own) and the demo's organizations, whose
// registrations and pinned keys name the federation that goes with it.
func (o *devOptions) startOver() error {
	dirs := []string{filepath.Join(o.env.Dir, demoDir)}
	if o.manager.LogDir == "" { // the log starts over, and its witnesses with it
		dirs = append(dirs, filepath.Join(o.env.Dir, "tlog"), filepath.Join(o.env.Dir, devWitnessesDir))
	}
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("start over: %w", err)
		}
	}
	return nil
}

// writeDevState writes <dir>/dev.json, which cairn demo reads, and returns a function
// that removes it. st brings what runDev started (API server, kubeconfig, chain service,
// manager probe); the rest comes from o.
func (o *devOptions) writeDevState(st devState) (func() error, error) {
	path := filepath.Join(o.env.Dir, devStateFile)
	st.Federation, st.FederationURL, st.PID = o.manager.Federation, o.federationURL(), os.Getpid()
	if o.manager.Webhooks.Enable {
		st.Webhooks = o.webhookURL()
	}
	if o.manager.MetricsBindAddress != "0" {
		st.Metrics = "http://" + serve.DialAddress(o.manager.MetricsBindAddress) + "/metrics"
	}
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(path, append(raw, '\n'), 0o600); err != nil {
		return nil, err
	}
	return func() error {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}, nil
}

// demoTarget is the system runDev started, for the demo.
func (o *devOptions) demoTarget(cfg *rest.Config, kubeconfig string) (demoTarget, error) {
	if o.manager.FederationBindAddress == "0" {
		return demoTarget{}, errors.New("the demo needs the federation API: --federation-bind-address is 0")
	}
	ns, name, _ := strings.Cut(o.manager.Federation, "/") // checked by the manager's Validate
	return demoTarget{dir: o.env.Dir, federationURL: o.federationURL(),
		federation: types.NamespacedName{Namespace: ns, Name: name}, kube: cfg, kubeconfig: kubeconfig}, nil
}
