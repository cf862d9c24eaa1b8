package webhook

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// This file is the counts GET /federation/status shows, kept in memory from the cache's
// events so that no request counts the store: each event moves a count, and nothing per
// object is kept, so it is bounded whatever the store holds (two integers and at most
// 1,441 minutes of one day's submissions, about 360 KB). The counts follow the cache a
// moment behind, as the informer hands each change to its handlers after storing it.

// kept is one Federation's namespace's counts, fed by the cache's informers.
type kept struct {
	namespace string
	now       func() time.Time
	regs      []toolscache.ResourceEventHandlerRegistration

	mu sync.Mutex
	// active counts Active operators, registered those Active, Suspended or Withdrawn.
	active, registered int
	// minutes count the accepted submissions created in each minute of the last day, by
	// second; older minutes are dropped.
	minutes map[int64]*minuteCount
}

// minuteCount is one minute's accepted submissions, in all and by second.
type minuteCount struct {
	n       int
	seconds [60]int32
}

// window is how far back submissions_last_24h counts.
const window = 24 * time.Hour

// newKept registers kept's handlers on the informers of FederationOperators and
// Submissions. The informers replay what they hold to a new handler, so
// the counts start from the whole cache; synced reports when they have.
func newKept(informers cache.Informers, namespace string, now func() time.Time) (*kept, error) {
	k := &kept{namespace: namespace, now: now, minutes: map[int64]*minuteCount{}}
	for _, h := range []struct {
		obj    client.Object
		change func(old, cur client.Object)
	}{
		{&fv1.FederationOperator{}, k.operatorChanged},
		{&fv1.Submission{}, k.submissionChanged},
	} {
		inf, err := informers.GetInformer(context.Background(), h.obj, cache.BlockUntilSynced(false))
		if err != nil {
			return nil, fmt.Errorf("webhook: informer of %T: %w", h.obj, err)
		}
		reg, err := inf.AddEventHandler(k.handler(h.change))
		if err != nil {
			return nil, fmt.Errorf("webhook: watch %T: %w", h.obj, err)
		}
		k.regs = append(k.regs, reg)
	}
	return k, nil
}

// handler calls change(old, new) for each event of an object of k's namespace; old is
// nil for an addition, new nil for a deletion.
func (k *kept) handler(change func(old, cur client.Object)) toolscache.ResourceEventHandler {
	ours := func(obj any) client.Object {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		o, ok := obj.(client.Object)
		if !ok || o.GetNamespace() != k.namespace {
			return nil
		}
		return o
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if o := ours(obj); o != nil {
				change(nil, o)
			}
		},
		UpdateFunc: func(old, cur any) {
			if o, c := ours(old), ours(cur); o != nil && c != nil {
				change(o, c)
			}
		},
		DeleteFunc: func(obj any) {
			if o := ours(obj); o != nil {
				change(o, nil)
			}
		},
	}
}

// synced waits until every handler has seen what its informer held when it was added,
// or ctx ends.
func (k *kept) synced(ctx context.Context) error {
	done := func(context.Context) (bool, error) {
		for _, r := range k.regs {
			if !r.HasSynced() {
				return false, nil
			}
		}
		return true, nil
	}
	if ok, _ := done(ctx); ok {
		return nil
	}
	if err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, done); err != nil {
		return errors.Join(errors.New("the cache's counts are not filled yet"), err)
	}
	return nil
}

// operatorChanged moves the operator counts from old's class to cur's.
func (k *kept) operatorChanged(old, cur client.Object) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, e := range moves(old, cur) {
		o, d := e.obj, e.d
		fo, ok := o.(*fv1.FederationOperator)
		if !ok {
			continue
		}
		switch fo.Status.Phase {
		case fv1.PhaseActive:
			k.active += d
			k.registered += d
		case fv1.PhaseSuspended, fv1.PhaseWithdrawn:
			k.registered += d
		}
	}
}

// submissionChanged counts an accepted submission in the second it was created, and
// uncounts it, while that second is within the last day by the server's clock; a
// submission older than that is never counted, so its removal is not either.
func (k *kept) submissionChanged(old, cur client.Object) {
	k.mu.Lock()
	defer k.mu.Unlock()
	floor := k.prune()
	for _, e := range moves(old, cur) {
		o, d := e.obj, e.d
		sub, ok := o.(*fv1.Submission)
		if !ok || !sub.Status.Ed25519Verified || !sub.Status.ContinuityVerified {
			continue
		}
		sec := sub.CreationTimestamp.Unix()
		if sec <= floor {
			continue
		}
		m := k.minutes[sec/60]
		if m == nil {
			if d < 0 {
				continue
			}
			m = &minuteCount{}
			k.minutes[sec/60] = m
		}
		m.n += d
		m.seconds[sec%60] += int32(d)
	}
}

// move is one side of an event: an object's state leaving (d -1) or arriving (d +1).
type move struct {
	obj client.Object
	d   int
}

// moves are an event's sides, old leaving then cur arriving (either nil). A resync
// passes one object as both, which moves nothing.
func moves(old, cur client.Object) [2]move { return [2]move{{old, -1}, {cur, 1}} }

// prune drops the minutes wholly outside the last day and returns its floor: a second
// counts when it is after it. The caller holds k.mu.
func (k *kept) prune() int64 {
	floor := k.now().Add(-window).Unix()
	for m := range k.minutes {
		if m < floor/60 {
			delete(k.minutes, m)
		}
	}
	return floor
}

// statusCounts returns the Active operators, the registered ones, and the accepted
// submissions created in the last day (after now minus 24 hours, to the second).
func (k *kept) statusCounts() (active, registered, lastDay int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	floor := k.prune()
	for start, m := range k.minutes {
		if start > floor/60 {
			lastDay += m.n
			continue
		}
		for s := floor%60 + 1; s < 60; s++ { // the minute the floor is in: its later seconds
			lastDay += int(m.seconds[s])
		}
	}
	return k.active, k.registered, lastDay
}
