package federation

import (
	"crypto/ed25519"
	"slices"
	"testing"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// loggedKey is a deterministic operator key for these tests.
func loggedKey(t *testing.T, seed byte) (pemText string, id string) {
	t.Helper()
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	pub := ed25519.NewKeyFromSeed(s).Public().(ed25519.PublicKey)
	text, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(text), protocol.OperatorID(pub)
}

// TestLoggedRecordsFollowTheLog: the log's records, in log order whatever order they are
// read in, give each operator its keys, withdrawal and last suspension; records that do
// not follow from the ones before are left out.
func TestLoggedRecordsFollowTheLog(t *testing.T) {
	k1, id1 := loggedKey(t, 1)
	k2, id2 := loggedKey(t, 2)
	k3, id3 := loggedKey(t, 3)
	k4, id4 := loggedKey(t, 4)
	at := func(i int64, rec any) LoggedRecord {
		return LoggedRecord{Entry: fv1.LogEntry{LogIndex: i}, Record: rec}
	}
	reg := func(pemText, id string) protocol.RegistrationRecord {
		return protocol.RegistrationRecord{Type: protocol.RecordRegistration, OperatorID: id, PublicKeyPEM: pemText, ProofOfPossession: "pop-" + id}
	}
	rot := func(id, from, to string) protocol.KeyRotationRecord {
		return protocol.KeyRotationRecord{Type: protocol.RecordKeyRotation, OperatorID: id, OldPublicKeyPEM: from, NewPublicKeyPEM: to,
			ValidFrom: "2026-11-28T12:00:00Z"}
	}
	susp := func(id, typ string, sources ...string) protocol.SuspensionRecord {
		return protocol.SuspensionRecord{Type: typ, OperatorID: id, At: "2026-11-28T13:00:00Z", Reason: "r", Sources: sources}
	}
	withdraw := func(id string) protocol.WithdrawalRecord {
		return protocol.WithdrawalRecord{Type: protocol.RecordWithdrawal, Withdrawal: protocol.Withdrawal{OperatorID: id, At: "2026-11-28T14:00:00Z", Signature: "sig"}}
	}
	records := []LoggedRecord{
		at(9, susp(id1, protocol.RecordSuspension, "api")), // read before the registration it follows
		at(1, reg(k1, id1)),
		at(2, rot(id1, k1, k2)),
		at(3, reg(k3, id3)),
		at(4, rot(id3, k3, k2)),  // to a key another operator holds: left out
		at(5, rot(id1, k1, k4)),  // from a key no longer current: left out
		at(6, rot(id4, k4, k3)),  // of an operator never registered: left out
		at(7, reg(k2, id2)),      // a key rotated to registers no second operator
		at(8, reg(k1, id1)),      // nor a registration twice
		at(10, withdraw(id3)),    // id3 withdraws
		at(11, rot(id3, k3, k4)), // after its withdrawal: left out
		at(12, susp(id3, protocol.RecordSuspension, "api")),
	}
	l := NewLoggedRecords(records)

	op := l.Holder(id2)
	if op == nil || op.OperatorID != fv1.OperatorID(id1) {
		t.Fatalf("Holder(%s) = %+v, want %s", id2, op, id1)
	}
	if got := keyPEMsOf(op.Keys); !slices.Equal(got, []string{k1, k2}) {
		t.Errorf("%s's keys: %d, want k1, k2", id1, len(got))
	}
	if op.Keys[0].ValidUntil == nil || op.Keys[1].LogEntry == nil || op.Keys[1].LogEntry.LogIndex != 2 || op.Keys[0].LogEntry != nil {
		t.Errorf("%s's key records: %+v", id1, op.Keys)
	}
	if op.KeyIndex(id1) != 0 || op.KeyIndex(id2) != 1 || op.KeyIndex(id3) != -1 || op.CurrentKey() != fv1.PublicKeyPEM(k2) {
		t.Errorf("KeyIndex or CurrentKey wrong for %s", id1)
	}
	if op.Suspension == nil || op.Suspension.Action != fv1.ActionSuspend || op.Suspension.LogEntry.LogIndex != 9 {
		t.Errorf("%s's last suspension: %+v", id1, op.Suspension)
	}
	if w := l.Operator(fv1.OperatorID(id3)); w == nil || w.Withdrawal == nil || w.WithdrawalEntry.LogIndex != 10 || len(w.Keys) != 1 || w.Suspension != nil {
		t.Errorf("%s: %+v", id3, w)
	}
	for _, id := range []string{id4} {
		if l.Holder(id) != nil {
			t.Errorf("the log records no holder of %s, got %+v", id, l.Holder(id))
		}
	}
	if got := l.APISuspensions(func(fv1.OperatorID) string { return "" }); len(got) != 1 || got[0].OperatorID != fv1.OperatorID(id1) {
		t.Errorf("API suspensions: %+v, want %s's alone (a withdrawn operator's is none)", got, id1)
	}
	var nilRecords *LoggedRecords
	if nilRecords.Holder(id1) != nil || nilRecords.Operator(fv1.OperatorID(id1)) != nil {
		t.Error("a nil LoggedRecords records nothing")
	}
}

// TestLoggedAPISuspensions: only a last record that suspends through the API is an API
// suspension in force; its reason is the record's less the GitOps reason it was joined
// with.
func TestLoggedAPISuspensions(t *testing.T) {
	k1, id1 := loggedKey(t, 1)
	reg := LoggedRecord{Entry: fv1.LogEntry{LogIndex: 1}, Record: protocol.RegistrationRecord{Type: protocol.RecordRegistration,
		OperatorID: id1, PublicKeyPEM: k1}}
	for name, tc := range map[string]struct {
		last       protocol.SuspensionRecord
		gitops     string
		wantReason string // "" for none
	}{
		"api alone":             {protocol.SuspensionRecord{Type: protocol.RecordSuspension, Reason: "incident", Sources: []string{"api"}}, "", "incident"},
		"both, gitops restored": {protocol.SuspensionRecord{Type: protocol.RecordSuspension, Reason: "audit; incident", Sources: []string{"gitops", "api"}}, "audit", "incident"},
		"both, one reason":      {protocol.SuspensionRecord{Type: protocol.RecordSuspension, Reason: "audit", Sources: []string{"gitops", "api"}}, "audit", "audit"},
		"both, gitops gone":     {protocol.SuspensionRecord{Type: protocol.RecordSuspension, Reason: "audit; incident", Sources: []string{"gitops", "api"}}, "", "audit; incident"},
		"gitops alone":          {protocol.SuspensionRecord{Type: protocol.RecordSuspension, Reason: "audit", Sources: []string{"gitops"}}, "audit", ""},
		"resumed":               {protocol.SuspensionRecord{Type: protocol.RecordResumption, Sources: []string{}}, "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			tc.last.OperatorID, tc.last.At = id1, "2026-11-28T13:00:00Z"
			l := NewLoggedRecords([]LoggedRecord{reg, {Entry: fv1.LogEntry{LogIndex: 2}, Record: tc.last}})
			got := l.APISuspensions(func(fv1.OperatorID) string { return tc.gitops })
			switch {
			case tc.wantReason == "" && len(got) != 0:
				t.Errorf("got %+v, want none", got)
			case tc.wantReason != "" && (len(got) != 1 || got[0].Reason != tc.wantReason || got[0].SuspendedAt.IsZero()):
				t.Errorf("got %+v, want one with reason %q", got, tc.wantReason)
			}
		})
	}
}

func keyPEMsOf(keys []fv1.KeyRecord) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k.PublicKeyPEM)
	}
	return out
}
