package controllers

import (
	"crypto/ed25519"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// restoreKey is a deterministic key and its PEM.
func restoreKey(t *testing.T, seed byte) (ed25519.PrivateKey, string) {
	t.Helper()
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	key := ed25519.NewKeyFromSeed(s)
	text, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return key, string(text)
}

// TestCatchUpGivesAnOlderStatusTheLoggedHistory: a registered operator whose status is
// older than the log (an etcd snapshot) gets the rotations it lacks and its withdrawal;
// a status that is no prefix of the log's keys is left alone.
func TestCatchUpGivesAnOlderStatusTheLoggedHistory(t *testing.T) {
	k1, p1 := restoreKey(t, 1)
	_, p2 := restoreKey(t, 2)
	_, p3 := restoreKey(t, 3)
	id := protocol.OperatorID(k1.Public().(ed25519.PublicKey))
	logged := federation.NewLoggedRecords([]federation.LoggedRecord{
		{Entry: fv1.LogEntry{LogIndex: 1}, Record: protocol.RegistrationRecord{Type: protocol.RecordRegistration, OperatorID: id, PublicKeyPEM: p1}},
		{Entry: fv1.LogEntry{LogIndex: 2}, Record: protocol.KeyRotationRecord{Type: protocol.RecordKeyRotation, OperatorID: id,
			OldPublicKeyPEM: p1, NewPublicKeyPEM: p2, ValidFrom: "2026-11-28T12:00:00Z"}},
		{Entry: fv1.LogEntry{LogIndex: 3}, Record: protocol.WithdrawalRecord{Type: protocol.RecordWithdrawal,
			Withdrawal: protocol.Withdrawal{OperatorID: id, At: "2026-11-28T13:00:00Z", Signature: "s"}}},
	}).Operator(fv1.OperatorID(id))
	older := func(keys ...string) *fv1.FederationOperator {
		fo := &fv1.FederationOperator{Status: fv1.FederationOperatorStatus{OperatorID: fv1.OperatorID(id), Phase: fv1.PhaseActive}}
		for _, k := range keys {
			fo.Status.KeyHistory = append(fo.Status.KeyHistory, fv1.KeyRecord{PublicKeyPEM: fv1.PublicKeyPEM(k), ValidFrom: metav1.Now()})
		}
		return fo
	}

	fo := older(p1)
	ev, decided := catchUp(fo, logged)
	if !decided || ev == nil || fo.Status.Phase != fv1.PhaseWithdrawn || fo.Status.WithdrawalLogEntry.LogIndex != 3 {
		t.Fatalf("catch-up: decided %v, event %v, status %+v", decided, ev, fo.Status)
	}
	if len(fo.Status.KeyHistory) != 2 || fo.Status.KeyHistory[1].PublicKeyPEM != fv1.PublicKeyPEM(p2) || fo.Status.KeyHistory[0].ValidUntil == nil {
		t.Errorf("key history after catch-up: %+v", fo.Status.KeyHistory)
	}

	other := older(p3)
	catchUp(other, logged)
	if len(other.Status.KeyHistory) != 1 {
		t.Errorf("a status whose keys are not the log's got the log's: %+v", other.Status.KeyHistory)
	}
	if _, decided := catchUp(older(p1), nil); decided {
		t.Error("an operator the log does not know was decided")
	}
}

// TestParseRecordTakesOnlyCanonicalRecords: a text of the record book is its record's RFC
// 8785 JSON exactly; anything else is left out, whatever its digest.
func TestParseRecordTakesOnlyCanonicalRecords(t *testing.T) {
	_, p1 := restoreKey(t, 1)
	rec := protocol.RegistrationRecord{Type: protocol.RecordRegistration, Federation: "ns/fed", OperatorID: "op_0000000000000000", PublicKeyPEM: p1, OrgName: "Org"}
	good, err := canonical.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := parseRecord(good); err != nil || got.(protocol.RegistrationRecord) != rec {
		t.Fatalf("parseRecord(canonical) = %v, %v", got, err)
	}
	rename := protocol.RenameRecord{Type: protocol.RecordRename, Federation: "ns/fed", PublicKeyPEM: p1,
		Rename: protocol.Rename{OperatorID: "op_0000000000000000", OrgName: "Org", At: "2026-11-28T12:00:00Z"}}
	if text, err := canonical.Marshal(rename); err != nil {
		t.Fatal(err)
	} else if got, err := parseRecord(text); err != nil || got.(protocol.RenameRecord).OrgName != "Org" {
		t.Fatalf("parseRecord(a rename) = %v, %v: a record the book holds must parse", got, err)
	}
	for name, text := range map[string]string{
		"spaced":         strings.Replace(string(good), `,"`, `, "`, 1),
		"an extra field": strings.Replace(string(good), `{`, `{"extra":1,`, 1),
		"unknown type":   `{"type":"promotion"}`,
		"not JSON":       `{`,
		"two objects":    string(good) + string(good),
	} {
		if _, err := parseRecord([]byte(text)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
