package protocol

import (
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/pkg/rfc3161"
)

// ErrNoTimestamp means a Rekor v2 entry's bundle carries no RFC 3161 timestamp that the
// trusted timestamp authorities signed over the entry's signature.
var ErrNoTimestamp = errors.New("no trusted RFC 3161 timestamp")

// IsRekorV2Body reports whether body is a hashedrekord 0.0.2 entry, which only Rekor v2
// records.
func IsRekorV2Body(body []byte) bool {
	v, err := hashedRekordVersion(body)
	return err == nil && v == hashedRekordV2APIVersion
}

// VerifyLogTimestamps checks b's RFC3161Timestamps against the timestamp authorities'
// chains (leaf first, root last) and returns the earliest time one of them states over
// the signature in b's body: when, at the latest, the federation signed what it logged.
// None verifying, or none at all, is ErrNoTimestamp; a body that does not decode is
// ErrMalformed. It does not verify b itself: see VerifyLogBundle.
func VerifyLogTimestamps(b *LogBundle, authorities [][]*x509.Certificate) (time.Time, error) {
	body, err := decodeCanonicalBase64("body", b.Body, -1)
	if err != nil {
		return time.Time{}, err
	}
	return verifyBundleTimestamps(b, body, authorities)
}

func verifyBundleTimestamps(b *LogBundle, body []byte, authorities [][]*x509.Certificate) (time.Time, error) {
	h, err := ParseHashedRekord(body)
	if err != nil {
		return time.Time{}, err
	}
	var earliest time.Time
	var errs []error
	for i, s := range b.Verification.RFC3161Timestamps {
		tsr, err := decodeCanonicalBase64(fmt.Sprintf("rfc3161Timestamps[%d]", i), s, -1)
		if err != nil {
			return time.Time{}, err
		}
		for _, chain := range authorities {
			t, err := rfc3161.Verify(tsr, h.Signature, chain)
			if err != nil {
				errs = append(errs, fmt.Errorf("rfc3161Timestamps[%d]: %w", i, err))
				continue
			}
			if earliest.IsZero() || t.Before(earliest) {
				earliest = t
			}
		}
	}
	if earliest.IsZero() {
		if len(errs) == 0 {
			return time.Time{}, fmt.Errorf("%w: the bundle has none (or no authority is trusted)", ErrNoTimestamp)
		}
		return time.Time{}, fmt.Errorf("%w: %w", ErrNoTimestamp, errors.Join(errs...))
	}
	return earliest, nil
}
