package federation

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// signedAnchor returns a CrossAnchor as an anchor run makes it, signed by key, and a
// Federation whose key history holds key.
func signedAnchor(t *testing.T, key ed25519.PrivateKey) (*fv1.Federation, *fv1.CrossAnchor) {
	t.Helper()
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Name: "anchor-20261124-001", UID: "uid-1", Generation: 1}}
	ca.Spec.AnchorID = "anchor-20261124-001"
	ca.Spec.AnchoredAt = protocol.FormatAnchoredAt(time.Date(2026, 11, 24, 3, 0, 0, 7, time.UTC))
	ca.Spec.Participants = []fv1.Participant{
		{OperatorID: "op_00000000000000a1", ChainSignature: fv1.Hash(strings.Repeat("a1", 32)), LastSeq: 10},
		{OperatorID: "op_00000000000000b2", ChainSignature: fv1.Hash(strings.Repeat("b2", 32)), LastSeq: 3},
	}
	return signAnchor(t, ca, key), ca
}

// signAnchor computes ca's hash and signs it with key, as an anchor run does, and returns
// a Federation whose key history holds key.
func signAnchor(t testing.TB, ca *fv1.CrossAnchor, key ed25519.PrivateKey) *fv1.Federation {
	t.Helper()
	r := AnchorReceipt(ca)
	var err error
	if r.CrossAnchorHash, err = protocol.CrossAnchorHash(r.ParticipatingOperators, r.AnchoredAt); err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.SignReceipt(&r, key); err != nil {
		t.Fatal(err)
	}
	ca.Spec.CrossAnchorHash, ca.Spec.FederationSignature = fv1.Hash(r.CrossAnchorHash), fv1.Signature(r.FederationSignature)
	ca.Spec.FederationPublicKeyPEM = fv1.PublicKeyPEM(r.FederationPublicKeyPEM)
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Name: "fed"}}
	fed.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: ca.Spec.FederationPublicKeyPEM}}
	return fed
}

// TestTrustAnchor plays the forger: each change of a signed anchor that an attacker with
// create rights could make is refused, and the refusal never states the value that
// would have passed.
func TestTrustAnchor(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	other := ed25519.NewKeyFromSeed([]byte(strings.Repeat("x", ed25519.SeedSize)))
	otherPEM, err := protocol.MarshalPublicKeyPEM(other.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		change func(*fv1.Federation, *fv1.CrossAnchor)
		want   string // "" for trusted
	}{
		"as signed": {func(*fv1.Federation, *fv1.CrossAnchor) {}, ""},
		"a junk signature": {func(_ *fv1.Federation, ca *fv1.CrossAnchor) {
			ca.Spec.FederationSignature = fv1.Signature(base64.StdEncoding.EncodeToString(make([]byte, 64)))
		}, "federation_signature"},
		"another participant's chain signature": {func(_ *fv1.Federation, ca *fv1.CrossAnchor) {
			ca.Spec.Participants[1].ChainSignature = fv1.Hash(strings.Repeat("c3", 32))
		}, "cross_anchor_hash mismatch"},
		"an edited anchoredAt": {func(_ *fv1.Federation, ca *fv1.CrossAnchor) {
			ca.Spec.AnchoredAt = protocol.FormatAnchoredAt(time.Date(2026, 11, 24, 3, 0, 0, 8, time.UTC))
		}, "cross_anchor_hash mismatch"},
		"participants out of order": {func(_ *fv1.Federation, ca *fv1.CrossAnchor) {
			p := ca.Spec.Participants
			p[0], p[1] = p[1], p[0]
		}, "participating_operators"},
		"renamed":    {func(_ *fv1.Federation, ca *fv1.CrossAnchor) { ca.Name = "anchor-20991231-999" }, "names anchor"},
		"no lastSeq": {func(_ *fv1.Federation, ca *fv1.CrossAnchor) { ca.Spec.Participants[0].LastSeq = 0 }, "no lastSeq"},
		"signed by a key the Federation never held": {func(fed *fv1.Federation, _ *fv1.CrossAnchor) {
			fed.Status.KeyHistory[0].PublicKeyPEM = fv1.PublicKeyPEM(otherPEM)
		}, "not in Federation fed's key history"},
		"re-signed by another key": {func(_ *fv1.Federation, ca *fv1.CrossAnchor) {
			ca.Spec.FederationPublicKeyPEM = fv1.PublicKeyPEM(otherPEM)
		}, "federation_signature"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			fed, ca := signedAnchor(t, key)
			c.change(fed, ca)
			err := (&Trust{}).Verify(fed, ca)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused a signed anchor: %v", err)
			case c.want == "":
				return
			case !errors.Is(err, ErrUntrusted):
				t.Fatalf("got %v, want an error wrapping ErrUntrusted", err)
			case !strings.Contains(err.Error(), c.want):
				t.Errorf("got %q, want it to say %q", err, c.want)
			}
			want, _ := protocol.CrossAnchorHash(AnchorReceipt(ca).ParticipatingOperators, ca.Spec.AnchoredAt)
			if want != "" && strings.Contains(err.Error(), want) {
				t.Errorf("the refusal states the hash that would have passed: %v", err)
			}
		})
	}
}

// TestTrustAnchorRemembers checks that a verdict is kept per UID and generation, and that
// the key history is consulted on every use.
func TestTrustAnchorRemembers(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	fed, ca := signedAnchor(t, key)
	trust := &Trust{}
	if err := trust.Verify(fed, ca); err != nil {
		t.Fatal(err)
	}
	if trusted, ok := trust.Known(fed, ca.UID, ca.Generation); !ok || !trusted {
		t.Fatalf("known: trusted %v, remembered %v", trusted, ok)
	}
	if _, ok := trust.Known(fed, ca.UID, ca.Generation+1); ok {
		t.Error("a verdict outlived a change of generation")
	}
	fed.Status.KeyHistory = nil
	if trusted, _ := trust.Known(fed, ca.UID, ca.Generation); trusted {
		t.Error("a remembered verdict ignored the key history")
	}
	if err := trust.Verify(fed, ca); !errors.Is(err, ErrUntrusted) {
		t.Errorf("with the key gone from the history: %v", err)
	}
}

// BenchmarkTrustAnchor10k verifies an anchor of 10,000 participants without a remembered
// verdict: the cost each manager pays once per anchor.
func BenchmarkTrustAnchor10k(b *testing.B) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Name: "anchor-20261124-001"}}
	ca.Spec.AnchorID, ca.Spec.AnchoredAt = "anchor-20261124-001", protocol.FormatAnchoredAt(time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC))
	ca.Spec.Participants = participants(10_000)
	fed := signAnchor(b, ca, key)
	b.ResetTimer()
	for range b.N {
		if err := (&Trust{}).Verify(fed, ca); err != nil {
			b.Fatal(err)
		}
	}
}

// An anchor signed before receipts named their log's key signed the legacy form of its
// receipt (no log key members); it stays trusted, and so does one of the current form.
// Either form signed over other values is not.
func TestTrustAnchorSignedInEitherForm(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	for _, legacy := range []bool{false, true} {
		fed, ca := signedAnchor(t, key)
		r := AnchorReceipt(ca)
		r.Legacy = legacy
		if _, err := protocol.SignReceipt(&r, key); err != nil {
			t.Fatal(err)
		}
		ca.Spec.FederationSignature = fv1.Signature(r.FederationSignature)
		var trust *Trust
		if err := trust.Verify(fed, ca); err != nil {
			t.Errorf("legacy=%v: %v", legacy, err)
		}
		ca.Spec.AnchorID, ca.Name = "anchor-20261124-002", "anchor-20261124-002"
		if err := trust.Verify(fed, ca); !errors.Is(err, ErrUntrusted) {
			t.Errorf("legacy=%v, another anchor ID: %v, want ErrUntrusted", legacy, err)
		}
	}
}

// participants returns n distinct, well-formed participants in operatorID order.
func participants(n int) []fv1.Participant {
	ps := make([]fv1.Participant, n)
	for i := range ps {
		ps[i] = fv1.Participant{
			OperatorID:     fv1.OperatorID(fmt.Sprintf("op_%016x", i)),
			ChainSignature: fv1.Hash(strings.Repeat(fmt.Sprintf("%08x", i), 8)),
			LastSeq:        int64(i) + 1_000_000_000,
		}
	}
	return ps
}
