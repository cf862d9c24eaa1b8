package devenv

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Files of the local chain service in the state directory. They are made once and kept,
// so the chain and its exports stay verifiable across restarts.
const (
	// ChainDBFile is the chain's SQLite file.
	ChainDBFile = "chain.db"
	// ChainSecretFile holds the chain's HMAC secret in hex.
	ChainSecretFile = "chain-secret.hex"
	// OperatorKeyFile holds the operator's Ed25519 private key (PKCS #8 PEM) that signs
	// the chain's exports.
	OperatorKeyFile = "operator-key.pem"
)

// chainSecretBytes is the size of a generated HMAC secret.
const chainSecretBytes = 32

// Chain is what the local chain service runs with.
type Chain struct {
	// DB is the path of the chain's SQLite file.
	DB string
	// Secret is the chain's HMAC secret.
	Secret []byte
	// Key signs exports.
	Key ed25519.PrivateKey
}

// LoadChain returns the chain service's files in dir, creating the secret and the key
// the first time (mode 0600). Files are created exclusively, so two starts racing cannot
// end up with different secrets.
func LoadChain(dir string) (*Chain, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	secretPath := filepath.Join(dir, ChainSecretFile)
	err := createOnce(secretPath, func() ([]byte, error) {
		secret := make([]byte, chainSecretBytes)
		if _, err := rand.Read(secret); err != nil {
			return nil, err
		}
		return []byte(hex.EncodeToString(secret) + "\n"), nil
	})
	if err != nil {
		return nil, fmt.Errorf("chain secret: %w", err)
	}
	secret, err := store.LoadSecret("", secretPath)
	if err != nil {
		return nil, err
	}
	keyPath := filepath.Join(dir, OperatorKeyFile)
	err = createOnce(keyPath, func() ([]byte, error) {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		return protocol.MarshalPrivateKeyPEM(key)
	})
	if err != nil {
		return nil, fmt.Errorf("operator key: %w", err)
	}
	pemText, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("operator key: %w", err)
	}
	key, err := protocol.ParsePrivateKeyPEM(pemText)
	if err != nil {
		return nil, fmt.Errorf("operator key %s: %w", keyPath, err)
	}
	return &Chain{DB: filepath.Join(dir, ChainDBFile), Secret: secret, Key: key}, nil
}

// createOnce writes what generate returns to path, mode 0600, unless path exists.
func createOnce(path string, generate func() ([]byte, error)) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	data, err := generate()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil // another start made it first: keep theirs
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return errors.Join(err, f.Close(), os.Remove(path))
	}
	if err := f.Sync(); err != nil {
		return errors.Join(err, f.Close(), os.Remove(path))
	}
	return f.Close()
}
