package audit

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// fixture is a federation with a log, and an operator that rotated its key once.
type fixture struct {
	fedKey          ed25519.PrivateKey
	log             *tlog.Embedded
	oldKey, newKey  ed25519.PrivateKey
	operatorID      string
	records         *Records
	trust           Trust
	rotationAt, fed string
}

func newKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pemOf(t *testing.T, k ed25519.PrivateKey) string {
	t.Helper()
	b, err := protocol.MarshalPublicKeyPEM(k.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// logRecord logs record under key and returns its rotation evidence.
func (f *fixture) logRecord(t *testing.T, rec protocol.KeyRotationRecord, key ed25519.PrivateKey) *Rotation {
	t.Helper()
	content, err := canonical.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	body, err := protocol.NewHashedRekord(content, key)
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.log.Upload(context.Background(), body)
	if err != nil {
		t.Fatal(err)
	}
	return &Rotation{Record: rec, TLogLogIndex: e.Index, LogEntry: &e.Bundle}
}

// sign returns the rotation statement's signatures of old and next.
func (f *fixture) sign(t *testing.T, rot *Rotation, old, next ed25519.PrivateKey) {
	t.Helper()
	msg := protocol.RotationMessage(rot.Record.NewPublicKeyPEM, f.rotationAt)
	rot.RotationAt = f.rotationAt
	rot.OldKeySignature = base64.StdEncoding.EncodeToString(ed25519.Sign(old, msg))
	rot.NewKeySignature = base64.StdEncoding.EncodeToString(ed25519.Sign(next, msg))
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	priv, err := tlog.GenerateLogKey("audit.test/log")
	if err != nil {
		t.Fatal(err)
	}
	l, err := tlog.OpenEmbedded(context.Background(), tlog.EmbeddedOptions{Dir: t.TempDir(), PrivateKey: priv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	logKey, _ := l.PublicKey(context.Background())
	f := &fixture{fedKey: newKey(t), log: l, oldKey: newKey(t), newKey: newKey(t), rotationAt: "2026-11-25T06:00:00Z", fed: "cairn-system/federation"}
	f.operatorID = protocol.OperatorID(f.oldKey.Public().(ed25519.PublicKey))
	f.trust = Trust{FederationKeys: []ed25519.PublicKey{f.fedKey.Public().(ed25519.PublicKey)}, LogKey: logKey}
	rot := f.logRecord(t, protocol.KeyRotationRecord{Type: protocol.RecordKeyRotation, Federation: f.fed, OperatorID: f.operatorID,
		OldPublicKeyPEM: pemOf(t, f.oldKey), NewPublicKeyPEM: pemOf(t, f.newKey), ValidFrom: "2026-11-25T06:00:01Z"}, f.fedKey)
	f.sign(t, rot, f.oldKey, f.newKey)
	f.records = &Records{Operators: []OperatorRecords{{OperatorID: f.operatorID, Keys: []HeldKey{
		{PublicKeyPEM: pemOf(t, f.oldKey)}, {PublicKeyPEM: pemOf(t, f.newKey), Rotation: rot}}}}}
	return f
}

func TestVerifyKeyHistory(t *testing.T) {
	f := newFixture(t)
	keys, err := VerifyKeyHistory(&f.records.Operators[0], f.trust)
	if err != nil || len(keys) != 2 || !keys[1].Key.Equal(f.newKey.Public()) || !strings.Contains(keys[1].How, "signed by the retired key") {
		t.Fatalf("VerifyKeyHistory = %+v, %v; want both keys, the rotation signed by the retired key", keys, err)
	}
}

// TestForgedRotationsTieNothing: a rotation record the federation did not log, one that
// names another key than the one logged, one logged under a key the audit does not trust,
// one whose retired-key signature is not the retired key's, and a history whose first key
// is not the operator's do not give the operator the new key.
func TestForgedRotationsTieNothing(t *testing.T) {
	attacker := newKey(t)
	for name, forge := range map[string]func(t *testing.T, f *fixture, o *OperatorRecords){
		"record text swapped after logging": func(t *testing.T, _ *fixture, o *OperatorRecords) {
			o.Keys[1].PublicKeyPEM = pemOf(t, attacker)
			o.Keys[1].Rotation.Record.NewPublicKeyPEM = pemOf(t, attacker)
		},
		"record logged by another key": func(t *testing.T, f *fixture, o *OperatorRecords) {
			rec := o.Keys[1].Rotation.Record
			rec.NewPublicKeyPEM = pemOf(t, attacker)
			rot := f.logRecord(t, rec, attacker)
			f.sign(t, rot, f.oldKey, attacker)
			o.Keys[1] = HeldKey{PublicKeyPEM: pemOf(t, attacker), Rotation: rot}
		},
		"no log entry": func(_ *testing.T, _ *fixture, o *OperatorRecords) {
			o.Keys[1].Rotation.LogEntry = nil
		},
		"entry of another index": func(_ *testing.T, _ *fixture, o *OperatorRecords) {
			o.Keys[1].Rotation.TLogLogIndex++
		},
		"retired key's signature by another key": func(t *testing.T, f *fixture, o *OperatorRecords) {
			f.sign(t, o.Keys[1].Rotation, attacker, f.newKey)
		},
		"history of another operator": func(t *testing.T, _ *fixture, o *OperatorRecords) {
			o.Keys[0].PublicKeyPEM = pemOf(t, attacker)
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			o := &f.records.Operators[0]
			forge(t, f, o)
			keys, err := VerifyKeyHistory(o, f.trust)
			if err == nil || len(keys) > 1 {
				t.Fatalf("VerifyKeyHistory of a forged history = %d keys, %v; want an error and at most the registered key", len(keys), err)
			}
			// And the audit does not tie the rotated key's export to the operator.
			rep := &Report{}
			rep.Exports(receiptOf(f.operatorID, "cs"), []Export{{Subject: "export", Header: &protocol.ExportHeader{ChainSignature: "cs"},
				Signer: signerOf(o.Keys[1].PublicKeyPEM)}}, f.records, f.trust)
			rep.Finish()
			if rep.Verdict != Failed || !hasFailed(rep, "export", CheckParticipant) {
				t.Fatalf("audit with a forged history: %s, %+v; want the export's participant check failed", rep.Verdict, rep.Checks)
			}
		})
	}
}

// TestLoggedUnderAnUntrustedFederationKey: the federation key counts only when trusted.
func TestLoggedUnderAnUntrustedFederationKey(t *testing.T) {
	f := newFixture(t)
	f.trust.FederationKeys = []ed25519.PublicKey{newKey(t).Public().(ed25519.PublicKey)}
	if _, err := VerifyKeyHistory(&f.records.Operators[0], f.trust); !errors.Is(err, protocol.ErrKeyNotTrusted) {
		t.Fatalf("VerifyKeyHistory under another federation key: %v, want ErrKeyNotTrusted", err)
	}
}

func receiptOf(operatorID, chainSignature string) *protocol.Receipt {
	return &protocol.Receipt{AnchorID: "anchor-20261125-001", ParticipatingOperators: []protocol.Participant{{OperatorID: operatorID, ChainSignature: chainSignature}}}
}

func signerOf(pemText string) ed25519.PublicKey {
	k, _ := protocol.ParsePublicKeyPEM([]byte(pemText))
	return k
}

func hasFailed(rep *Report, subject, name string) bool {
	for _, c := range rep.Checks {
		if c.Subject == subject && c.Name == name && !c.OK && !c.Skipped {
			return true
		}
	}
	return false
}
