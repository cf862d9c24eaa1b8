// Package federation is `cairn federation`, the commands of a federation's member
// organizations and auditors: register, submit, fetch and verify receipts, rotate keys,
// withdraw, and audit anchors offline.
package federation

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// legacyPinnedKeyFile is where clients before per-federation pins kept the one pinned
// federation key, in the configuration directory; it is still read when the federation
// has no pins of its own.
const legacyPinnedKeyFile = "federation.pem"

// federationOptions are the flags every `cairn federation` command shares.
type federationOptions struct {
	service   string
	configDir string
	json      bool
	timeout   time.Duration
}

// NewCommand returns `cairn federation` and its subcommands.
func NewCommand() *cobra.Command {
	o := &federationOptions{timeout: 5 * time.Minute}
	if dir, err := os.UserConfigDir(); err == nil {
		o.configDir = filepath.Join(dir, "cairn")
	}
	cmd := &cobra.Command{
		Use:   "federation",
		Short: "Work with a Cairn federation as an operator or an auditor",
		Long: `Join a federation, submit your chain to it and keep its receipts; verify receipts and
audit anchors offline.

The federation is --service, else CAIRN_FEDERATION_URL, else the one this machine last
registered with. Registration records the operator (its ID and the path of its private
key) and pins the federation's public key and its log's key in
<config-dir>/federations/<host>/, as ssh pins a host's key; an operator registered the
GitOps way, or an auditor, pins them with cairn federation trust. Every command that
talks to a federation checks the keys it presents against the pins before sending
anything else: other keys are refused until they are pinned again (cairn federation
trust, or --trust-new-key).`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.service, "service", "", "base URL of the federation (default: the one this machine registered with)")
	pf.StringVar(&o.configDir, "config-dir", o.configDir, "client configuration directory: the default federation, operators and pinned keys")
	pf.BoolVar(&o.json, "json", false, "print the result as JSON")
	pf.DurationVar(&o.timeout, "timeout", o.timeout, "give up on the federation after this long")
	cmd.AddCommand(newFederationVerifyCommand(o), newFederationRegisterCommand(o), newFederationStatusCommand(o),
		newFederationSubmitCommand(o), newFederationReceiptsCommand(o), newFederationWithdrawCommand(o),
		newFederationRotateKeyCommand(o), newFederationRenameCommand(o), newFederationAuditCommand(o),
		newFederationTrustCommand(o))
	return cmd
}

// dir is the client configuration directory.
func (o *federationOptions) dir() clientconfig.Dir { return clientconfig.Dir(o.configDir) }

// serviceURL returns the federation to talk to: --service (or CAIRN_FEDERATION_URL), else
// the default recorded at registration; "" when there is none.
func (o *federationOptions) serviceURL() (string, error) {
	if o.service != "" {
		if _, err := clientconfig.HostOf(o.service); err != nil {
			return "", cmdutil.UsageError{Err: fmt.Errorf("--service: %w", err)}
		}
		return o.service, nil
	}
	if o.configDir == "" {
		return "", nil
	}
	return o.dir().DefaultService()
}

// session is one command's conversation with a federation.
type session struct {
	service string
	client  *client.Client
	op      *actingOperator // nil unless the command acts as an operator
	ctx     context.Context // bounded by --timeout
	cancel  context.CancelFunc
}

// connect resolves the federation and, when opFlags is not nil, the operator the command
// acts as, and returns a session whose context --timeout bounds; close it when done.
func (o *federationOptions) connect(cmd *cobra.Command, opFlags *operatorFlags) (*session, error) {
	service, err := o.serviceURL()
	if err == nil && service == "" {
		err = cmdutil.UsageError{Err: errors.New("no federation given: pass --service URL or set CAIRN_FEDERATION_URL (registering records a default)")}
	}
	if err != nil {
		return nil, err
	}
	s := &session{service: service}
	opts := []client.Option{sayRetries(cmd.ErrOrStderr())}
	if opFlags != nil {
		if s.op, err = o.operator(service, *opFlags); err != nil {
			return nil, err
		}
		opts = append(opts, client.WithOperator(s.op.id, s.op.key))
	}
	if s.client, err = client.New(service, opts...); err != nil {
		return nil, cmdutil.UsageError{Err: err}
	}
	s.ctx, s.cancel = context.WithTimeout(cmd.Context(), o.timeout)
	return s, nil
}

// close ends the session.
func (s *session) close() { s.cancel() }

// operatorFlags name the operator a command acts as; empty flags default to the operator
// recorded at registration.
type operatorFlags struct {
	id         string
	privateKey string
}

func (f *operatorFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.id, "operator-id", "", "the operator's ID (default: the one recorded at registration)")
	cmd.Flags().StringVar(&f.privateKey, "private-key", "", "the operator's current private key, PEM (default: the one recorded at registration)")
}

// actingOperator is the operator a command acts as at a federation.
type actingOperator struct {
	id      string
	key     ed25519.PrivateKey
	keyPath string
	record  *clientconfig.Operator // nil when none is recorded
}

// operator resolves the operator of f at service and loads its key.
func (o *federationOptions) operator(service string, f operatorFlags) (*actingOperator, error) {
	rec, err := o.dir().Operator(service)
	if err != nil {
		return nil, err
	}
	op := &actingOperator{id: f.id, keyPath: f.privateKey, record: rec}
	if rec != nil {
		if op.id == "" {
			op.id = rec.OperatorID
		}
		if op.keyPath == "" {
			op.keyPath = rec.PrivateKey
		}
	}
	if op.id == "" || op.keyPath == "" {
		return nil, cmdutil.UsageError{Err: fmt.Errorf("--operator-id and --private-key are required: no operator is recorded for %s on this machine (register from it first)", service)}
	}
	if op.key, err = cmdutil.LoadPrivateKey(op.keyPath); err != nil {
		return nil, err
	}
	return op, nil
}

// trustFlags name the keys an offline check trusts; empty flags default to the pins.
type trustFlags struct {
	federationKey string
	logKey        string
	witnessPolicy string
}

func (f *trustFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.federationKey, "federation-key", "", "PEM file of the federation public key to trust (default: the pinned one)")
	cmd.Flags().StringVar(&f.logKey, "log-key", "", "PEM file of the transparency log's public key to require (default: the pinned one)")
	cmd.Flags().StringVar(&f.witnessPolicy, "witness-policy", "", "witness policy file: require its quorum of cosignatures on each log proof's checkpoint (default: the pinned one, if any)")
}

// trustedKeys are the keys an offline check trusts, and where each came from.
type trustedKeys struct {
	federation     ed25519.PublicKey // nil: none
	federationFrom string
	log            crypto.PublicKey // nil: none
	logFrom        string
	witnesses      *witness.Policy // nil: none required
	witnessesFrom  string
	// seen remembers the checkpoints verified on this machine ("" remembers nothing).
	seen clientconfig.Dir
}

// trusted loads the keys of f, else the pins of the federation (when one is named or
// recorded), else the legacy pinned federation key of the configuration directory.
func (o *federationOptions) trusted(f trustFlags) (*trustedKeys, error) {
	t := &trustedKeys{federationFrom: "none", logFrom: "none"}
	var pins *clientconfig.Pins
	var pinsFrom string
	if svc, err := o.serviceURL(); err != nil {
		return nil, err
	} else if svc != "" {
		if pins, err = o.dir().Pins(svc); err != nil {
			return nil, err
		}
		host, _ := clientconfig.HostOf(svc)
		pinsFrom = "pinned for " + host
	}
	switch {
	case f.federationKey != "":
		text, err := os.ReadFile(f.federationKey)
		if err != nil {
			return nil, fmt.Errorf("read federation key: %w", err)
		}
		if t.federation, err = protocol.ParsePublicKeyPEM(text); err != nil {
			return nil, fmt.Errorf("federation key %s: %w", f.federationKey, err)
		}
		t.federationFrom = "--federation-key " + f.federationKey
	case pins != nil:
		t.federation, t.federationFrom = pins.FederationKey, pinsFrom
	case o.configDir != "":
		path := filepath.Join(o.configDir, legacyPinnedKeyFile)
		text, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("read federation key: %w", err)
		default:
			if t.federation, err = protocol.ParsePublicKeyPEM(text); err != nil {
				return nil, fmt.Errorf("federation key %s: %w", path, err)
			}
			t.federationFrom = "pinned " + path
		}
	}
	switch {
	case f.logKey != "":
		text, err := os.ReadFile(f.logKey)
		if err != nil {
			return nil, fmt.Errorf("read log key: %w", err)
		}
		if t.log, err = protocol.ParseLogPublicKeyPEM(text); err != nil {
			return nil, fmt.Errorf("log key %s: %w", f.logKey, err)
		}
		t.logFrom = "--log-key " + f.logKey
	case pins != nil && pins.LogKey != nil:
		t.log, t.logFrom = pins.LogKey, pinsFrom
	}
	if err := o.trustedWitnesses(f, t); err != nil {
		return nil, err
	}
	return t, nil
}

// trustedWitnesses loads the witness policy of f, else the one pinned for the federation.
func (o *federationOptions) trustedWitnesses(f trustFlags, t *trustedKeys) error {
	t.witnessesFrom, t.seen = "none", o.dir()
	if f.witnessPolicy != "" {
		text, err := os.ReadFile(f.witnessPolicy)
		if err != nil {
			return fmt.Errorf("read witness policy: %w", err)
		}
		if t.witnesses, err = witness.ParsePolicy(text); err != nil {
			return cmdutil.UsageError{Err: fmt.Errorf("--witness-policy %s: %w", f.witnessPolicy, err)}
		}
		t.witnessesFrom = "--witness-policy " + f.witnessPolicy
		return nil
	}
	svc, err := o.serviceURL()
	if err != nil || svc == "" {
		return err
	}
	p, path, err := o.dir().WitnessPolicy(svc)
	if err != nil || p == nil {
		return err
	}
	t.witnesses, t.witnessesFrom = p, "pinned "+path
	return nil
}
