package federation

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/internal/config"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// submitOptions configures `cairn federation submit`.
type submitOptions struct {
	cmdutil.NoCompletion
	cmdutil.NoValidation
	// fed are the flags every federation command shares.
	fed         *federationOptions
	operator    operatorFlags
	chain       cmdutil.ChainOptions
	export      string
	output      string
	saveExport  string
	withEntries bool
	dryRun      bool
	trustNewKey bool
	sidecars    []string
}

func newFederationSubmitCommand(fo *federationOptions) *cobra.Command {
	o := &submitOptions{fed: fo}
	cmd := &cobra.Command{
		Use:   "submit (--export PATH | --db chain.db)",
		Short: "Submit a signed export of your chain to the federation",
		Long: `Submit a signed cairn-chain-v2 export as the operator: --export sends a file that
cairn export wrote, as it is. --db makes the export itself: it asks the federation for the
last seq it accepted from this operator, exports exactly the entries after it (header-only
unless --with-entries: the federation never needs the rows) and submits that, so a daily
cron job is one line. It needs the chain's HMAC secret (CAIRN_HMAC_SECRET), which never
leaves this machine; --save-export keeps the export sent.

The export is streamed from disk, never held in memory, with a progress bar on a terminal.
A refused export prints the federation's reasons; for a continuity violation, the hash the
federation expected, the one the export starts from, and its hint.

--sidecar FILE[:media/type] sends an attestation sidecar with the export (an in-toto
statement, a model card, an evaluation report): up to 8, at most 1 MiB each, the media type
guessed from the file's extension when not given (application/octet-stream otherwise). The
export and its sidecars go as one multipart request, all of it bound by the token; the
federation stores and lists them, but does not verify them, and they cannot be added later.

Before anything else, the keys the federation presents are checked against those pinned
for it (at registration, or by cairn federation trust): other keys are refused, and
nothing is exported or sent, unless --trust-new-key is given; with nothing pinned, the
keys presented are pinned and shown (trust on first use).

--dry-run posts nothing: it prints the header that would be sent (with --db it still asks
the federation for its keys and the last accepted seq, reads, and pins nothing).

With --json the federation's answer is printed; when there is nothing new to submit, a
document saying so ("submitted": false, "last_accepted_seq").

Exit status: 0 accepted, or nothing new to submit; 1 refused, or the federation could not
be reached; 2 the arguments are wrong.`,
		Args: cmdutil.NoArgs,
		Example: `  # Submit the chain's new entries to the federation registered from this machine
  CAIRN_HMAC_SECRET=... cairn federation submit --db chain.db

  # Submit an export written by cairn export
  cairn federation submit --export segment.json`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.operator.add(cmd)
	o.chain.AddFlags(cmd)
	f := cmd.Flags()
	o.chain.DB, f.Lookup("db").DefValue = "", "" // no chain unless --db (or CAIRN_DB_PATH) names one
	f.StringVar(&o.export, "export", "", "the export file to send as it is")
	f.StringVarP(&o.output, "output", "o", "", "write the federation's answer (JSON) to this file")
	f.StringVar(&o.saveExport, "save-export", "", "with --db: keep the export sent in this file")
	f.BoolVar(&o.withEntries, "with-entries", false, "with --db: include the entries, not only the signed header")
	f.BoolVar(&o.dryRun, "dry-run", false, "post nothing: print the header that would be sent")
	f.BoolVar(&o.trustNewKey, "trust-new-key", false, "pin the keys the federation presents now, replacing the pinned ones")
	f.StringArrayVar(&o.sidecars, "sidecar", nil, "FILE[:media/type]: an attestation sidecar to send with the export (repeatable, at most 8 of 1 MiB)")
	return cmd
}

// Run runs the command with the flags every federation command shares.
func (o *submitOptions) Run(cmd *cobra.Command) error { return o.run(cmd, o.fed) }

func (o *submitOptions) run(cmd *cobra.Command, fo *federationOptions) error {
	fromDB := config.GivenOnCommandLine(cmd.Flags(), "db") || (o.export == "" && o.chain.DB != "")
	switch {
	case o.export != "" && config.GivenOnCommandLine(cmd.Flags(), "db"):
		return cmdutil.UsageError{Err: errors.New("give --export or --db, not both")}
	case o.export == "" && !fromDB:
		return cmdutil.UsageError{Err: errors.New("give --export PATH (a file cairn export wrote) or --db chain.db")}
	case !fromDB && (o.saveExport != "" || o.withEntries):
		return cmdutil.UsageError{Err: errors.New("--save-export and --with-entries go with --db")}
	}
	sidecars, err := readSidecarFlags(o.sidecars)
	if err != nil {
		return err
	}
	s, err := fo.connect(cmd, &o.operator)
	if err != nil {
		return err
	}
	defer s.close()
	ctx, c, op := s.ctx, s.client, s.op
	if !o.dryRun || fromDB { // a dry run of a file sends nothing, so it checks nothing
		policy := pinPolicy(o.trustNewKey)
		if o.dryRun {
			policy = clientconfig.CheckOnly
		}
		if err := fo.checkPins(cmd, s, policy); err != nil {
			return err
		}
	}

	path := o.export
	if fromDB {
		var nothing *nothingToSubmit
		if path, nothing, err = o.exportSegment(ctx, cmd, c, op); err != nil || nothing != nil {
			if err == nil && fo.json {
				return cmdutil.WriteJSON(cmd.OutOrStdout(), nothing)
			}
			return err
		}
		if o.saveExport == "" {
			defer func() { _ = os.Remove(path) }()
		}
	}
	if o.dryRun {
		return printDryRunSubmit(cmd.OutOrStdout(), path, op)
	}
	res, err := sendExport(ctx, cmd.ErrOrStderr(), c, path, sidecars)
	if err != nil {
		return reportRefusal(cmd.ErrOrStderr(), err)
	}
	if o.output != "" {
		var b bytes.Buffer
		if err := cmdutil.WriteJSON(&b, res); err != nil {
			return err
		}
		if err := atomicfile.Write(o.output, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if fo.json {
		return cmdutil.WriteJSON(cmd.OutOrStdout(), res)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "accepted %s: seq %d..%d, entry_count %d, continuity verified %t, pending anchor %t\n",
		res.SubmissionID, res.FirstSeq, res.LastSeq, res.EntryCount, res.ContinuityVerified, res.PendingAnchor)
	return err
}

// nothingToSubmit is what submit --json prints when the federation has the whole chain.
type nothingToSubmit struct {
	Submitted       bool   `json:"submitted"` // always false
	OperatorID      string `json:"operator_id"`
	LastAcceptedSeq int64  `json:"last_accepted_seq"`
	Message         string `json:"message"`
}

// exportSegment exports the chain's entries after the operator's last accepted seq to a
// file and returns its path; nothing is not nil (and nothing is exported) when there are
// none.
func (o *submitOptions) exportSegment(ctx context.Context, cmd *cobra.Command, c *client.Client, op *actingOperator) (path string, nothing *nothingToSubmit, err error) {
	after, err := lastAcceptedSeq(ctx, c, op.id)
	if err != nil {
		return "", nil, err
	}
	s, err := o.chain.Open(true)
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = s.Close() }()
	head, err := s.LastSeq(ctx)
	if err != nil {
		return "", nil, err
	}
	switch {
	case head < after:
		return "", nil, fmt.Errorf("the chain in %s ends at seq %d, but the federation accepted seq %d from %s: a rewound or replaced chain", o.chain.DB, head, after, op.id)
	case head == after:
		msg := fmt.Sprintf("nothing to submit: the federation has %s's chain through seq %d, where %s ends", op.id, after, o.chain.DB)
		_, err := fmt.Fprintln(cmd.ErrOrStderr(), msg)
		return "", &nothingToSubmit{OperatorID: op.id, LastAcceptedSeq: after, Message: msg}, err
	}
	path = o.saveExport
	if path == "" {
		f, err := os.CreateTemp("", "cairn-submit-*.json")
		if err != nil {
			return "", nil, err
		}
		path = f.Name()
		if err := f.Close(); err != nil {
			return "", nil, err
		}
	}
	bar := cmdutil.NewProgressBar(cmd.ErrOrStderr(), "export")
	h, err := cmdutil.WriteExportFile(cmd, s, path, store.ExportOptions{From: after + 1, Key: op.key, ExportedAt: time.Now(),
		HeaderOnly: !o.withEntries, Progress: bar.ProgressFunc()})
	bar.Done()
	if err != nil {
		return "", nil, err
	}
	_, err = fmt.Fprintf(cmd.ErrOrStderr(), "exported seq %d..%d (entry_count %d) after the federation's seq %d\n", h.FirstSeq, h.LastSeq, h.EntryCount, after)
	return path, nil, err
}

// lastAcceptedSeq returns the highest last_seq of the operator's accepted submissions, 0
// when it has none. The newest page holds it: submissions are listed newest first, and
// each accepted one continues the last.
func lastAcceptedSeq(ctx context.Context, c *client.Client, id string) (int64, error) {
	sum, err := c.Operator(ctx, id, client.PageOptions{Limit: 100})
	if client.IsCode(err, "operator_not_found") {
		return 0, fmt.Errorf("%w\nthe federation lists no operator %s: a registration waits there until its administrators approve it, "+
			"if the federation approves registrations; try again once they have", err, id)
	}
	if err != nil {
		return 0, err
	}
	var last int64
	for _, s := range sum.Submissions {
		last = max(last, s.LastSeq)
	}
	return last, nil
}

// sendExport streams the export file at path to the federation, with a progress bar on
// a terminal.
func sendExport(ctx context.Context, stderr io.Writer, c *client.Client, path string, sidecars []client.Sidecar) (*client.SubmitResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	bar := cmdutil.NewTransferBar(stderr, "upload")
	defer bar.Done()
	body := io.ReadSeeker(f)
	if bar != nil {
		body = &countingReadSeeker{r: f, total: info.Size(), progress: bar.Update}
	}
	return c.SubmitWithSidecars(ctx, body, info.Size(), sidecars)
}

// countingReadSeeker reports how far its reader has been read.
type countingReadSeeker struct {
	r        io.ReadSeeker
	n, total int64
	progress func(done, total int64)
}

func (c *countingReadSeeker) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.progress(c.n, c.total)
	return n, err
}

func (c *countingReadSeeker) Seek(offset int64, whence int) (int64, error) {
	pos, err := c.r.Seek(offset, whence)
	c.n = pos
	return pos, err
}

// printDryRunSubmit prints the signed header of the export at path, which it checks
// against the operator's own key first.
func printDryRunSubmit(w io.Writer, path string, op *actingOperator) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	report, err := protocol.VerifyExport(bufio.NewReaderSize(f, 1<<20), protocol.VerifyOptions{PublicKey: op.key.Public().(ed25519.PublicKey)})
	if err != nil {
		return fmt.Errorf("the export %s does not verify under the operator's key: %w", path, err)
	}
	return cmdutil.WriteJSON(w, struct {
		Header     *protocol.ExportHeader `json:"header"`
		Entries    int64                  `json:"entries"`
		OperatorID string                 `json:"operator_id"`
		File       string                 `json:"file"`
		Note       string                 `json:"note"`
	}{report.Header, report.Entries, op.id, path, "dry run: nothing was posted"})
}

// reportRefusal prints what the federation said of a refused export, the hashes of a
// continuity violation included, and returns err for its exit status.
func reportRefusal(w io.Writer, err error) error {
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 422 {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "refused: %s (HTTP %d): %s\n", ae.Code, ae.Status, ae.Message)
	for _, f := range []struct{ label, field string }{
		{"expected first_prev_hash", "expected_first_prev_hash"},
		{"got first_prev_hash     ", "got_first_prev_hash"},
		{"expected first_seq      ", "expected_first_seq"},
		{"got first_seq           ", "got_first_seq"},
		{"previous submission     ", "previous_submission_id"},
		{"conflicting submission  ", "conflicting_submission_id"},
		{"expected entry_count >= ", "expected_min_entry_count"},
		{"got entry_count         ", "got_entry_count"},
		{"failed check            ", "check"},
		{"at seq                  ", "seq"},
		{"reason                  ", "reason"},
	} {
		if v, ok := ae.Fields[f.field]; ok && v != nil {
			fmt.Fprintf(&b, "  %s  %v\n", f.label, v)
		}
	}
	if hint, ok := ae.Field("hint"); ok {
		fmt.Fprintf(&b, "  hint: %s\n", hint)
	}
	_, _ = io.WriteString(w, b.String())
	return cmdutil.SilentError{Err: err}
}
