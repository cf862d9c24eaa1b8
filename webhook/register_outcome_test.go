package webhook

import (
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// TestRegistrationOutcome: the registration's answer for each phase the controller can
// give it. An operator the controller brings back Withdrawn or Suspended from the log (a
// federation restored without its objects) is answered so at once; the wait once ended in
// 504 registration_pending for them, the registration being done.
func TestRegistrationOutcome(t *testing.T) {
	logged := &fv1.LogEntry{}
	now := metav1.Now()
	ready := func(reason, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: string(fv1.ConditionReady), Reason: reason, Message: msg}}
	}
	for _, tc := range []struct {
		name   string
		fo     fv1.FederationOperatorStatus
		done   bool
		code   string
		status int
	}{
		{"not judged yet", fv1.FederationOperatorStatus{}, false, "", 0},
		{"active, not yet logged", fv1.FederationOperatorStatus{Phase: fv1.PhaseActive}, false, "", 0},
		{"active and logged", fv1.FederationOperatorStatus{Phase: fv1.PhaseActive, RegistrationLogEntry: logged, RegisteredAt: &now}, true, "", 0},
		{"pending approval", fv1.FederationOperatorStatus{Phase: fv1.PhasePending}, true, "", 0},
		{"rejected", fv1.FederationOperatorStatus{Phase: fv1.PhaseRejected, Conditions: ready("InvalidProof", "bad proof")}, true, "registration_rejected", http.StatusBadRequest},
		{"duplicate key", fv1.FederationOperatorStatus{Phase: fv1.PhaseRejected, Conditions: ready(fv1.ReasonDuplicateKey, "held")}, true, "key_already_registered", http.StatusConflict},
		{"withdrawn in the log", fv1.FederationOperatorStatus{Phase: fv1.PhaseWithdrawn}, true, "operator_withdrawn", http.StatusForbidden},
		{"suspended in the log", fv1.FederationOperatorStatus{Phase: fv1.PhaseSuspended, Conditions: ready(fv1.ReasonSuspended, "incident 9")}, true, "operator_suspended", http.StatusForbidden},
	} {
		tc.fo.OperatorID = "op_0000000000000001"
		done, answer := registrationOutcome(&fv1.FederationOperator{Status: tc.fo})
		switch {
		case done != tc.done:
			t.Errorf("%s: done %v, want %v", tc.name, done, tc.done)
		case tc.code == "" && answer != nil:
			t.Errorf("%s: answer %v, want none", tc.name, answer)
		case tc.code != "" && (answer == nil || answer.code != tc.code || answer.status != tc.status):
			t.Errorf("%s: answer %v, want %d %s", tc.name, answer, tc.status, tc.code)
		}
	}
}
