package federation

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// renameOptions configures `cairn federation rename`.
type renameOptions struct {
	cmdutil.NoCompletion
	cmdutil.NoValidation
	// fed are the flags every federation command shares.
	fed          *federationOptions
	operator     operatorFlags
	org, contact string
	dryRun       bool
}

func newFederationRenameCommand(fo *federationOptions) *cobra.Command {
	o := &renameOptions{fed: fo}
	cmd := &cobra.Command{
		Use:   "rename --org NAME [--contact CONTACT]",
		Short: "Change the organization name and contact the federation shows",
		Long: `Rename the operator: sign, with its current key, a rename stating the organization's
name and contact ("rename " and the RFC 8785 JSON of {at, contact, operator_id, org_name},
docs/PROTOCOL.md §6) and send it. The federation applies it once it verifies and is later
than the rename in force, logs a rename record, and from then on shows this name and
contact: it shows no name or contact the operator did not sign. An empty --contact states
that there is none.

--dry-run prints the signed rename and the spec.rename to apply with kubectl (GitOps), and
sends nothing.

Exit status: 0 renamed, 1 refused or the federation could not be reached, 2 the arguments
are wrong.`,
		Args: cmdutil.NoArgs,
		Example: `  # Change the organization name the federation shows for this operator
  cairn federation rename --org "Acme Corporation"`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.operator.add(cmd)
	cmd.Flags().StringVar(&o.org, "org", "", "the organization's name")
	cmd.Flags().StringVar(&o.contact, "contact", "", "how to reach the organization (empty: none)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the signed rename and send nothing")
	return cmd
}

// Run runs the command with the flags every federation command shares.
func (o *renameOptions) Run(cmd *cobra.Command) error { return o.run(cmd, o.fed) }

// dryRunRename is what rename --dry-run prints: the statement, and the same as the
// FederationOperator's spec.rename.
type dryRunRename struct {
	Rename protocol.Rename `json:"rename"`
	Spec   map[string]any  `json:"spec"`
	Note   string          `json:"note"`
}

func (o *renameOptions) run(cmd *cobra.Command, fo *federationOptions) error {
	if o.org == "" {
		return cmdutil.UsageError{Err: errors.New("--org is required")}
	}
	if o.dryRun {
		return o.dryRunRename(cmd, fo)
	}
	s, err := fo.connect(cmd, &o.operator)
	if err != nil {
		return err
	}
	defer s.close()
	if err := fo.checkPins(cmd, s, clientconfig.TrustOnFirstUse); err != nil {
		return err
	}
	res, err := s.client.Rename(s.ctx, o.org, o.contact)
	if err != nil {
		return err
	}
	if fo.json {
		return cmdutil.WriteJSON(cmd.OutOrStdout(), res)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "renamed %s to %s, contact %s (signed at %s, logged at index %d)\n",
		res.OperatorID, protocol.Quote(res.OrgName), protocol.Quote(res.Contact), res.RenamedAt, res.TLogLogIndex)
	return err
}

// dryRunRename signs the rename with the operator's key and prints it, sending nothing.
func (o *renameOptions) dryRunRename(cmd *cobra.Command, fo *federationOptions) error {
	service, err := fo.serviceURL()
	if err != nil {
		return err
	}
	id, keyPath := o.operator.id, o.operator.privateKey
	if service != "" { // the recorded operator fills in what the flags leave out
		op, err := fo.operator(service, o.operator)
		if err != nil {
			return err
		}
		id, keyPath = op.id, op.keyPath
	}
	if id == "" || keyPath == "" {
		return cmdutil.UsageError{Err: errors.New("--operator-id and --private-key are required: no federation is recorded on this machine")}
	}
	key, err := cmdutil.LoadPrivateKey(keyPath)
	if err != nil {
		return err
	}
	rn, err := protocol.NewRename(key, id, o.org, o.contact, time.Now())
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	var spec map[string]any
	raw, err := json.Marshal(map[string]any{"rename": map[string]string{"orgName": rn.OrgName, "contact": rn.Contact, "at": rn.At, "signature": rn.Signature}})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		return err
	}
	return cmdutil.WriteJSON(cmd.OutOrStdout(), dryRunRename{Rename: rn, Spec: spec,
		Note: "dry run: nothing was sent; apply spec.rename to the operator's FederationOperator (kubectl apply), or run without --dry-run"})
}
