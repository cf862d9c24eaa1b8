// Package analysis holds the chain owner's commands that read and check the chain's
// content: regression, energy, replay, export and verify-export.
package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ExitDrift is the exit status of a regression run that flagged a dimension: the code
// of a check that ran and found a difference (cmdutil.ExitMismatch), so that a cron job can tell
// drift (3) from a failure to run (1).
const ExitDrift = cmdutil.ExitMismatch

// maxSampleSeqs is how many flagged seqs the summary line shows per dimension: the newest.
const maxSampleSeqs = 5

// RegressionSummary is the line cairn regression prints for a run: what an hourly cron
// job appends to a log file.
type RegressionSummary struct {
	// RanAt, Window and ZThreshold are the run's; RunID its id, 0 when not saved.
	RanAt      time.Time `json:"ran_at"`
	RunID      int64     `json:"run_id"`
	Saved      bool      `json:"saved"`
	Window     int       `json:"window"`
	ZThreshold float64   `json:"z_threshold"`
	// EntriesConsidered, FirstSeq and LastSeq say which entries were examined.
	EntriesConsidered int   `json:"entries_considered"`
	FirstSeq          int64 `json:"first_seq"`
	LastSeq           int64 `json:"last_seq"`
	// DimensionsChecked are the dimensions tested; DimensionsInsufficient those with too
	// few values to be.
	DimensionsChecked      []string `json:"dimensions_checked"`
	DimensionsInsufficient []string `json:"dimensions_insufficient"`
	// Anomalies counts the entries flagged per dimension (every dimension is listed);
	// TotalAnomalies is their sum.
	Anomalies      map[string]int `json:"anomalies"`
	TotalAnomalies int            `json:"total_anomalies"`
	// SampleSeqs lists, for each flagged dimension, its newest flagged seqs (at most
	// maxSampleSeqs), ascending.
	SampleSeqs map[string][]int64 `json:"sample_seqs"`
}

// summarizeRun builds the summary line of run.
func summarizeRun(run *analysis.Run) RegressionSummary {
	sum := RegressionSummary{RanAt: run.RanAt, RunID: run.ID, Saved: run.ID != 0, Window: run.Window, ZThreshold: run.ZThreshold,
		EntriesConsidered: run.EntriesConsidered, FirstSeq: run.FirstSeq, LastSeq: run.LastSeq,
		DimensionsChecked: []string{}, DimensionsInsufficient: []string{}, Anomalies: map[string]int{},
		TotalAnomalies: run.TotalAnomalies, SampleSeqs: map[string][]int64{}}
	for _, name := range analysis.Dimensions {
		d := run.Dimensions[name]
		if d == nil {
			continue
		}
		if d.Status == analysis.StatusOK {
			sum.DimensionsChecked = append(sum.DimensionsChecked, name)
		} else {
			sum.DimensionsInsufficient = append(sum.DimensionsInsufficient, name)
		}
		sum.Anomalies[name] = d.FlaggedEntries
		if seqs := d.FlaggedSeqs(); len(seqs) > 0 {
			sum.SampleSeqs[name] = seqs[max(0, len(seqs)-maxSampleSeqs):]
		}
	}
	return sum
}

// driftError reports a run that flagged a dimension. It wraps protocol.ErrMismatch, which
// exitCode maps to ExitDrift.
type driftError struct{ sum RegressionSummary }

func (e driftError) Error() string {
	var parts []string
	for _, name := range analysis.Dimensions {
		if seqs := e.sum.SampleSeqs[name]; len(seqs) > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (seq %s)", name, e.sum.Anomalies[name], strings.Trim(fmt.Sprint(seqs), "[]")))
		}
	}
	return fmt.Sprintf("regression over seq %d to %d found %d anomalies: %s",
		e.sum.FirstSeq, e.sum.LastSeq, e.sum.TotalAnomalies, strings.Join(parts, ", "))
}

func (e driftError) Unwrap() error { return protocol.ErrMismatch }

// regressionOptions are `cairn regression`'s.
type regressionOptions struct {
	cmdutil.ChainOptions
	opts   analysis.RegressionOptions
	noSave bool
}

// NewRegressionCommand returns `cairn regression`.
func NewRegressionCommand() *cobra.Command {
	o := &regressionOptions{}
	cmd := &cobra.Command{
		Use:   "regression",
		Short: "Examine the chain's recent window for drift, save the run and print a one-line summary",
		Long: `Examine every entry of the chain's last --window entries on input tokens, output tokens,
cost and latency. Each value is tested against the mean, sample standard deviation and
quartiles (linear interpolation) of the window's values of its dimension: it is a z
anomaly when |z| exceeds --z-threshold, an IQR anomaly when it lies outside
Q1 − 1.5·IQR or Q3 + 1.5·IQR; a dimension needs at least 5 values to be tested. Cost is
the span's gen_ai.usage.cost_usd (or cairn.cost_usd), else computed from the model's list
price and both token counts.

The run is saved in the chain's database (table regression_runs; cairn serve lists it
under GET /api/regression/history), which needs the HMAC secret. With --no-save nothing
is written and the secret is not needed. Either way one JSON line is printed: ran_at,
run_id (0 when not saved), window, the entries examined, dimensions_checked, anomalies
per dimension, total_anomalies and sample_seqs (the newest 5 flagged seqs of each flagged
dimension). Meant for a cron line appending to a log file, e.g.

  0 * * * * cairn regression --db /var/lib/cairn/chain.db --secret-file /etc/cairn/secret >> /var/log/cairn-regression.log

Exit status: 0 nothing flagged, 3 anomalies found (the line is printed, and the
anomalies are named on stderr), 1 the run failed, 2 bad arguments.`,
		Args: cmdutil.NoArgs,
		Example: `  # Examine the last 1000 entries and save the run
  cairn regression --db chain.db --window 1000

  # Examine without saving (no secret needed), flagging |z| above 2.5
  cairn regression --db chain.db --no-save --z-threshold 2.5`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.AddFlags(cmd)
	cmd.Flags().IntVar(&o.opts.Window, "window", analysis.DefaultWindow, "how many of the chain's last entries to examine")
	cmd.Flags().Float64Var(&o.opts.ZThreshold, "z-threshold", analysis.DefaultZThreshold, "an entry is a z anomaly when |z| exceeds this")
	cmd.Flags().BoolVar(&o.noSave, "no-save", false, "do not save the run (the secret is then not needed)")
	return cmd
}

// Complete fills in the regression options' defaults.
func (o *regressionOptions) Complete(*cobra.Command, []string) error {
	var err error
	if o.opts, err = o.opts.Complete(); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return nil
}

// Validate requires the secret when the run is saved.
func (o *regressionOptions) Validate() error {
	if !o.noSave && o.SecretHex == "" && o.SecretFile == "" {
		return cmdutil.UsageError{Err: errors.New("saving the run needs the chain's HMAC secret (CAIRN_HMAC_SECRET or --secret-file); --no-save runs without it")}
	}
	return nil
}

// Run examines the window, saves the run unless --no-save and prints its summary.
func (o *regressionOptions) Run(cmd *cobra.Command) error {
	s, err := o.Open(!o.noSave)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	var run *analysis.Run
	if o.noSave {
		run, err = analysis.RegressWindow(cmd.Context(), s, o.opts)
	} else {
		run, err = analysis.RunRegression(cmd.Context(), s, o.opts)
	}
	if err != nil {
		return err
	}
	sum := summarizeRun(run)
	if err := json.NewEncoder(cmd.OutOrStdout()).Encode(sum); err != nil {
		return err
	}
	if run.Flagged {
		return driftError{sum}
	}
	return nil
}
