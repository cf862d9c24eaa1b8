package witness

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// LogKey is a log a witness trusts: its origin and its Ed25519 checkpoint key. Its text
// form is the log's signed-note verifier key, "<origin>+<hash>+<base64 of 0x01 and the
// key>", as golang.org/x/mod/sumdb/note prints it and tessera logs sign under.
type LogKey struct {
	Origin string
	Public ed25519.PublicKey
}

// ParseLogKey reads a log's signed-note verifier key and checks its key hash.
func ParseLogKey(vkey string) (LogKey, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(vkey), "+")
	hash16, key64, _ := strings.Cut(rest, "+")
	raw, err := base64.StdEncoding.Strict().DecodeString(key64)
	if !validName(name) || len(hash16) != 8 || err != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != algEd25519 {
		return LogKey{}, fmt.Errorf("%w: %q is not a log's <origin>+<hash>+<base64 Ed25519 key> verifier key", ErrBadKey, vkey)
	}
	k := LogKey{Origin: name, Public: ed25519.PublicKey(raw[1:])}
	if hash, err := strconv.ParseUint(hash16, 16, 32); err != nil || uint32(hash) != k.keyHash() {
		return LogKey{}, fmt.Errorf("%w: the key hash of the log key %q does not match its origin and key", ErrBadKey, name)
	}
	return k, nil
}

// String returns the log key's verifier-key text form.
func (k LogKey) String() string {
	return fmt.Sprintf("%s+%08x+%s", k.Origin, k.keyHash(), base64.StdEncoding.EncodeToString(append([]byte{algEd25519}, k.Public...)))
}

func (k LogKey) keyHash() uint32 {
	h := sha256.New()
	h.Write([]byte(k.Origin + "\n"))
	h.Write(append([]byte{algEd25519}, k.Public...))
	return binary.BigEndian.Uint32(h.Sum(nil))
}
