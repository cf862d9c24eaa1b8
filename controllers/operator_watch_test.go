package controllers

import (
	"maps"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

func TestChangedOperatorIDs(t *testing.T) {
	const a, b, c = fv1.OperatorID("op_000000000000000a"), fv1.OperatorID("op_000000000000000b"), fv1.OperatorID("op_000000000000000c")
	base := func() *fv1.Federation {
		f := &fv1.Federation{}
		f.Spec.SuspendedOperators = []fv1.OperatorSuspension{{OperatorID: a, Reason: "audit"}}
		f.Status.APISuspensions = []fv1.APISuspension{{OperatorSuspension: fv1.OperatorSuspension{OperatorID: b, Reason: "incident"}}}
		f.Spec.ApprovedOperators = []fv1.OperatorApproval{{OperatorID: c, Note: "vetted"}}
		f.Status.PendingCount, f.Status.OperatorCount = 3, 2000
		return f
	}
	tests := map[string]struct {
		change func(*fv1.Federation)
		want   []fv1.OperatorID
	}{
		"a status write of counts and times": {change: func(f *fv1.Federation) {
			f.Status.PendingCount, f.Status.OperatorCount, f.Status.TotalOperators = 4, 2001, 2001
			f.Status.NextAnchorTime = &metav1.Time{Time: time.Now()}
			f.Status.LastAnchor = &fv1.AnchorSummary{AnchorID: "anchor-20261124-001"}
		}},
		"the registration mode": {change: func(f *fv1.Federation) { f.Spec.Registration = fv1.RegistrationApproval }},
		"a list reordered": {change: func(f *fv1.Federation) {
			f.Spec.SuspendedOperators = append(f.Spec.SuspendedOperators, fv1.OperatorSuspension{OperatorID: c, Reason: "late"})
			slices.Reverse(f.Spec.SuspendedOperators)
		}, want: []fv1.OperatorID{c}},
		"a GitOps suspension lifted": {change: func(f *fv1.Federation) { f.Spec.SuspendedOperators = nil }, want: []fv1.OperatorID{a}},
		"an API suspension added": {change: func(f *fv1.Federation) {
			f.Status.APISuspensions = append(f.Status.APISuspensions, fv1.APISuspension{OperatorSuspension: fv1.OperatorSuspension{OperatorID: a, Reason: "x"}})
		}, want: []fv1.OperatorID{a}},
		"a reason changed": {change: func(f *fv1.Federation) { f.Status.APISuspensions[0].Reason = "incident 2" }, want: []fv1.OperatorID{b}},
		"an approval note": {change: func(f *fv1.Federation) { f.Spec.ApprovedOperators[0].Note = "vetted twice" }},
		"an approval by API": {change: func(f *fv1.Federation) {
			f.Status.APIApprovals = []fv1.APIApproval{{OperatorApproval: fv1.OperatorApproval{OperatorID: a}}}
		}, want: []fv1.OperatorID{a}},
		"a GitOps approval cut": {change: func(f *fv1.Federation) { f.Spec.ApprovedOperators = nil }, want: []fv1.OperatorID{c}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, cur := base(), base()
			tc.change(cur)
			got := slices.Sorted(maps.Keys(changedOperatorIDs(old, cur)))
			if !slices.Equal(got, tc.want) {
				t.Errorf("changed %v, want %v", got, tc.want)
			}
		})
	}
}
