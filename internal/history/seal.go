package history

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The kinds of record a seal names, so that one kind's seal never passes as another's.
const (
	kindAnchor     = "CrossAnchor"
	kindSubmission = "Submission"
)

// sealDomain starts every sealed message: no other signature of the federation's keys
// (anchors, receipts, statements) starts with it.
const sealDomain = "cairn history record v1\n"

// sealMessage is what a row's seal signs: its kind, its Federation (fedKey) and its object.
func sealMessage(kind, fed string, object []byte) []byte {
	msg := make([]byte, 0, len(sealDomain)+len(kind)+len(fed)+len(object)+2)
	msg = append(msg, sealDomain...)
	msg = append(msg, kind...)
	msg = append(msg, '\n')
	msg = append(msg, fed...)
	msg = append(msg, '\n')
	return append(msg, object...)
}

// sealed is a record's object as stored, with its seal.
type sealed struct {
	object   []byte
	sealedBy string // the sealing key's fingerprint
	seal     string // base64 Ed25519 signature
}

// sealRecord encodes obj as the store keeps it and seals it with key, which must be a
// key of fed's key history.
func sealRecord(kind string, fed *fv1.Federation, obj metav1.Object, key ed25519.PrivateKey) (*sealed, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("seal %s %s: the key is %d bytes, want %d", kind, obj.GetName(), len(key), ed25519.PrivateKeySize)
	}
	pub := key.Public().(ed25519.PublicKey)
	if keyOf(fed, protocol.Fingerprint(pub)) == nil {
		return nil, fmt.Errorf("seal %s %s: the key is not in Federation %s's key history", kind, obj.GetName(), fed.Name)
	}
	obj.SetManagedFields(nil)
	obj.SetResourceVersion("")
	object, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("seal %s %s: %w", kind, obj.GetName(), err)
	}
	sig := ed25519.Sign(key, sealMessage(kind, fedKey(fed), object))
	return &sealed{object: object, sealedBy: protocol.Fingerprint(pub), seal: base64.StdEncoding.EncodeToString(sig)}, nil
}

// errForeign means a row is sealed by a key that is not in the Federation's key history:
// a row of an earlier Federation of the same name, made again with other keys. Such a
// row is answered as absent, as a deleted one would be.
var errForeign = fmt.Errorf("%w: sealed by a key that is not in the Federation's key history", ErrNotFound)

// checkSeal returns nil when s's seal verifies under the key of fed's key history it
// names, over kind, fed (fedKey) and s's object; errForeign when that key is none of
// fed's.
func checkSeal(kind string, fed *fv1.Federation, s *sealed) error {
	rec := keyOf(fed, s.sealedBy)
	if rec == nil {
		return errForeign
	}
	pub, err := protocol.ParsePublicKeyPEM([]byte(rec.PublicKeyPEM))
	if err != nil {
		return fmt.Errorf("%w: the sealing key of Federation %s does not parse: %w", ErrTampered, fed.Name, err)
	}
	sig, err := base64.StdEncoding.DecodeString(s.seal)
	if err != nil || len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, sealMessage(kind, fedKey(fed), s.object), sig) {
		return fmt.Errorf("%w: its seal does not verify", ErrTampered)
	}
	return nil
}

// unseal checks rec's seal (checkSeal) and decodes its object into obj.
func unseal(kind string, fed *fv1.Federation, rec *sealed, obj any) error {
	if err := checkSeal(kind, fed, rec); err != nil {
		return err
	}
	if err := json.Unmarshal(rec.object, obj); err != nil {
		return fmt.Errorf("%w: its object does not parse: %w", ErrTampered, err)
	}
	return nil
}

// columnDiffers is the error of a row whose column says other than its object.
func columnDiffers(column string) error {
	return fmt.Errorf("%w: its %s column is not its object's", ErrTampered, column)
}

// keyOf is the record of fed's key history with fingerprint fp, nil when none has it.
func keyOf(fed *fv1.Federation, fp string) *fv1.KeyRecord {
	for i := range fed.Status.KeyHistory {
		k := &fed.Status.KeyHistory[i]
		pub, err := protocol.ParsePublicKeyPEM([]byte(k.PublicKeyPEM))
		if err == nil && protocol.Fingerprint(pub) == fp {
			return k
		}
	}
	return nil
}
