package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// replayOptions configures `cairn replay`.
type replayOptions struct {
	cmdutil.NoValidation
	db         string
	seq        int64
	output     string
	outputFile string
	// replayed is the replayed output, from --output or --output-file.
	replayed string
}

// NewReplayCommand returns `cairn replay`.
func NewReplayCommand() *cobra.Command {
	o := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay --seq N (--output TEXT | --output-file FILE)",
		Short: "Check a replayed model output against the output recorded in a chain entry",
		Long: `Compare a replayed model output with the output hash recorded in entry N of the
chain (its cairn.replay.output_hash attribute, cairn.replay.output_sha256 in entries
sealed by earlier releases, or bijotel.replay.output_hash in spans instrumented for the
original product: each replay attribute is read under any of its names, and an entry
holding one under two names with different values matches nothing) and print the
verdict as JSON, with the members of
POST /api/replay/verify's answer: match, original_hash, replay_hash, deterministic,
model_version and reason (null on a match, otherwise advice in words), and seq,
reason_code and model. reason_code is match, output_mismatch (the call was recorded with
a seed, so the output should have been reproduced), nondeterministic_mismatch (recorded
without a seed: a different output is no evidence of tampering), no_replay_context,
malformed_entry or conflicting_replay_context. The output is compared byte for byte, so give it exactly as the model
returned it; --output-file - reads standard input. The entry is read as stored: verify
the chain (cairn chain verify) to trust it.

Exit status: 0 the output matches, 3 it does not (any other reason), 1 the chain, the
output file or the entry is missing, 2 neither --output nor --output-file was given (or
both, or no --seq).`,
		Args: cmdutil.NoArgs,
		Example: `  # Check a replayed output against entry 42
  cairn replay --db chain.db --seq 42 --output "Paris is the capital of France."

  # Check an output read from standard input
  python replay.py | cairn replay --db chain.db --seq 42 --output-file -`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	cmd.Flags().StringVar(&o.db, "db", "chain.db", "path of the chain's SQLite file")
	cmd.Flags().Int64Var(&o.seq, "seq", 0, "sequence number of the entry the call was sealed in")
	cmd.Flags().StringVar(&o.output, "output", "", "the replayed output")
	cmd.Flags().StringVar(&o.outputFile, "output-file", "", "file holding the replayed output, - for standard input")
	return cmd
}

// Complete checks the flags and reads the replayed output.
func (o *replayOptions) Complete(cmd *cobra.Command, _ []string) error {
	var err error
	o.replayed, err = o.readOutput(cmd)
	return err
}

// Run compares the replayed output with the entry's and prints the verdict.
func (o *replayOptions) Run(cmd *cobra.Command) error {
	s, err := store.OpenExisting(o.db, nil) // read-only: replay needs no secret, and never creates a chain
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	e, err := s.Entry(cmd.Context(), o.seq)
	if err != nil {
		return err
	}
	result := chain.VerifyReplay(e, o.replayed)
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	if err := enc.Encode(result); err != nil {
		return err
	}
	if !result.Match {
		// The verdict is printed; exit 3 says it is not a match.
		return cmdutil.SilentError{Err: fmt.Errorf("%w: replay of seq %d: %s", protocol.ErrMismatch, o.seq, result.ReasonCode)}
	}
	return nil
}

// readOutput checks the flags and returns the replayed output.
func (o *replayOptions) readOutput(cmd *cobra.Command) (string, error) {
	inline, fromFile := cmd.Flags().Changed("output"), cmd.Flags().Changed("output-file")
	switch {
	case !inline && !fromFile:
		return "", cmdutil.UsageError{Err: errors.New("give the replayed output with --output TEXT or --output-file FILE")}
	case inline && fromFile:
		return "", cmdutil.UsageError{Err: errors.New("give --output or --output-file, not both")}
	case o.seq < 1:
		return "", cmdutil.UsageError{Err: fmt.Errorf("--seq %d: give the entry's sequence number, from 1", o.seq)}
	case inline:
		return o.output, nil
	}
	in, closeIn, err := cmdutil.OpenInput(cmd.InOrStdin(), o.outputFile)
	if err != nil {
		return "", fmt.Errorf("read the replayed output: %w", err)
	}
	defer closeIn()
	b, err := io.ReadAll(in)
	if err != nil {
		return "", fmt.Errorf("read the replayed output: %w", err)
	}
	return string(b), nil
}
