package controllers

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/history"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file keeps etcd to the working set: once a record is finished and its Federation's
// retention (spec.history.retention) has passed, the leader moves it to the history
// store, where the federation API still serves it, and deletes the object. A finished
// record is a CrossAnchor in the log, or an accepted Submission an anchor covers. What the
// next run needs stays: the last run's anchors (status.lastAnchor and any of its
// anchoredAt), and each operator's head Submission. Retention counts from an anchor's
// anchoredAt, for a Submission from its anchor's. A record is deleted only after the
// store gave it back verified and equal to the object, and with the object's UID and
// resourceVersion as preconditions, so a crash at any step loses nothing: the next pass
// stores it again (a replace) and deletes it then. An upgraded federation moves its old
// objects on the leader's first pass.

// +kubebuilder:rbac:groups=federation.cairn.dev,resources=submissions;crossanchors,verbs=delete

// Retention bounds (see FederationHistory).
const (
	DefaultHistoryRetention = 72 * time.Hour
	MinHistoryRetention     = 24 * time.Hour
	// DefaultHistoryInterval is how often the leader looks for records to move.
	DefaultHistoryInterval = 10 * time.Minute
	// historyBatch is how many records one pass moves per Federation at most, so that a
	// pass over a large backlog (an upgrade) ends and the next Federation gets its turn.
	historyBatch = 2000
	// historyChunk is how many submissions one transaction of the store takes, and
	// historyDeleters how many deletes are in flight at once.
	historyChunk, historyDeleters = 200, 8
)

// historyRetention is fed's retention of finished records, within its bounds.
func historyRetention(fed *fv1.Federation) time.Duration {
	d := fed.Spec.History.Retention.Duration
	if d == 0 {
		return DefaultHistoryRetention
	}
	return max(d, MinHistoryRetention)
}

// historyArchiver moves finished records to the history store on the leader.
type historyArchiver struct {
	client   client.Client
	history  *history.Store
	interval time.Duration
	clock
}

// NeedLeaderElection returns true: one replica moves records.
func (a *historyArchiver) NeedLeaderElection() bool { return true }

// Start moves records now and then every interval until ctx ends.
func (a *historyArchiver) Start(ctx context.Context) error {
	t := time.NewTicker(a.interval)
	defer t.Stop()
	for {
		a.archiveAll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// archiveAll moves the finished records of every Federation with a signing key. A
// failure is logged and tried again at the next tick.
func (a *historyArchiver) archiveAll(ctx context.Context) {
	var feds fv1.FederationList
	if err := a.client.List(ctx, &feds); err != nil {
		logf.FromContext(ctx).Error(err, "Failed to list Federations to move their history")
		return
	}
	for i := range feds.Items {
		fed := &feds.Items[i]
		if fed.DeletionTimestamp != nil || fed.Status.SigningKeySecret == "" {
			continue
		}
		moved, err := a.archive(ctx, fed)
		if err != nil && ctx.Err() == nil {
			logf.FromContext(ctx).Error(err, "Failed to move records to the history store", "federation", client.ObjectKeyFromObject(fed))
		}
		if moved.anchors+moved.submissions > 0 {
			logf.FromContext(ctx).Info("Moved finished records to the history store", "federation", client.ObjectKeyFromObject(fed),
				"crossAnchors", moved.anchors, "submissions", moved.submissions)
		}
	}
}

// movedCount counts what one pass moved.
type movedCount struct{ anchors, submissions int }

// archive moves fed's finished records older than its retention, historyBatch of each
// kind at most.
func (a *historyArchiver) archive(ctx context.Context, fed *fv1.Federation) (movedCount, error) {
	var moved movedCount
	key, err := a.sealingKey(ctx, fed)
	if err != nil {
		return moved, err
	}
	cutoff := a.now().Add(-historyRetention(fed))
	loggedAt, err := a.archiveAnchors(ctx, fed, key, cutoff, &moved)
	if err != nil {
		return moved, err
	}
	return moved, a.archiveSubmissions(ctx, fed, key, cutoff, loggedAt, &moved)
}

// archiveAnchors moves fed's finished anchors made before cutoff. It returns when each
// anchor still an object was made, by name; the zero time for one not in the log yet.
func (a *historyArchiver) archiveAnchors(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, cutoff time.Time,
	moved *movedCount,
) (map[string]time.Time, error) {
	var anchors fv1.CrossAnchorList
	if err := a.client.List(ctx, &anchors, client.InNamespace(fed.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	lastRun := lastRunAt(fed, anchors.Items)
	loggedAt := map[string]time.Time{}
	for i := range anchors.Items {
		ca := &anchors.Items[i]
		if at, err := protocol.ParseAnchoredAt(ca.Spec.AnchoredAt); err == nil && ca.Status.Phase == fv1.PhaseAnchored {
			loggedAt[ca.Name] = at
		} else {
			loggedAt[ca.Name] = time.Time{}
		}
		if moved.anchors == historyBatch || !finishedAnchor(fed, ca, cutoff, lastRun) {
			continue
		}
		if err := a.moveAnchor(ctx, fed, ca.DeepCopy(), key); err != nil {
			return nil, err
		}
		moved.anchors++
	}
	return loggedAt, nil
}

// archiveSubmissions moves fed's finished submissions whose anchor was made before
// cutoff: an anchor still an object by loggedAt, else one the store holds (only logged
// anchors past the retention are stored).
func (a *historyArchiver) archiveSubmissions(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, cutoff time.Time,
	loggedAt map[string]time.Time, moved *movedCount,
) error {
	heads, err := a.heads(ctx, fed)
	if err != nil {
		return err
	}
	var subs fv1.SubmissionList
	if err := a.client.List(ctx, &subs, client.InNamespace(fed.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	var finished []*fv1.Submission
	for i := range subs.Items {
		sub := &subs.Items[i]
		if len(finished) == historyBatch || !finishedSubmission(sub, heads) {
			continue
		}
		ref := string(sub.Status.AnchorRef)
		at, object := loggedAt[ref]
		if !object {
			stored, err := a.history.Anchor(ctx, fed, ref)
			if errors.Is(err, history.ErrNotFound) || errors.Is(err, history.ErrTampered) {
				continue // marked by an anchor that is neither an object nor stored: not the federation's to move
			}
			if err != nil {
				return err
			}
			if at, err = protocol.ParseAnchoredAt(stored.Spec.AnchoredAt); err != nil {
				return err
			}
			loggedAt[ref] = at
		}
		if !at.IsZero() && at.Before(cutoff) {
			finished = append(finished, sub.DeepCopy())
		}
	}
	for chunk := range slices.Chunk(finished, historyChunk) {
		n, err := a.moveSubmissions(ctx, fed, chunk, key)
		moved.submissions += n
		if err != nil {
			return err
		}
	}
	return nil
}

// finishedAnchor reports whether ca is one of fed's anchors, in the log, made before
// cutoff and before the last run (lastRun).
func finishedAnchor(fed *fv1.Federation, ca *fv1.CrossAnchor, cutoff, lastRun time.Time) bool {
	if ca.DeletionTimestamp != nil || ca.Status.Phase != fv1.PhaseAnchored || federation.TrustAnchor(fed, ca) != nil {
		return false
	}
	at, err := protocol.ParseAnchoredAt(ca.Spec.AnchoredAt)
	return err == nil && at.Before(cutoff) && at.Before(lastRun)
}

// lastRunAt is when fed's last anchor run made its anchors: the anchoredAt of the anchor
// status.lastAnchor names, from anchors; status's own time, a second's precision, when
// that anchor is not among them. The zero time (nothing moves) before the first run.
func lastRunAt(fed *fv1.Federation, anchors []fv1.CrossAnchor) time.Time {
	if fed.Status.LastAnchor == nil {
		return time.Time{}
	}
	for i := range anchors {
		if anchors[i].Name == string(fed.Status.LastAnchor.AnchorID) {
			if at, err := protocol.ParseAnchoredAt(anchors[i].Spec.AnchoredAt); err == nil {
				return at
			}
		}
	}
	return fed.Status.LastAnchor.AnchoredAt.Time
}

// finishedSubmission reports whether sub is accepted, marked anchored and not its
// operator's head. Its retention counts from its anchor's anchoredAt, on the clock the
// controllers keep.
func finishedSubmission(sub *fv1.Submission, heads map[fv1.OperatorID]string) bool {
	return sub.DeletionTimestamp == nil && federation.IsAccepted(sub) && sub.Status.Anchored && sub.Status.AnchorRef != "" &&
		heads[sub.Spec.OperatorID] != sub.Name
}

// heads maps each operator of fed's namespace to its head Submission's name.
func (a *historyArchiver) heads(ctx context.Context, fed *fv1.Federation) (map[fv1.OperatorID]string, error) {
	var ops fv1.FederationOperatorList
	if err := a.client.List(ctx, &ops, client.InNamespace(fed.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	heads := map[fv1.OperatorID]string{}
	for i := range ops.Items {
		if h := ops.Items[i].Status.Head; h != nil {
			heads[ops.Items[i].Status.OperatorID] = h.Submission
		}
	}
	return heads, nil
}

// sealingKey is the latest key of fed's key history whose Secret the manager holds.
func (a *historyArchiver) sealingKey(ctx context.Context, fed *fv1.Federation) (ed25519.PrivateKey, error) {
	keys, err := federation.SigningKeys(ctx, a.client, fed)
	if err != nil {
		return nil, err
	}
	for i := len(fed.Status.KeyHistory) - 1; i >= 0; i-- {
		if key, ok := keys[fed.Status.KeyHistory[i].PublicKeyPEM]; ok {
			return key, nil
		}
	}
	return nil, fmt.Errorf("no Secret holds a key of Federation %s's key history", fed.Name)
}

// moveAnchor stores ca, reads it back and deletes the object.
func (a *historyArchiver) moveAnchor(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor, key ed25519.PrivateKey) error {
	if err := a.history.PutAnchor(ctx, fed, ca, key); err != nil {
		return err
	}
	stored, err := a.history.Anchor(ctx, fed, ca.Name)
	if err != nil {
		return fmt.Errorf("read back anchor %s: %w", ca.Name, err)
	}
	if stored.UID != ca.UID || !equality.Semantic.DeepEqual(stored.Spec, ca.Spec) || !equality.Semantic.DeepEqual(stored.Status, ca.Status) {
		return fmt.Errorf("read back anchor %s: the store gave another version", ca.Name)
	}
	return a.deleteMoved(ctx, ca)
}

// moveSubmissions stores subs in one transaction, reads each back and deletes the
// objects, historyDeleters at a time. It returns how many it deleted.
func (a *historyArchiver) moveSubmissions(ctx context.Context, fed *fv1.Federation, subs []*fv1.Submission, key ed25519.PrivateKey) (int, error) {
	if err := a.history.PutSubmissions(ctx, fed, subs, key); err != nil {
		return 0, err
	}
	for _, sub := range subs {
		stored, err := a.history.Submission(ctx, fed, sub.Name)
		if err != nil {
			return 0, fmt.Errorf("read back submission %s: %w", sub.Name, err)
		}
		if stored.UID != sub.UID || !equality.Semantic.DeepEqual(stored.Spec, sub.Spec) || !equality.Semantic.DeepEqual(stored.Status, sub.Status) {
			return 0, fmt.Errorf("read back submission %s: the store gave another version", sub.Name)
		}
	}
	var deleted atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(historyDeleters)
	for _, sub := range subs {
		g.Go(func() error {
			if err := a.deleteMoved(ctx, sub); err != nil {
				return err
			}
			deleted.Add(1)
			return nil
		})
	}
	err := g.Wait()
	return int(deleted.Load()), err
}

// deleteMoved deletes o, as it was read: a change since (a conflict) leaves it for the
// next pass, which stores the new version first.
func (a *historyArchiver) deleteMoved(ctx context.Context, o client.Object) error {
	uid, rv := o.GetUID(), o.GetResourceVersion()
	err := a.client.Delete(ctx, o, client.Preconditions{UID: &uid, ResourceVersion: &rv})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return errors.Join(fmt.Errorf("delete moved %s %s", o.GetObjectKind().GroupVersionKind().Kind, o.GetName()), err)
	}
	return nil
}
