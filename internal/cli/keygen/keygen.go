// Package keygen is `cairn keygen`: the Ed25519 key pair of an operator or a federation.
package keygen

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Key files that keygen writes.
const (
	PrivateKeyFile = "private.pem"
	PublicKeyFile  = "public.pem"
)

// options are `cairn keygen`'s.
type options struct {
	cmdutil.NoCompletion
	cmdutil.NoValidation
	dir           string
	force, asJSON bool
}

// NewCommand returns `cairn keygen`.
func NewCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Generate an Ed25519 key pair for an operator or a federation",
		Long: `Generate an Ed25519 key pair: private.pem (PKCS #8, mode 0600) and public.pem
(SubjectPublicKeyInfo). Existing files are kept unless --force is given. The operator ID
and fingerprint of the new key are printed on stdout; with --json as one JSON document
(operator_id, fingerprint, private_key, public_key).`,
		Args: cmdutil.NoArgs,
		Example: `  # Generate an operator's key pair in ./keys
  cairn keygen --output-dir keys

  # Replace the key pair in the current directory
  cairn keygen --force`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	cmd.Flags().StringVar(&o.dir, "output-dir", ".", "directory to write private.pem and public.pem into")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite existing key files")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the new key's operator ID, fingerprint and paths as JSON")
	return cmd
}

// keygenJSON is what keygen --json prints.
type keygenJSON struct {
	OperatorID  string `json:"operator_id"`
	Fingerprint string `json:"fingerprint"`
	PrivateKey  string `json:"private_key"`
	PublicKey   string `json:"public_key"`
}

// Run writes the key pair and prints its operator ID and fingerprint.
func (o *options) Run(cmd *cobra.Command) error {
	pub, err := writeKeyPair(o.dir, o.force)
	if err != nil {
		return err
	}
	if o.asJSON {
		return cmdutil.WriteJSON(cmd.OutOrStdout(), keygenJSON{OperatorID: protocol.OperatorID(pub), Fingerprint: protocol.Fingerprint(pub),
			PrivateKey: filepath.Join(o.dir, PrivateKeyFile), PublicKey: filepath.Join(o.dir, PublicKeyFile)})
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "operator_id  %s\nfingerprint  %s\nprivate key  %s\npublic key   %s\n",
		protocol.OperatorID(pub), protocol.Fingerprint(pub),
		filepath.Join(o.dir, PrivateKeyFile), filepath.Join(o.dir, PublicKeyFile))
	return err
}

// writeKeyPair generates a key pair into dir. Without force it writes nothing if either
// file exists, and creates both exclusively, so a concurrent run cannot be overwritten.
func writeKeyPair(dir string, force bool) (ed25519.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	privPEM, err := protocol.MarshalPrivateKeyPEM(priv)
	if err != nil {
		return nil, err
	}
	pubPEM, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		return nil, err
	}
	privPath, pubPath := filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, PublicKeyFile)
	if !force {
		for _, p := range []string{privPath, pubPath} {
			if _, err := os.Stat(p); err == nil {
				return nil, fmt.Errorf("%s exists; pass --force to replace it", p)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeFile(privPath, privPEM, 0o600, force); err != nil {
		return nil, err
	}
	if err := writeFile(pubPath, pubPEM, 0o644, force); err != nil {
		return nil, errors.Join(err, os.Remove(privPath))
	}
	return pub, nil
}

// writeFile writes data to path with mode perm, replacing an existing file only if
// replace is set. The mode is applied even when the file existed.
func writeFile(path string, data []byte, perm os.FileMode, replace bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if replace {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, perm)
	if err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return errors.Join(err, f.Close())
	}
	if _, err := f.Write(data); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}
