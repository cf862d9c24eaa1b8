package main

import (
	goflag "flag"
	"log/slog"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	kubeconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cairn-dev/cairn/internal/config"
)

// newRootCommand builds the cairn command tree. Every command reads the environment
// variables of its flags (internal/config) before it runs; only the commands that talk
// to a cluster take the logging flags (--zap-*) and --kubeconfig (addClusterFlags).
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "cairn",
		Short:         "Tamper-evident audit chains for LLM calls, cross-anchored by a federation",
		SilenceUsage:  true,
		SilenceErrors: true, // main prints them once, then exits with their code
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return startCommand(cmd, &zap.Options{Development: true})
		},
	}
	root.AddCommand(newVersionCommand(), newManagerCommand(), newDevCommand(), newKeygenCommand(), newFederationCommand(),
		newChainCommand(), newExportCommand(), newVerifyExportCommand(), newRegressionCommand(), newEnergyCommand(),
		newServeCommand(), newReplayCommand(), newDemoCommand())
	root.InitDefaultCompletionCmd() // now, not at Execute, so that the next line covers it
	rejectUnknownSubcommands(root)
	root.Version = versionLine() // --version prints what `cairn version` does
	root.SetVersionTemplate("{{.Version}}\n")

	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		defaultHelp(cmd, args)
		printEnvironment(cmd)
	})
	return root
}

// addClusterFlags gives cmd, a command that runs controllers against a cluster, the
// logging flags (--zap-*) and --kubeconfig, which its start applies.
func addClusterFlags(cmd *cobra.Command) {
	zapOpts := &zap.Options{Development: true}
	goFlags := goflag.NewFlagSet(cmd.Name(), goflag.ContinueOnError)
	zapOpts.BindFlags(goFlags)
	kubeconfig.RegisterFlags(goFlags)
	cmd.Flags().AddGoFlagSet(goFlags)
	cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return startCommand(cmd, zapOpts) }
}

// startCommand applies the environment to cmd's flags and sets every logger (controller-
// runtime's, klog's for client-go and tessera, slog's) to zap with zapOpts.
func startCommand(cmd *cobra.Command, zapOpts *zap.Options) error {
	if err := config.Apply(cmd.Flags(), os.LookupEnv); err != nil {
		return err
	}
	logger := zap.New(zap.UseFlagOptions(zapOpts))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger.WithName("klog"))
	slog.SetDefault(slog.New(logr.ToSlogHandler(logger)))
	return nil
}

// printEnvironment lists the environment variables that stand in for the command's flags.
func printEnvironment(cmd *cobra.Command) {
	fs := pflag.NewFlagSet("all", pflag.ContinueOnError)
	fs.AddFlagSet(cmd.Flags())
	fs.AddFlagSet(cmd.InheritedFlags())
	if err := config.WriteTable(cmd.OutOrStdout(), fs); err != nil {
		cmd.PrintErrln(err)
	}
}
