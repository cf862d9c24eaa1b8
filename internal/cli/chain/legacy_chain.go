package chain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/bijotel/legacydb"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/store"
)

// verifyWindowFlags are chain verify's window flags, for Cairn and BIJOTEL chain files.
type verifyWindowFlags struct {
	rng          string
	last         int64
	since, until string
}

func (f *verifyWindowFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.rng, "range", "", "verify only seq FROM:TO (either side may be empty)")
	cmd.Flags().Int64Var(&f.last, "last", 0, "verify only the last N entries")
	cmd.Flags().StringVar(&f.since, "since", "", "BIJOTEL files only: verify from the first row whose timestamp_ns is on or after YYYY-MM-DD 00:00 UTC")
	cmd.Flags().StringVar(&f.until, "until", "", "BIJOTEL files only: verify to the last row whose timestamp_ns is on or before YYYY-MM-DD 23:59:59.999999999 UTC")
}

// legacyWindow parses the flags into a window of a BIJOTEL file.
func (f *verifyWindowFlags) legacyWindow() (legacydb.Window, error) {
	r, err := cmdutil.ParseRange(f.rng)
	if err != nil {
		return legacydb.Window{}, err
	}
	w := legacydb.Window{SeqStart: r.From, SeqEnd: r.To, LastN: f.last}
	if f.last < 0 {
		return w, cmdutil.UsageError{Err: fmt.Errorf("--last %d: want a positive number of entries", f.last)}
	}
	if f.last != 0 && (f.rng != "" || f.since != "" || f.until != "") {
		return w, cmdutil.UsageError{Err: errors.New("--last goes with neither --range nor --since/--until")}
	}
	if f.since != "" {
		day, err := parseDay("--since", f.since)
		if err != nil {
			return w, err
		}
		w.SinceNS = day.UnixNano()
	}
	if f.until != "" {
		day, err := parseDay("--until", f.until)
		if err != nil {
			return w, err
		}
		w.UntilNS = day.AddDate(0, 0, 1).UnixNano() - 1 // the day's last nanosecond, exactly
	}
	if w.UntilNS != 0 && w.SinceNS > w.UntilNS {
		return w, cmdutil.UsageError{Err: fmt.Errorf("--since %s is after --until %s", f.since, f.until)}
	}
	return w, nil
}

// cairnWindow parses the flags into a window of a Cairn chain; --since/--until are
// refused. --last N is resolved by lastN once the chain is open.
func (f *verifyWindowFlags) cairnWindow() (cmdutil.SeqRange, error) {
	if f.since != "" || f.until != "" {
		return cmdutil.SeqRange{}, cmdutil.UsageError{Err: errors.New("--since/--until select rows of a BIJOTEL chain file only; on a Cairn chain use --range or --last")}
	}
	if f.last < 0 || (f.last != 0 && f.rng != "") {
		return cmdutil.SeqRange{}, cmdutil.UsageError{Err: errors.New("--last wants a positive number of entries, and no --range")}
	}
	return cmdutil.ParseRange(f.rng)
}

// lastN narrows r to the chain's last N seqs when --last N is given.
func (f *verifyWindowFlags) lastN(ctx context.Context, s *store.Store, r cmdutil.SeqRange) (cmdutil.SeqRange, error) {
	if f.last == 0 {
		return r, nil
	}
	st, err := s.Stats(ctx)
	if err != nil || st.LastSeq == 0 {
		return r, err
	}
	return cmdutil.SeqRange{From: max(st.FirstSeq, st.LastSeq-f.last+1), To: st.LastSeq}, nil
}

// parseDay parses a UTC day YYYY-MM-DD whose nanoseconds fit an int64.
func parseDay(flag, s string) (time.Time, error) {
	day, err := time.ParseInLocation(time.DateOnly, s, time.UTC)
	if err != nil || day.Year() < 1970 || day.Year() > 2261 {
		return time.Time{}, cmdutil.UsageError{Err: fmt.Errorf("%s %q: want a day YYYY-MM-DD (UTC) from 1970 to 2261", flag, s)}
	}
	return day, nil
}

// isLegacyChain reports whether path is a BIJOTEL chain file. A missing or damaged file
// (cut short, not a database) is not one: the Cairn path opens it and says what is wrong
// with it in the command's words. Any other error (a file the original app holds locked)
// is the probe's.
func isLegacyChain(path string) (bool, error) {
	is, err := legacydb.Is(path)
	var se *sqlite.Error
	if errors.Is(err, fs.ErrNotExist) || errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_CORRUPT || se.Code()&0xff == sqlite3.SQLITE_NOTADB) {
		return false, nil
	}
	return is, err
}

// verifyLegacyChain verifies a BIJOTEL chain file in full over the flags' window, with
// the secret, which is required: the original has no keyless verification. The report
// comes back with a failure too, saying how many rows passed.
func verifyLegacyChain(cmd *cobra.Command, o *cmdutil.ChainOptions, f *verifyWindowFlags) (*legacydb.Report, error) {
	w, err := f.legacyWindow()
	if err != nil {
		return nil, err
	}
	secret, err := o.Secret(true)
	if err != nil {
		return nil, cmdutil.UsageError{Err: fmt.Errorf("%s is a BIJOTEL chain file, verified only with its HMAC secret (the original has no keyless mode): %w", o.DB, err)}
	}
	db, err := legacydb.Open(o.DB)
	if err != nil {
		return nil, err
	}
	defer func() { _ = db.Close() }()
	rep, err := db.Verify(cmd.Context(), secret, w)
	if err != nil {
		return rep, fmt.Errorf("BIJOTEL chain %s: %w", o.DB, err)
	}
	return rep, nil
}

// printLegacyReport prints a passed verification: "valid:" only when rows were checked.
func printLegacyReport(out io.Writer, rep *legacydb.Report) error {
	if rep.Checked == 0 {
		_, err := fmt.Fprintf(out, "no rows: the window holds none of the %d rows in the file; nothing was verified\n", rep.Total)
		return err
	}
	var link string
	switch rep.FirstLink {
	case legacydb.LinkGenesis:
		link = "first link GENESIS"
	case legacydb.LinkPredecessor:
		link = fmt.Sprintf("first link checked against seq %d in this file", rep.PredecessorSeq)
	case legacydb.LinkTrusted:
		link = fmt.Sprintf("first link trusted: prev_hash at seq=%d is taken from the file (boundary — predecessor not in this DB)", rep.FirstSeq)
	}
	lines := []string{
		fmt.Sprintf("valid: BIJOTEL chain seq %d..%d, %d rows checked of %d in the file, HMACs checked, %s",
			rep.FirstSeq, rep.HeadSeq, rep.Checked, rep.Total, link),
		fmt.Sprintf("head: seq %d hmac_hash %s", rep.HeadSeq, rep.HeadHMACHash),
	}
	if rep.TimeSpan {
		lines = append(lines, fmt.Sprintf("note: --since/--until select rows by timestamp_ns, which is not ordered by seq: every row from seq %d to %d was verified, %d of them outside the days asked",
			rep.FirstSeq, rep.HeadSeq, rep.OutsideTime))
	}
	if rep.FirstLink == legacydb.LinkTrusted {
		lines = append(lines, "note: confirm the boundary against the archive or export that ends before it")
	}
	lines = append(lines, "note: "+rep.Tail)
	for _, l := range lines {
		if _, err := fmt.Fprintln(out, l); err != nil {
			return err
		}
	}
	return nil
}
