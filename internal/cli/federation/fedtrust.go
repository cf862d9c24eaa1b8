package federation

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
)

// checkPins reads the keys the session's federation presents and checks them against its
// pins as policy says (clientconfig.Dir.Trust), before the command sends anything else.
// What it pins it says on standard error, with the fingerprints to compare.
func (o *federationOptions) checkPins(cmd *cobra.Command, s *session, policy clientconfig.Policy) error {
	st, err := s.client.Status(s.ctx)
	if err != nil {
		return err
	}
	v, err := o.dir().Trust(s.service, clientconfig.PresentedKeys(st), policy)
	if err != nil {
		return fmt.Errorf("refusing to send anything to %s: %w", s.service, err)
	}
	say := func(format string, args ...any) { _, _ = fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", args...) }
	switch {
	case v.Changed:
		say("trusting the new keys of %s: federation key %s (was %s), log ID %s (was %s)", s.service,
			v.Presented.FederationKey, v.Previous.FederationKey, v.Presented.LogID, v.Previous.LogID)
	case v.Pinned:
		say("first contact with %s: pinned its federation key %s and log ID %s; compare them with those its administrators "+
			"publish (cairn federation trust shows them)", s.service, v.Presented.FederationKey, v.Presented.LogID)
	}
	return nil
}

// pinPolicy is the policy of a command with --trust-new-key set to trustNew.
func pinPolicy(trustNew bool) clientconfig.Policy {
	if trustNew {
		return clientconfig.TrustPresented
	}
	return clientconfig.TrustOnFirstUse
}

// trustOptions configures `cairn federation trust`.
type trustOptions struct {
	cmdutil.NoCompletion
	cmdutil.NoValidation
	// fed are the flags every federation command shares.
	fed           *federationOptions
	yes           bool
	witnessPolicy string
}

// trustResult is what trust prints with --json.
type trustResult struct {
	Service   string                    `json:"service"`
	Presented clientconfig.Fingerprints `json:"presented"`
	// Pinned names the keys pinned before the command; null when none were.
	Pinned *clientconfig.Fingerprints `json:"pinned"`
	// Trusted is true when the presented keys are the pins after the command.
	Trusted bool `json:"trusted"`
	// WitnessPolicy is where the witness policy was pinned; empty when none was given.
	WitnessPolicy string `json:"witness_policy,omitempty"`
}

func newFederationTrustCommand(fo *federationOptions) *cobra.Command {
	o := &trustOptions{fed: fo}
	cmd := &cobra.Command{
		Use:   "trust --service URL [--yes]",
		Short: "Show a federation's key fingerprints and pin them (trust on first use)",
		Long: `Fetch the keys a federation presents (GET /federation/status), show their
fingerprints, and pin them for the federation in <config-dir>/federations/<host>/, as ssh
does on a first connection. Compare the fingerprints with those the federation's
administrators publish (the Federation's status.publicKeyFingerprint, its public page)
before saying yes.

Every command that talks to the federation then checks the keys it presents against the
pins before sending anything, and refuses other keys; after a federation rotated its key,
run trust again to pin the new one. register pins the keys itself; trust is for an
operator registered the GitOps way (kubectl apply), and for an auditor.

On a terminal, trust asks before pinning; elsewhere it pins only with --yes. Keys already
pinned are left as they are. --witness-policy pins a witness policy (the federation serves
its own at GET /federation/log/witnesses; pin the one your organization agreed to):
verify and audit then require its quorum of witnesses' cosignatures on every log proof.

Exit status: 0 pinned (or already pinned), 1 the federation could not be reached, 2 the
arguments are wrong or the keys were not confirmed.

Example:
  cairn federation trust --service https://federation.example.com
  cairn federation trust --service https://federation.example.com --yes   # in a script, after comparing`,
		Args: cmdutil.NoArgs,
		Example: `  # Show the keys a federation presents and pin them once compared
  cairn federation trust --service https://federation.example.org

  # Pin them without asking, after comparing the fingerprints out of band
  cairn federation trust --service https://federation.example.org --yes`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "pin the presented keys without asking")
	cmd.Flags().StringVar(&o.witnessPolicy, "witness-policy", "", "also pin this witness policy file: verify and audit then require its quorum of cosignatures")
	return cmd
}

// Run runs the command with the flags every federation command shares.
func (o *trustOptions) Run(cmd *cobra.Command) error { return o.run(cmd, o.fed) }

func (o *trustOptions) run(cmd *cobra.Command, fo *federationOptions) error {
	s, err := fo.connect(cmd, nil)
	if err != nil {
		return err
	}
	defer s.close()
	st, err := s.client.Status(s.ctx)
	if err != nil {
		return err
	}
	got := clientconfig.PresentedKeys(st)
	v, err := fo.dir().Trust(s.service, got, clientconfig.CheckOnly)
	var changed *clientconfig.KeyChangedError
	if err != nil && !errors.As(err, &changed) {
		return err
	}
	res := trustResult{Service: s.service, Presented: v.Presented, Pinned: v.Previous, Trusted: err == nil && v.Pins != nil}
	out := cmd.OutOrStdout()
	if !fo.json {
		writeTrust(out, res, changed != nil)
	}
	if !res.Trusted {
		if err := o.confirm(cmd, changed != nil); err != nil {
			if fo.json {
				_ = cmdutil.WriteJSON(out, res)
			}
			return err
		}
		if _, err := fo.dir().Trust(s.service, got, clientconfig.TrustPresented); err != nil {
			return err
		}
		res.Trusted = true
	}
	if o.witnessPolicy != "" {
		text, err := os.ReadFile(o.witnessPolicy)
		if err != nil {
			return fmt.Errorf("read witness policy: %w", err)
		}
		if res.WitnessPolicy, err = fo.dir().SaveWitnessPolicy(s.service, text); err != nil {
			return cmdutil.UsageError{Err: fmt.Errorf("--witness-policy %s: %w", o.witnessPolicy, err)}
		}
		if !fo.json {
			_, _ = fmt.Fprintf(out, "pinned the witness policy in %s\n", res.WitnessPolicy)
		}
	}
	if fo.json {
		return cmdutil.WriteJSON(out, res)
	}
	where, _ := fo.dir().FederationDir(s.service)
	if res.Pinned != nil && changed == nil {
		_, err = fmt.Fprintf(out, "already pinned in %s\n", where)
		return err
	}
	_, err = fmt.Fprintf(out, "pinned in %s\n", where)
	return err
}

// writeTrust shows the presented keys and, when any, the pinned ones.
func writeTrust(w io.Writer, res trustResult, changed bool) {
	var b strings.Builder
	row := func(label, value string) { fmt.Fprintf(&b, "%-16s%s\n", label, value) }
	row("federation", res.Service)
	row("federation key", res.Presented.FederationKey)
	row("log ID", res.Presented.LogID)
	switch {
	case res.Pinned == nil:
		row("pinned", "nothing yet: first contact")
	case changed:
		row("pinned", "OTHER KEYS: federation key "+res.Pinned.FederationKey+", log ID "+res.Pinned.LogID)
		b.WriteString("The federation presents other keys than those pinned. If its administrators rotated its key, the new\n" +
			"fingerprint is the one they publish; if not, someone may be impersonating it.\n")
	default:
		row("pinned", "the same keys")
	}
	_, _ = io.WriteString(w, b.String())
}

// confirm asks on a terminal whether to pin; elsewhere it requires --yes.
func (o *trustOptions) confirm(cmd *cobra.Command, replace bool) error {
	if o.yes {
		return nil
	}
	in, ok := cmd.InOrStdin().(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return cmdutil.UsageError{Err: errors.New("not confirmed: standard input is not a terminal; compare the fingerprints above " +
			"with those the federation's administrators publish, then run again with --yes")}
	}
	q := "Pin these keys?"
	if replace {
		q = "Replace the pinned keys with these?"
	}
	if _, err := fmt.Fprintf(cmd.ErrOrStderr(), "%s [y/N] ", q); err != nil {
		return err
	}
	answer, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return cmdutil.UsageError{Err: errors.New("not confirmed: nothing was pinned")}
	}
	return nil
}
