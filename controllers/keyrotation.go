package controllers

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// resignWindow is how far back anchors are re-signed when the federation key rotates.
const resignWindow = 90 * 24 * time.Hour

// This file rotates the federation key. Pointing spec.signingKeySecretRef at another
// Secret starts it; once every anchor signed by the old key is in the log, the
// controller logs a rotation record signed by both keys (under the old one), re-signs
// the receipts of the last 90 days with the new key, and switches. Each anchor keeps the
// key that signed it in its spec, so old receipts keep verifying.

// rotationPending reports whether spec names another signing-key Secret than the one in
// use.
func rotationPending(fed *fv1.Federation) bool {
	return fed.Status.SigningKeySecret != "" &&
		fed.Status.SigningKeySecret != federation.SecretName(fed, fed.Spec.SigningKeySecretRef, "signing-key")
}

// rotateKey moves fed from oldKey to the key of the Secret spec names. It returns the key
// to sign with from now on: the new one once rotated, else still the old one (waiting for
// anchors to reach the log, or for the log).
func (r *FederationReconciler) rotateKey(ctx context.Context, fed *fv1.Federation, oldKey ed25519.PrivateKey, evs *[]federationEvent) (ed25519.PrivateKey, error) {
	var list fv1.CrossAnchorList
	if err := r.APIReader.List(ctx, &list, client.InNamespace(fed.Namespace), client.MatchingLabels{federation.FederationLabel: fed.Name}); err != nil {
		return oldKey, err
	}
	// Only the federation's own anchors count: one anyone else made must not hold the
	// rotation up, and is not re-signed.
	anchors := slices.DeleteFunc(list.Items, func(ca fv1.CrossAnchor) bool { return r.Trust.Verify(fed, &ca) != nil })
	for _, ca := range anchors {
		if ca.Status.Phase != fv1.PhaseAnchored {
			r.setCondition(fed, fv1.ConditionKeyReady, metav1.ConditionTrue, fv1.ReasonKeyRotationWaiting,
				fmt.Sprintf("the key rotation waits for %s to be in the log", ca.Name))
			return oldKey, nil
		}
	}
	name := federation.SecretName(fed, fed.Spec.SigningKeySecretRef, "signing-key")
	newKey, _, err := signingKey(ctx, r.Client, fed, name)
	if err != nil {
		return oldKey, err
	}
	var secret corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: name}, &secret); err != nil {
		return oldKey, err
	}
	// Dated by the new Secret, so that a retry logs the very same record.
	rotatedAt := secret.CreationTimestamp.UTC()
	record, err := rotationRecord(fed, oldKey, newKey, rotatedAt)
	if err != nil {
		return oldKey, err
	}
	// The re-signed receipts name the log's key, checked against every bundle.
	logKey, err := r.logPublicKey(ctx, fed)
	r.noteLogged(fed, "log key", err)
	if logKey == nil {
		return oldKey, nil // the log is down: keep the old key and try again
	}
	entry, err := logSignedRecord(ctx, r.Client, r.Logs, fed, oldKey, record)
	r.noteLogged(fed, "rotation record", err)
	if entry == nil {
		return oldKey, nil // the log is down: keep the old key and try again
	}
	if err := r.resign(ctx, anchors, newKey, logKey); err != nil {
		return oldKey, err
	}
	now := metav1.NewTime(rotatedAt)
	if n := len(fed.Status.KeyHistory); n > 0 {
		fed.Status.KeyHistory[n-1].ValidUntil = &now
	}
	fed.Status.KeyHistory = append(fed.Status.KeyHistory, fv1.KeyRecord{PublicKeyPEM: fv1.PublicKeyPEM(record.NewPublicKeyPEM),
		Fingerprint: fv1.Hash(protocol.Fingerprint(newKey.Public().(ed25519.PublicKey))), ValidFrom: now, LogEntry: entry})
	fed.Status.SigningKeySecret = name
	r.setCondition(fed, fv1.ConditionKeyReady, metav1.ConditionTrue, fv1.ReasonKeyRotated, "rotated to the key in Secret "+name)
	*evs = append(*evs, federationEvent{event: event{corev1.EventTypeNormal, fv1.ReasonKeyRotated, "RotateKey", "rotated to the key in Secret " + name}})
	return newKey, nil
}

// noteLogged records in fed's LogReachable condition that logging what failed.
func (r *FederationReconciler) noteLogged(fed *fv1.Federation, what string, err error) {
	if err != nil {
		r.setCondition(fed, fv1.ConditionLogReachable, metav1.ConditionFalse, fv1.ReasonLogUnreachable, what+": "+err.Error())
	}
}

// rotationRecord is the record of fed's move from oldKey to newKey at at, signed by both.
func rotationRecord(fed *fv1.Federation, oldKey, newKey ed25519.PrivateKey, at time.Time) (protocol.FederationKeyRotationRecord, error) {
	oldPEM, err := protocol.MarshalPublicKeyPEM(oldKey.Public().(ed25519.PublicKey))
	if err != nil {
		return protocol.FederationKeyRotationRecord{}, err
	}
	newPEM, err := protocol.MarshalPublicKeyPEM(newKey.Public().(ed25519.PublicKey))
	if err != nil {
		return protocol.FederationKeyRotationRecord{}, err
	}
	rec := protocol.FederationKeyRotationRecord{Type: protocol.RecordFederationKeyRotation, Federation: fed.Namespace + "/" + fed.Name,
		OldPublicKeyPEM: string(oldPEM), NewPublicKeyPEM: string(newPEM), RotatedAt: at.Format(time.RFC3339)}
	msg := protocol.RotationMessage(rec.NewPublicKeyPEM, rec.RotatedAt)
	rec.OldKeySignature = base64.StdEncoding.EncodeToString(ed25519.Sign(oldKey, msg))
	rec.NewKeySignature = base64.StdEncoding.EncodeToString(ed25519.Sign(newKey, msg))
	return rec, nil
}

// resign has newKey sign the receipt of every trusted anchor of the last 90 days that it
// has not signed yet.
func (r *FederationReconciler) resign(ctx context.Context, anchors []fv1.CrossAnchor, newKey ed25519.PrivateKey, logKey crypto.PublicKey) error {
	pemText, err := protocol.MarshalPublicKeyPEM(newKey.Public().(ed25519.PublicKey))
	if err != nil {
		return err
	}
	now := r.now()
	for i := range anchors {
		ca := &anchors[i]
		at, err := protocol.ParseAnchoredAt(ca.Spec.AnchoredAt)
		if err != nil || now.Sub(at) > resignWindow || signedBy(ca, fv1.PublicKeyPEM(pemText)) {
			continue
		}
		signed, _, err := federation.SignReceipt(ca, newKey, logKey, nil)
		if err != nil {
			return err
		}
		ca.Status.ReceiptSignatures = append(ca.Status.ReceiptSignatures, fv1.ReceiptSignature{PublicKeyPEM: fv1.PublicKeyPEM(pemText),
			Signature: fv1.Signature(signed.FederationSignature), SignedAt: metav1.NewTime(now)})
		if err := r.Status().Update(ctx, ca); err != nil {
			return fmt.Errorf("re-sign %s: %w", ca.Name, err)
		}
	}
	return nil
}

// logPublicKey returns the key of fed's transparency log.
func (r *FederationReconciler) logPublicKey(ctx context.Context, fed *fv1.Federation) (crypto.PublicKey, error) {
	log, err := r.Logs.For(ctx, r.Client, fed)
	if err != nil {
		return nil, err
	}
	return log.PublicKey(ctx)
}

// signedBy reports whether a later federation key with PEM pemText re-signed ca, so
// that a rotation retried after a failed write does not sign it again.
func signedBy(ca *fv1.CrossAnchor, pemText fv1.PublicKeyPEM) bool {
	for _, s := range ca.Status.ReceiptSignatures {
		if s.PublicKeyPEM == pemText {
			return true
		}
	}
	return false
}
