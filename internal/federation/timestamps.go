package federation

import (
	"crypto"
	"encoding/base64"
	"errors"
	"fmt"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/rfc3161"
)

// ErrTimestampUnverified means a CrossAnchor's status carries an RFC 3161 timestamp that
// the federation's timestamp authority did not sign over the anchor's logged signature.
var ErrTimestampUnverified = errors.New("a timestamp in the anchor's status does not verify")

// VerifyTimestamps checks every RFC 3161 timestamp in ca's status, which status alone
// vouches for, under the timestamp authority of fed's Rekor v2 log, when logKey, the key
// ca's log leg verified under, is that log's: each must be the authority's, over the
// signature ca's entry body logs. A log leg in a log the federation no longer uses has no
// authority to check against now: its timestamps pass as they are (Sigstore's tools check
// them against the trusted root of that log).
func VerifyTimestamps(fed *fv1.Federation, ca *fv1.CrossAnchor, logKey crypto.PublicKey) error {
	spec := fed.Spec.TransparencyLog
	if len(ca.Status.RFC3161Timestamps) == 0 || spec.Type != fv1.TransparencyLogRekorV2 || spec.TimestampAuthority == nil {
		return nil
	}
	current, err := protocol.ParseLogPublicKeyPEM([]byte(spec.PublicKeyPEM))
	if err != nil {
		return err
	}
	if eq, ok := current.(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(logKey) {
		return nil
	}
	chain, err := rfc3161.ParseChainPEM([]byte(spec.TimestampAuthority.CertChainPEM))
	if err != nil {
		return fmt.Errorf("the timestamp authority of Federation %s: %w", fed.Name, err)
	}
	body, err := base64.StdEncoding.DecodeString(ca.Status.EntryBody)
	if err != nil {
		return fmt.Errorf("%w: CrossAnchor %s: entry body: %w", ErrTimestampUnverified, ca.Name, err)
	}
	h, err := protocol.ParseHashedRekord(body)
	if err != nil {
		return fmt.Errorf("%w: CrossAnchor %s: %w", ErrTimestampUnverified, ca.Name, err)
	}
	for i, s := range ca.Status.RFC3161Timestamps {
		tsr, err := base64.StdEncoding.DecodeString(s)
		if err == nil {
			_, err = rfc3161.Verify(tsr, h.Signature, chain)
		}
		if err != nil {
			return fmt.Errorf("%w: CrossAnchor %s, rfc3161Timestamps[%d]: %w", ErrTimestampUnverified, ca.Name, i, err)
		}
	}
	return nil
}
