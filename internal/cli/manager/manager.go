// Package manager is `cairn manager`, the command of the cluster administrator: it runs
// the federation's Kubernetes controllers (package manager at the top of the tree).
package manager

import (
	"fmt"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/manager"
)

// Options are `cairn manager`'s: the manager's, bound to the flags, and the end-to-end
// tests' hooks, read from the environment.
type Options struct {
	Manager *manager.Options
	// failpoint, failpointPause and retrySchedule are the values of failpointEnv,
	// failpointPauseEnv and retryScheduleEnv.
	failpoint, failpointPause, retrySchedule string
	// exit ends the process at a failpoint: what main wired (cmdutil.WithExit).
	exit func(code int)
}

// NewCommand returns `cairn manager`.
func NewCommand() *cobra.Command {
	o := &Options{Manager: manager.NewOptions()}
	opts := o.Manager
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the federation's Kubernetes controllers",
		Long: `Run the federation's Kubernetes controllers against the cluster named by --kubeconfig,
the in-cluster service account, or $KUBECONFIG, in that order.`,
		Example: `  # Run the controllers against the current kubeconfig's cluster, serving the federation API
  cairn manager --federation cairn-system/cairn --federation-bind-address :8082

  # Only watch two namespaces, with leader election among replicas
  cairn manager --namespaces cairn-system,tenant-a --leader-elect`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	opts.AddFlags(cmd.Flags())
	cmdutil.AddClusterFlags(cmd)
	return cmd
}

// Complete reads the end-to-end tests' hooks from the environment.
func (o *Options) Complete(cmd *cobra.Command, _ []string) error {
	env := cmdutil.Env(cmd.Context())
	o.failpoint, _ = env(failpointEnv)
	o.failpointPause, _ = env(failpointPauseEnv)
	o.retrySchedule, _ = env(retryScheduleEnv)
	o.exit = cmdutil.ExitFunc(cmd.Context())
	return nil
}

// Validate checks the manager's options and the hooks, and sets the hooks.
func (o *Options) Validate() error {
	opts := o.Manager
	if err := opts.Validate(); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	hooks, err := failpointHooks(o.failpoint, o.failpointPause, o.exit)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	opts.Hooks = hooks
	if opts.RetrySchedule, err = retrySchedule(o.retrySchedule); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return nil
}

// Run starts the manager and runs it until the command's context ends.
func (o *Options) Run(cmd *cobra.Command) error {
	opts := o.Manager
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	mgr, err := manager.New(cmd.Context(), cfg, opts)
	if err != nil {
		return err
	}
	ctrl.Log.WithName("manager").Info("Starting manager", "metrics", opts.MetricsBindAddress, "probes", opts.HealthProbeBindAddress, "leaderElect", opts.LeaderElect,
		"namespaces", opts.Namespaces)
	return mgr.Start(cmd.Context())
}
