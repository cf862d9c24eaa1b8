package controllers

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// This file records an operator's head in its status: the newest accepted submission of
// its chain (federation.HeadOf). The Submission controller's verdict moves the head; the
// operator's record of it is this controller's to write, afterwards and off the submit
// path, so that each FederationOperator's status has one writer. The record outlives the
// Submission it names, and continuity is checked against the newer of the two.

// recordHead sets fo's status.head to its head, when that is newer than the one recorded;
// a head never moves back.
func (r *FederationOperatorReconciler) recordHead(ctx context.Context, fo *fv1.FederationOperator) error {
	if !federation.Registered(fo) {
		return nil
	}
	var own fv1.SubmissionList
	if err := r.List(ctx, &own, client.InNamespace(fo.Namespace), client.MatchingFields{federation.OperatorIDIndex: string(fo.Status.OperatorID)},
		client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	if head := federation.HeadOf(fo, own.Items); head != nil && (fo.Status.Head == nil || head.LastSeq > fo.Status.Head.LastSeq) {
		fo.Status.Head = head
	}
	return nil
}

// operatorOfSubmission maps a Submission to the operators that claim its operator ID.
func (r *FederationOperatorReconciler) operatorOfSubmission(ctx context.Context, o client.Object) []reconcile.Request {
	var ops fv1.FederationOperatorList
	if err := r.List(ctx, &ops, client.InNamespace(o.GetNamespace()),
		client.MatchingFields{federation.OperatorIDIndex: string(o.(*fv1.Submission).Spec.OperatorID)}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, len(ops.Items))
	for i := range ops.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ops.Items[i])}
	}
	return reqs
}

// becameAccepted passes a Submission's verdict of acceptance, and an accepted one that
// the cache lists on a start.
var becameAccepted = predicate.Funcs{
	CreateFunc: func(e crevent.CreateEvent) bool { return federation.IsAccepted(e.Object.(*fv1.Submission)) },
	UpdateFunc: func(e crevent.UpdateEvent) bool {
		return !federation.IsAccepted(e.ObjectOld.(*fv1.Submission)) && federation.IsAccepted(e.ObjectNew.(*fv1.Submission))
	},
	DeleteFunc:  func(crevent.DeleteEvent) bool { return false },
	GenericFunc: func(crevent.GenericEvent) bool { return false },
}
