package protocol

import (
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// TestSuspensionRecordBytes pins the exact content docs/PROTOCOL.md §8 gives for the
// suspension and resumption records: the bytes the federation key signs (Ed25519ph over
// their SHA-512) in the log.
func TestSuspensionRecordBytes(t *testing.T) {
	suspended, resumed := suspensionRecordExamples()
	cases := map[string]struct {
		record SuspensionRecord
		want   string
	}{
		"suspension": {
			record: suspended,
			want:   `{"at":"2026-11-26T15:00:00Z","federation":"cairn/cairn","operator_id":"op_34750f98bd59fcfc","reason":"key custody audit","sources":["gitops","api"],"type":"suspension"}`,
		},
		"resumption": {
			record: resumed,
			want:   `{"at":"2026-11-27T09:30:00Z","federation":"cairn/cairn","operator_id":"op_34750f98bd59fcfc","reason":"","sources":[],"type":"resumption"}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := canonical.Marshal(tc.record)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("content\n got %s\nwant %s", got, tc.want)
			}
			key := stmtTestKey(9)
			body, err := NewRecordEntry(tc.record, key)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyHashedRekord(body, got, stmtPub(key)); err != nil {
				t.Errorf("the logged entry does not verify over the content: %v", err)
			}
			if err := VerifyHashedRekord(body, []byte(tc.want+" "), stmtPub(key)); err == nil {
				t.Error("the logged entry verifies over other bytes")
			}
		})
	}
}

// suspensionRecordExamples are the suspension and resumption records docs/PROTOCOL.md §8
// shows.
func suspensionRecordExamples() (suspended, resumed SuspensionRecord) {
	suspended = SuspensionRecord{Type: RecordSuspension, Federation: "cairn/cairn", OperatorID: "op_34750f98bd59fcfc",
		At: "2026-11-26T15:00:00Z", Reason: "key custody audit", Sources: []string{"gitops", "api"}}
	resumed = SuspensionRecord{Type: RecordResumption, Federation: "cairn/cairn", OperatorID: "op_34750f98bd59fcfc",
		At: "2026-11-27T09:30:00Z", Sources: []string{}}
	return suspended, resumed
}
