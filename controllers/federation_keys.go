package controllers

import (
	"context"
	"crypto/ed25519"
	"errors"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file keeps a Federation's keys and its log's genesis record: the signing key,
// read from or generated into its Secret (and rotated, keyrotation.go), its public half
// and key history in status, and the genesis record logged once.

// loadKey reads (or generates) the signing key, rotates it when spec names another
// Secret, and publishes its public half. A Secret holding no usable key leaves the
// Federation not ready, and a nil key.
func (r *FederationReconciler) loadKey(ctx context.Context, fed *fv1.Federation, evs *[]federationEvent) (ed25519.PrivateKey, error) {
	key, created, err := federationKey(ctx, r.Client, fed)
	if err != nil {
		reason := fv1.ReasonKeyInvalid
		if errors.Is(err, federation.ErrSigningKeyMissing) {
			reason = fv1.ReasonKeyMissing
		}
		if c := meta.FindStatusCondition(fed.Status.Conditions, string(fv1.ConditionKeyReady)); c == nil || c.Reason != reason {
			*evs = append(*evs, federationEvent{event: event{corev1.EventTypeWarning, reason, "LoadKey", err.Error()}})
		}
		r.setCondition(fed, fv1.ConditionKeyReady, metav1.ConditionFalse, reason, err.Error())
		r.setCondition(fed, fv1.ConditionReady, metav1.ConditionFalse, reason, "no usable signing key")
		return nil, nil // waits for the Secret to be fixed
	}
	switch {
	case created:
		r.setCondition(fed, fv1.ConditionKeyReady, metav1.ConditionTrue, fv1.ReasonKeyGenerated, "the signing key was generated into its Secret")
	case !meta.IsStatusConditionTrue(fed.Status.Conditions, string(fv1.ConditionKeyReady)):
		r.setCondition(fed, fv1.ConditionKeyReady, metav1.ConditionTrue, fv1.ReasonKeyLoaded, "the signing key was read from its Secret")
	}
	if fed.Status.SigningKeySecret == "" {
		fed.Status.SigningKeySecret = federation.SecretName(fed, fed.Spec.SigningKeySecretRef, "signing-key")
	}
	if len(fed.Status.KeyHistory) == 0 {
		pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
		if err != nil {
			return nil, err
		}
		fed.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: fv1.PublicKeyPEM(pemText),
			Fingerprint: fv1.Hash(protocol.Fingerprint(key.Public().(ed25519.PublicKey))), ValidFrom: metav1.NewTime(r.now())}}
	}
	if rotationPending(fed) {
		if key, err = r.rotateKey(ctx, fed, key, evs); err != nil {
			return nil, err
		}
	}
	pub := key.Public().(ed25519.PublicKey)
	pemText, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		return nil, err
	}
	fed.Status.PublicKeyPEM = fv1.PublicKeyPEM(pemText)
	fed.Status.PublicKeyFingerprint = fv1.Hash(protocol.Fingerprint(pub))
	return key, nil
}

// logGenesis opens fed's log and records the genesis record once, after putting back the
// API suspensions the log records (a restored Federation's status has none). It reports whether
// the log answered. A log that cannot open for its key (logKeyReason) is also a Warning
// Event, once, and leaves the Federation not Ready (sync).
func (r *FederationReconciler) logGenesis(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, evs *[]federationEvent) bool {
	log, err := r.Logs.For(ctx, r.Client, fed)
	if err == nil && fed.Status.GenesisLogEntry == nil {
		err = r.restoreSuspensions(ctx, fed, evs) // federation_restore.go: in the same status write
	}
	if err == nil && fed.Status.GenesisLogEntry == nil {
		var body []byte
		body, err = protocol.NewRecordEntry(protocol.GenesisRecord{Type: protocol.RecordGenesis,
			Federation: fed.Namespace + "/" + fed.Name, PublicKeyPEM: string(fed.Status.PublicKeyPEM)}, key)
		if err == nil {
			var e *tlog.Entry
			if e, err = log.Upload(ctx, body); err == nil {
				fed.Status.GenesisLogEntry = logEntryOf(e)
			}
		}
	} else if err == nil && !meta.IsStatusConditionTrue(fed.Status.Conditions, string(fv1.ConditionLogReachable)) {
		// Only to see a log come back: while it answers, every upload says so, and a
		// Federation is reconciled on every Submission change.
		err = log.Reachable(ctx)
	}
	if reason := logKeyReason(err); reason != "" {
		if c := meta.FindStatusCondition(fed.Status.Conditions, string(fv1.ConditionLogReachable)); c == nil || c.Reason != reason {
			*evs = append(*evs, federationEvent{event: event{corev1.EventTypeWarning, reason, "OpenLog", err.Error()}})
			logf.FromContext(ctx).Error(err, "Embedded log not opened: its key Secret is missing or holds another key", "reason", reason)
		}
		r.setCondition(fed, fv1.ConditionLogReachable, metav1.ConditionFalse, reason, err.Error())
		return false
	}
	if err != nil {
		r.setCondition(fed, fv1.ConditionLogReachable, metav1.ConditionFalse, fv1.ReasonLogUnreachable, err.Error())
		return false
	}
	r.setCondition(fed, fv1.ConditionLogReachable, metav1.ConditionTrue, fv1.ReasonLogReachable, "the transparency log answers")
	return true
}

// logKeyReason is the LogReachable reason of a log that cannot open for its key, "" for
// any other error.
func logKeyReason(err error) string {
	switch {
	case errors.Is(err, federation.ErrNoLogKey):
		return fv1.ReasonLogKeyMissing
	case errors.Is(err, tlog.ErrKeyMismatch):
		return fv1.ReasonLogKeyMismatch
	}
	return ""
}

// logKeyProblem returns the LogReachable condition of fed when it says its log cannot
// open for its key, else nil.
func logKeyProblem(fed *fv1.Federation) *metav1.Condition {
	c := meta.FindStatusCondition(fed.Status.Conditions, string(fv1.ConditionLogReachable))
	if c == nil || c.Status != metav1.ConditionFalse || (c.Reason != fv1.ReasonLogKeyMissing && c.Reason != fv1.ReasonLogKeyMismatch) {
		return nil
	}
	return c
}

// logEntryOf is the status form of a log entry.
func logEntryOf(e *tlog.Entry) *fv1.LogEntry {
	at := metav1.NewTime(e.IntegratedTime)
	return &fv1.LogEntry{LogIndex: e.Index, UUID: e.UUID, URL: e.URL, IntegratedTime: &at}
}
