package protocol

import (
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
)

// Checkpoint is a transparency log's signed statement of its tree (C2SP tlog-checkpoint):
// an origin line, the tree size, the base64 root hash, optional extension lines, then
// signatures.
type Checkpoint struct {
	// Origin names the log.
	Origin string
	// Size is the number of leaves.
	Size uint64
	// Root is the RFC 6962 root hash of those leaves.
	Root []byte
}

// maxNoteSignatures bounds a checkpoint's signature lines, as golang.org/x/mod/sumdb/note
// bounds a note's: the log's and its witnesses'.
const maxNoteSignatures = 100

// OpenCheckpoint verifies that text is a checkpoint signed by key, and parses it. Both
// signature forms in use are accepted:
//
//   - C2SP signed-note Ed25519 (tessera, the embedded log): key hash from the signer name
//     and the key, signature over the note text.
//   - Rekor's: key hash from the SHA-256 of the key's PKIX DER, signature over the note
//     text with Ed25519 or, for ECDSA, over its SHA-256.
//
// The signer name is not checked: the key is what is trusted. Before any signature is
// checked, the text must have the exact syntax checkNoteSyntax states (LF line ends only,
// at most 100 signature lines "— <name> <base64>"); else ErrMalformed. Then every
// signature line whose key hash is key's, in either form, must verify, whatever the order
// of the lines and however often one repeats, and at least one must be there; lines of
// other keys (witnesses) are skipped. Any failure to verify wraps ErrNotIncluded, and a
// verified note that is not a checkpoint (origin, a size of at most 2^53-1 without sign or
// leading zero, the base64 of a 32-byte root) ErrMalformed.
func OpenCheckpoint(text []byte, key crypto.PublicKey) (*Checkpoint, error) {
	verifiers, err := newLogVerifiers(key)
	if err != nil {
		return nil, err
	}
	noteText, sigs, err := ParseNote(text)
	if err != nil {
		return nil, err
	}
	body, err := verifyNote(noteText, sigs, verifiers)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitN(body, "\n", 4)
	if len(lines) < 4 || lines[0] == "" {
		return nil, fmt.Errorf("%w: checkpoint has fewer than three lines", ErrMalformed)
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil || (lines[1] != "0" && lines[1][0] == '0') || size > maxSafeInteger {
		return nil, fmt.Errorf("%w: checkpoint size %s is not a decimal number of at most 2^53-1", ErrMalformed, Quote(lines[1]))
	}
	root, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(root) != sha256.Size {
		return nil, fmt.Errorf("%w: checkpoint root %s is not a base64 SHA-256 hash", ErrMalformed, Quote(lines[2]))
	}
	return &Checkpoint{Origin: lines[0], Size: size, Root: root}, nil
}

// verifyNote checks the signature lines of a note whose syntax ParseNote accepted, and
// returns its text (every line before the empty one, each ended by LF). Every line by the
// key verifiers knows must verify over the text, and one at least must be there; other
// lines are skipped. golang.org/x/mod/sumdb/note checks only the first line of each signer
// name and key hash, so a bad line after a good one passed it and a bad one before failed:
// the order of the lines decided the verdict.
func verifyNote(text []byte, sigs []NoteSignature, verifiers *logVerifiers) (string, error) {
	verified := 0
	for _, sig := range sigs {
		v, err := verifiers.Verifier(sig.Name, sig.KeyHash)
		if err != nil {
			continue // another key's: a witness
		}
		if !v.Verify(text, sig.Signature) {
			return "", fmt.Errorf("%w: checkpoint: signature line of %s does not verify under the log key", ErrNotIncluded, Quote(sig.Name))
		}
		verified++
	}
	if verified == 0 {
		return "", fmt.Errorf("%w: checkpoint: no signature line by the log key", ErrNotIncluded)
	}
	return string(text), nil
}

// NoteSignature is one signature line of a signed note.
type NoteSignature struct {
	// Name is the signer's name.
	Name string
	// KeyHash is the signed-note key hash the line begins with.
	KeyHash uint32
	// Signature is the rest of the line's bytes.
	Signature []byte
}

// ParseNote splits a signed note whose syntax is exactly the C2SP signed-note syntax (see
// checkNoteSyntax) into its text (the lines before the empty one, each ended by LF) and
// its signature lines; it verifies nothing. Else ErrMalformed.
func ParseNote(note []byte) (text []byte, sigs []NoteSignature, err error) {
	if err := checkNoteSyntax(note); err != nil {
		return nil, nil, err
	}
	body, lines, _ := strings.Cut(string(note), "\n\n")
	for _, line := range strings.Split(strings.TrimSuffix(lines, "\n"), "\n") {
		name, b64, _ := strings.Cut(strings.TrimPrefix(line, "\u2014 "), " ")
		sig, _ := base64.StdEncoding.DecodeString(b64) // checkNoteSyntax decoded it
		sigs = append(sigs, NoteSignature{Name: name, KeyHash: binary.BigEndian.Uint32(sig[:4]), Signature: sig[4:]})
	}
	return []byte(body + "\n"), sigs, nil
}

// checkNoteSyntax refuses a signed note that is not exactly in the C2SP signed-note
// syntax: valid UTF-8 without CR or other control characters but LF; a text of at least
// one line, each ended by LF; one empty line; then one to 100 signature lines, each
// exactly "\u2014 " (em dash U+2014, then a space), a name of one or more characters
// other than space and "+", one space, the canonical padded standard base64 of at least 5
// bytes (a 4-byte key hash, then the signature), and LF; nothing after the last one.
// golang.org/x/mod/sumdb/note is more lenient (its base64 decoder skips CR, and it
// accepts non-canonical padding bits).
func checkNoteSyntax(text []byte) error {
	s := string(text)
	bad := func(what string) error { return fmt.Errorf("%w: checkpoint: %s", ErrMalformed, what) }
	if !utf8.ValidString(s) {
		return bad("not UTF-8")
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' || r == 0x7f {
			return bad("a control character other than LF")
		}
	}
	body, sigs, ok := strings.Cut(s, "\n\n")
	switch {
	case !ok || body == "":
		return bad("no empty line between the text and the signatures")
	case sigs == "" || !strings.HasSuffix(sigs, "\n"):
		return bad("no signature line ended by LF")
	}
	lines := strings.Split(strings.TrimSuffix(sigs, "\n"), "\n")
	if len(lines) > maxNoteSignatures {
		return bad(fmt.Sprintf("%d signature lines, at most %d", len(lines), maxNoteSignatures))
	}
	for _, line := range lines {
		rest, ok := strings.CutPrefix(line, "\u2014 ")
		name, b64, ok2 := strings.Cut(rest, " ")
		if !ok || !ok2 || name == "" || strings.ContainsAny(name, "+") || strings.ContainsFunc(name, unicode.IsSpace) {
			return bad(fmt.Sprintf("signature line %s is not \"\u2014 <name> <base64>\"", Quote(line)))
		}
		sig, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil || len(sig) < 5 || base64.StdEncoding.EncodeToString(sig) != b64 {
			return bad(fmt.Sprintf("signature line %s does not end in canonical base64 of a key hash and a signature", Quote(line)))
		}
	}
	return nil
}

// logVerifiers is a note.Verifiers that knows one key, under any signer name.
type logVerifiers struct {
	key       crypto.PublicKey
	rekorHash uint32 // first four bytes of SHA-256(PKIX DER), big-endian
}

func newLogVerifiers(key crypto.PublicKey) (*logVerifiers, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil, fmt.Errorf("log key: %w", err)
	}
	sum := sha256.Sum256(der)
	return &logVerifiers{key: key, rekorHash: binary.BigEndian.Uint32(sum[:4])}, nil
}

// Verifier returns a verifier for a signature line naming name with key hash hash, if
// the hash is the key's in either form.
func (l *logVerifiers) Verifier(name string, hash uint32) (note.Verifier, error) {
	if hash == l.rekorHash {
		return &logVerifier{name: name, hash: hash, key: l.key}, nil
	}
	if pub, ok := l.key.(ed25519.PublicKey); ok && hash == noteKeyHash(name, pub) {
		return &logVerifier{name: name, hash: hash, key: l.key}, nil
	}
	return nil, &note.UnknownVerifierError{Name: name, KeyHash: hash}
}

// noteKeyHash is the C2SP signed-note key hash of an Ed25519 key (algorithm byte 0x01).
func noteKeyHash(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n', 0x01})
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// logVerifier is a note.Verifier for one signature line.
type logVerifier struct {
	name string
	hash uint32
	key  crypto.PublicKey
}

func (v *logVerifier) Name() string                { return v.name }
func (v *logVerifier) KeyHash() uint32             { return v.hash }
func (v *logVerifier) Verify(msg, sig []byte) bool { return verifyLogSignature(v.key, msg, sig) }
