package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/store"
)

// chainOptions are the flags every command on the local chain shares.
type chainOptions struct {
	db         string
	secretHex  string
	secretFile string
}

func (o *chainOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.db, "db", "chain.db", "path of the chain's SQLite file")
	cmd.Flags().StringVar(&o.secretHex, "secret-hex", "", "HMAC secret in hex (prefer CAIRN_HMAC_SECRET: flags show in process lists)")
	cmd.Flags().StringVar(&o.secretFile, "secret-file", "", "file holding the HMAC secret in hex")
}

// secret loads the HMAC secret; with required false a missing secret is nil, not an error.
func (o *chainOptions) secret(required bool) ([]byte, error) {
	if !required && o.secretHex == "" && o.secretFile == "" {
		return nil, nil
	}
	return store.LoadSecret(o.secretHex, o.secretFile)
}

// open opens the chain, with the secret when one is given (or required). A chain that
// does not exist is an error: nothing is created (see create).
func (o *chainOptions) open(secretRequired bool) (*store.Store, error) {
	secret, err := o.secret(secretRequired)
	if err != nil {
		return nil, usageError{err}
	}
	return store.OpenExisting(o.db, secret)
}

// create opens the chain with the secret, which is required, creating it when missing:
// only the commands that add entries to a new chain (seal) do.
func (o *chainOptions) create() (*store.Store, error) {
	secret, err := o.secret(true)
	if err != nil {
		return nil, usageError{err}
	}
	return store.Open(o.db, secret)
}

// seqRange is a window of sequence numbers "A:B"; either end may be empty.
type seqRange struct{ from, to int64 }

func parseRange(s string) (seqRange, error) {
	if s == "" {
		return seqRange{}, nil
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return seqRange{}, usageError{fmt.Errorf("--range %q: want FROM:TO, either side may be empty", s)}
	}
	var r seqRange
	for _, p := range []struct {
		text string
		dst  *int64
	}{{a, &r.from}, {b, &r.to}} {
		if p.text == "" {
			continue
		}
		n, err := strconv.ParseInt(p.text, 10, 64)
		if err != nil || n < 1 {
			return seqRange{}, usageError{fmt.Errorf("--range %q: %q is not a sequence number", s, p.text)}
		}
		*p.dst = n
	}
	if r.to != 0 && r.from > r.to {
		return seqRange{}, usageError{fmt.Errorf("--range %q: FROM is after TO", s)}
	}
	return r, nil
}
