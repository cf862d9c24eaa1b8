package witness

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Signed-note signature types (C2SP signed-note): a plain Ed25519 key, as a log's, and
// a cosignature/v1 key, as a witness's.
const (
	algEd25519         = 0x01
	algCosignatureV1   = 0x04
	cosignatureSize    = 8 + ed25519.SignatureSize // timestamp, then the signature
	cosignatureLineLen = 4 + cosignatureSize       // after the key hash
)

// ErrBadKey means a verifier or signer key is not in the signed-note form this package
// reads.
var ErrBadKey = errors.New("witness: malformed key")

// Key names a witness: its name and Ed25519 public key. Its text form is a signed-note
// verifier key of type cosignature/v1: "<name>+<key hash, 8 hex>+<base64 of 0x04 and the
// 32-byte key>".
type Key struct {
	Name   string
	Public ed25519.PublicKey
}

// ParseKey parses a cosignature/v1 verifier key and checks its key hash. A plain Ed25519
// verifier key (type 0x01, a log's) is refused: the same Ed25519 key signs different
// messages under the two types, so a policy must say which it means.
func ParseKey(vkey string) (Key, error) {
	name, rest, _ := strings.Cut(vkey, "+")
	hash16, key64, _ := strings.Cut(rest, "+")
	raw, err := base64.StdEncoding.Strict().DecodeString(key64)
	if !validName(name) || len(hash16) != 8 || err != nil || len(raw) == 0 {
		return Key{}, fmt.Errorf("%w: %q is not <name>+<hash>+<base64 key>", ErrBadKey, vkey)
	}
	if raw[0] == algEd25519 {
		return Key{}, fmt.Errorf("%w: %q is a plain Ed25519 key (type 0x01), not a cosignature/v1 key (type 0x04); a witness's key is printed by `cairn witness keygen`", ErrBadKey, name)
	}
	if raw[0] != algCosignatureV1 || len(raw) != 1+ed25519.PublicKeySize {
		return Key{}, fmt.Errorf("%w: %q is not a cosignature/v1 Ed25519 key", ErrBadKey, name)
	}
	k := Key{Name: name, Public: ed25519.PublicKey(raw[1:])}
	if hash, err := strconv.ParseUint(hash16, 16, 32); err != nil || uint32(hash) != k.KeyHash() {
		return Key{}, fmt.Errorf("%w: the key hash of %q does not match its name and key", ErrBadKey, name)
	}
	return k, nil
}

// String returns the key in its verifier-key text form.
func (k Key) String() string {
	return fmt.Sprintf("%s+%08x+%s", k.Name, k.KeyHash(), base64.StdEncoding.EncodeToString(k.typed()))
}

// KeyHash is the key's signed-note key hash: the first four bytes of SHA-256 over the
// name, a newline, the type byte 0x04 and the key, big-endian.
func (k Key) KeyHash() uint32 {
	h := sha256.New()
	h.Write([]byte(k.Name))
	h.Write([]byte{'\n'})
	h.Write(k.typed())
	return binary.BigEndian.Uint32(h.Sum(nil))
}

func (k Key) typed() []byte { return append([]byte{algCosignatureV1}, k.Public...) }

// Verify reports whether sig (the timestamp and signature, after the key hash) is k's
// cosignature of the checkpoint text, and when it was made. text is the note's text: its
// lines before the empty one, each ended by a newline.
func (k Key) Verify(text, sig []byte) (time.Time, bool) {
	if len(sig) != cosignatureSize || len(k.Public) != ed25519.PublicKeySize {
		return time.Time{}, false
	}
	t := binary.BigEndian.Uint64(sig)
	msg, err := cosignedMessage(t, text)
	if err != nil || t > 1<<62 {
		return time.Time{}, false
	}
	if !ed25519.Verify(k.Public, msg, sig[8:]) {
		return time.Time{}, false
	}
	return time.Unix(int64(t), 0).UTC(), true
}

// cosignedMessage is what a cosignature/v1 signs: "cosignature/v1", the time line, then
// the checkpoint text, which must have at least its three lines.
func cosignedMessage(t uint64, text []byte) ([]byte, error) {
	if bytes.Count(text, []byte{'\n'}) < 3 || !bytes.HasSuffix(text, []byte{'\n'}) {
		return nil, errors.New("witness: a checkpoint text has at least three lines, each ended by a newline")
	}
	return fmt.Appendf(nil, "cosignature/v1\ntime %d\n%s", t, text), nil
}

// Cosigner makes a witness's cosignatures.
type Cosigner struct {
	key  Key
	priv ed25519.PrivateKey
}

// NewCosigner returns a cosigner for the witness name with the private key priv.
func NewCosigner(name string, priv ed25519.PrivateKey) (*Cosigner, error) {
	if !validName(name) {
		return nil, fmt.Errorf("%w: the witness name %q is empty or holds a space or a +", ErrBadKey, name)
	}
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: not an Ed25519 private key", ErrBadKey)
	}
	return &Cosigner{key: Key{Name: name, Public: priv.Public().(ed25519.PublicKey)}, priv: priv}, nil
}

// ParseSignerKey reads a witness's private key in the signed-note private-key form that
// golang.org/x/mod/sumdb/note generates and github.com/transparency-dev/formats reads
// for cosigning: "PRIVATE+KEY+<name>+<hash>+<base64 of 0x01 and the 32-byte seed>".
func ParseSignerKey(skey string) (*Cosigner, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(skey), "PRIVATE+KEY+")
	name, rest, _ := strings.Cut(rest, "+")
	hash16, key64, _ := strings.Cut(rest, "+")
	raw, err := base64.StdEncoding.Strict().DecodeString(key64)
	if !ok || len(hash16) != 8 || err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != algEd25519 {
		return nil, fmt.Errorf("%w: not a PRIVATE+KEY+<name>+<hash>+<base64> Ed25519 signer key", ErrBadKey)
	}
	return NewCosigner(name, ed25519.NewKeyFromSeed(raw[1:]))
}

// GenerateSignerKey makes a witness key named name from rand, and returns its private
// key (for ParseSignerKey) and its verifier key (for a policy).
func GenerateSignerKey(name string, rand io.Reader) (skey, vkey string, err error) {
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return "", "", err
	}
	c, err := NewCosigner(name, priv)
	if err != nil {
		return "", "", err
	}
	seed := append([]byte{algEd25519}, priv.Seed()...)
	hash := LogKey{Origin: name, Public: c.key.Public}.keyHash() // the hash of the plain key
	skey = fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", name, hash, base64.StdEncoding.EncodeToString(seed))
	return skey, c.key.String(), nil
}

// Key returns the cosigner's public key.
func (c *Cosigner) Key() Key { return c.key }

// Cosign returns the signature line of c's cosignature of the checkpoint text, made at
// at: "— <name> <base64 of key hash, timestamp, signature>" and a newline, ready to be
// appended to the checkpoint note.
func (c *Cosigner) Cosign(text []byte, at time.Time) ([]byte, error) {
	t := uint64(max(at.Unix(), 0))
	msg, err := cosignedMessage(t, text)
	if err != nil {
		return nil, err
	}
	sig := binary.BigEndian.AppendUint32(make([]byte, 0, cosignatureLineLen), c.key.KeyHash())
	sig = binary.BigEndian.AppendUint64(sig, t)
	sig = append(sig, ed25519.Sign(c.priv, msg)...)
	return fmt.Appendf(nil, "\u2014 %s %s\n", c.key.Name, base64.StdEncoding.EncodeToString(sig)), nil
}

// validName is the signed-note rule for a key name: not empty, UTF-8, no space, no +.
func validName(name string) bool {
	return name != "" && utf8.ValidString(name) && !strings.ContainsFunc(name, unicode.IsSpace) && !strings.Contains(name, "+")
}
