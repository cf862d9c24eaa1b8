package federation

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Ledger is what each Federation's trusted CrossAnchors have bound: for every operator,
// the highest lastSeq an anchor bound for it, its anchored watermark. An accepted
// submission of the operator at or below it is anchored; one above it is pending.
//
// It is derived from the anchors alone, which are immutable records, and kept in
// memory: Sync folds each trusted anchor in once, Fold adds one its caller just made,
// and nothing else writes it. A process builds it again from the anchors that exist when
// it starts, and from those its Federation moved to the history store (Archive). It only grows: an anchor deleted later (past the admission policy) stays
// folded in, since what it bound was anchored, receipts and log entry included.
type Ledger struct {
	// Trust verifies each anchor before it is folded in; nil verifies without remembering.
	Trust *Trust
	// Archive, when set, holds the anchors that left etcd: each Federation's are folded
	// in once, on its first Sync.
	Archive ArchivedAnchors
	// Merkle reads the leaves of Merkle-form anchors; Sync fails on one when it is nil.
	Merkle *MerkleAnchors

	mu   sync.Mutex
	feds map[fedKey]*fedLedger
}

// fedKey names a Federation for good: a Federation deleted and made again under its
// name is another one, with other anchors.
type fedKey struct {
	name types.NamespacedName
	uid  types.UID
}

// ArchivedAnchors gives a Federation's anchors that left etcd (the history store),
// each checked to be the Federation's before f sees it.
type ArchivedAnchors interface {
	EachAnchor(ctx context.Context, fed *fv1.Federation, f func(*fv1.CrossAnchor) error) error
}

// fedLedger is one Federation's part of the ledger.
type fedLedger struct {
	folded  map[types.UID]struct{}
	through map[fv1.OperatorID]int64
	// archiveRead is set once the anchors of the Archive are folded in.
	archiveRead bool
}

// Sync folds into fed's ledger every anchor in fed's namespace that from lists, that the
// ledger lacks and that Trust finds fed's. It lists metadata only and reads an anchor in
// full once, when it is new: from the manager's cache on every reconcile, past it (the
// API reader) right before an anchor run, which must not miss one.
func (l *Ledger) Sync(ctx context.Context, from client.Reader, fed *fv1.Federation) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(fv1.GroupVersion.WithKind("CrossAnchorList"))
	if err := from.List(ctx, list, client.InNamespace(fed.Namespace)); err != nil {
		return err
	}
	for i := range list.Items {
		m := &list.Items[i]
		if l.has(fed, m.UID) {
			continue
		}
		if trusted, known := l.Trust.Known(fed, m.UID, m.Generation); known && !trusted {
			continue // rejected already: reading it again finds the same
		}
		var ca fv1.CrossAnchor
		if err := from.Get(ctx, client.ObjectKeyFromObject(m), &ca, client.UnsafeDisableDeepCopy); apierrors.IsNotFound(err) {
			continue // deleted since the listing: moved to the Archive, or gone with its Federation
		} else if err != nil {
			return err
		}
		if l.Trust.Verify(fed, &ca) == nil {
			if err := l.foldAny(ctx, fed, &ca); err != nil {
				return err
			}
		}
	}
	return l.syncArchive(ctx, fed)
}

// syncArchive folds in fed's anchors of the Archive, once. It runs after the listing of
// the objects: an anchor moved between the two reads is in the one or the other.
func (l *Ledger) syncArchive(ctx context.Context, fed *fv1.Federation) error {
	if l.Archive == nil {
		return nil
	}
	l.mu.Lock()
	done := l.ledgerOf(fed).archiveRead
	l.mu.Unlock()
	if done {
		return nil
	}
	if err := l.Archive.EachAnchor(ctx, fed, func(ca *fv1.CrossAnchor) error {
		return l.foldAny(ctx, fed, ca)
	}); err != nil {
		return err
	}
	l.mu.Lock()
	l.ledgerOf(fed).archiveRead = true
	l.mu.Unlock()
	return nil
}

// foldAny folds in ca, which the caller verified, of either form: a Merkle-form
// anchor's leaves from its checked tree.
func (l *Ledger) foldAny(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) error {
	if !IsMerkle(ca) {
		l.Fold(fed, ca)
		return nil
	}
	if l.has(fed, ca.UID) {
		return nil
	}
	tree, err := l.Merkle.Tree(ctx, fed, ca)
	if err != nil {
		return err
	}
	l.FoldLeaves(fed, ca, tree.Leaves())
	return nil
}

// Fold adds ca, a seed-form anchor the caller verified or made, to fed's ledger.
func (l *Ledger) Fold(fed *fv1.Federation, ca *fv1.CrossAnchor) {
	l.fold(fed, ca, func(yield func(fv1.OperatorID, int64)) {
		for _, p := range ca.Spec.Participants {
			yield(p.OperatorID, p.LastSeq)
		}
	})
}

// FoldLeaves adds ca, a Merkle-form anchor the caller verified or made, whose leaves
// are leaves (from its checked tree, or those it was made of), to fed's ledger.
func (l *Ledger) FoldLeaves(fed *fv1.Federation, ca *fv1.CrossAnchor, leaves []protocol.MerkleLeaf) {
	l.fold(fed, ca, func(yield func(fv1.OperatorID, int64)) {
		for _, leaf := range leaves {
			yield(fv1.OperatorID(leaf.OperatorID), leaf.LastSeq)
		}
	})
}

// fold raises the watermarks of the operators each ca's bindings yields, once per anchor.
func (l *Ledger) fold(fed *fv1.Federation, ca *fv1.CrossAnchor, bindings func(yield func(fv1.OperatorID, int64))) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fl := l.ledgerOf(fed)
	if _, ok := fl.folded[ca.UID]; ok && ca.UID != "" {
		return
	}
	fl.folded[ca.UID] = struct{}{}
	bindings(func(operator fv1.OperatorID, lastSeq int64) {
		fl.through[operator] = max(fl.through[operator], lastSeq)
	})
}

// Through returns operator's anchored watermark in fed: the highest lastSeq a trusted
// anchor folded in so far bound for it, 0 when none has.
func (l *Ledger) Through(fed *fv1.Federation, operator fv1.OperatorID) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ledgerOf(fed).through[operator]
}

// has reports whether the anchor uid is folded into fed's ledger.
func (l *Ledger) has(fed *fv1.Federation, uid types.UID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.ledgerOf(fed).folded[uid]
	return ok
}

// ledgerOf returns fed's part, making it when absent. l.mu is held.
func (l *Ledger) ledgerOf(fed *fv1.Federation) *fedLedger {
	key := fedKey{types.NamespacedName{Namespace: fed.Namespace, Name: fed.Name}, fed.UID}
	if l.feds == nil {
		l.feds = map[fedKey]*fedLedger{}
	}
	fl, ok := l.feds[key]
	if !ok {
		fl = &fedLedger{folded: map[types.UID]struct{}{}, through: map[fv1.OperatorID]int64{}}
		l.feds[key] = fl
	}
	return fl
}
