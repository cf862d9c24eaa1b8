package webhook_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/webhook"
)

// The validators called directly, without an API server: the CRD's pattern already
// refuses a PEM of another key type or with CRLF line ends before a webhook is called,
// so only here can the webhook's own answer to them be seen.
func TestOperatorValidatorRefusesEveryBadRegistration(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := fv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	acme, mallory := newOrg(1, "Acme"), newOrg(2, "Mallory")
	held := acme.operator(t, "ns", "acme")
	held.Status.Phase = fv1.PhaseActive
	held.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: held.Spec.PublicKeyPEM}}
	v := &webhook.OperatorValidator{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(held).Build()}
	first := newOrg(3, "Mallory") // the key a restored operator rotated from
	firstProof := first.operator(t, "ns", "first").Spec.ProofOfPossession

	for name, tc := range map[string]struct {
		edit func(fo *fv1.FederationOperator)
		want string // "" when the registration is accepted
	}{
		"honest":            {edit: func(*fv1.FederationOperator) {}},
		"a P-256 key":       {edit: func(fo *fv1.FederationOperator) { fo.Spec.PublicKeyPEM = ecdsaPEM(t) }, want: "spec.publicKeyPEM: Invalid value: KeyInvalid: malformed input: public key is *ecdsa.PublicKey, want Ed25519"},
		"CRLF line ends":    {edit: func(fo *fv1.FederationOperator) { fo.Spec.PublicKeyPEM = mallory.crlfPEM(t) }, want: "spec.publicKeyPEM: Invalid value: KeyInvalid: malformed input: the \"PUBLIC KEY\" PEM block is not in its exact form"},
		"a small-order key": {edit: func(fo *fv1.FederationOperator) { fo.Spec.PublicKeyPEM = smallOrderPEM() }, want: "spec.publicKeyPEM: Invalid value: KeyInvalid: malformed input: public key is an Ed25519 point of small order"},
		"another org's proof": {edit: func(fo *fv1.FederationOperator) {
			fo.Spec.ProofOfPossession = acme.operator(t, "ns", "x").Spec.ProofOfPossession
		}, want: "spec.proofOfPossession: Invalid value: SignatureInvalid"},
		// The seed's registration through the API: the signed challenge is the proof (the
		// controller also checks the challenge's issue, age and use).
		"a challenge proof": {edit: func(fo *fv1.FederationOperator) {
			nonce := protocol.ChallengePrefix + strings.Repeat("n", 75)
			sig, err := protocol.SignChallenge(mallory.key, nonce)
			if err != nil {
				t.Fatal(err)
			}
			fo.Spec.ProofOfPossession, fo.Spec.ChallengeProof = "", &fv1.ChallengeProof{Nonce: nonce, Signature: fv1.Signature(sig)}
		}},
		"a challenge proof another key signed": {edit: func(fo *fv1.FederationOperator) {
			nonce := protocol.ChallengePrefix + strings.Repeat("n", 75)
			sig, err := protocol.SignChallenge(acme.key, nonce)
			if err != nil {
				t.Fatal(err)
			}
			fo.Spec.ProofOfPossession, fo.Spec.ChallengeProof = "", &fv1.ChallengeProof{Nonce: nonce, Signature: fv1.Signature(sig)}
		}, want: "spec.challengeProof: Invalid value: SignatureInvalid: signature does not verify"},
		"no proof at all": {edit: func(fo *fv1.FederationOperator) { fo.Spec.ProofOfPossession = "" },
			want: "spec.proofOfPossession: Invalid value: SignatureInvalid"},
		"another operator's key": {edit: func(fo *fv1.FederationOperator) { *fo = *acme.operator(t, "ns", "mallory") }, want: "spec.publicKeyPEM: Invalid value: DuplicateKey: operator acme holds or once held this key"},
		// A restore applies a rotated operator again: its proof names its first key, and
		// its last rotation, signed by the key it holds now, proves that one.
		"a restored operator that rotated": {edit: func(fo *fv1.FederationOperator) {
			first.rotateTo(t, fo, mallory)
			fo.Spec.ProofOfPossession = firstProof
		}},
		"a rotation the key did not sign": {edit: func(fo *fv1.FederationOperator) {
			first.rotateTo(t, fo, mallory)
			fo.Spec.ProofOfPossession = firstProof
			fo.Spec.KeyRotation.NewKeySignature = fo.Spec.KeyRotation.OldKeySignature
		}, want: "spec.proofOfPossession: Invalid value: SignatureInvalid"},
	} {
		t.Run(name, func(t *testing.T) {
			fo := mallory.operator(t, "ns", "mallory")
			tc.edit(fo)
			_, err := v.ValidateCreate(context.Background(), fo)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("an honest registration was refused: %v", err)
			case tc.want == "":
			case !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("refusal %v, want an Invalid error containing %q", err, tc.want)
			default:
				t.Logf("refused: %v", err)
			}
		})
	}
}

// An update is checked as a registration until the controller registered the operator,
// then only as a key rotation when it asks for one.
func TestOperatorValidatorUpdates(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := fv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	acme, mallory, next := newOrg(1, "Acme"), newOrg(2, "Mallory"), newOrg(3, "Acme")
	v := &webhook.OperatorValidator{Reader: fake.NewClientBuilder().WithScheme(scheme).Build()}
	registered := func() *fv1.FederationOperator {
		fo := acme.operator(t, "ns", "acme")
		fo.Status.Phase, fo.Status.OperatorID = fv1.PhaseActive, acme.id()
		fo.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: fo.Spec.PublicKeyPEM}}
		return fo
	}
	for name, tc := range map[string]struct {
		old  func() *fv1.FederationOperator
		edit func(fo *fv1.FederationOperator)
		want string // "" when the update is accepted
	}{
		"a rejected operator's forged proof": {
			old: func() *fv1.FederationOperator {
				fo := acme.operator(t, "ns", "acme")
				fo.Status.Phase = fv1.PhaseRejected
				return fo
			},
			edit: func(fo *fv1.FederationOperator) {
				fo.Spec.ProofOfPossession = mallory.operator(t, "ns", "x").Spec.ProofOfPossession
			},
			want: "spec.proofOfPossession: Invalid value: SignatureInvalid"},
		"a registered operator's contact, unsigned": {old: registered, edit: func(fo *fv1.FederationOperator) { fo.Spec.Contact = "ops@acme.example" },
			want: "spec.contact: Invalid value: OrganizationUnsigned"},
		"a registered operator's name, unsigned": {old: registered, edit: func(fo *fv1.FederationOperator) { fo.Spec.OrgName = "Evil Corp" },
			want: "spec.orgName: Invalid value: OrganizationUnsigned"},
		"a rename the operator signed": {old: registered, edit: func(fo *fv1.FederationOperator) { fo.Spec.Rename = acme.rename(t, "Acme GmbH", time.Now()) }},
		"a rename another key signed": {old: registered, edit: func(fo *fv1.FederationOperator) {
			fo.Spec.Rename = acme.rename(t, "Evil Corp", time.Now())
			fo.Spec.Rename.Signature = mallory.rename(t, "Evil Corp", time.Now()).Signature
		}, want: "spec.rename: Invalid value: RenameInvalid"},
		"a new key without a keyRotation": {old: registered, edit: func(fo *fv1.FederationOperator) { fo.Spec.PublicKeyPEM = next.pem(t) },
			want: "spec.keyRotation: Invalid value: KeyRotationInvalid: publicKeyPEM changed without a keyRotation"},
		"a new key signed by both keys": {old: registered, edit: func(fo *fv1.FederationOperator) { acme.rotateTo(t, fo, next) }},
		"labels on an object the webhook would refuse": {
			old: func() *fv1.FederationOperator {
				fo := acme.operator(t, "ns", "acme")
				fo.Spec.PublicKeyPEM = smallOrderPEM()
				return fo
			},
			edit: func(fo *fv1.FederationOperator) { fo.Labels = map[string]string{"reviewed": "true"} }},
	} {
		t.Run(name, func(t *testing.T) {
			old := tc.old()
			fo := old.DeepCopy()
			tc.edit(fo)
			_, err := v.ValidateUpdate(context.Background(), old, fo)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("refusal %v, want an Invalid error containing %q", err, tc.want)
			}
		})
	}
}

// A namespace holds one Federation: the validator, called directly, refuses a second
// and says which one the namespace has.
func TestFederationValidatorRefusesASecondFederation(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := fv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	fed := func(ns, name string) *fv1.Federation {
		return &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	going := fed("leaving", "old")
	going.DeletionTimestamp, going.Finalizers = &metav1.Time{Time: time.Now()}, []string{"foregroundDeletion"}
	v := &webhook.FederationValidator{Reader: fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(fed("cairn-system", "cairn"), going).Build()}

	for name, tc := range map[string]struct {
		fed  *fv1.Federation
		want string // "" when the create is accepted
	}{
		"the first in its namespace":       {fed: fed("tenant-a", "cairn")},
		"the same name (AlreadyExists)":    {fed: fed("cairn-system", "cairn")},
		"a second one":                     {fed: fed("cairn-system", "backup"), want: "namespace cairn-system already has Federation cairn: a namespace holds one Federation"},
		"while the first is being deleted": {fed: fed("leaving", "new"), want: "namespace leaving already has Federation old (being deleted: create this one once it is gone)"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := v.ValidateCreate(context.Background(), tc.fed)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("refusal %v, want Forbidden containing %q", err, tc.want)
			}
		})
	}
}
