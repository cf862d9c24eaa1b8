package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/store"
)

func newChainCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chain",
		Short: "Seal spans into, inspect and verify the local HMAC chain",
	}
	cmd.AddCommand(newChainVerifyCommand(), newChainStatsCommand(), newChainSealCommand(), newChainImportCommand())
	return cmd
}

func newChainVerifyCommand() *cobra.Command {
	var o cmdutil.ChainOptions
	var full bool
	var wf verifyWindowFlags
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Verify the chain: first and last entries, or every entry with --full",
		Long: `Verify the chain. By default (smoke) the first and last entries of the window are
checked fully; --full checks every entry, hashing on all cores. Without the HMAC secret
(CAIRN_HMAC_SECRET, --secret-file) bodies, columns and links are checked but HMACs are not.

A chain file of the original product (BIJOTEL) is recognised and verified by its own
rules, read-only, always in full and only with its secret: body hash, link and HMAC of
every row of the window, with the original's reasons. Stricter than the original: a
missing seq fails; --since/--until link the window to the row before it (the original
expected GENESIS there and failed) and verify every row from the first to the last in the
days asked, since timestamps are not ordered by seq; --until ends at the day's last
nanosecond exactly (the original computed it in floating point). A first row whose
predecessor is not in the file (a trimmed chain) links to its stored prev_hash, as the
original does, and the output says so. --since/--until apply to BIJOTEL files only.

Exit status: 0 valid, 3 invalid (the first failing seq and the reason are printed),
1 unreadable, 2 bad arguments.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if legacy, err := isLegacyChain(o.DB); err != nil {
				return err
			} else if legacy {
				return verifyLegacyChain(cmd, &o, &wf)
			}
			r, err := wf.cairnWindow()
			if err != nil {
				return err
			}
			s, err := o.Open(false)
			if err != nil {
				return err
			}
			defer func() { _ = s.Close() }()
			if r, err = wf.lastN(cmd.Context(), s, r); err != nil {
				return err
			}
			bar := cmdutil.NewProgressBar(cmd.ErrOrStderr(), "verify")
			start := time.Now()
			report, err := s.Verify(cmd.Context(), store.VerifyOptions{Full: full, From: r.From, To: r.To, Progress: bar.ProgressFunc()})
			bar.Done()
			if err != nil {
				return err
			}
			mode := "smoke"
			if report.Full {
				mode = "full"
			}
			hmacs := "HMACs checked"
			if !report.HMACsChecked {
				hmacs = "HMACs not checked (no secret)"
			}
			if _, err = fmt.Fprintf(cmd.OutOrStdout(), "valid: %s verify of seq %d..%d, %d entries checked, %s, %s\n",
				mode, report.From, report.To, report.Checked, hmacs, time.Since(start).Round(time.Millisecond)); err != nil {
				return err
			}
			return printImportCheck(cmd.OutOrStdout(), report.Import)
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().BoolVar(&full, "full", false, "check every entry, not only the first and last (BIJOTEL files: always)")
	wf.addFlags(cmd)
	return cmd
}

func newChainStatsCommand() *cobra.Command {
	var o cmdutil.ChainOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Print the chain's size, range and head",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			_, err = fmt.Fprintf(out, "entries         %d\nseq             %d..%d\nlast_hmac_hash  %s\nfirst           %s\nlast            %s\nfile            %d bytes\n",
				st.Entries, st.FirstSeq, st.LastSeq, st.LastHMACHash,
				nsTime(st.FirstTimestampNS), nsTime(st.LastTimestampNS), st.FileBytes)
			return err
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func nsTime(ns int64) string {
	if ns == 0 {
		return "-"
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}
