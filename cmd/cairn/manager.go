package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/manager"
)

func newManagerCommand() *cobra.Command {
	opts := manager.NewOptions()
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the federation's Kubernetes controllers",
		Long: `Run the federation's Kubernetes controllers against the cluster named by --kubeconfig,
the in-cluster service account, or $KUBECONFIG, in that order.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return cmdutil.UsageError{Err: err}
			}
			hooks, err := failpointHooks(os.Getenv(failpointEnv), os.Getenv(failpointPauseEnv))
			if err != nil {
				return cmdutil.UsageError{Err: err}
			}
			opts.Hooks = hooks
			if opts.RetrySchedule, err = retrySchedule(os.Getenv(retryScheduleEnv)); err != nil {
				return cmdutil.UsageError{Err: err}
			}
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
		},
	}
	opts.AddFlags(cmd.Flags())
	cmdutil.AddClusterFlags(cmd)
	return cmd
}
