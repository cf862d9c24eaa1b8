package controllers

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Setup adds every reconciler to mgr, with its indexes and watches.
func Setup(ctx context.Context, mgr ctrl.Manager) error {
	operators := &FederationOperatorReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("federationoperator-controller")}
	if err := operators.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("federationoperator controller: %w", err)
	}
	submissions := &SubmissionReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("submission-controller")}
	if err := submissions.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("submission controller: %w", err)
	}
	return nil
}
