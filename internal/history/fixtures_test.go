package history

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// world is a Federation with two keys in its history (the first signs), and an operator.
type world struct {
	fed      *fv1.Federation
	key      ed25519.PrivateKey // the federation's key that signs and seals
	later    ed25519.PrivateKey // a second key of its history
	opKey    ed25519.PrivateKey
	operator fv1.OperatorID
}

func seededKey(b byte) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = b
	return ed25519.NewKeyFromSeed(seed)
}

func newWorld(t testing.TB) *world {
	t.Helper()
	w := &world{key: seededKey(1), later: seededKey(2), opKey: seededKey(3)}
	w.operator = fv1.OperatorID(protocol.OperatorID(w.opKey.Public().(ed25519.PublicKey)))
	w.fed = &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Name: "fed", Namespace: "fed-ns", UID: "fed-uid-1"}}
	for _, k := range []ed25519.PrivateKey{w.key, w.later} {
		w.fed.Status.KeyHistory = append(w.fed.Status.KeyHistory, keyRecord(t, k))
	}
	return w
}

func keyRecord(t testing.TB, k ed25519.PrivateKey) fv1.KeyRecord {
	t.Helper()
	pemText, err := protocol.MarshalPublicKeyPEM(k.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return fv1.KeyRecord{PublicKeyPEM: fv1.PublicKeyPEM(pemText), Fingerprint: fv1.Hash(protocol.Fingerprint(k.Public().(ed25519.PublicKey)))}
}

// anchor is the n-th anchor of the day, binding w's operator at lastSeq and one other
// operator, signed by w's key and logged (its log leg is not the store's to check).
func (w *world) anchor(t testing.TB, n int, lastSeq int64) *fv1.CrossAnchor {
	t.Helper()
	return w.anchorOf(t, n, w.operator, lastSeq)
}

// anchorOf is anchor, binding operator rather than w's.
func (w *world) anchorOf(t testing.TB, n int, operator fv1.OperatorID, lastSeq int64) *fv1.CrossAnchor {
	t.Helper()
	id := fmt.Sprintf("anchor-20261124-%03d", n)
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: w.fed.Namespace, UID: types.UID("uid-" + id), Generation: 1,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "cairn"}}, ResourceVersion: "42"}}
	ca.Spec.AnchorID = fv1.AnchorID(id)
	ca.Spec.AnchoredAt = protocol.FormatAnchoredAt(time.Date(2026, 11, 24, 3, n, 0, 7, time.UTC))
	other := fv1.Participant{OperatorID: "op_ffffffffffffff01", ChainSignature: fv1.Hash(strings.Repeat("b2", 32)), LastSeq: 3}
	ca.Spec.Participants = []fv1.Participant{{OperatorID: operator, ChainSignature: fv1.Hash(strings.Repeat("a1", 32)), LastSeq: lastSeq}}
	if other.OperatorID > operator {
		ca.Spec.Participants = append(ca.Spec.Participants, other)
	} else {
		ca.Spec.Participants = append([]fv1.Participant{other}, ca.Spec.Participants...)
	}
	r := federation.AnchorReceipt(ca)
	var err error
	if r.CrossAnchorHash, err = protocol.CrossAnchorHash(r.ParticipatingOperators, r.AnchoredAt); err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.SignReceipt(&r, w.key); err != nil {
		t.Fatal(err)
	}
	ca.Spec.CrossAnchorHash, ca.Spec.FederationSignature = fv1.Hash(r.CrossAnchorHash), fv1.Signature(r.FederationSignature)
	ca.Spec.FederationPublicKeyPEM = fv1.PublicKeyPEM(r.FederationPublicKeyPEM)
	ca.Status.Phase = fv1.PhaseAnchored
	ca.Status.LogEntry = &fv1.LogEntry{LogIndex: int64(n), UUID: "entry-" + id}
	ca.Status.Conditions = []metav1.Condition{{Type: "Anchored", Status: "True", Reason: "Logged", Message: "logged"}}
	if err := federation.TrustAnchor(w.fed, ca); err != nil {
		t.Fatal(err)
	}
	return ca
}

// submission is w's operator's accepted submission of seqs first..last, signed by the
// operator's key and covered by anchor.
func (w *world) submission(t testing.TB, first, last int64, anchor string) *fv1.Submission {
	t.Helper()
	prev := protocol.GenesisPrevHash
	if first > 1 {
		prev = strings.Repeat("e", 64)
	}
	h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion, ExportedAt: "2026-11-24T06:30:00Z",
		EntryCount: last, FirstSeq: first, LastSeq: last, FirstPrevHash: prev, LastHMACHash: strings.Repeat("b", 64),
		ChainSignature: strings.Repeat("c", 64), EntriesRoot: strings.Repeat("d", 64)}
	signed, err := h.SignedBytes()
	if err != nil {
		t.Fatal(err)
	}
	pemText, err := protocol.MarshalPublicKeyPEM(w.opKey.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	sub := &fv1.Submission{Spec: fv1.SubmissionSpec{OperatorID: w.operator, ChainSignature: fv1.Hash(h.ChainSignature),
		EntryCount: h.EntryCount, FirstSeq: first, LastSeq: last, FirstPrevHash: fv1.Hash(prev), LastHMACHash: fv1.Hash(h.LastHMACHash),
		ExportedAt: fv1.Timestamp(h.ExportedAt), SignedHeader: string(signed), PublicKeyPEM: fv1.PublicKeyPEM(pemText),
		Signature: fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(w.opKey, signed)))}}
	sub.Name, sub.Namespace, sub.UID, sub.Generation = federation.SubmissionName(w.operator, first), w.fed.Namespace, "sub-uid", 1
	sub.Status.Ed25519Verified, sub.Status.ContinuityVerified, sub.Status.Anchored = true, true, true
	sub.Status.AnchorRef = fv1.AnchorID(anchor)
	sub.Status.Conditions = []metav1.Condition{{Type: string(fv1.ConditionContinuityVerified), Status: "True", Reason: "Verified", Message: "accepted"}}
	if err := checkSubmission(sub); err != nil && anchor != "" {
		t.Fatal(err)
	}
	return sub
}
