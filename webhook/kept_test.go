package webhook

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// TestKeptCounts feeds kept the events an informer would and checks the status counts
// against a count of the objects themselves after each, as the old handler counted them:
// the last day to the second by a clock that moves, an edit that accepts a submission,
// a resync that passes one object as old and new, deletions (also as tombstones) before
// and after a submission left the day, and another namespace's objects.
func TestKeptCounts(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 30, 500, time.UTC)
	k := &kept{namespace: "fed", now: func() time.Time { return now }, minutes: map[int64]*minuteCount{}}
	h := k.handler(k.submissionChanged)
	ops := k.handler(k.operatorChanged)
	store := map[string]client.Object{}

	sub := func(name, ns string, created time.Time, accepted bool) *fv1.Submission {
		s := &fv1.Submission{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, CreationTimestamp: metav1.NewTime(created)}}
		s.Status.Ed25519Verified, s.Status.ContinuityVerified = accepted, accepted
		return s
	}
	op := func(name, ns string, phase fv1.OperatorPhase) *fv1.FederationOperator {
		fo := &fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		fo.Status.Phase = phase
		return fo
	}
	add := func(o client.Object) {
		store[o.GetNamespace()+"/"+o.GetName()] = o
		handlerOf(o, h, ops).OnAdd(o, false)
	}
	update := func(o client.Object) {
		key := o.GetNamespace() + "/" + o.GetName()
		handlerOf(o, h, ops).OnUpdate(store[key], o)
		store[key] = o
	}
	remove := func(o client.Object, tombstone bool) {
		delete(store, o.GetNamespace()+"/"+o.GetName())
		var obj any = o
		if tombstone {
			obj = toolscache.DeletedFinalStateUnknown{Key: o.GetName(), Obj: o}
		}
		handlerOf(o, h, ops).OnDelete(obj)
	}
	check := func(step string) {
		t.Helper()
		var active, registered, lastDay int
		for _, o := range store {
			if o.GetNamespace() != "fed" {
				continue
			}
			switch o := o.(type) {
			case *fv1.FederationOperator:
				switch o.Status.Phase {
				case fv1.PhaseActive:
					active++
					registered++
				case fv1.PhaseSuspended, fv1.PhaseWithdrawn:
					registered++
				}
			case *fv1.Submission:
				if o.Status.Ed25519Verified && o.Status.ContinuityVerified && o.CreationTimestamp.After(now.Add(-24*time.Hour)) {
					lastDay++
				}
			}
		}
		a, r, d := k.statusCounts()
		if a != active || r != registered || d != lastDay {
			t.Errorf("%s: kept active %d, registered %d, last day %d; the objects say %d, %d, %d", step, a, r, d, active, registered, lastDay)
		}
	}

	day := now.Add(-24 * time.Hour)
	add(op("a", "fed", fv1.PhaseActive))
	add(op("s", "fed", fv1.PhaseSuspended))
	add(op("r", "fed", fv1.PhaseRejected))
	add(op("x", "other", fv1.PhaseActive))
	check("operators added")
	update(op("a", "fed", fv1.PhaseWithdrawn))
	update(op("r", "fed", fv1.PhaseActive))
	check("phases moved")

	for i, at := range []time.Time{day.Add(-time.Second), day, day.Add(time.Second), day.Add(59 * time.Second), day.Add(2 * time.Minute), now} {
		add(sub(fmt.Sprintf("s%d", i), "fed", at, true))
	}
	add(sub("pending", "fed", now, false))
	add(sub("elsewhere", "other", now, true))
	check("submissions added")
	update(sub("pending", "fed", now, true))
	check("a submission accepted")
	handlerOf(store["fed/s5"], h, ops).OnUpdate(store["fed/s5"], store["fed/s5"]) // a resync
	check("a resync")
	remove(store["fed/s4"], true)
	check("a deletion seen as a tombstone")

	now = now.Add(59 * time.Second) // the day now starts at s3's second: s2 and s3 leave it
	check("the clock moved to a submission's second")
	now = now.Add(31 * time.Second) // s4's minute is dropped
	check("the clock moved")
	remove(store["fed/s2"], false) // deleted after it left the day: not uncounted twice
	check("a deletion after the day")
	add(sub("late", "fed", day.Add(30*time.Second), true)) // created long ago, seen only now
	check("an old submission seen late")
	if len(k.minutes) > 1441 {
		t.Errorf("%d minutes kept, more than a day's", len(k.minutes))
	}
}

// handlerOf picks the handler of o's kind.
func handlerOf(o client.Object, subs, ops toolscache.ResourceEventHandler) toolscache.ResourceEventHandler {
	if _, ok := o.(*fv1.Submission); ok {
		return subs
	}
	return ops
}
