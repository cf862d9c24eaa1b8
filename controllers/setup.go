package controllers

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Options configures the controllers.
type Options struct {
	// LogDir holds the embedded transparency logs, one directory per Federation.
	LogDir string
	// RetrySchedule is the wait after each failed log upload; DefaultRetrySchedule when nil.
	RetrySchedule []time.Duration
	// Logs, when set, is used instead of logs opened in LogDir (tests stop and restart
	// them).
	Logs *Logs
}

// Setup adds every reconciler to mgr, with its indexes and watches, and closes the
// transparency logs when mgr stops.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) error {
	logs := o.Logs
	if logs == nil {
		logs = &Logs{Dir: o.LogDir}
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return logs.Close(context.WithoutCancel(ctx))
	})); err != nil {
		return err
	}
	operators := &FederationOperatorReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("federationoperator-controller"), Logs: logs}
	if err := operators.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("federationoperator controller: %w", err)
	}
	submissions := &SubmissionReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("submission-controller")}
	if err := submissions.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("submission controller: %w", err)
	}
	federations := &FederationReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder("federation-controller"), Logs: logs}
	if err := federations.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("federation controller: %w", err)
	}
	anchors := &CrossAnchorReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("crossanchor-controller"),
		Logs: logs, RetrySchedule: o.RetrySchedule}
	if err := anchors.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("crossanchor controller: %w", err)
	}
	return nil
}
