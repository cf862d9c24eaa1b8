package controllers

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// A Federation's suspensions through the admin API live in its status
// (status.apiSuspensions), which a restore does not bring back: its status starts
// again. They are in the log too: every suspension and resumption, and every change of
// who suspends an operator, is a logged record (suspension.go). So before a Federation
// logs its genesis record, which it does once per status, it puts back the API
// suspensions its log says are in force; the operators the log knows wait for that
// (operator_restore.go), so that none is resumed in between. GitOps keeps its own
// (spec.suspendedOperators, in Git).

// ReasonSuspensionRestored is the Event of an API suspension put back from the log.
const ReasonSuspensionRestored = "SuspensionRestored"

// restoreSuspensions adds to fed's status.apiSuspensions each suspension through the API
// that fed's log says is in force and the status lacks.
func (r *FederationReconciler) restoreSuspensions(ctx context.Context, fed *fv1.Federation, evs *[]federationEvent) error {
	logged, err := r.Logs.Logged(ctx, r.Client, fed)
	if err != nil {
		return fmt.Errorf("read the log's records: %w", err)
	}
	gitops := func(id fv1.OperatorID) string {
		if i := slices.IndexFunc(fed.Spec.SuspendedOperators, func(s fv1.OperatorSuspension) bool { return s.OperatorID == id }); i >= 0 {
			return fed.Spec.SuspendedOperators[i].Reason
		}
		return ""
	}
	for _, s := range logged.APISuspensions(gitops) {
		if slices.ContainsFunc(fed.Status.APISuspensions, func(a fv1.APISuspension) bool { return a.OperatorID == s.OperatorID }) {
			continue
		}
		fed.Status.APISuspensions = append(fed.Status.APISuspensions, s)
		*evs = append(*evs, federationEvent{event: event{corev1.EventTypeNormal, ReasonSuspensionRestored, "RestoreSuspension",
			fmt.Sprintf("operator %s stays suspended through the API, as the log records: %s", s.OperatorID, s.Reason)}})
	}
	return nil
}
