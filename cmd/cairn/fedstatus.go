package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

func newFederationStatusCommand(fo *federationOptions) *cobra.Command {
	var trustNewKey bool
	cmd := &cobra.Command{
		Use:   "status [--service URL]",
		Short: "Show a federation's version, keys, counts and last anchor",
		Long: `Show the federation's version, its public key and log key (compared with the keys
pinned at registration), its operator and submission counts and its last anchor. --json
prints the federation's answer as it sent it.

Exit status: 0 shown, 1 the federation could not be reached, 2 the arguments are wrong,
3 it presents keys other than those pinned (--trust-new-key pins them instead).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			service, err := fo.requireService()
			if err != nil {
				return err
			}
			c, err := fo.newClient(service)
			if err != nil {
				return usageError{err}
			}
			ctx, cancel := fo.context(cmd.Context())
			defer cancel()
			st, err := c.Status(ctx)
			if err != nil {
				return err
			}
			pinned := "not pinned"
			pins, pinErr := fo.dir().CheckPins(service, presentedKeys(st))
			switch {
			case errors.Is(pinErr, clientconfig.ErrKeyChanged) && trustNewKey:
				if err := fo.dir().SavePins(service, presentedKeys(st)); err != nil {
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
			var b strings.Builder
			tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "federation\t%s\n", service)
			fmt.Fprintf(tw, "version\t%s\n", st.Version)
			fmt.Fprintf(tw, "federation key\t%s\n", keyName(st.FederationPublicKey))
			fmt.Fprintf(tw, "log key\t%s\n", logKeyName(st.TLogPublicKey))
			if pinErr != nil {
				pinned = "CHANGED: " + pinErr.Error()
			}
			fmt.Fprintf(tw, "keys\t%s\n", pinned)
			fmt.Fprintf(tw, "operators\t%d active of %d\n", st.OperatorsActive, st.OperatorsTotal)
			fmt.Fprintf(tw, "submissions\t%d in the last 24 hours\n", st.SubmissionsLast24h)
			if a := st.LastAnchor; a != nil {
				fmt.Fprintf(tw, "last anchor\t%s at %s, %d participants\n", a.AnchorID, a.AnchoredAt, a.Participants)
			} else {
				fmt.Fprintf(tw, "last anchor\tnone yet\n")
			}
			fmt.Fprintf(tw, "up for\t%s\n", time.Duration(st.UptimeSeconds)*time.Second)
			if err := tw.Flush(); err != nil {
				return err
			}
			if _, err := cmd.OutOrStdout().Write([]byte(b.String())); err != nil {
				return err
			}
			return pinErr
		},
	}
	cmd.Flags().BoolVar(&trustNewKey, "trust-new-key", false, "pin the keys the federation presents now, replacing the pinned ones")
	return cmd
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
