// Package chain is `cairn chain`, the chain owner's commands on the local HMAC chain:
// seal spans into it, verify it, print its stats and import a BIJOTEL chain.
package chain

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// NewCommand returns `cairn chain` and its subcommands.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chain",
		Short: "Seal spans into, inspect and verify the local HMAC chain",
	}
	cmd.AddCommand(newChainVerifyCommand(), newChainStatsCommand(), newChainSealCommand(), newChainImportCommand())
	return cmd
}

func newChainVerifyCommand() *cobra.Command {
	o := &chainVerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Verify every entry of the chain (--smoke: only the first and last)",
		Long: `Verify the chain: every entry of the window (all of it by default) is checked, its
body hash, columns, link to the row before and HMAC, and that no seq is missing, on all
cores at once (the window is cut into ranges joined at their links). Without the HMAC
secret (CAIRN_HMAC_SECRET, --secret-file) bodies, columns and links are checked but HMACs
are not. --full, the default, is still accepted.

--smoke checks only the window's first and last entries, each with its link to the row
before: quick, but it finds nothing in between, so it never says "valid"; it says what it
checked and how many entries it did not. Do not put it in cron.

--json prints one JSON document whatever the outcome (valid, status, mode, first_seq,
last_seq, entries_verified, entries_not_checked, checked_ranges, first_failure, error...;
docs/OPERATIONS.md); "valid" is true only when every entry of the window passed.

A chain file of the original product (BIJOTEL) is recognised and verified by its own
rules, read-only, always in full and only with its secret: body hash, link and HMAC of
every row of the window, with the original's reasons. Stricter than the original: a
missing seq fails; --since/--until link the window to the row before it (the original
expected GENESIS there and failed) and verify every row from the first to the last in the
days asked, since timestamps are not ordered by seq; --until ends at the day's last
nanosecond exactly (the original computed it in floating point). A first row whose
predecessor is not in the file (a trimmed chain) links to its stored prev_hash, as the
original does, and the output says so. --since/--until apply to BIJOTEL files only.

Exit status: 0 valid (or, with --smoke, the two entries passed), 3 invalid (the first
failing seq and the reason are printed), 1 unreadable, 2 bad arguments.`,
		Example: `  # every entry, with the secret from the environment (what cron should run)
  CAIRN_HMAC_SECRET=... cairn chain verify --db chain.db

  # the last 10,000 entries, as JSON
  cairn chain verify --db chain.db --last 10000 --json

  # a quick look at the first and last entries only
  cairn chain verify --db chain.db --smoke`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.addFlags(cmd)
	return cmd
}

// chainStatsOptions are `cairn chain stats`'s.
type chainStatsOptions struct {
	cmdutil.ChainOptions
	cmdutil.NoCompletion
	cmdutil.NoValidation
	asJSON bool
}

func newChainStatsCommand() *cobra.Command {
	o := &chainStatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Print the chain's size, range and head",
		Args:  cmdutil.NoArgs,
		Example: `  # Size, range and head of the chain
  cairn chain stats --db chain.db

  # The same as JSON, for scripts
  cairn chain stats --db chain.db --json`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.AddFlags(cmd)
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON, with the names of GET /api/chain/stats (first_seq, last_seq, …)")
	return cmd
}

// Run prints the chain's stats, as text or JSON.
func (o *chainStatsOptions) Run(cmd *cobra.Command) error {
	s, err := o.Open(false)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	st, err := s.Stats(cmd.Context())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if o.asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	_, err = fmt.Fprintf(out, "entries         %d\nseq             %d..%d\nlast_hmac_hash  %s\nfirst           %s\nlast            %s\nfile            %d bytes\n",
		st.Entries, st.FirstSeq, st.LastSeq, st.LastHMACHash,
		nsTime(st.FirstTimestampNS), nsTime(st.LastTimestampNS), st.FileBytes)
	return err
}

func nsTime(ns int64) string {
	if ns == 0 {
		return "-"
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}
