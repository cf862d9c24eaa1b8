package cmdutil

import (
	"crypto/ed25519"
	"fmt"
	"os"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// LoadPrivateKey reads an operator's PEM private key.
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read private key: %w", err)
	}
	key, err := protocol.ParsePrivateKeyPEM(text)
	if err != nil {
		return nil, fmt.Errorf("private key %s: %w", path, err)
	}
	return key, nil
}
