package webhook

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestKeyHistoryOf: each rotation is served with the record the controller logs (the
// same members, valid_from in whole seconds) and its log index; the last rotation with
// the operator's signed statement; the registered key with none.
func TestKeyHistoryOf(t *testing.T) {
	pemOf := func() (fv1.PublicKeyPEM, string) {
		pub, _, _ := ed25519.GenerateKey(rand.Reader)
		b, _ := protocol.MarshalPublicKeyPEM(pub)
		return fv1.PublicKeyPEM(b), protocol.Fingerprint(pub)
	}
	k0, f0 := pemOf()
	k1, f1 := pemOf()
	at0 := metav1.NewTime(time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC))
	at1 := metav1.NewTime(time.Date(2026, 11, 25, 6, 0, 1, 500, time.UTC))
	fo := &fv1.FederationOperator{
		Spec: fv1.FederationOperatorSpec{PublicKeyPEM: k1, KeyRotation: &fv1.KeyRotation{RotationAt: "2026-11-25T06:00:00Z",
			OldKeySignature: "old", NewKeySignature: "new"}},
		Status: fv1.FederationOperatorStatus{KeyHistory: []fv1.KeyRecord{
			{PublicKeyPEM: k0, Fingerprint: fv1.Hash(f0), ValidFrom: at0, ValidUntil: &at1},
			{PublicKeyPEM: k1, Fingerprint: fv1.Hash(f1), ValidFrom: at1, LogEntry: &fv1.LogEntry{LogIndex: 7, URL: "http://log"}},
		}},
	}
	id := protocol.OperatorID(mustParse(string(k0)))
	got := keyHistoryOf("ns/fed", id, fo)
	if len(got.Keys) != 2 || got.Keys[0].Rotation != nil || got.Keys[0].KeyID != id || got.Keys[0].ValidUntil == nil {
		t.Fatalf("registered key: %+v", got.Keys)
	}
	rot := got.Keys[1].Rotation
	want := protocol.KeyRotationRecord{Type: protocol.RecordKeyRotation, Federation: "ns/fed", OperatorID: id,
		OldPublicKeyPEM: string(k0), NewPublicKeyPEM: string(k1), ValidFrom: "2026-11-25T06:00:01Z"}
	if rot == nil || rot.Record != want || rot.TLogLogIndex == nil || *rot.TLogLogIndex != 7 || rot.OldKeySignature != "old" ||
		rot.NewKeySignature != "new" || rot.RotationAt != "2026-11-25T06:00:00Z" {
		t.Fatalf("rotation: %+v, want record %+v at index 7 with the statement", rot, want)
	}
}
