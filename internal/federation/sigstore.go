package federation

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"net/http"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/sigstorebundle"
)

// ErrNotLogged means a CrossAnchor's log leg is not done: it has no log proof yet.
var ErrNotLogged = errors.New("the anchor is not in the log yet")

// SigstoreBundle restates ca's log leg as a Sigstore bundle (see package
// sigstorebundle), once its proof bundle, rebuilt from status, verifies under one of
// logKeys (VerifyLogLeg) and its timestamps under fed's authority (VerifyTimestamps):
// status is not evidence. The bundle's key hint is the
// fingerprint of the federation key that signed ca. The caller has checked that the
// federation made ca (Trust.Verify).
func SigstoreBundle(fed *fv1.Federation, ca *fv1.CrossAnchor, logKeys []crypto.PublicKey) (*sigstorebundle.Bundle, error) {
	if !HasLogLeg(ca) {
		return nil, ErrNotLogged
	}
	pub, err := protocol.ParsePublicKeyPEM([]byte(ca.Spec.FederationPublicKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("CrossAnchor %s: %w", ca.Name, err)
	}
	var errs []error
	for _, key := range logKeys {
		if err := VerifyLogLeg(ca, key); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := VerifyTimestamps(fed, ca, key); err != nil {
			return nil, err
		}
		b, err := logBundle(ca)
		if err != nil {
			return nil, err
		}
		return sigstorebundle.New(b, key, protocol.Fingerprint(pub))
	}
	return nil, fmt.Errorf("CrossAnchor %s: its log leg verifies under none of the federation's log keys: %w", ca.Name, errors.Join(errs...))
}

// TrustedRoot is the Sigstore trusted root of fed's Rekor log, whose key is key: the log
// and, for Rekor v2, its timestamp authority, both valid from fed's creation. A Rekor v2
// log is named by its checkpoint key ID, whose origin is read from the log's latest
// checkpoint, verified under key, with hc (Sigstore's verifiers expect that origin to be
// the host name of the log's URL). The embedded log has none: Sigstore's verifiers do not
// read its checkpoints.
func TrustedRoot(ctx context.Context, fed *fv1.Federation, key crypto.PublicKey, hc *http.Client) (*sigstorebundle.TrustedRoot, error) {
	spec := fed.Spec.TransparencyLog
	since := fed.CreationTimestamp.Time
	switch spec.Type {
	case fv1.TransparencyLogRekorV2:
		o := RekorV2Options(spec)
		o.Attempts, o.HTTPClient = 1, hc
		log, err := tlog.NewRekorV2(o)
		if err != nil {
			return nil, err
		}
		cp, _, err := log.Checkpoint(ctx)
		if err != nil {
			return nil, err
		}
		return sigstorebundle.NewTrustedRoot([]sigstorebundle.Log{{BaseURL: spec.URL, Origin: cp.Origin, Key: key, Since: since}},
			[]sigstorebundle.Authority{{URI: spec.TimestampAuthority.URL, Chain: log.TimestampAuthority(), Since: since}})
	case fv1.TransparencyLogRekor:
		return sigstorebundle.NewTrustedRoot([]sigstorebundle.Log{{BaseURL: spec.URL, Key: key, Since: since}}, nil)
	}
	return nil, errors.New("the embedded log has no Sigstore trusted root")
}
