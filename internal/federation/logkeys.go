package federation

import (
	"context"
	"crypto"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// A federation that moved from its embedded log to Rekor (or back) keeps the anchors the
// other log recorded: their log legs verify under that log's key, not the current one.
// Whoever serves such an anchor's log leg looks for the key among the federation's log
// keys (LogKeyCandidates), never settling for "not logged" when status says it was.

// HasLogLeg reports whether ca's status records a completed log leg: the federation may
// then have served ca's logged receipt, and must never serve it pending again.
func HasLogLeg(ca *fv1.CrossAnchor) bool {
	return ca.Status.Phase == fv1.PhaseAnchored && ca.Status.LogEntry != nil && ca.Status.InclusionProof != nil
}

// OtherLogKeys returns the keys of the logs fed does not use now but may have used: the
// embedded log's key, from its Secret, while fed uses a Rekor log; the Rekor key spec
// pins, while fed uses its embedded log; and every key spec.transparencyLog.retiredLogs
// lists. A key that is absent or does not parse is left out; err joins why, for the
// caller's log. All are the federation's own trust anchors (its log key Secret, its
// GitOps spec), so a log leg that verifies under one is the federation's.
func OtherLogKeys(ctx context.Context, c client.Reader, fed *fv1.Federation) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	var errs []error
	for _, r := range fed.Spec.TransparencyLog.RetiredLogs {
		key, err := protocol.ParseLogPublicKeyPEM([]byte(r.PublicKeyPEM))
		if err != nil {
			errs = append(errs, fmt.Errorf("a retired log's key: %w", err))
			continue
		}
		keys = append(keys, key)
	}
	key, err := previousLogKey(ctx, c, fed)
	if key != nil {
		keys = append(keys, key)
	}
	return keys, errors.Join(append(errs, err)...)
}

// previousLogKey is the key of the other kind of log than fed's: the pinned Rekor key
// while fed uses its embedded log, the embedded log's key while it uses a Rekor log.
func previousLogKey(ctx context.Context, c client.Reader, fed *fv1.Federation) (crypto.PublicKey, error) {
	if !fed.Spec.TransparencyLog.IsRemote() {
		pemText := fed.Spec.TransparencyLog.PublicKeyPEM
		if pemText == "" {
			return nil, nil
		}
		key, err := protocol.ParseLogPublicKeyPEM([]byte(pemText))
		if err != nil {
			return nil, fmt.Errorf("the pinned Rekor key of a log used before: %w", err)
		}
		return key, nil
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: LogKeySecretName(fed)}, &s); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	pemText, err := tlog.LogKeyPEM(string(s.Data[LogKeySecretKey]))
	if err != nil {
		return nil, fmt.Errorf("the embedded log's key of a log used before: %w", err)
	}
	key, err := protocol.ParseLogPublicKeyPEM(pemText)
	if err != nil {
		return nil, fmt.Errorf("the embedded log's key of a log used before: %w", err)
	}
	return key, nil
}

// RekorV2Options are the settings of a client of the Rekor v2 log spec names; the
// caller adds its timeouts.
func RekorV2Options(spec fv1.TransparencyLog) tlog.RekorV2Options {
	o := tlog.RekorV2Options{URL: spec.URL, ReadURL: spec.ReadURL, PublicKeyPEM: []byte(spec.PublicKeyPEM)}
	if tsa := spec.TimestampAuthority; tsa != nil {
		o.TimestampURL, o.TimestampChainPEM = tsa.URL, []byte(tsa.CertChainPEM)
	}
	return o
}
