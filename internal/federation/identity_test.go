package federation

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestCapturedChallengeClaimsNothing: a challenge signature captured from a registration
// and applied first, in an object the controller rejected because the federation did not
// take that challenge for it, does not hold the key against the registration it was
// captured from; rejected for anything else, a verifying claim still holds it.
func TestCapturedChallengeClaimsNothing(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pemText, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	nonce, err := protocol.NewChallenge("captured-challenge-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	sig, err := protocol.SignChallenge(priv, nonce)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	operator := func(name string, created time.Time) fv1.FederationOperator {
		return fv1.FederationOperator{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cairn-system", Name: name, CreationTimestamp: metav1.NewTime(created)},
			Spec: fv1.FederationOperatorSpec{PublicKeyPEM: fv1.PublicKeyPEM(pemText), OrgName: "Acme",
				ChallengeProof: &fv1.ChallengeProof{Nonce: nonce, Signature: fv1.Signature(sig)}},
		}
	}
	captured, honest := operator("applied-first", at), operator("acme", at.Add(time.Second))
	id := protocol.OperatorID(pub)

	if got := HolderOf(&honest, id, []fv1.FederationOperator{captured, honest}); got == nil || got.Name != captured.Name {
		t.Fatalf("undecided, the earlier claim holds the key: holder %v", got)
	}
	captured.Status.Phase = fv1.PhaseRejected
	meta.SetStatusCondition(&captured.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionReady),
		Status: metav1.ConditionFalse, Reason: fv1.ReasonSignatureInvalid, Message: "the federation took this challenge for another object"})
	if got := HolderOf(&honest, id, []fv1.FederationOperator{captured, honest}); got != nil {
		t.Fatalf("a claim rejected for its challenge holds the key against %s: holder %s", honest.Name, got.Name)
	}
	meta.SetStatusCondition(&captured.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionReady),
		Status: metav1.ConditionFalse, Reason: fv1.ReasonDuplicateKey, Message: "another reason"})
	if got := HolderOf(&honest, id, []fv1.FederationOperator{captured, honest}); got == nil || got.Name != captured.Name {
		t.Fatalf("a claim rejected for another reason no longer holds the key: holder %v", got)
	}
}
