package sigstorebundle_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/sigstorebundle"
)

// since is when the federation began to use a log, in a zone other than UTC: the trusted
// root states it in UTC.
var since = time.Date(2026, 11, 21, 19, 0, 0, 0, time.FixedZone("CET", 3600))

const sinceUTC = "2026-11-21T18:00:00Z"

// tsaChain is a timestamp authority's chain: a leaf signed by a root, leaf first.
func tsaChain(t *testing.T) []*x509.Certificate {
	t.Helper()
	cert := func(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) *x509.Certificate {
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	rootKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rootTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{Organization: []string{"Cairn Test"}, CommonName: "tsa root"},
		NotBefore: since, NotAfter: since.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	root := cert(rootTmpl, rootTmpl, &rootKey.PublicKey, rootKey)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{Organization: []string{"Cairn Test TSA"}, CommonName: "tsa leaf"},
		NotBefore: since, NotAfter: since.AddDate(5, 0, 0), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}}
	return []*x509.Certificate{cert(leafTmpl, root, &leafKey.PublicKey, rootKey), root}
}

// pkixID is the base64 SHA-256 of key's PKIX DER form, and that form in base64.
func pkixID(t *testing.T, key crypto.PublicKey) (id, raw string) {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(der)
	return base64.StdEncoding.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(der)
}

func TestNewTrustedRoot(t *testing.T) {
	v2 := newV2Log(t)
	v1Pub, _, _ := ed25519.GenerateKey(rand.Reader)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	logs := []sigstorebundle.Log{
		{BaseURL: "http://127.0.0.1:3120", Origin: v2Origin, Key: v2.pub, Since: since},
		{BaseURL: "https://rekor.example", Key: v1Pub, Since: since},
		{BaseURL: "https://ecdsa.example", Key: &p256.PublicKey, Since: since},
		{BaseURL: "https://ecdsa-v2.example", Origin: "ecdsa-v2.example", Key: &p256.PublicKey, Since: since},
	}
	chain := tsaChain(t)
	root, err := sigstorebundle.NewTrustedRoot(logs, []sigstorebundle.Authority{{URI: "http://127.0.0.1:3122/api/v1/timestamp", Chain: chain, Since: since}})
	if err != nil {
		t.Fatal(err)
	}
	if root.MediaType != "application/vnd.dev.sigstore.trustedroot+json;version=0.1" {
		t.Errorf("mediaType %q", root.MediaType)
	}
	if len(root.Tlogs) != len(logs) {
		t.Fatalf("%d tlogs, want %d", len(root.Tlogs), len(logs))
	}
	b64 := base64.StdEncoding.EncodeToString
	for i, want := range []struct {
		details, logID  string
		checkpointKeyID *string
	}{
		{"PKIX_ED25519", b64(checkpointKeyID(v2Origin, v2.pub)), ptr(b64(checkpointKeyID(v2Origin, v2.pub)))},
		{"PKIX_ED25519", first(pkixID(t, v1Pub)), nil},
		{"PKIX_ECDSA_P256_SHA_256", first(pkixID(t, &p256.PublicKey)), nil},
		{"PKIX_ECDSA_P256_SHA_256", first(pkixID(t, &p256.PublicKey)), ptr(first(pkixID(t, &p256.PublicKey)))},
	} {
		l := root.Tlogs[i]
		_, raw := pkixID(t, logs[i].Key)
		if l.BaseURL != logs[i].BaseURL || l.HashAlgorithm != "SHA2_256" || l.PublicKey.RawBytes != raw ||
			l.PublicKey.KeyDetails != want.details || l.PublicKey.ValidFor.Start != sinceUTC {
			t.Errorf("tlogs[%d] %+v, want %s, %s, %s from %s", i, l, logs[i].BaseURL, want.details, raw, sinceUTC)
		}
		if l.LogID.KeyID != want.logID {
			t.Errorf("tlogs[%d].logId %s, want %s", i, l.LogID.KeyID, want.logID)
		}
		switch {
		case want.checkpointKeyID == nil && l.CheckpointKeyID != nil:
			t.Errorf("tlogs[%d].checkpointKeyId %s, want none", i, l.CheckpointKeyID.KeyID)
		case want.checkpointKeyID != nil && (l.CheckpointKeyID == nil || l.CheckpointKeyID.KeyID != *want.checkpointKeyID):
			t.Errorf("tlogs[%d].checkpointKeyId %+v, want %s", i, l.CheckpointKeyID, *want.checkpointKeyID)
		}
	}
	if id := root.Tlogs[0].LogID.KeyID; id != b64(sigstorebundle.CheckpointKeyID(v2Origin, v2.pub)) {
		t.Errorf("the Rekor v2 log's logId %s is not its CheckpointKeyID", id)
	}

	if len(root.TimestampAuthorities) != 1 {
		t.Fatalf("%d timestamp authorities, want 1", len(root.TimestampAuthorities))
	}
	ca := root.TimestampAuthorities[0]
	if ca.Subject != (sigstorebundle.Subject{Organization: "Cairn Test TSA", CommonName: "tsa leaf"}) {
		t.Errorf("subject %+v, want the signing (leaf) certificate's", ca.Subject)
	}
	if ca.URI != "http://127.0.0.1:3122/api/v1/timestamp" || ca.ValidFor.Start != sinceUTC {
		t.Errorf("authority %s from %s", ca.URI, ca.ValidFor.Start)
	}
	certs := ca.CertChain.Certificates
	if len(certs) != 2 || certs[0].RawBytes != b64(chain[0].Raw) || certs[1].RawBytes != b64(chain[1].Raw) {
		t.Errorf("certChain is not leaf then root: %d certificates", len(certs))
	}

	raw, err := root.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"certificateAuthorities", "ctlogs"} {
		if string(members[name]) != "[]" {
			t.Errorf("%s is %s, want []", name, members[name])
		}
	}
	if strings.Count(string(raw), `"checkpointKeyId"`) != 2 {
		t.Errorf("checkpointKeyId is written for other logs than the two Rekor v2 ones:\n%s", raw)
	}
}

func ptr(s string) *string { return &s }

func first(a, _ string) string { return a }

// An empty trusted root has empty lists, not nulls, as Sigstore's readers expect.
func TestNewTrustedRootEmpty(t *testing.T) {
	root, err := sigstorebundle.NewTrustedRoot(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := root.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tlogs", "certificateAuthorities", "ctlogs", "timestampAuthorities"} {
		if string(members[name]) != "[]" {
			t.Errorf("%s is %s, want []", name, members[name])
		}
	}
}

// Keys Sigstore's trusted roots do not have for a log, and an authority without a chain,
// are refused.
func TestNewTrustedRootRefuses(t *testing.T) {
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		logs        []sigstorebundle.Log
		authorities []sigstorebundle.Authority
		want        string
	}{
		"an ECDSA P-384 log key":   {logs: []sigstorebundle.Log{{BaseURL: "https://p384.example", Key: &p384.PublicKey}}, want: "P-384, want P-256"},
		"an ECDSA P-521 log key":   {logs: []sigstorebundle.Log{{BaseURL: "https://p521.example", Origin: "p521.example", Key: &p521.PublicKey}}, want: "P-521, want P-256"},
		"an RSA log key":           {logs: []sigstorebundle.Log{{BaseURL: "https://rsa.example", Key: &rsaKey.PublicKey}}, want: "*rsa.PublicKey"},
		"no log key":               {logs: []sigstorebundle.Log{{BaseURL: "https://none.example"}}, want: "none.example"},
		"an authority of no chain": {authorities: []sigstorebundle.Authority{{URI: "https://tsa.example"}}, want: "no certificate chain"},
	} {
		t.Run(name, func(t *testing.T) {
			root, err := sigstorebundle.NewTrustedRoot(c.logs, c.authorities)
			if err == nil || root != nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewTrustedRoot: %+v, %v; want an error saying %q and no root", root, err, c.want)
			}
		})
	}
}

// ParseTrustedRoot reads back what NewTrustedRoot wrote, and LogKeys the keys it holds;
// another media type, or a key that does not parse, is refused.
func TestParseTrustedRootAndLogKeys(t *testing.T) {
	v2 := newV2Log(t)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	keys := []crypto.PublicKey{v2.pub, &p256.PublicKey}
	root, err := sigstorebundle.NewTrustedRoot([]sigstorebundle.Log{{BaseURL: "http://127.0.0.1:3120", Origin: v2Origin, Key: keys[0], Since: since},
		{BaseURL: "https://rekor.example", Key: keys[1], Since: since}},
		[]sigstorebundle.Authority{{URI: "https://tsa.example", Chain: tsaChain(t), Since: since}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := root.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := sigstorebundle.ParseTrustedRoot(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, root) {
		t.Errorf("ParseTrustedRoot(Marshal(root)) = %+v, want %+v", back, root)
	}
	got, err := back.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(keys) {
		t.Fatalf("%d log keys, want %d", len(got), len(keys))
	}
	for i, k := range keys {
		if !k.(interface{ Equal(crypto.PublicKey) bool }).Equal(got[i]) {
			t.Errorf("log key %d is %T %v, want %v", i, got[i], got[i], k)
		}
	}

	for name, edit := range map[string]func(string) string{
		"another media type": func(s string) string {
			return strings.Replace(s, sigstorebundle.TrustedRootMediaType, "application/vnd.dev.sigstore.trustedroot+json;version=0.2", 1)
		},
		"a bundle's media type": func(s string) string {
			return strings.Replace(s, sigstorebundle.TrustedRootMediaType, sigstorebundle.BundleMediaType, 1)
		},
		"no media type": func(s string) string {
			return strings.Replace(s, `"mediaType": "`+sigstorebundle.TrustedRootMediaType+`"`, `"mediaType": ""`, 1)
		},
		"not JSON": func(s string) string { return s[:len(s)/2] },
	} {
		if root, err := sigstorebundle.ParseTrustedRoot([]byte(edit(string(raw)))); err == nil || root != nil {
			t.Errorf("%s: ParseTrustedRoot: %+v, %v; want an error", name, root, err)
		}
	}

	for name, rawBytes := range map[string]string{"not base64": "{key}", "not a PKIX key": base64.StdEncoding.EncodeToString([]byte("key"))} {
		bad := *back
		bad.Tlogs = append([]sigstorebundle.TransparencyLog(nil), back.Tlogs...)
		bad.Tlogs[1].PublicKey.RawBytes = rawBytes
		if keys, err := bad.LogKeys(); err == nil || keys != nil || !strings.Contains(err.Error(), "tlogs[1].publicKey") {
			t.Errorf("%s: LogKeys: %v, %v; want an error naming tlogs[1]", name, keys, err)
		}
	}
}
