package chain

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/bijotel/legacydb"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// chainVerifyOptions are the flags of cairn chain verify.
type chainVerifyOptions struct {
	chain  cmdutil.ChainOptions
	window verifyWindowFlags
	smoke  bool
	full   bool // the default since issue 34; still accepted
	asJSON bool
}

func (o *chainVerifyOptions) addFlags(cmd *cobra.Command) {
	o.chain.AddFlags(cmd)
	o.window.addFlags(cmd)
	cmd.Flags().BoolVar(&o.smoke, "smoke", false, "check only the window's first and last entries (quick; never reports the chain valid)")
	cmd.Flags().BoolVar(&o.full, "full", false, "check every entry (the default; kept for existing scripts)")
	_ = cmd.Flags().MarkHidden("full")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print one JSON document, whatever the outcome")
}

// verifyDocument is the JSON document of cairn chain verify --json (docs/OPERATIONS.md).
// Its members are named as in POST /api/chain/verify's response where they mean the same.
type verifyDocument struct {
	// Valid is true only when every entry of the window was checked and passed.
	Valid bool `json:"valid"`
	// Status is valid, invalid, smoke_passed (a smoke check found nothing, and checked
	// almost nothing), empty (no entries) or error (nothing was verified: see Error).
	Status            string          `json:"status"`
	Mode              string          `json:"mode"`   // full or smoke
	Format            string          `json:"format"` // cairn or bijotel
	FirstSeq          int64           `json:"first_seq"`
	LastSeq           int64           `json:"last_seq"`
	EntriesVerified   int64           `json:"entries_verified"`
	EntriesNotChecked int64           `json:"entries_not_checked"`
	CheckedRanges     []checkedRange  `json:"checked_ranges"`
	HMACsChecked      bool            `json:"hmacs_checked"`
	FirstFailure      *verifyFailure  `json:"first_failure"`
	WrongSecret       bool            `json:"wrong_secret"`
	Error             *string         `json:"error"`
	ElapsedMS         float64         `json:"elapsed_ms"`
	Import            *verifyImport   `json:"import,omitempty"`
	Legacy            *verifyLegacyDB `json:"bijotel,omitempty"`
}

// checkedRange is a range of seqs that passed, both ends included.
type checkedRange struct {
	FirstSeq int64 `json:"first_seq"`
	LastSeq  int64 `json:"last_seq"`
}

// verifyFailure is the first entry that failed.
type verifyFailure struct {
	Seq     int64  `json:"seq"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// verifyImport is what was checked of the entries imported behind a bridge record.
type verifyImport struct {
	FirstSeq             int64  `json:"first_seq"`
	LastSeq              int64  `json:"last_seq"`
	LegacyFirstSeq       int64  `json:"legacy_first_seq"`
	LegacyLastSeq        int64  `json:"legacy_last_seq"`
	LegacyHeadHMACHash   string `json:"legacy_head_hmac_hash"`
	LegacyExportSHA256   string `json:"legacy_export_sha256"`
	ColumnsChecked       bool   `json:"columns_checked"`
	LegacyHMACsRederived bool   `json:"legacy_hmacs_rederived"`
}

// verifyLegacyDB is what only a BIJOTEL chain file's verification says.
type verifyLegacyDB struct {
	RowsInFile   int64  `json:"rows_in_file"`
	HeadHMACHash string `json:"head_hmac_hash"`
	FirstLink    string `json:"first_link"` // genesis, predecessor or trusted
	Note         string `json:"note"`
}

// Complete needs nothing: the flags are the options.
func (o *chainVerifyOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate leaves the checks of the flags to Run, which reports them in its document.
func (o *chainVerifyOptions) Validate() error { return nil }

// Run verifies the chain and prints the outcome, as text or as one JSON document.
func (o *chainVerifyOptions) Run(cmd *cobra.Command) error {
	if cmdutil.Getenv(cmd.Context(), "GOGC") == "" {
		// A full verification allocates about a kilobyte a row (the driver's copy of the
		// row) and keeps almost nothing: collecting at 5x the live heap rather than 2x
		// cuts the CPU a row by about a sixth (docs/BENCHMARKS.md). Restored after, since
		// tests and benchmarks run commands in one process.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	start := time.Now()
	doc := &verifyDocument{Mode: "full", Format: "cairn", CheckedRanges: []checkedRange{}}
	if o.smoke {
		doc.Mode = "smoke"
	}
	text, err := o.verify(cmd, doc)
	doc.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
	doc.settle(err)
	if !o.asJSON {
		if err != nil {
			return err
		}
		return text(cmd.OutOrStdout(), doc)
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if jerr := enc.Encode(doc); jerr != nil {
		return errors.Join(err, jerr)
	}
	if err != nil {
		return cmdutil.SilentError{Err: err}
	}
	return nil
}

// verify runs the verification, fills doc with what it checked, and returns how to print
// a passed verification as text.
func (o *chainVerifyOptions) verify(cmd *cobra.Command, doc *verifyDocument) (func(io.Writer, *verifyDocument) error, error) {
	if o.smoke && o.full {
		return nil, cmdutil.UsageError{Err: errors.New("--smoke checks two entries, --full every one: give one (full is the default)")}
	}
	legacy, err := isLegacyChain(o.chain.DB)
	if err != nil {
		return nil, err
	}
	if legacy {
		doc.Format = "bijotel"
		if o.smoke {
			return nil, cmdutil.UsageError{Err: fmt.Errorf("%s is a BIJOTEL chain file, always verified in full: drop --smoke", o.chain.DB)}
		}
		rep, err := verifyLegacyChain(cmd, &o.chain, &o.window)
		doc.fillLegacy(rep)
		return func(w io.Writer, _ *verifyDocument) error { return printLegacyReport(w, rep) }, err
	}
	r, err := o.window.cairnWindow()
	if err != nil {
		return nil, err
	}
	s, err := o.chain.Open(false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }()
	if r, err = o.window.lastN(cmd.Context(), s, r); err != nil {
		return nil, err
	}
	var bar *cmdutil.ProgressBar
	if !o.asJSON {
		bar = cmdutil.NewProgressBar(cmd.ErrOrStderr(), "verify")
	}
	report, err := s.Verify(cmd.Context(), store.VerifyOptions{Full: !o.smoke, From: r.From, To: r.To, Progress: bar.ProgressFunc()})
	bar.Done()
	doc.fill(report)
	return func(w io.Writer, doc *verifyDocument) error {
		if err := printVerifyText(w, doc); err != nil {
			return err
		}
		return printImportCheck(w, report.Import)
	}, err
}

// fill copies a Cairn chain's report into doc.
func (doc *verifyDocument) fill(r *store.VerifyReport) {
	if r == nil {
		return
	}
	doc.FirstSeq, doc.LastSeq, doc.EntriesVerified, doc.EntriesNotChecked = r.From, r.To, r.Checked, r.NotChecked
	doc.HMACsChecked = r.HMACsChecked
	for _, p := range r.Passed {
		doc.CheckedRanges = append(doc.CheckedRanges, checkedRange{p.First, p.Last})
	}
	if im := r.Import; im != nil {
		b := &im.Bridge
		doc.Import = &verifyImport{FirstSeq: b.FirstSeq, LastSeq: b.LastSeq, LegacyFirstSeq: b.LegacyFirstSeq,
			LegacyLastSeq: b.LegacyLastSeq, LegacyHeadHMACHash: b.LegacyHeadHMACHash, LegacyExportSHA256: b.LegacyExportSHA256,
			ColumnsChecked: im.ColumnsChecked, LegacyHMACsRederived: im.LegacyHMACsRederived}
	}
}

// fillLegacy copies a BIJOTEL chain file's report into doc.
func (doc *verifyDocument) fillLegacy(r *legacydb.Report) {
	if r == nil {
		return
	}
	doc.FirstSeq, doc.LastSeq, doc.EntriesVerified, doc.HMACsChecked = r.FirstSeq, r.LastSeq, r.Checked, true
	if r.Checked > 0 {
		doc.CheckedRanges = append(doc.CheckedRanges, checkedRange{r.FirstSeq, r.HeadSeq})
	}
	if r.LastSeq > 0 {
		doc.EntriesNotChecked = max(0, r.LastSeq-r.FirstSeq+1-r.Checked)
	}
	link := map[legacydb.Link]string{legacydb.LinkGenesis: "genesis", legacydb.LinkPredecessor: "predecessor", legacydb.LinkTrusted: "trusted"}
	doc.Legacy = &verifyLegacyDB{RowsInFile: r.Total, HeadHMACHash: r.HeadHMACHash, FirstLink: link[r.FirstLink], Note: r.Tail}
}

// settle sets Status, Valid and the failure from the verification's error.
func (doc *verifyDocument) settle(err error) {
	var ee *protocol.EntryError
	var re *bijotel.RowError
	switch {
	case err == nil && doc.LastSeq == 0 && doc.EntriesVerified == 0:
		doc.Status = "empty"
	case err == nil && doc.Mode == "smoke":
		doc.Status = "smoke_passed"
	case err == nil:
		doc.Status, doc.Valid = "valid", true
	case errors.As(err, &ee):
		doc.Status, doc.FirstFailure = "invalid", &verifyFailure{Seq: ee.Seq, Reason: ee.Reason, Message: ee.Error()}
		doc.WrongSecret = errors.Is(err, store.ErrWrongSecret)
	case errors.As(err, &re):
		doc.Status, doc.FirstFailure = "invalid", &verifyFailure{Seq: re.Seq, Reason: re.Reason, Message: re.Error()}
	default:
		doc.Status = "error"
	}
	if err != nil {
		msg := err.Error()
		doc.Error = &msg
	}
}

// printVerifyText prints a passed verification of a Cairn chain. Only a full verification
// says "valid"; a smoke check says what it checked and what it did not.
func printVerifyText(w io.Writer, doc *verifyDocument) error {
	hmacs := "HMACs checked"
	if !doc.HMACsChecked {
		hmacs = "HMACs not checked (no secret)"
	}
	elapsed := (time.Duration(doc.ElapsedMS*1000) * time.Microsecond).Round(time.Millisecond)
	var err error
	switch doc.Status {
	case "empty":
		_, err = fmt.Fprintln(w, "no entries: the chain is empty; nothing was verified")
	case "smoke_passed":
		seqs := make([]string, 0, 2)
		for _, r := range doc.CheckedRanges {
			seqs = append(seqs, fmt.Sprint(r.FirstSeq))
		}
		what := "seq " + seqs[0]
		if len(seqs) > 1 {
			what = "seq " + seqs[0] + " and " + seqs[1]
		}
		_, err = fmt.Fprintf(w, "smoke check of seq %d..%d: %s passed (each with its link to the row before), %s, %s; "+
			"%d entries not checked: run without --smoke to check every entry\n",
			doc.FirstSeq, doc.LastSeq, what, hmacs, elapsed, doc.EntriesNotChecked)
	default:
		_, err = fmt.Fprintf(w, "valid: full verify of seq %d..%d, %d entries checked, %s, %s\n",
			doc.FirstSeq, doc.LastSeq, doc.EntriesVerified, hmacs, elapsed)
	}
	return err
}
