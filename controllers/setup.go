package controllers

import (
	"cmp"
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/history"
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
	// Now replaces time.Now as every controller's clock, for tests; nil in production.
	Now func() time.Time
	// Hooks are called at the steps of an anchor; all nil in production.
	Hooks Hooks
	// MaxParticipantsPerAnchor is how many operators one anchor binds at most, for tests
	// of runs that make several; 0 means federation.MaxParticipantsPerAnchor.
	MaxParticipantsPerAnchor int
	// SnapshotInterval is how often the leader looks whether this week's log snapshot is
	// taken; 0 means federation.DefaultSnapshotInterval.
	SnapshotInterval time.Duration
	// History is the federation's history store, where finished records move once their
	// retention passed; nil keeps every record an object.
	History *history.Store
	// HistoryInterval is how often the leader moves finished records; 0 means
	// DefaultHistoryInterval.
	HistoryInterval time.Duration
}

// Hooks are called at the steps of an anchor, so that fault tests can stop the manager
// there as a crash would (cmd/cairn wires them from CAIRN_FAILPOINT). A nil hook is not
// called.
type Hooks struct {
	// AnchorCreated is called once an anchor run has created its CrossAnchor, before the
	// Federation's status names it.
	AnchorCreated func(ca *fv1.CrossAnchor)
	// SubmissionMarked is called each time the Submission controller has marked a
	// submission anchored by ca.
	SubmissionMarked func(ca *fv1.CrossAnchor)
	// LogUploaded is called once the log took ca's record, before ca's status says so.
	LogUploaded func(ca *fv1.CrossAnchor)
}

// Setup adds every reconciler to mgr, with its indexes and watches, and closes the
// transparency logs when mgr stops.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) error {
	logs := o.Logs
	if logs == nil {
		logs = &Logs{Dir: o.LogDir}
	}
	witnessed := make(witnessEvents, 1024)
	if logs.WitnessChanged == nil {
		logs.WitnessChanged = witnessed.notify
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return logs.Close(context.WithoutCancel(ctx))
	})); err != nil {
		return err
	}
	now := clock{Now: o.Now}
	trust := &federation.Trust{}
	ledger := &federation.Ledger{Trust: trust}
	var merkle *federation.MerkleAnchors // Merkle-form anchors need the history store for their leaves
	if o.History != nil {
		ledger.Archive = o.History
		merkle = federation.NewMerkleAnchors(o.History)
		ledger.Merkle = merkle
	}
	operators := &FederationOperatorReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("federationoperator-controller"),
		Logs: logs, APIReader: mgr.GetAPIReader(), clock: now}
	if err := operators.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("federationoperator controller: %w", err)
	}
	submissions := &SubmissionReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("submission-controller"),
		Trust: trust, Merkle: merkle, Hooks: o.Hooks, clock: now}
	if err := submissions.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("submission controller: %w", err)
	}
	federations := &FederationReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder("federation-controller"), Logs: logs, Trust: trust, Ledger: ledger, Merkle: merkle,
		MaxParticipants: o.MaxParticipantsPerAnchor, Hooks: o.Hooks, clock: now, witnessEvents: witnessed}
	if err := federations.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("federation controller: %w", err)
	}
	anchors := &CrossAnchorReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("crossanchor-controller"),
		Logs: logs, RetrySchedule: o.RetrySchedule, Trust: trust, Hooks: o.Hooks, clock: now}
	if err := anchors.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("crossanchor controller: %w", err)
	}
	interval := o.SnapshotInterval
	if interval <= 0 {
		interval = federation.DefaultSnapshotInterval
	}
	if err := mgr.Add(&logSnapshotter{client: mgr.GetClient(), apiReader: mgr.GetAPIReader(), logs: logs,
		recorder: mgr.GetEventRecorder("federation-controller"), interval: interval, clock: now}); err != nil {
		return err
	}
	if o.History == nil {
		return nil
	}
	return mgr.Add(&historyArchiver{client: mgr.GetClient(), history: o.History,
		interval: cmp.Or(o.HistoryInterval, DefaultHistoryInterval), clock: now})
}
