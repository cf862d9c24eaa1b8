package cmdutil

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/store"
)

// ChainOptions are the flags every command on the local chain shares.
type ChainOptions struct {
	DB         string
	SecretHex  string
	SecretFile string
}

// AddFlags binds --db, --secret-hex and --secret-file to o.
func (o *ChainOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.DB, "db", "chain.db", "path of the chain's SQLite file")
	cmd.Flags().StringVar(&o.SecretHex, "secret-hex", "", "HMAC secret in hex (prefer CAIRN_HMAC_SECRET: flags show in process lists)")
	cmd.Flags().StringVar(&o.SecretFile, "secret-file", "", "file holding the HMAC secret in hex")
}

// Secret loads the HMAC secret; with required false a missing secret is nil, not an error.
func (o *ChainOptions) Secret(required bool) ([]byte, error) {
	if !required && o.SecretHex == "" && o.SecretFile == "" {
		return nil, nil
	}
	return store.LoadSecret(o.SecretHex, o.SecretFile)
}

// Open opens the chain, with the secret when one is given (or required). A chain that
// does not exist is an error: nothing is created (see Create).
func (o *ChainOptions) Open(secretRequired bool) (*store.Store, error) {
	secret, err := o.Secret(secretRequired)
	if err != nil {
		return nil, UsageError{Err: err}
	}
	return store.OpenExisting(o.DB, secret)
}

// Create opens the chain with the secret, which is required, creating it when missing:
// only the commands that add entries to a new chain (seal) do.
func (o *ChainOptions) Create() (*store.Store, error) {
	secret, err := o.Secret(true)
	if err != nil {
		return nil, UsageError{Err: err}
	}
	return store.Open(o.DB, secret)
}

// SeqRange is a window of sequence numbers "A:B"; either end may be empty.
type SeqRange struct{ From, To int64 }

// ParseRange parses --range.
func ParseRange(s string) (SeqRange, error) {
	if s == "" {
		return SeqRange{}, nil
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return SeqRange{}, UsageError{Err: fmt.Errorf("--range %q: want FROM:TO, either side may be empty", s)}
	}
	var r SeqRange
	for _, p := range []struct {
		text string
		dst  *int64
	}{{a, &r.From}, {b, &r.To}} {
		if p.text == "" {
			continue
		}
		n, err := strconv.ParseInt(p.text, 10, 64)
		if err != nil || n < 1 {
			return SeqRange{}, UsageError{Err: fmt.Errorf("--range %q: %q is not a sequence number", s, p.text)}
		}
		*p.dst = n
	}
	if r.To != 0 && r.From > r.To {
		return SeqRange{}, UsageError{Err: fmt.Errorf("--range %q: FROM is after TO", s)}
	}
	return r, nil
}
