package cmdutil

import (
	"context"
	goflag "flag"
	"fmt"
	"log/slog"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	kubeconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cairn-dev/cairn/internal/config"
)

// LookupFunc reads one environment variable, as os.LookupEnv does.
type LookupFunc func(name string) (string, bool)

type envKey struct{}

// WithEnv returns ctx carrying lookup, the environment the commands run under: main
// passes os.LookupEnv. The flags' variables (internal/config) and the test hooks are read
// only through it.
func WithEnv(ctx context.Context, lookup LookupFunc) context.Context {
	return context.WithValue(ctx, envKey{}, lookup)
}

type exitKey struct{}

// WithExit returns ctx carrying exit, the way the commands' test hooks end the process
// as a crash would: main passes os.Exit. Nothing else below cmd/ exits the process.
func WithExit(ctx context.Context, exit func(code int)) context.Context {
	return context.WithValue(ctx, exitKey{}, exit)
}

// ExitFunc is the exit function ctx carries; nil without one.
func ExitFunc(ctx context.Context) func(code int) {
	exit, _ := ctx.Value(exitKey{}).(func(code int))
	return exit
}

// Env is the environment ctx carries; without one, every variable is unset.
func Env(ctx context.Context) LookupFunc {
	if lookup, ok := ctx.Value(envKey{}).(LookupFunc); ok && lookup != nil {
		return lookup
	}
	return func(string) (string, bool) { return "", false }
}

// Getenv is the value of the variable name in the environment ctx carries; "" if unset.
func Getenv(ctx context.Context, name string) string {
	v, _ := Env(ctx)(name)
	return v
}

// NewRoot builds a root command named use over cmds. Every command reads the environment
// variables of its flags (internal/config) before it runs; only the commands that talk
// to a cluster take the logging flags (--zap-*) and --kubeconfig (AddClusterFlags).
func NewRoot(use, short string, cmds ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:           use,
		Short:         short,
		SilenceUsage:  true,
		SilenceErrors: true, // main prints them once, then exits with their code
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return startCommand(cmd, &zap.Options{Development: true})
		},
	}
	root.AddCommand(cmds...)
	root.InitDefaultCompletionCmd() // now, not at Execute, so that the next lines cover it
	addCompletionExamples(root)
	rejectUnknownSubcommands(root)

	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{Err: err} })
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		defaultHelp(cmd, args)
		printEnvironment(cmd)
	})
	return root
}

// completionExamples are where each shell's completion script goes, as cobra's own help
// for the completion commands describes.
var completionExamples = map[string]string{
	"bash":       "  # this shell only\n  source <(%[1]s completion bash)\n\n  # every new shell (Linux)\n  %[1]s completion bash > /etc/bash_completion.d/%[1]s",
	"zsh":        "  # every new shell\n  %[1]s completion zsh > \"${fpath[1]}/_%[1]s\"",
	"fish":       "  # every new shell\n  %[1]s completion fish > ~/.config/fish/completions/%[1]s.fish",
	"powershell": "  # this shell only\n  %[1]s completion powershell | Out-String | Invoke-Expression",
}

// addCompletionExamples gives cobra's completion commands under root an Example each.
func addCompletionExamples(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = fmt.Sprintf("  %[1]s completion bash > /etc/bash_completion.d/%[1]s", root.Name())
		for _, shell := range c.Commands() {
			if ex, ok := completionExamples[shell.Name()]; ok {
				shell.Example = fmt.Sprintf(ex, root.Name())
			}
		}
	}
}

// AddClusterFlags gives cmd, a command that runs controllers against a cluster, the
// logging flags (--zap-*) and --kubeconfig, which its start applies.
func AddClusterFlags(cmd *cobra.Command) {
	zapOpts := &zap.Options{Development: true}
	goFlags := goflag.NewFlagSet(cmd.Name(), goflag.ContinueOnError)
	zapOpts.BindFlags(goFlags)
	kubeconfig.RegisterFlags(goFlags)
	cmd.Flags().AddGoFlagSet(goFlags)
	cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return startCommand(cmd, zapOpts) }
}

// ApplyEnv sets the flags of fs that were not given from the environment of ctx.
func ApplyEnv(ctx context.Context, fs *pflag.FlagSet) error {
	return config.Apply(fs, Env(ctx))
}

// startCommand applies the environment to cmd's flags and sets every logger (controller-
// runtime's, klog's for client-go and tessera, slog's) to zap with zapOpts.
func startCommand(cmd *cobra.Command, zapOpts *zap.Options) error {
	if err := ApplyEnv(cmd.Context(), cmd.Flags()); err != nil {
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
