package controllers

import (
	"testing"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// TestAppendSuspensionKeepsUnloggedRecords: past maxSuspensionRecords the oldest logged
// records go, never one the log has not taken yet.
func TestAppendSuspensionKeepsUnloggedRecords(t *testing.T) {
	records := func(n int, logged bool) []fv1.SuspensionRecord {
		recs := make([]fv1.SuspensionRecord, n)
		for i := range recs {
			recs[i].Action = fv1.ActionSuspend
			if logged {
				recs[i].LogEntry = &fv1.LogEntry{LogIndex: int64(i)}
			}
		}
		return recs
	}
	cases := map[string]struct {
		before    []fv1.SuspensionRecord
		wantLen   int
		wantFirst int64 // LogIndex of the first kept record, -1 when unlogged
	}{
		"below the bound":   {records(3, true), 4, 0},
		"at the bound":      {records(maxSuspensionRecords, true), maxSuspensionRecords, 1},
		"oldest not logged": {records(maxSuspensionRecords, false), maxSuspensionRecords + 1, -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fo := &fv1.FederationOperator{Status: fv1.FederationOperatorStatus{Suspensions: tc.before}}
			appendSuspension(fo, fv1.SuspensionRecord{Action: fv1.ActionResume})
			got := fo.Status.Suspensions
			if len(got) != tc.wantLen {
				t.Fatalf("len = %d, want %d", len(got), tc.wantLen)
			}
			first := int64(-1)
			if got[0].LogEntry != nil {
				first = got[0].LogEntry.LogIndex
			}
			if first != tc.wantFirst {
				t.Errorf("first kept record's log index = %d, want %d", first, tc.wantFirst)
			}
			if got[len(got)-1].Action != fv1.ActionResume {
				t.Errorf("the new record is not last")
			}
		})
	}
}
