package clientconfig

import (
	"errors"
	"testing"
)

// TestTrustPolicies: a dry run pins nothing; the first contact pins; other keys are
// refused until the user trusts them, and then replace the pins.
func TestTrustPolicies(t *testing.T) {
	d := Dir(t.TempDir())
	const service = "https://federation.example.com"
	first := Presented{FederationKeyPEM: federationKeyPEM(t), LogKeyPEM: logKeyPEM(t)}

	v, err := d.Trust(service, first, CheckOnly)
	if err != nil || v.Pinned || v.Pins != nil || v.Previous != nil {
		t.Fatalf("CheckOnly on a first contact: %+v, %v; want nothing pinned", v, err)
	}
	if pins, _ := d.Pins(service); pins != nil {
		t.Fatal("CheckOnly pinned")
	}
	if v, err = d.Trust(service, first, TrustOnFirstUse); err != nil || !v.Pinned || v.Pins == nil {
		t.Fatalf("TrustOnFirstUse on a first contact: %+v, %v; want the keys pinned", v, err)
	}
	if v, err = d.Trust(service, first, TrustOnFirstUse); err != nil || v.Pinned || v.Previous == nil || *v.Previous != v.Presented {
		t.Fatalf("TrustOnFirstUse of the pinned keys: %+v, %v; want them accepted as they are", v, err)
	}

	other := Presented{FederationKeyPEM: federationKeyPEM(t), LogKeyPEM: first.LogKeyPEM}
	for _, p := range []Policy{TrustOnFirstUse, CheckOnly} {
		if v, err = d.Trust(service, other, p); !errors.Is(err, ErrKeyChanged) || v.Pinned {
			t.Fatalf("policy %d with another key: %+v, %v; want ErrKeyChanged and nothing pinned", p, v, err)
		}
	}
	if pins, _ := d.Pins(service); pins == nil || string(pins.FederationKeyPEM) != string(first.FederationKeyPEM) {
		t.Fatal("a refused key replaced the pin")
	}
	if v, err = d.Trust(service, other, TrustPresented); err != nil || !v.Pinned || !v.Changed || v.Previous.FederationKey == v.Presented.FederationKey {
		t.Fatalf("TrustPresented with another key: %+v, %v; want it pinned in place of the first", v, err)
	}
	if _, err := d.Trust(service, Presented{FederationKeyPEM: []byte("not a key")}, TrustPresented); err == nil {
		t.Fatal("Trust pinned something that is no key")
	}
}
