package federation

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// registerOptions configures `cairn federation register`.
type registerOptions struct {
	cmdutil.NoCompletion
	cmdutil.NoValidation
	// fed are the flags every federation command shares.
	fed                   *federationOptions
	publicKey, privateKey string
	org, contact          string
	output                string
	dryRun, trustNewKey   bool
}

func newFederationRegisterCommand(fo *federationOptions) *cobra.Command {
	o := &registerOptions{fed: fo}
	cmd := &cobra.Command{
		Use:   "register --service URL --public-key PATH --private-key PATH --org NAME",
		Short: "Register this organization's key with a federation",
		Long: `Register an operator: ask the federation for a challenge, sign it (a nonce without the
cairn-challenge: prefix is refused: the key signs nothing else), and post the public key,
the organization, the signed challenge and a proof of possession. With --contact, a rename
signed by the key is sent too: the proof of possession signs no contact, and the federation
shows none that the operator did not sign. Prints the operator ID.

On success the operator (its ID and the path of the private key, never the key) is
recorded in <config-dir>/federations/<host>/operator.json, the federation becomes the
default of the other commands, and the keys it presents (GET /federation/status) are
pinned there: federation.pem and log.pem. A federation that presents other keys than
those pinned is refused unless --trust-new-key is given.

--dry-run prints the registration that would be posted, without the challenge and its
signature, and sends nothing. --output writes the federation's answer to a file.

Exit status: 0 registered, 1 the federation refused or could not be reached, 2 the
arguments are wrong, 3 the federation presents keys other than those pinned.`,
		Args: cmdutil.NoArgs,
		Example: `  # Register with a federation, pinning its keys
  cairn federation register --service https://federation.example.org --org "Acme" \
    --public-key public.pem --private-key private.pem

  # Print the registration without sending it
  cairn federation register --service https://federation.example.org --org "Acme" \
    --public-key public.pem --private-key private.pem --dry-run`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.publicKey, "public-key", "", "the operator's public key, PEM (as cairn keygen writes it)")
	f.StringVar(&o.privateKey, "private-key", "", "the operator's private key, PEM")
	f.StringVar(&o.org, "org", "", "the organization's name")
	f.StringVar(&o.contact, "contact", "", "a contact e-mail address")
	f.StringVarP(&o.output, "output", "o", "", "write the federation's answer (JSON) to this file")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be posted and send nothing")
	f.BoolVar(&o.trustNewKey, "trust-new-key", false, "pin the federation's keys even if others are pinned")
	return cmd
}

// Run runs the command with the flags every federation command shares.
func (o *registerOptions) Run(cmd *cobra.Command) error { return o.run(cmd, o.fed) }

// dryRunRegistration is what register --dry-run prints.
type dryRunRegistration struct {
	PublicKeyPEM      string `json:"public_key_pem"`
	OrgName           string `json:"org_name"`
	ContactEmail      string `json:"contact_email"`
	ProofOfPossession string `json:"proof_of_possession"`
	OperatorID        string `json:"operator_id"`
	// Rename signs the contact (the proof of possession does not): a GitOps registration
	// puts it in spec.rename.
	Rename *protocol.Rename `json:"rename,omitempty"`
	Note   string           `json:"note"`
}

func (o *registerOptions) run(cmd *cobra.Command, fo *federationOptions) error {
	if o.publicKey == "" || o.privateKey == "" || o.org == "" {
		return cmdutil.UsageError{Err: errors.New("--public-key, --private-key and --org are required")}
	}
	key, err := cmdutil.LoadPrivateKey(o.privateKey)
	if err != nil {
		return err
	}
	pubText, err := os.ReadFile(o.publicKey)
	if err != nil {
		return fmt.Errorf("read public key: %w", err)
	}
	pub, err := protocol.ParsePublicKeyPEM(pubText)
	if err != nil {
		return fmt.Errorf("public key %s: %w", o.publicKey, err)
	}
	if !pub.Equal(key.Public()) {
		return fmt.Errorf("%s is not the public half of %s", o.publicKey, o.privateKey)
	}
	id := protocol.OperatorID(pub)
	stdout := cmd.OutOrStdout()
	if o.dryRun {
		dry := dryRunRegistration{
			PublicKeyPEM: string(pubText), OrgName: o.org, ContactEmail: o.contact,
			ProofOfPossession: protocol.SignRegistration(key, o.org), OperatorID: id,
			Note: "dry run: nothing was sent; registering also fetches a challenge and posts its signature (nonce, nonce_signature)",
		}
		if o.contact != "" {
			rn, err := protocol.NewRename(key, id, o.org, o.contact, time.Now())
			if err != nil {
				return cmdutil.UsageError{Err: err}
			}
			dry.Rename = &rn
		}
		return cmdutil.WriteJSON(stdout, dry)
	}
	s, err := fo.connect(cmd, nil)
	if err != nil {
		return err
	}
	defer s.close()
	service, c, ctx := s.service, s.client, s.ctx
	say := func(s string) { _, _ = fmt.Fprintln(cmd.ErrOrStderr(), s) }
	// The keys are checked before registering, so a federation that is not the pinned one
	// learns nothing; they are pinned only once the registration succeeded.
	st, err := c.Status(ctx)
	if err != nil {
		return err
	}
	_, err = fo.dir().CheckPins(service, clientconfig.PresentedKeys(st))
	if trusted := o.trustNewKey && errors.Is(err, clientconfig.ErrKeyChanged); err != nil && !trusted {
		return err
	}
	reg, err := c.Register(ctx, key, o.org, o.contact)
	if err != nil {
		return err
	}
	if reg.OperatorID != id {
		return fmt.Errorf("the federation registered %q, but the key's operator ID is %s", reg.OperatorID, id)
	}
	if err := o.record(fo, service, st, reg); err != nil {
		return err
	}
	pins, err := fo.dir().Pins(service)
	if err != nil {
		return err
	}
	where, _ := fo.dir().FederationDir(service)
	did := "registered"
	if reg.Pending() {
		did = "asked to register (the federation's administrators must approve it before it may submit)"
	}
	say(fmt.Sprintf("%s %s (%s) with %s; pinned its federation key %s in %s", did, id, o.org, service,
		protocol.Fingerprint(pins.FederationKey), where))
	if fo.json {
		return cmdutil.WriteJSON(stdout, reg)
	}
	_, err = fmt.Fprintln(stdout, reg.OperatorID)
	return err
}

// record writes --output, pins the keys, records the operator and makes service the
// default federation.
func (o *registerOptions) record(fo *federationOptions, service string, st *client.Status, reg *client.Registration) error {
	if o.output != "" {
		var b bytes.Buffer
		if err := cmdutil.WriteJSON(&b, reg); err != nil {
			return err
		}
		if err := atomicfile.Write(o.output, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if err := fo.dir().SavePins(service, clientconfig.PresentedKeys(st)); err != nil {
		return err
	}
	if err := fo.dir().SaveOperator(&clientconfig.Operator{Service: service, OperatorID: reg.OperatorID, OrgName: reg.OrgName,
		PrivateKey: o.privateKey, RegisteredAt: reg.RegisteredAt}); err != nil {
		return err
	}
	return fo.dir().SetDefaultService(service)
}
