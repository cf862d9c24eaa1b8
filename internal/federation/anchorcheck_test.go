package federation

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestCheckAnchor checks that each of TrustAnchor's checks is reported on its own: a
// forger who signs a wrong hash fails the hash check only, a key outside the history
// fails that check only, and no reason states the hash that would have passed.
func TestCheckAnchor(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	fed, ca := signedAnchor(t, key)
	if c := CheckAnchor(fed, ca); !c.Trusted() || len(c.Reasons) != 0 {
		t.Fatalf("a signed anchor: %+v", c)
	}

	// A wrong hash, signed: the signature verifies, the hash does not recompute.
	wrong := ca.DeepCopy()
	wrong.Spec.CrossAnchorHash = fv1.Hash(strings.Repeat("0", 64))
	raw, err := json.Marshal(AnchorReceipt(wrong))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := protocol.ReceiptPayload(raw) // SignReceipt refuses a wrong hash: sign as a forger does
	if err != nil {
		t.Fatal(err)
	}
	wrong.Spec.FederationSignature = fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(key, payload)))
	c := CheckAnchor(fed, wrong)
	if c.HashRecomputed || !c.SignatureVerified || !c.KeyInHistory || c.Trusted() || len(c.Reasons) != 1 {
		t.Errorf("a signed wrong hash: %+v", c)
	}
	if strings.Contains(strings.Join(c.Reasons, " "), string(ca.Spec.CrossAnchorHash)) {
		t.Errorf("a reason states the hash that would have passed: %v", c.Reasons)
	}
	if TrustAnchor(fed, wrong) == nil {
		t.Error("TrustAnchor passed a wrong hash")
	}

	// A junk signature over the right hash.
	junk := ca.DeepCopy()
	junk.Spec.FederationSignature = fv1.Signature(base64.StdEncoding.EncodeToString(make([]byte, 64)))
	if c := CheckAnchor(fed, junk); !c.HashRecomputed || c.SignatureVerified || !c.KeyInHistory {
		t.Errorf("a junk signature: %+v", c)
	}

	// Signed by a key the Federation never held.
	_, forger, _ := ed25519.GenerateKey(nil)
	forged := ca.DeepCopy()
	signAnchor(t, forged, forger)
	if c := CheckAnchor(fed, forged); !c.HashRecomputed || !c.SignatureVerified || c.KeyInHistory || c.Trusted() {
		t.Errorf("a forger's key: %+v", c)
	}
}

// TestVerifyParticipant checks the binding of a participant to its covered submission:
// the header must verify under a key the operator held when the submission was
// accepted, never under the key the submission names.
func TestVerifyParticipant(t *testing.T) {
	oldKey := ed25519.NewKeyFromSeed([]byte(strings.Repeat("o", ed25519.SeedSize)))
	newKey := ed25519.NewKeyFromSeed([]byte(strings.Repeat("n", ed25519.SeedSize)))
	pemOf := func(k ed25519.PrivateKey) fv1.PublicKeyPEM {
		p, err := protocol.MarshalPublicKeyPEM(k.Public().(ed25519.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		return fv1.PublicKeyPEM(p)
	}
	t0 := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	rotated := metav1.NewTime(t0.Add(time.Hour))
	fo := &fv1.FederationOperator{}
	fo.Status.Phase, fo.Status.OperatorID = fv1.PhaseActive, "op_00000000000000a1"
	fo.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: pemOf(oldKey), ValidFrom: metav1.NewTime(t0), ValidUntil: &rotated},
		{PublicKeyPEM: pemOf(newKey), ValidFrom: rotated}}

	submission := func(key ed25519.PrivateKey, accepted time.Time) *fv1.Submission {
		h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion, ExportedAt: "2026-11-24T06:30:00Z",
			EntryCount: 7, FirstSeq: 1, LastSeq: 7, FirstPrevHash: protocol.GenesisPrevHash, LastHMACHash: strings.Repeat("b", 64),
			ChainSignature: strings.Repeat("c", 64), EntriesRoot: strings.Repeat("d", 64)}
		signed, err := h.SignedBytes()
		if err != nil {
			t.Fatal(err)
		}
		sub := &fv1.Submission{Spec: fv1.SubmissionSpec{OperatorID: "op_00000000000000a1", ChainSignature: fv1.Hash(h.ChainSignature),
			EntryCount: 7, FirstSeq: 1, LastSeq: 7, FirstPrevHash: fv1.Hash(h.FirstPrevHash), LastHMACHash: fv1.Hash(h.LastHMACHash),
			ExportedAt: fv1.Timestamp(h.ExportedAt), SignedHeader: string(signed),
			Signature: fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed))), PublicKeyPEM: pemOf(key)}}
		sub.Name = "sub"
		sub.Status.Ed25519Verified, sub.Status.ContinuityVerified = true, true
		sub.Status.Conditions = []metav1.Condition{{Type: string(fv1.ConditionSignatureVerified), Status: "True", LastTransitionTime: metav1.NewTime(accepted)}}
		return sub
	}
	p := fv1.Participant{OperatorID: "op_00000000000000a1", ChainSignature: fv1.Hash(strings.Repeat("c", 64)), LastSeq: 7}

	if err := VerifyParticipant(fo, submission(oldKey, t0.Add(time.Minute)), p); err != nil {
		t.Errorf("signed by the key held then: %v", err)
	}
	if err := VerifyParticipant(fo, submission(newKey, t0.Add(2*time.Hour)), p); err != nil {
		t.Errorf("signed by the key held then, after a rotation: %v", err)
	}
	if err := VerifyParticipant(fo, submission(oldKey, t0.Add(time.Hour)), p); err != nil {
		t.Errorf("signed by the old key in the second of the rotation: %v", err)
	}
	if err := VerifyParticipant(fo, submission(newKey, t0.Add(time.Minute)), p); !errors.Is(err, ErrParticipantHeader) {
		t.Errorf("signed by a key the operator held only later: %v", err)
	}
	if err := VerifyParticipant(fo, submission(oldKey, t0.Add(2*time.Hour)), p); !errors.Is(err, ErrParticipantHeader) {
		t.Errorf("signed by a key the operator no longer held: %v", err)
	}
	_, stranger, _ := ed25519.GenerateKey(nil)
	if err := VerifyParticipant(fo, submission(stranger, t0.Add(time.Minute)), p); !errors.Is(err, ErrParticipantHeader) {
		t.Errorf("signed by a key the submission names but the operator never held: %v", err)
	}
	other := p
	other.LastSeq = 8
	if err := VerifyParticipant(fo, submission(oldKey, t0.Add(time.Minute)), other); !errors.Is(err, ErrNoCoveredSubmission) {
		t.Errorf("another lastSeq: %v", err)
	}
	unaccepted := submission(oldKey, t0.Add(time.Minute))
	unaccepted.Status.Conditions[0].Status = "False"
	if err := VerifyParticipant(fo, unaccepted, p); !errors.Is(err, ErrNoCoveredSubmission) {
		t.Errorf("a submission not accepted: %v", err)
	}
}
