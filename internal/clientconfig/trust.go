package clientconfig

import (
	"errors"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Policy says what Trust does with keys other than the pinned ones.
type Policy int

const (
	// TrustOnFirstUse pins the presented keys when nothing is pinned for the federation,
	// as ssh's accept-new does, and refuses keys other than the pinned ones.
	TrustOnFirstUse Policy = iota
	// TrustPresented pins the presented keys, replacing other pins: the user said so.
	TrustPresented
	// CheckOnly compares and pins nothing (a dry run): nothing pinned is no error.
	CheckOnly
)

// Fingerprints name a federation's keys as a user compares them: the federation key as
// "sha256:" and its fingerprint (protocol.Fingerprint), the log key by its log ID
// (protocol.LogID), "none" when there is no log key.
type Fingerprints struct {
	FederationKey string `json:"federation_key"`
	LogID         string `json:"log_id"`
}

// FingerprintsOf names the keys got presents; it fails when one is no key.
func FingerprintsOf(got Presented) (Fingerprints, error) {
	fed, err := protocol.ParsePublicKeyPEM(got.FederationKeyPEM)
	if err != nil {
		return Fingerprints{}, err
	}
	f := Fingerprints{FederationKey: "sha256:" + protocol.Fingerprint(fed), LogID: "none"}
	if len(got.LogKeyPEM) > 0 {
		logKey, err := protocol.ParseLogPublicKeyPEM(got.LogKeyPEM)
		if err != nil {
			return Fingerprints{}, err
		}
		if f.LogID, err = protocol.LogID(logKey); err != nil {
			return Fingerprints{}, err
		}
	}
	return f, nil
}

// fingerprintsOf names pinned keys.
func fingerprintsOf(p *Pins) Fingerprints {
	f, _ := FingerprintsOf(Presented{FederationKeyPEM: p.FederationKeyPEM, LogKeyPEM: p.LogKeyPEM}) // parsed by Pins
	return f
}

// Verdict is what Trust found and did.
type Verdict struct {
	// Presented names the keys the federation presents.
	Presented Fingerprints
	// Previous names the keys pinned before; nil when none were.
	Previous *Fingerprints
	// Pins are the pins after Trust; nil when none are (CheckOnly on a first contact).
	Pins *Pins
	// Pinned is true when Trust wrote the presented keys as the pins; Changed when they
	// replaced other keys.
	Pinned, Changed bool
}

// Trust compares the keys the federation at service presents with its pins and, as
// policy says, pins them. Keys other than the pinned ones are a *KeyChangedError
// (ErrKeyChanged) unless policy is TrustPresented. Presented keys are parsed first:
// nothing is pinned that is not a key.
func (d Dir) Trust(service string, got Presented, policy Policy) (*Verdict, error) {
	presented, err := FingerprintsOf(got)
	if err != nil {
		return nil, err
	}
	v := &Verdict{Presented: presented}
	pins, err := d.CheckPins(service, got)
	if pins != nil {
		prev := fingerprintsOf(pins)
		v.Previous = &prev
	}
	var changed *KeyChangedError
	switch {
	case errors.As(err, &changed) && policy == TrustPresented:
		v.Changed = true
	case err != nil:
		return v, err
	case pins != nil:
		v.Pins = pins
		return v, nil
	case policy == CheckOnly:
		return v, nil
	}
	if err := d.SavePins(service, got); err != nil {
		return v, err
	}
	v.Pinned = true
	if v.Pins, err = d.Pins(service); err != nil {
		return v, err
	}
	return v, nil
}
