package federation

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
)

// withdrawOptions are `cairn federation withdraw`'s.
type withdrawOptions struct {
	cmdutil.NoCompletion
	cmdutil.NoValidation
	fed     *federationOptions
	opFlags operatorFlags
	yes     bool
}

func newFederationWithdrawCommand(fo *federationOptions) *cobra.Command {
	o := &withdrawOptions{fed: fo}
	cmd := &cobra.Command{
		Use:   "withdraw",
		Short: "Withdraw the operator from the federation, for good",
		Long: `Withdraw the operator: sign a withdrawal statement ("withdraw <operator_id> at <time>")
with its current key and send it. The federation logs the withdrawal and accepts no more
submissions from the operator; its receipts stay readable. An operator ID is never
registered again, nor is any key it held.

It cannot be undone, so on a terminal it asks you to type the operator ID first; --yes
skips the question. Without a terminal (a script, a pipe) it needs --yes and never reads a
confirmation from standard input.

Exit status: 0 withdrawn, 1 refused, not confirmed, or the federation could not be
reached, 2 the arguments are wrong (no terminal and no --yes).`,
		Args: cmdutil.NoArgs,
		Example: `  # Withdraw the operator registered from this machine, confirming on the terminal
  cairn federation withdraw

  # From a script, after the decision was made elsewhere
  cairn federation withdraw --operator-id op-1a2b3c --private-key private.pem --yes`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.opFlags.add(cmd)
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "withdraw without asking for confirmation")
	return cmd
}

// Run asks for confirmation unless --yes, then sends the signed withdrawal.
func (o *withdrawOptions) Run(cmd *cobra.Command) error {
	fo := o.fed
	s, err := fo.connect(cmd, &o.opFlags)
	if err != nil {
		return err
	}
	defer s.close()
	if err := fo.checkPins(cmd, s, clientconfig.TrustOnFirstUse); err != nil {
		return err
	}
	if !o.yes {
		if err := cmdutil.ConfirmIrreversible(cmd, fmt.Sprintf("Withdraw %s from %s for good: it can never submit or register again.", s.op.id, s.service), s.op.id); err != nil {
			return err
		}
	}
	res, err := s.client.Withdraw(s.ctx)
	if err != nil {
		return err
	}
	if fo.json {
		return cmdutil.WriteJSON(cmd.OutOrStdout(), res)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "withdrew %s at %s (logged at index %d)\n", res.OperatorID, res.WithdrawnAt, res.TLogLogIndex)
	return err
}

// rotateKeyOptions are `cairn federation rotate-key`'s.
type rotateKeyOptions struct {
	cmdutil.NoCompletion
	fed        *federationOptions
	opFlags    operatorFlags
	newKeyPath string
}

func newFederationRotateKeyCommand(fo *federationOptions) *cobra.Command {
	o := &rotateKeyOptions{fed: fo}
	cmd := &cobra.Command{
		Use:   "rotate-key --new-private-key PATH",
		Short: "Replace the operator's key with a new one",
		Long: `Rotate the operator's key: sign the new public key and the time with the current key
and with the new one, and send both. The operator keeps its ID; the federation logs the
rotation and from then on accepts only the new key's signatures. On success the operator
recorded for the federation points at the new private key.

Exit status: 0 rotated, 1 refused or the federation could not be reached, 2 the arguments
are wrong.`,
		Args: cmdutil.NoArgs,
		Example: `  # Make a new key and rotate the registered operator to it
  cairn keygen --output-dir new-key
  cairn federation rotate-key --new-private-key new-key/private.pem`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.opFlags.add(cmd)
	cmd.Flags().StringVar(&o.newKeyPath, "new-private-key", "", "the new private key, PEM (cairn keygen writes one)")
	return cmd
}

// Validate requires --new-private-key.
func (o *rotateKeyOptions) Validate() error {
	if o.newKeyPath == "" {
		return cmdutil.UsageError{Err: errors.New("--new-private-key is required")}
	}
	return nil
}

// Run signs the rotation with both keys, sends it and records the new key.
func (o *rotateKeyOptions) Run(cmd *cobra.Command) error {
	fo := o.fed
	newKey, err := cmdutil.LoadPrivateKey(o.newKeyPath)
	if err != nil {
		return err
	}
	s, err := fo.connect(cmd, &o.opFlags)
	if err != nil {
		return err
	}
	defer s.close()
	if err := fo.checkPins(cmd, s, clientconfig.TrustOnFirstUse); err != nil {
		return err
	}
	service, op := s.service, s.op
	if newKey.Equal(op.key) {
		return cmdutil.UsageError{Err: errors.New("--new-private-key is the operator's current key")}
	}
	res, err := s.client.RotateKey(s.ctx, newKey)
	if err != nil {
		return err
	}
	rec := clientconfig.Operator{Service: service, OperatorID: op.id, PrivateKey: o.newKeyPath}
	if op.record != nil && op.record.OperatorID == op.id {
		rec = *op.record
		rec.PrivateKey = o.newKeyPath
	}
	if err := fo.dir().SaveOperator(&rec); err != nil {
		return fmt.Errorf("rotated, but recording the new key failed (pass --private-key %s from now on): %w", o.newKeyPath, err)
	}
	if fo.json {
		return cmdutil.WriteJSON(cmd.OutOrStdout(), res)
	}
	abs, _ := filepath.Abs(o.newKeyPath)
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "rotated %s to key sha256:%s at %s (logged at index %d); now signing with %s\n",
		res.OperatorID, res.NewFingerprint, res.RotatedAt, res.TLogLogIndex, abs)
	return err
}
