package federation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/sigstorebundle"
)

// receiptsOptions configures `cairn federation receipts`.
type receiptsOptions struct {
	cmdutil.NoCompletion
	cmdutil.NoValidation
	// fed are the flags every federation command shares.
	fed         *federationOptions
	operator    operatorFlags
	trust       trustFlags
	outputDir   string
	since       string
	trustNewKey bool
	format      string
}

func newFederationReceiptsCommand(fo *federationOptions) *cobra.Command {
	o := &receiptsOptions{fed: fo}
	cmd := &cobra.Command{
		Use:   "receipts --output-dir DIR [--since ANCHOR_ID]",
		Short: "Fetch your receipts, verify each and write the ones that verify",
		Long: `Fetch the operator's signed receipts from the federation (all, or those of anchors
after --since) and verify each offline, as cairn federation verify does, under the pinned
federation and log keys (or --federation-key and --log-key). A receipt that verifies is
written to DIR/<anchor_id>.json, replacing an older copy of the same anchor (a receipt is
signed again when its log proof arrives or the federation rotates its key); one that does
not verify is reported and not written, and so is one whose file holds another anchor's
receipt (another cross_anchor_hash under the same anchor ID): the kept copy stays.

Receipts only get stronger: a served receipt never replaces a kept copy of the same anchor
that has more verified legs (its federation signature, then its log proof, each checked
under the keys the kept copy names). A logged receipt, the operator's copy of the log's
proof, is never replaced by a pending one; the command says so (KEPT) and exits 3.

The federation's current keys are checked against the pins first: another key is refused
unless --trust-new-key is given, which pins the new one (cairn federation trust shows
them first); with nothing pinned, the keys presented are pinned (trust on first use).

With --format sigstore-bundle it also writes, beside each receipt that has its log proof,
DIR/<anchor_id>.sigstore.json: the log leg as a Sigstore bundle (v0.3), made here from the
verified receipt, and DIR/trusted_root.json, the federation's Sigstore trusted root (GET
/federation/log/trusted-root), once the log key it names is the trusted one. Sigstore's own
tools verify a bundle with the federation's key (docs/AUDITORS.md).

Exit status: 0 every receipt verified and was written (or was unchanged), 3 one or more
did not verify, named a kept anchor's ID or was weaker than the kept copy (the others were
written), or the federation presents keys other than those pinned, 1 the federation could
not be reached, 2 the arguments are wrong.`,
		Args: cmdutil.NoArgs,
		Example: `  # Fetch and verify every receipt of the operator registered from this machine
  cairn federation receipts --output-dir receipts

  # Also as Sigstore bundles, with the federation's trusted root
  cairn federation receipts --output-dir receipts --format sigstore-bundle

  # The receipts of another federation, as JSON
  cairn federation receipts --service https://federation.example.org --json`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.operator.add(cmd)
	o.trust.add(cmd)
	cmd.Flags().StringVar(&o.outputDir, "output-dir", "", "directory to write the receipts into")
	cmd.Flags().StringVar(&o.since, "since", "", "only the receipts of anchors after this anchor ID")
	cmd.Flags().BoolVar(&o.trustNewKey, "trust-new-key", false, "pin the keys the federation presents now, replacing the pinned ones")
	cmd.Flags().StringVar(&o.format, "format", formatCairn, "cairn, or sigstore-bundle to write each log proof as a Sigstore bundle too")
	return cmd
}

// Run runs the command with the flags every federation command shares.
func (o *receiptsOptions) Run(cmd *cobra.Command) error { return o.run(cmd, o.fed) }

// receiptsResult is what receipts prints with --json.
type receiptsResult struct {
	Written   []string         `json:"written"`
	Unchanged []string         `json:"unchanged"`
	Refused   []refusedReceipt `json:"refused"`
	// Weaker are receipts that verified but prove less than the copy kept: not written.
	Weaker []weakerReceipt `json:"weaker"`
	// Bundles are the Sigstore bundles written (--format sigstore-bundle).
	Bundles []string `json:"sigstore_bundles,omitempty"`
	// TrustedRoot is the trusted root file written with them.
	TrustedRoot string `json:"trusted_root,omitempty"`
}

// weakerReceipt is a served receipt with fewer verified legs (protocol.ReceiptLegs) than
// the kept copy of the same anchor's: the kept one stays.
type weakerReceipt struct {
	AnchorID   string `json:"anchor_id"`
	KeptLegs   int    `json:"kept_legs"`
	ServedLegs int    `json:"served_legs"`
}

// refusedReceipt is a receipt that did not verify.
type refusedReceipt struct {
	AnchorID string `json:"anchor_id"`
	Error    string `json:"error"`
}

func (o *receiptsOptions) run(cmd *cobra.Command, fo *federationOptions) error {
	if o.outputDir == "" {
		return cmdutil.UsageError{Err: errors.New("--output-dir is required")}
	}
	if o.format != formatCairn && o.format != formatSigstoreBundle {
		return cmdutil.UsageError{Err: fmt.Errorf("--format %q: want %s or %s", o.format, formatCairn, formatSigstoreBundle)}
	}
	s, err := fo.connect(cmd, &o.operator)
	if err != nil {
		return err
	}
	defer s.close()
	ctx, c := s.ctx, s.client
	if err := fo.checkPins(cmd, s, pinPolicy(o.trustNewKey)); err != nil {
		return err
	}
	keys, err := fo.trusted(o.trust)
	if err != nil {
		return err
	}
	var root *sigstorebundle.TrustedRoot
	if o.format == formatSigstoreBundle { // before anything is written: a federation may have none
		if root, err = fetchTrustedRoot(ctx, c, keys.log); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.outputDir, 0o755); err != nil {
		return err
	}
	res := receiptsResult{Written: []string{}, Unchanged: []string{}, Refused: []refusedReceipt{}, Weaker: []weakerReceipt{}}
	err = eachReceipt(ctx, c, o.since, func(raw json.RawMessage) error {
		return o.keep(raw, s.op.id, keys, &res)
	})
	if err != nil {
		return err
	}
	if root != nil && len(res.Bundles) > 0 {
		if err := writeTrustedRoot(o.outputDir, root); err != nil {
			return err
		}
		res.TrustedRoot = trustedRootFile(o.outputDir)
	}
	if err := printReceiptsResult(cmd.OutOrStdout(), fo.json, o.outputDir, res); err != nil {
		return err
	}
	if len(res.Refused) > 0 || len(res.Weaker) > 0 {
		return cmdutil.SilentError{Err: fmt.Errorf("%d receipts did not verify, %d were weaker than the kept copies: %w",
			len(res.Refused), len(res.Weaker), protocol.ErrMismatch)}
	}
	return nil
}

// eachReceipt calls keep with every receipt of the operator after since, page by page.
func eachReceipt(ctx context.Context, c *client.Client, since string, keep func(json.RawMessage) error) error {
	opts := client.ReceiptsOptions{Since: since, Limit: 100}
	for {
		page, err := c.Receipts(ctx, opts)
		if err != nil {
			return err
		}
		for _, raw := range page.Receipts {
			if err := keep(raw); err != nil {
				return err
			}
		}
		if page.NextPageToken == nil || *page.NextPageToken == "" {
			return nil
		}
		opts.PageToken = *page.NextPageToken
	}
}

// keep verifies one receipt of operator and writes it when it verifies. A Merkle-form
// receipt proves one leaf: it must be operator's.
func (o *receiptsOptions) keep(raw json.RawMessage, operator string, keys *trustedKeys, res *receiptsResult) error {
	report, err := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: keys.federation, LogKey: keys.log})
	if err == nil && report.Receipt.Leaf != nil && report.Receipt.Leaf.OperatorID != operator {
		err = fmt.Errorf("%w: the receipt proves the leaf of %s, not this operator's (%s)", protocol.ErrMismatch, report.Receipt.Leaf.OperatorID, operator)
	}
	if err != nil {
		id := "(unreadable)"
		if report != nil && report.Receipt != nil {
			id = report.Receipt.AnchorID
		}
		res.Refused = append(res.Refused, refusedReceipt{AnchorID: id, Error: err.Error()})
		return nil
	}
	// The anchor ID has been checked ("anchor-YYYYMMDD-NNN"), so it names a file safely.
	id := report.Receipt.AnchorID
	path := filepath.Join(o.outputDir, id+".json")
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, raw):
		res.Unchanged = append(res.Unchanged, id)
		return o.bundle(report.Receipt, keys, res)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	case err == nil:
		kept := keptReceipt(old)
		if kept.CrossAnchorHash != "" && kept.CrossAnchorHash != report.Receipt.CrossAnchorHash {
			res.Refused = append(res.Refused, refusedReceipt{AnchorID: id, Error: fmt.Sprintf(
				"%s holds another anchor under this ID (cross_anchor_hash %s, the federation's now %s): kept, not replaced; an anchor ID names one anchor",
				path, kept.CrossAnchorHash, report.Receipt.CrossAnchorHash)})
			return nil
		}
		if served := report.Receipt.Leaf; kept.Leaf != nil && (served == nil || *served != *kept.Leaf) {
			res.Refused = append(res.Refused, refusedReceipt{AnchorID: id, Error: fmt.Sprintf(
				"%s proves another leaf of this anchor (last_seq %d) than the federation's now: kept, not replaced; an operator has one leaf in an anchor",
				path, kept.Leaf.LastSeq)})
			return nil
		}
		// Receipts only get stronger: the kept copy may be the only one of its log proof.
		if keptLegs, servedLegs := protocol.ReceiptLegs(old, keys.log), protocol.ReceiptLegs(raw, keys.log); servedLegs < keptLegs {
			res.Weaker = append(res.Weaker, weakerReceipt{AnchorID: id, KeptLegs: keptLegs, ServedLegs: servedLegs})
			return nil
		}
	}
	if err := atomicfile.Write(path, raw, 0o644); err != nil {
		return err
	}
	res.Written = append(res.Written, id)
	return o.bundle(report.Receipt, keys, res)
}

// bundle writes r's Sigstore bundle beside it when --format asks for one.
func (o *receiptsOptions) bundle(r *protocol.Receipt, keys *trustedKeys, res *receiptsResult) error {
	if o.format != formatSigstoreBundle {
		return nil
	}
	wrote, err := writeSigstoreBundle(o.outputDir, r, keys.log)
	if err != nil {
		return fmt.Errorf("the Sigstore bundle of %s: %w", r.AnchorID, err)
	}
	if wrote {
		res.Bundles = append(res.Bundles, sigstoreBundleFile(o.outputDir, r.AnchorID))
	}
	return nil
}

// keptCopy is what identifies a receipt kept on disk: its anchor's cross_anchor_hash
// and, in the Merkle form, its leaf.
type keptCopy struct {
	CrossAnchorHash string               `json:"cross_anchor_hash"`
	Leaf            *protocol.MerkleLeaf `json:"leaf"`
}

// keptReceipt reads the kept copy raw; the zero keptCopy when it holds no receipt. The
// same anchor's receipt is signed again (its log proof arrived, the federation rotated
// its key) and replaces the kept copy; another anchor's, or another leaf's, never does.
func keptReceipt(raw []byte) keptCopy {
	var k keptCopy
	if json.Unmarshal(raw, &k) != nil {
		return keptCopy{}
	}
	return k
}

// printReceiptsResult says what was written and what was refused.
func printReceiptsResult(w io.Writer, asJSON bool, dir string, res receiptsResult) error {
	if asJSON {
		return cmdutil.WriteJSON(w, res)
	}
	var b strings.Builder
	for _, id := range res.Written {
		fmt.Fprintf(&b, "wrote     %s\n", filepath.Join(dir, id+".json"))
	}
	for _, r := range res.Refused {
		fmt.Fprintf(&b, "REFUSED   %s: %s\n", r.AnchorID, r.Error)
	}
	for _, r := range res.Weaker {
		fmt.Fprintf(&b, "KEPT      %s: the federation served a weaker receipt (%s) than the one kept (%s): kept, not replaced\n",
			r.AnchorID, legsName(r.ServedLegs), legsName(r.KeptLegs))
	}
	for _, path := range res.Bundles {
		fmt.Fprintf(&b, "bundle    %s\n", path)
	}
	if res.TrustedRoot != "" {
		fmt.Fprintf(&b, "root      %s (the federation's Sigstore trusted root)\n", res.TrustedRoot)
	}
	fmt.Fprintf(&b, "%d written, %d unchanged, %d refused, %d weaker kept\n", len(res.Written), len(res.Unchanged), len(res.Refused), len(res.Weaker))
	_, err := io.WriteString(w, b.String())
	return err
}

// legsName says what a receipt with n verified legs proves.
func legsName(n int) string {
	switch n {
	case protocol.LegsLogged:
		return "signed and logged, its log proof verified"
	case protocol.LegsSigned:
		return "signed, no log proof"
	}
	return "nothing verified"
}
