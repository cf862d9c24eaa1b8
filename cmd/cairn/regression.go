package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ExitDrift is the exit status of a regression run that flagged a dimension: the code
// of a check that ran and found a difference (ExitMismatch), so that a cron job can tell
// drift (3) from a failure to run (1).
const ExitDrift = ExitMismatch

// driftError reports a run that flagged a dimension. It wraps protocol.ErrMismatch, which
// exitCode maps to ExitDrift.
type driftError struct{ run *analysis.Run }

func (e driftError) Error() string {
	var names []string
	for _, d := range e.run.Dimensions {
		if d.Flagged {
			names = append(names, d.Name)
		}
	}
	return fmt.Sprintf("regression run %d flagged %s at seq %d", e.run.ID, strings.Join(names, ", "), e.run.LastSeq)
}

func (e driftError) Unwrap() error { return protocol.ErrMismatch }

func newRegressionCommand() *cobra.Command {
	var o chainOptions
	var opts analysis.RegressionOptions
	var noSave bool
	cmd := &cobra.Command{
		Use:   "regression",
		Short: "Test the chain's latest call for drift against its recent window, and save the run",
		Long: `Test whether the latest call is an outlier against the window of calls before it, for
input tokens, output tokens, cost (gen_ai.usage.cost_usd or cairn.cost_usd) and latency.
A dimension is flagged when |z| (sample standard deviation) exceeds --z-threshold, or
when the value lies outside Tukey's fences Q1 − 1.5·IQR, Q3 + 1.5·IQR (quartiles by
linear interpolation); it needs at least 4 earlier values. The run is saved in the
chain's database (table regression_runs), which needs the HMAC secret, and printed as
JSON. With --no-save nothing is written and the secret is not needed.

Exit status: 0 nothing flagged, 3 a dimension flagged, 1 the run failed, 2 bad arguments.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts, err = opts.Complete(); err != nil {
				return usageError{err}
			}
			if !noSave && o.secretHex == "" && o.secretFile == "" {
				return usageError{errors.New("saving the run needs the chain's HMAC secret (CAIRN_HMAC_SECRET or --secret-file); --no-save runs without it")}
			}
			s, err := o.open(!noSave)
			if err != nil {
				return err
			}
			defer func() { _ = s.Close() }()
			var run *analysis.Run
			if noSave {
				started := time.Now().UTC()
				entries, err := s.TailEntries(cmd.Context(), opts.Window)
				if err != nil {
					return err
				}
				if run, err = analysis.Regress(entries, opts); err != nil {
					return err
				}
				run.StartedAt = started
			} else if run, err = analysis.RunRegression(cmd.Context(), s, opts); err != nil {
				return err
			}
			if err := writeIndentedJSON(cmd.OutOrStdout(), run); err != nil {
				return err
			}
			if run.Flagged {
				return driftError{run}
			}
			return nil
		},
	}
	o.addFlags(cmd)
	cmd.Flags().IntVar(&opts.Window, "window", analysis.DefaultWindow, "how many of the chain's last entries to read")
	cmd.Flags().Float64Var(&opts.ZThreshold, "z-threshold", analysis.DefaultZThreshold, "flag when |z| exceeds this")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not save the run (the secret is then not needed)")
	return cmd
}

// writeIndentedJSON writes v as indented JSON.
func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
