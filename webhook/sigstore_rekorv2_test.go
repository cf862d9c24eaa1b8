package webhook

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"golang.org/x/mod/sumdb/note"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/rfc3161"
	"github.com/cairn-dev/cairn/pkg/sigstorebundle"
)

// The trusted root of a federation on Rekor v2, served by a Server on a memoryClient: the
// log's checkpoint is read over HTTP, from a stand-in log here, from the real one of
// hack/rekor-v2-up.sh in TestTrustedRootOfARealRekorV2.

// rekorV2Federation is a federation on the Rekor v2 log at url with key pemText and the
// timestamp authority tsaURL of chainPEM, created at created.
func rekorV2Federation(url, readURL, pemText, tsaURL, chainPEM string, created time.Time) *fv1.Federation {
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: "sigstore", Name: "cairn", CreationTimestamp: metav1.NewTime(created)}}
	fed.Spec.TransparencyLog = fv1.TransparencyLog{Type: fv1.TransparencyLogRekorV2, URL: url, ReadURL: readURL, PublicKeyPEM: pemText,
		TimestampAuthority: &fv1.TimestampAuthority{URL: tsaURL, CertChainPEM: chainPEM}}
	return fed
}

// getTrustedRoot asks a Server on a memoryClient holding fed for the trusted root.
func getTrustedRoot(t *testing.T, fed *fv1.Federation) (status int, body []byte) {
	t.Helper()
	m := &memoryClient{fed: fed}
	s, err := New(Options{Client: m, APIReader: m, Informers: noInformers(), RatePerSecond: -1,
		Federation: types.NamespacedName{Namespace: fed.Namespace, Name: fed.Name}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/federation/log/trusted-root", nil).WithContext(t.Context()))
	body, err = io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, body
}

// errorCode is a JSON error answer's code.
func errorCode(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return e.Error
}

// testTSAChainPEM is a timestamp authority's chain, leaf then root, and its PEM.
func testTSAChainPEM(t *testing.T) ([]*x509.Certificate, string) {
	t.Helper()
	rootKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	root := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test tsa root"}, NotBefore: at,
		NotAfter: at.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{Organization: []string{"Cairn"}, CommonName: "test tsa"},
		NotBefore: at, NotAfter: at.AddDate(5, 0, 0), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}}
	var text strings.Builder
	for _, c := range []struct {
		tmpl *x509.Certificate
		pub  crypto.PublicKey
	}{{leaf, &leafKey.PublicKey}, {root, &rootKey.PublicKey}} {
		der, err := x509.CreateCertificate(rand.Reader, c.tmpl, root, c.pub, rootKey)
		if err != nil {
			t.Fatal(err)
		}
		if err := pem.Encode(&text, &pem.Block{Type: "CERTIFICATE", Bytes: der}); err != nil {
			t.Fatal(err)
		}
	}
	chain, err := rfc3161.ParseChainPEM([]byte(text.String()))
	if err != nil {
		t.Fatal(err)
	}
	return chain, text.String()
}

// checkTrustedRoot checks a Rekor v2 federation's trusted root: its log named by the
// checkpoint key ID of key under origin, and its timestamp authority's chain, leaf first.
func checkTrustedRoot(t *testing.T, body []byte, fed *fv1.Federation, key crypto.PublicKey, logID string, chain []*x509.Certificate) {
	t.Helper()
	root, err := sigstorebundle.ParseTrustedRoot(body)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	if len(root.Tlogs) != 1 || len(root.TimestampAuthorities) != 1 {
		t.Fatalf("%d logs and %d timestamp authorities, want one each\n%s", len(root.Tlogs), len(root.TimestampAuthorities), body)
	}
	l, spec := root.Tlogs[0], fed.Spec.TransparencyLog
	if l.LogID.KeyID != logID || l.CheckpointKeyID == nil || l.CheckpointKeyID.KeyID != logID {
		t.Errorf("logId %s checkpointKeyId %+v, want %s", l.LogID.KeyID, l.CheckpointKeyID, logID)
	}
	since := fed.CreationTimestamp.UTC().Format(time.RFC3339)
	if l.BaseURL != spec.URL || l.PublicKey.ValidFor.Start != since {
		t.Errorf("log %s from %s, want %s from %s", l.BaseURL, l.PublicKey.ValidFor.Start, spec.URL, since)
	}
	if keys, err := root.LogKeys(); err != nil || len(keys) != 1 || !key.(interface{ Equal(crypto.PublicKey) bool }).Equal(keys[0]) {
		t.Errorf("the root's log keys %v (%v), want the pinned one", keys, err)
	}
	tsa := root.TimestampAuthorities[0]
	if tsa.URI != spec.TimestampAuthority.URL || tsa.ValidFor.Start != since || tsa.Subject.CommonName != chain[0].Subject.CommonName {
		t.Errorf("timestamp authority %+v, want %s, %s from %s", tsa, spec.TimestampAuthority.URL, chain[0].Subject.CommonName, since)
	}
	var certs []string
	for _, c := range tsa.CertChain.Certificates {
		certs = append(certs, c.RawBytes)
	}
	var want []string
	for _, c := range chain {
		want = append(want, base64.StdEncoding.EncodeToString(c.Raw))
	}
	if strings.Join(certs, " ") != strings.Join(want, " ") {
		t.Errorf("the authority's chain is not the pinned one, leaf first")
	}
}

// standInLog serves, as a Rekor v2 log serves it, a checkpoint signed by signer.
func standInLog(t *testing.T, signer note.Signer) *httptest.Server {
	t.Helper()
	text := fmt.Sprintf("%s\n7\n%s\n", signer.Name(), base64.StdEncoding.EncodeToString(make([]byte, 32)))
	cp, err := note.Sign(&note.Note{Text: text}, signer)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/checkpoint" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(cp)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// testLogSigner is a signed-note Ed25519 signer named origin, and its key.
func testLogSigner(t *testing.T, origin string) (note.Signer, ed25519.PublicKey) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.SplitN(vkey, "+", 3)[2])
	if err != nil {
		t.Fatal(err)
	}
	return signer, ed25519.PublicKey(raw[1:])
}

// The log is named by the key ID of the origin its checkpoint states, verified under the
// pinned key: a checkpoint another key signed gives no trusted root.
func TestTrustedRootOfRekorV2(t *testing.T) {
	chain, chainPEM := testTSAChainPEM(t)
	created := time.Date(2026, 11, 21, 19, 0, 0, 0, time.FixedZone("CET", 3600))
	for _, origin := range []string{"127.0.0.1", "rekor.example.dev"} {
		signer, pub := testLogSigner(t, origin)
		pemText, err := protocol.MarshalPublicKeyPEM(pub)
		if err != nil {
			t.Fatal(err)
		}
		log := standInLog(t, signer)
		fed := rekorV2Federation(log.URL, "", string(pemText), log.URL+"/api/v1/timestamp", chainPEM, created)
		status, body := getTrustedRoot(t, fed)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", origin, status, body)
		}
		logID := base64.StdEncoding.EncodeToString(sigstorebundle.CheckpointKeyID(origin, pub))
		checkTrustedRoot(t, body, fed, pub, logID, chain)

		// The attack: a log (or whoever answers at its address) serves a checkpoint another
		// key signed, under the same origin.
		forger, _ := testLogSigner(t, origin)
		fed.Spec.TransparencyLog.URL = standInLog(t, forger).URL
		status, body = getTrustedRoot(t, fed)
		if status != http.StatusServiceUnavailable || errorCode(t, body) != "log_unreachable" || strings.Contains(string(body), "tlogs") {
			t.Errorf("%s: a checkpoint another key signed: %d %s, want 503 log_unreachable", origin, status, body)
		}
	}

	signer, _ := testLogSigner(t, "127.0.0.1")
	log := standInLog(t, signer)
	fed := rekorV2Federation(log.URL, "", "", log.URL+"/api/v1/timestamp", chainPEM, created)
	if status, body := getTrustedRoot(t, fed); status != http.StatusServiceUnavailable || errorCode(t, body) != "log_key_unavailable" {
		t.Errorf("no pinned log key: %d %s, want 503 log_key_unavailable", status, body)
	}
}

// TestTrustedRootOfARealRekorV2 reads the checkpoint of the Rekor v2 of
// hack/rekor-v2-up.sh (read only: it writes nothing to it), from the environment its env
// file sets (make test sets it). Without REKOR_V2_URL it is skipped, unless
// CAIRN_REQUIRE_REKOR_V2=1 makes that a failure.
func TestTrustedRootOfARealRekorV2(t *testing.T) {
	url := os.Getenv("REKOR_V2_URL")
	if url == "" {
		if os.Getenv("CAIRN_REQUIRE_REKOR_V2") == "1" {
			t.Fatal("REKOR_V2_URL is not set: run hack/rekor-v2-up.sh")
		}
		t.Skip("REKOR_V2_URL is not set: run hack/rekor-v2-up.sh (make test does)")
	}
	read := func(name string) string {
		text, err := os.ReadFile(os.Getenv(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(text)
	}
	pemText, chainPEM := read("REKOR_V2_PUBLIC_KEY"), read("TSA_CERT_CHAIN")
	key, err := protocol.ParseLogPublicKeyPEM([]byte(pemText))
	if err != nil {
		t.Fatal(err)
	}
	chain, err := rfc3161.ParseChainPEM([]byte(chainPEM))
	if err != nil {
		t.Fatal(err)
	}
	logID := os.Getenv("REKOR_V2_LOG_ID")
	if logID == "" {
		t.Fatal("REKOR_V2_LOG_ID is not set (hack/rekor-v2-up.sh's env file has it)")
	}
	fed := rekorV2Federation(url, os.Getenv("REKOR_V2_READ_URL"), pemText, os.Getenv("TSA_TIMESTAMP_URL"), chainPEM,
		time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC))
	status, body := getTrustedRoot(t, fed)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	checkTrustedRoot(t, body, fed, key, logID, chain)
	if pub, ok := key.(ed25519.PublicKey); ok {
		if origin := os.Getenv("REKOR_V2_ORIGIN"); origin != "" && base64.StdEncoding.EncodeToString(sigstorebundle.CheckpointKeyID(origin, pub)) != logID {
			t.Errorf("REKOR_V2_LOG_ID %s is not the key ID of origin %s", logID, origin)
		}
	}
}
