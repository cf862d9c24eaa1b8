package webhook_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// org is an organization with its key, as the admission tests register and submit for it
// (controllers/fixtures_test.go has the same shape; test files do not cross packages).
type org struct {
	key  ed25519.PrivateKey
	name string
}

func newOrg(seed byte, name string) org {
	s := make([]byte, ed25519.SeedSize)
	s[0], s[1] = seed, 0xad // 0xad: keys of their own, not the controllers suite's
	return org{key: ed25519.NewKeyFromSeed(s), name: name}
}

func (o org) pub() ed25519.PublicKey { return o.key.Public().(ed25519.PublicKey) }

func (o org) id() fv1.OperatorID { return fv1.OperatorID(protocol.OperatorID(o.pub())) }

func (o org) pem(t testing.TB) fv1.PublicKeyPEM {
	t.Helper()
	text, err := protocol.MarshalPublicKeyPEM(o.pub())
	if err != nil {
		t.Fatal(err)
	}
	return fv1.PublicKeyPEM(text)
}

// operator is the FederationOperator registering o with its proof of possession.
func (o org) operator(t testing.TB, ns, name string) *fv1.FederationOperator {
	return &fv1.FederationOperator{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: fv1.FederationOperatorSpec{OrgName: o.name, PublicKeyPEM: o.pem(t),
			ProofOfPossession: fv1.Signature(protocol.SignRegistration(o.key, o.name))},
	}
}

// rename is o's rename of its operator (o's own key's ID) to orgName, dated at, as
// spec.rename holds it.
func (o org) rename(t testing.TB, orgName string, at time.Time) *fv1.Rename {
	t.Helper()
	rn, err := protocol.NewRename(o.key, string(o.id()), orgName, "", at)
	if err != nil {
		t.Fatal(err)
	}
	return &fv1.Rename{OrgName: rn.OrgName, At: fv1.Timestamp(rn.At), Signature: fv1.Signature(rn.Signature)}
}

// rotateTo moves fo's spec to next's key with a key rotation signed by o (fo's current
// key) and next, dated now.
func (o org) rotateTo(t testing.TB, fo *fv1.FederationOperator, next org) {
	t.Helper()
	kr, err := protocol.NewKeyRotation(o.key, next.key, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fo.Spec.PublicKeyPEM = fv1.PublicKeyPEM(kr.NewPublicKey)
	fo.Spec.KeyRotation = &fv1.KeyRotation{RotationAt: fv1.Timestamp(kr.RotationAt),
		OldKeySignature: fv1.Signature(kr.OldKeySignature), NewKeySignature: fv1.Signature(kr.NewKeySignature)}
}

// hash is a stand-in hmac_hash or chain_signature: the webhooks never see rows.
func (o org) hash(what string, n int64) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s %s %d", o.name, what, n))
	return hex.EncodeToString(sum[:])
}

// submissionSeq is the last seq of every test Submission: the first ten entries.
const submissionSeq = 10

// submission is the Submission of o's first ten entries, its header signed by o.
func (o org) submission(t testing.TB, ns, name string) *fv1.Submission {
	t.Helper()
	lastSeq := int64(submissionSeq)
	h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion,
		ExportedAt: time.Now().UTC().Truncate(time.Second).Format(time.RFC3339), EntryCount: lastSeq,
		FirstSeq: 1, LastSeq: lastSeq, FirstPrevHash: protocol.GenesisPrevHash, LastHMACHash: o.hash("hmac", lastSeq),
		ChainSignature: o.hash("chain", lastSeq), EntriesRoot: o.hash("root", lastSeq)}
	signed, err := h.SignedBytes()
	if err != nil {
		t.Fatal(err)
	}
	return &fv1.Submission{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: fv1.SubmissionSpec{
			OperatorID: o.id(), ChainSignature: fv1.Hash(h.ChainSignature), EntryCount: h.EntryCount,
			FirstSeq: h.FirstSeq, LastSeq: h.LastSeq, FirstPrevHash: fv1.Hash(h.FirstPrevHash),
			LastHMACHash: fv1.Hash(h.LastHMACHash), ExportedAt: fv1.Timestamp(h.ExportedAt),
			SignedHeader: string(signed), Signature: sign(o.key, signed), PublicKeyPEM: o.pem(t),
		},
	}
}

func sign(key ed25519.PrivateKey, msg []byte) fv1.Signature {
	return fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg)))
}

// smallOrderPEM is the identity point (order 1) as an Ed25519 SubjectPublicKeyInfo in
// the exact PEM form: it passes the CRD's pattern, and every signature "verifies" under
// such a key for some message.
func smallOrderPEM() fv1.PublicKeyPEM {
	identity := make(ed25519.PublicKey, ed25519.PublicKeySize)
	identity[0] = 1
	return rawPEM(identity)
}

// ecdsaPEM is a P-256 public key, a PEM PUBLIC KEY block of another key type.
func ecdsaPEM(t testing.TB) fv1.PublicKeyPEM {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return rawPEM(&k.PublicKey)
}

// crlfPEM is o's key with CRLF line ends: the same key, not the exact form.
func (o org) crlfPEM(t testing.TB) fv1.PublicKeyPEM {
	return fv1.PublicKeyPEM(strings.ReplaceAll(string(o.pem(t)), "\n", "\r\n"))
}

func rawPEM(pub any) fv1.PublicKeyPEM {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		panic(err) // the keys above are well-formed
	}
	return fv1.PublicKeyPEM(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}
