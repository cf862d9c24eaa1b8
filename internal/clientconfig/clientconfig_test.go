package clientconfig

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

func federationKeyPEM(t *testing.T) []byte {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func logKeyPEM(t *testing.T) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func TestHostOf(t *testing.T) {
	good := map[string]string{
		"http://127.0.0.1:8088":              "127.0.0.1:8088",
		"https://Fed.Example.org":            "fed.example.org",
		"https://fed.example.org/":           "fed.example.org",
		"https://fed.example.org/tenant/one": "fed.example.org_tenant_one",
		"http://[::1]:8088":                  "[::1]:8088",
	}
	for in, want := range good {
		if got, err := HostOf(in); err != nil || got != want {
			t.Errorf("HostOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "fed.example.org", "ftp://fed.example.org", "http://fed.example.org/../x", "http://fed/a b"} {
		if got, err := HostOf(bad); err == nil {
			t.Errorf("HostOf(%q) = %q, want an error", bad, got)
		}
	}
}

func TestOperatorAndDefaultRoundTrip(t *testing.T) {
	d := Dir(t.TempDir())
	if s, err := d.DefaultService(); err != nil || s != "" {
		t.Fatalf("DefaultService of an empty directory: %q, %v", s, err)
	}
	if op, err := d.Operator("http://127.0.0.1:8088"); err != nil || op != nil {
		t.Fatalf("Operator of an empty directory: %+v, %v", op, err)
	}
	if err := d.SetDefaultService("http://127.0.0.1:8088"); err != nil {
		t.Fatal(err)
	}
	if s, _ := d.DefaultService(); s != "http://127.0.0.1:8088" {
		t.Fatalf("DefaultService = %q", s)
	}
	t.Chdir(t.TempDir())
	op := &Operator{Service: "http://127.0.0.1:8088", OperatorID: "op_0123456789abcdef", PrivateKey: "keys/private.pem"}
	if err := d.SaveOperator(op); err != nil {
		t.Fatal(err)
	}
	got, err := d.Operator("http://127.0.0.1:8088/")
	if err != nil || got == nil || got.OperatorID != op.OperatorID || !filepath.IsAbs(got.PrivateKey) {
		t.Fatalf("Operator after SaveOperator: %+v, %v; want the ID and an absolute key path", got, err)
	}
	info, err := os.Stat(filepath.Join(string(d), "federations", "127.0.0.1:8088", "operator.json"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("operator.json: %v, mode %v; want 0600", err, info.Mode())
	}
}

func TestCheckPins(t *testing.T) {
	const svc = "http://127.0.0.1:8088"
	d := Dir(t.TempDir())
	fed, logKey := federationKeyPEM(t), logKeyPEM(t)
	if pins, err := d.CheckPins(svc, Presented{FederationKeyPEM: fed}); err != nil || pins != nil {
		t.Fatalf("CheckPins before any pin: %+v, %v; want nothing pinned", pins, err)
	}
	if err := d.SavePins(svc, Presented{FederationKeyPEM: fed, LogKeyPEM: logKey}); err != nil {
		t.Fatal(err)
	}
	pins, err := d.CheckPins(svc, Presented{FederationKeyPEM: fed, LogKeyPEM: logKey})
	if err != nil || pins == nil || pins.LogKey == nil {
		t.Fatalf("CheckPins with the pinned keys: %+v, %v", pins, err)
	}

	attacks := map[string]Presented{
		"another federation key": {FederationKeyPEM: federationKeyPEM(t), LogKeyPEM: logKey},
		"another log key":        {FederationKeyPEM: fed, LogKeyPEM: logKeyPEM(t)},
		"the log key dropped":    {FederationKeyPEM: fed},
	}
	for name, presented := range attacks {
		_, err := d.CheckPins(svc, presented)
		var changed *KeyChangedError
		if !errors.As(err, &changed) || !errors.Is(err, ErrKeyChanged) {
			t.Errorf("%s: CheckPins = %v, want a *KeyChangedError", name, err)
		}
	}

	// Re-pinning (--trust-new-key) replaces both, and a federation without a log key
	// leaves none pinned.
	newFed := federationKeyPEM(t)
	if err := d.SavePins(svc, Presented{FederationKeyPEM: newFed}); err != nil {
		t.Fatal(err)
	}
	if pins, err := d.CheckPins(svc, Presented{FederationKeyPEM: newFed}); err != nil || pins.LogKey != nil {
		t.Fatalf("after re-pinning: %+v, %v", pins, err)
	}
	if err := d.SavePins(svc, Presented{FederationKeyPEM: []byte("not a key")}); err == nil {
		t.Fatal("SavePins pinned something that is not a key")
	}
}
