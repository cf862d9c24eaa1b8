package store

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// LoadSecret reads the chain's HMAC secret: from hexValue (the value of CAIRN_HMAC_SECRET)
// if it is not empty, else from file, which holds it in hex (surrounding whitespace is
// ignored). The secret must be at least protocol.MinSecretBytes (16) bytes. Errors say
// what is missing or wrong, never what the secret is.
func LoadSecret(hexValue, file string) ([]byte, error) {
	from := "CAIRN_HMAC_SECRET"
	text := hexValue
	if text == "" {
		if file == "" {
			return nil, errors.New("no HMAC secret: set CAIRN_HMAC_SECRET or give a secret file")
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read HMAC secret: %w", err)
		}
		from = "secret file " + file
		text = string(b)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("HMAC secret in %s is empty", from)
	}
	secret, err := hex.DecodeString(text)
	if err != nil {
		// hex's error would quote a character of the secret.
		return nil, fmt.Errorf("HMAC secret in %s is not hex (0-9, a-f, an even number of digits)", from)
	}
	if len(secret) < protocol.MinSecretBytes {
		return nil, fmt.Errorf("HMAC secret in %s is %d bytes, want at least %d (%d hex digits)",
			from, len(secret), protocol.MinSecretBytes, 2*protocol.MinSecretBytes)
	}
	return secret, nil
}
