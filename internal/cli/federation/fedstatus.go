package federation

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// statusOptions are `cairn federation status`'s.
type statusOptions struct {
	cmdutil.NoCompletion
	cmdutil.NoValidation
	fed         *federationOptions
	trustNewKey bool
}

func newFederationStatusCommand(fo *federationOptions) *cobra.Command {
	o := &statusOptions{fed: fo}
	cmd := &cobra.Command{
		Use:   "status [--service URL]",
		Short: "Show a federation's version, keys, counts and last anchor",
		Long: `Show the federation's version, its public key and log key (compared with the keys
pinned at registration), its operator and submission counts and its last anchor. --json
prints the federation's answer as it sent it.

Exit status: 0 shown, 1 the federation could not be reached, 2 the arguments are wrong,
3 it presents keys other than those pinned (--trust-new-key pins them instead).`,
		Args: cmdutil.NoArgs,
		Example: `  # The federation registered from this machine: version, keys, counts, last anchor
  cairn federation status

  # Another federation's, as JSON
  cairn federation status --service https://federation.example.org --json`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	cmd.Flags().BoolVar(&o.trustNewKey, "trust-new-key", false, "pin the keys the federation presents now, replacing any pinned ones (cairn federation trust shows them and asks first)")
	return cmd
}

// Run asks the federation for its status and compares its keys with the pins.
func (o *statusOptions) Run(cmd *cobra.Command) error {
	fo := o.fed
	s, err := fo.connect(cmd, nil)
	if err != nil {
		return err
	}
	defer s.close()
	service := s.service
	st, err := s.client.Status(s.ctx)
	if err != nil {
		return err
	}
	pinned := "not pinned"
	pins, pinErr := fo.dir().CheckPins(service, clientconfig.PresentedKeys(st))
	switch {
	case o.trustNewKey && (errors.Is(pinErr, clientconfig.ErrKeyChanged) || pinErr == nil && pins == nil):
		if err := fo.dir().SavePins(service, clientconfig.PresentedKeys(st)); err != nil {
			return err
		}
		pinned, pinErr = "pinned now (--trust-new-key)", nil
	case pinErr == nil && pins != nil:
		pinned = "pinned"
	}
	if fo.json {
		if _, err := cmd.OutOrStdout().Write(append(st.Raw, '\n')); err != nil {
			return err
		}
		return pinErr
	}
	if pinErr != nil {
		pinned = "CHANGED: " + pinErr.Error()
	}
	if _, err := io.WriteString(cmd.OutOrStdout(), formatStatus(service, st, pinned)); err != nil {
		return err
	}
	if pinErr != nil {
		return cmdutil.SilentError{Err: pinErr} // the table says it
	}
	return nil
}

// formatStatus writes a status answer as a table; pinned says how its keys stand to the pins.
func formatStatus(service string, st *client.Status, pinned string) string {
	var b strings.Builder
	row := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-16s%s\n", label, fmt.Sprintf(format, args...))
	}
	row("federation", "%s", service)
	row("version", "%s", st.Version)
	row("federation key", "%s", keyName(st.FederationPublicKey))
	row("log key", "%s", logKeyName(st.TLogPublicKey))
	row("keys", "%s", pinned)
	row("operators", "%d active of %d", st.OperatorsActive, st.OperatorsTotal)
	row("submissions", "%d in the last 24 hours", st.SubmissionsLast24h)
	if a := st.LastAnchor; a != nil {
		row("last anchor", "%s at %s, %d participants", a.AnchorID, a.AnchoredAt, a.Participants)
	} else {
		row("last anchor", "none yet")
	}
	row("up for", "%s", time.Duration(st.UptimeSeconds)*time.Second)
	return b.String()
}

// keyName names a federation key by its fingerprint.
func keyName(pemText string) string {
	k, err := protocol.ParsePublicKeyPEM([]byte(pemText))
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return "sha256:" + protocol.Fingerprint(k)
}

// logKeyName names a log key by its log ID.
func logKeyName(pemText string) string {
	if pemText == "" {
		return "none named"
	}
	k, err := protocol.ParseLogPublicKeyPEM([]byte(pemText))
	if err != nil {
		return "unreadable: " + err.Error()
	}
	id, err := protocol.LogID(k)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return "log ID " + id
}
