package rfc3161

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digitorus/pkcs7"
	"github.com/digitorus/timestamp"
)

var (
	testPolicy       = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 2}
	oidKPTimeStamp   = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 8}
	oidKPCodeSigning = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 3}
)

// authority is an in-process timestamp authority: a root CA, an optional intermediate
// and a signing leaf, all ECDSA P-256.
type authority struct {
	root, inter, leaf          *x509.Certificate
	rootKey, interKey, leafKey *ecdsa.PrivateKey
	chain                      []*x509.Certificate // leaf first, root last
}

// leafSpec shapes an authority's signing certificate.
type leafSpec struct {
	// eku is the OIDs of the leaf's extended key usage; nil: timestamping only.
	eku []asn1.ObjectIdentifier
	// noEKU leaves the extension out; ekuNotCritical marks it non-critical.
	noEKU, ekuNotCritical bool
	// notBefore and notAfter bound the leaf's validity; zero: an hour ago, in a day.
	notBefore, notAfter time.Time
	// noIntermediate has the root sign the leaf.
	noIntermediate bool
	// interEKU restricts the intermediate's extended key usage.
	interEKU []x509.ExtKeyUsage
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var serials struct {
	sync.Mutex
	n int64
}

func nextSerial() *big.Int {
	serials.Lock()
	defer serials.Unlock()
	serials.n++
	return big.NewInt(1000 + serials.n)
}

func issue(t *testing.T, tmpl, parent *x509.Certificate, pub crypto.PublicKey, parentKey crypto.Signer) *x509.Certificate {
	t.Helper()
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func caTemplate(name string, eku []x509.ExtKeyUsage) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"Cairn tests"}},
		NotBefore:             now.Add(-24 * time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		ExtKeyUsage:           eku,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
}

func newAuthority(t *testing.T, name string, spec leafSpec) *authority {
	t.Helper()
	a := &authority{rootKey: newKey(t), leafKey: newKey(t)}
	a.root = issue(t, caTemplate(name+" root", nil), nil, a.rootKey.Public(), a.rootKey)
	parent, parentKey := a.root, a.rootKey
	if !spec.noIntermediate {
		a.interKey = newKey(t)
		a.inter = issue(t, caTemplate(name+" intermediate", spec.interEKU), a.root, a.interKey.Public(), a.rootKey)
		parent, parentKey = a.inter, a.interKey
	}

	now := time.Now()
	leaf := &x509.Certificate{
		SerialNumber: nextSerial(),
		Subject:      pkix.Name{CommonName: name + " timestamping", Organization: []string{"Cairn tests"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if !spec.notBefore.IsZero() {
		leaf.NotBefore = spec.notBefore
	}
	if !spec.notAfter.IsZero() {
		leaf.NotAfter = spec.notAfter
	}
	if !spec.noEKU {
		eku := spec.eku
		if eku == nil {
			eku = []asn1.ObjectIdentifier{oidKPTimeStamp}
		}
		v, err := asn1.Marshal(eku)
		if err != nil {
			t.Fatal(err)
		}
		leaf.ExtraExtensions = []pkix.Extension{{Id: oidExtKeyUsage, Critical: !spec.ekuNotCritical, Value: v}}
	}
	a.leaf = issue(t, leaf, parent, a.leafKey.Public(), parentKey)

	a.chain = []*x509.Certificate{a.leaf}
	if a.inter != nil {
		a.chain = append(a.chain, a.inter)
	}
	a.chain = append(a.chain, a.root)
	return a
}

// TestAuthorityLeaf: the test authority's leaf is what RFC 3161 §2.3 asks for, so the
// cases below that bend it bend only what they say.
func TestAuthorityLeaf(t *testing.T) {
	a := newAuthority(t, "shape", leafSpec{})
	if len(a.leaf.ExtKeyUsage) != 1 || a.leaf.ExtKeyUsage[0] != x509.ExtKeyUsageTimeStamping {
		t.Fatalf("leaf EKU %v, want timestamping only", a.leaf.ExtKeyUsage)
	}
	critical := false
	for _, e := range a.leaf.Extensions {
		if e.Id.Equal(oidExtKeyUsage) {
			critical = e.Critical
		}
	}
	if !critical {
		t.Fatal("leaf EKU is not critical")
	}
	if len(a.chain) != 3 || a.chain[0] != a.leaf || a.chain[2] != a.root {
		t.Fatalf("chain %v", a.chain)
	}
}

// stamp is what the authority signs; zero fields take the defaults of (*authority).stamp.
type stamp struct {
	hash      crypto.Hash // imprint hash; zero: SHA-256
	when      time.Time   // zero: now, to the second
	nonce     *big.Int
	noCert    bool              // leave the signing certificate out of the token
	signer    *x509.Certificate // zero: the authority's leaf
	signerKey crypto.Signer     // zero: the authority's leaf key
}

func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// stamp timestamps message as the authority, returning the DER TimeStampResp.
func (a *authority) stamp(t *testing.T, message []byte, s stamp) []byte {
	t.Helper()
	if s.hash == 0 {
		s.hash = crypto.SHA256
	}
	h := s.hash.New()
	h.Write(message)
	return a.sign(t, &timestamp.Timestamp{HashAlgorithm: s.hash, HashedMessage: h.Sum(nil)}, s)
}

func (a *authority) sign(t *testing.T, ts *timestamp.Timestamp, s stamp) []byte {
	t.Helper()
	if s.when.IsZero() {
		s.when = now()
	}
	if s.signer == nil {
		s.signer = a.leaf
	}
	if s.signerKey == nil {
		s.signerKey = a.leafKey
	}
	ts.Time = s.when
	if ts.Nonce == nil {
		ts.Nonce = s.nonce
	}
	ts.Policy = testPolicy
	ts.Accuracy = time.Second
	ts.AddTSACertificate = !s.noCert
	resp, err := ts.CreateResponseWithOpts(s.signer, s.signerKey, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func errorResponse(t *testing.T, status timestamp.Status, fi timestamp.FailureInfo) []byte {
	t.Helper()
	resp, err := timestamp.CreateErrorResponse(status, fi)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x01
	return c
}

// offsets finds parts of a response for the flipped-byte cases.
type offsets struct {
	sig, sigLen       int // the signature value (EncryptedDigest)
	tst, tstLen       int // the TSTInfo
	time, nonce, imp  int // the GeneralizedTime, the nonce, the imprint inside the TSTInfo
	serial, policy    int // the serial number and policy OID inside the TSTInfo
	digestAttr        int // the messageDigest signed attribute
	cert, certLen     int // the embedded signing certificate
	certSig           int // the signature of the embedded certificate
	statusOff, tokOff int // the PKIStatus value and the token's first byte
}

func locate(t *testing.T, resp []byte, a *authority, when time.Time, nonce *big.Int) offsets {
	t.Helper()
	ts, err := timestamp.ParseResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	p7, err := pkcs7.Parse(ts.RawToken)
	if err != nil {
		t.Fatal(err)
	}
	find := func(what string, part []byte) int {
		t.Helper()
		i := bytes.Index(resp, part)
		if i < 0 || bytes.Contains(resp[i+1:], part) {
			t.Fatalf("%s is not once in the response", what)
		}
		return i
	}
	var o offsets
	sig := p7.Signers[0].EncryptedDigest
	o.sig, o.sigLen = find("signature", sig), len(sig)
	o.tst, o.tstLen = find("TSTInfo", p7.Content), len(p7.Content)
	o.time = find("time", []byte(when.UTC().Format("20060102150405Z")))
	o.nonce = find("nonce", nonce.Bytes())
	o.imp = find("imprint", ts.HashedMessage)
	o.serial = find("serial", ts.SerialNumber.Bytes())
	pol, _ := asn1.Marshal(testPolicy)
	o.policy = find("policy", pol)
	d := sha256.Sum256(p7.Content)
	o.digestAttr = find("messageDigest", d[:])
	o.cert, o.certLen = find("certificate", a.leaf.Raw), len(a.leaf.Raw)
	o.certSig = find("certificate signature", a.leaf.Signature)
	for _, in := range []struct {
		what     string
		at, size int
	}{{"time", o.time, 15}, {"nonce", o.nonce, len(nonce.Bytes())}, {"imprint", o.imp, 32}, {"serial", o.serial, 1}, {"policy", o.policy, len(pol)}} {
		if in.at < o.tst || in.at+in.size > o.tst+o.tstLen {
			t.Fatalf("the %s is not inside the TSTInfo", in.what)
		}
	}
	// TimeStampResp = SEQUENCE { PKIStatusInfo SEQUENCE { INTEGER status } , token }:
	// 30 len 30 03 02 01 status.
	h := 2
	if resp[1] >= 0x80 {
		h += int(resp[1] & 0x7f)
	}
	if !bytes.Equal(resp[h:h+4], []byte{0x30, 0x03, 0x02, 0x01}) {
		t.Fatalf("unexpected status encoding % x", resp[:h+6])
	}
	o.statusOff, o.tokOff = h+4, h+5
	return o
}

func TestVerify(t *testing.T) {
	message := []byte("the signature being timestamped")
	other := []byte("the signature being timestamped!")
	when := now().Add(-time.Minute)
	nonce := new(big.Int).SetUint64(0x0123456789abcdef)

	good := newAuthority(t, "good", leafSpec{})
	flat := newAuthority(t, "flat", leafSpec{noIntermediate: true})
	evil := newAuthority(t, "evil", leafSpec{})
	codeSigning := newAuthority(t, "code signing", leafSpec{eku: []asn1.ObjectIdentifier{oidKPCodeSigning}})
	noEKU := newAuthority(t, "no EKU", leafSpec{noEKU: true})
	nonCritical := newAuthority(t, "non-critical EKU", leafSpec{ekuNotCritical: true})
	extraEKU := newAuthority(t, "extra EKU", leafSpec{eku: []asn1.ObjectIdentifier{oidKPTimeStamp, oidKPCodeSigning}})
	interCodeSigning := newAuthority(t, "intermediate for code signing", leafSpec{interEKU: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}})
	expired := newAuthority(t, "expired", leafSpec{notBefore: when.Add(-48 * time.Hour), notAfter: when.Add(-24 * time.Hour)})
	// Valid now (the signing-time attribute pkcs7 adds), but not at the time the
	// authority states.
	shortLived := newAuthority(t, "short-lived", leafSpec{notBefore: time.Now().Add(-time.Hour), notAfter: time.Now().Add(time.Hour)})

	goodResp := good.stamp(t, message, stamp{when: when, nonce: nonce})
	o := locate(t, goodResp, good, when, nonce)

	tests := []struct {
		name    string
		resp    []byte
		message []byte
		chain   []*x509.Certificate
		noChain bool      // verify with a nil chain; otherwise a nil chain is good's
		want    time.Time // zero: want ErrInvalid
	}{
		// What verifies.
		{name: "granted, chain with intermediate", resp: goodResp, message: message, chain: good.chain, want: when},
		{name: "granted, chain without intermediate", resp: flat.stamp(t, message, stamp{when: when}), message: message, chain: flat.chain, want: when},
		{name: "certificate left out, the chain's leaf signs", resp: good.stamp(t, message, stamp{when: when, noCert: true}), message: message, chain: good.chain, want: when},
		{name: "SHA-384 imprint", resp: good.stamp(t, message, stamp{when: when, hash: crypto.SHA384}), message: message, chain: good.chain, want: when},
		{name: "SHA-512 imprint", resp: good.stamp(t, message, stamp{when: when, hash: crypto.SHA512}), message: message, chain: good.chain, want: when},
		{name: "empty message", resp: good.stamp(t, nil, stamp{when: when}), message: []byte{}, chain: good.chain, want: when},

		// Another message.
		{name: "another message", resp: goodResp, message: other},
		{name: "empty message instead", resp: goodResp, message: nil},
		{name: "the imprint itself as the message", resp: goodResp, message: func() []byte { h := sha256.Sum256(message); return h[:] }()},

		// Another authority.
		{name: "chain whose root is another CA", resp: goodResp, message: message, chain: []*x509.Certificate{good.leaf, good.inter, evil.root}},
		{name: "another authority's whole chain", resp: goodResp, message: message, chain: evil.chain},
		{name: "another authority's token, certificate left out", resp: evil.stamp(t, message, stamp{when: when, noCert: true}), message: message},
		{name: "another authority's token, certificate in", resp: evil.stamp(t, message, stamp{when: when}), message: message},
		{name: "good certificate, another key signs", resp: good.stamp(t, message, stamp{when: when, signerKey: evil.leafKey}), message: message},
		{name: "good certificate left out, another key signs", resp: good.stamp(t, message, stamp{when: when, signerKey: evil.leafKey, noCert: true}), message: message},
		{name: "intermediate signs the token", resp: good.stamp(t, message, stamp{when: when, signer: good.inter, signerKey: good.interKey}), message: message},
		{name: "root signs the token", resp: good.stamp(t, message, stamp{when: when, signer: good.root, signerKey: good.rootKey}), message: message},
		{name: "chain lacks the intermediate", resp: goodResp, message: message, chain: []*x509.Certificate{good.leaf, good.root}},
		{name: "another authority's intermediate as the root", resp: goodResp, message: message, chain: []*x509.Certificate{good.leaf, evil.inter}},

		// Not a certificate for timestamping.
		{name: "leaf for code signing only", resp: codeSigning.stamp(t, message, stamp{when: when}), message: message, chain: codeSigning.chain},
		{name: "leaf for code signing only, certificate left out", resp: codeSigning.stamp(t, message, stamp{when: when, noCert: true}), message: message, chain: codeSigning.chain},
		{name: "intermediate restricted to code signing", resp: interCodeSigning.stamp(t, message, stamp{when: when}), message: message, chain: interCodeSigning.chain},
		{name: "leaf without extended key usage", resp: noEKU.stamp(t, message, stamp{when: when}), message: message, chain: noEKU.chain},
		{name: "leaf with non-critical timestamping usage", resp: nonCritical.stamp(t, message, stamp{when: when}), message: message, chain: nonCritical.chain},
		{name: "leaf with timestamping and code signing usages", resp: extraEKU.stamp(t, message, stamp{when: when}), message: message, chain: extraEKU.chain},

		// Not valid at the time stated.
		{name: "leaf expired at the time", resp: expired.stamp(t, message, stamp{when: when}), message: message, chain: expired.chain},
		{name: "leaf expired at the time, certificate left out", resp: expired.stamp(t, message, stamp{when: when, noCert: true}), message: message, chain: expired.chain},
		{name: "time after the leaf's expiry", resp: shortLived.stamp(t, message, stamp{when: now().Add(2 * time.Hour)}), message: message, chain: shortLived.chain},
		{name: "time before the leaf's validity", resp: shortLived.stamp(t, message, stamp{when: now().Add(-2 * time.Hour)}), message: message, chain: shortLived.chain},
		{name: "time before the whole chain's validity", resp: good.stamp(t, message, stamp{when: now().Add(-48 * time.Hour)}), message: message, chain: good.chain},

		// Tampered bytes.
		{name: "flipped byte: first of the signature", resp: flip(goodResp, o.sig), message: message},
		{name: "flipped byte: middle of the signature", resp: flip(goodResp, o.sig+o.sigLen/2), message: message},
		{name: "flipped byte: last of the signature", resp: flip(goodResp, o.sig+o.sigLen-1), message: message},
		{name: "flipped byte: TSTInfo header", resp: flip(goodResp, o.tst+1), message: message},
		{name: "flipped byte: TSTInfo time", resp: flip(goodResp, o.time+11), message: message},
		{name: "flipped byte: TSTInfo nonce", resp: flip(goodResp, o.nonce+2), message: message},
		{name: "flipped byte: TSTInfo imprint", resp: flip(goodResp, o.imp+5), message: message},
		{name: "flipped byte: TSTInfo serial", resp: flip(goodResp, o.serial+3), message: message},
		{name: "flipped byte: TSTInfo policy", resp: flip(goodResp, o.policy+len(testPolicy)), message: message},
		{name: "flipped byte: TSTInfo last", resp: flip(goodResp, o.tst+o.tstLen-1), message: message},
		{name: "flipped byte: signed messageDigest", resp: flip(goodResp, o.digestAttr+7), message: message},
		{name: "flipped byte: middle of the certificate", resp: flip(goodResp, o.cert+o.certLen/2), message: message},
		{name: "flipped byte: certificate's signature", resp: flip(goodResp, o.certSig+10), message: message},
		{name: "flipped byte: status to rejection", resp: func() []byte { r := bytes.Clone(goodResp); r[o.statusOff] = byte(timestamp.Rejection); return r }(), message: message},
		{name: "flipped byte: token tag", resp: flip(goodResp, o.tokOff), message: message},
		{name: "flipped byte: outer length", resp: flip(goodResp, 1), message: message},
		{name: "truncated", resp: goodResp[:len(goodResp)-1], message: message},
		{name: "half", resp: goodResp[:len(goodResp)/2], message: message},
		{name: "trailing byte", resp: append(bytes.Clone(goodResp), 0), message: message},
		{name: "the bare token", resp: func() []byte { ts, _ := timestamp.ParseResponse(goodResp); return ts.RawToken }(), message: message},

		// No chain.
		{name: "nil chain", resp: goodResp, message: message, noChain: true},
		{name: "empty chain", resp: goodResp, message: message, chain: []*x509.Certificate{}},

		// Not a response.
		{name: "nil", resp: nil, message: message},
		{name: "empty", resp: []byte{}, message: message},
		{name: "garbage", resp: []byte("this is not a timestamp"), message: message},
		{name: "random bytes", resp: func() []byte { b := make([]byte, 512); _, _ = rand.Read(b); return b }(), message: message},
		{name: "a certificate", resp: good.leaf.Raw, message: message},
		{name: "empty sequence", resp: []byte{0x30, 0x00}, message: message},

		// Failure statuses.
		{name: "rejection", resp: errorResponse(t, timestamp.Rejection, timestamp.BadAlgorithm), message: message},
		{name: "waiting", resp: errorResponse(t, timestamp.Waiting, timestamp.SystemFailure), message: message},
		{name: "revocation notification", resp: errorResponse(t, timestamp.RevocationNotification, timestamp.UnacceptedPolicy), message: message},
		{name: "granted without a token", resp: errorResponse(t, timestamp.Granted, timestamp.SystemFailure), message: message},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chain := tc.chain
			if chain == nil && !tc.noChain {
				chain = good.chain
			}
			got, err := Verify(tc.resp, tc.message, chain)
			if !tc.want.IsZero() {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if !got.Equal(tc.want) {
					t.Fatalf("Verify: time %v, want %v", got, tc.want)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Verify: %v (time %v), want ErrInvalid", err, got)
			}
			if !got.IsZero() {
				t.Fatalf("Verify failed but returned time %v", got)
			}
		})
	}
}

// TestVerifyEveryFlippedByte: no single changed byte of a response both verifies and
// changes what it says (the time, or anything the authority signed).
func TestVerifyEveryFlippedByte(t *testing.T) {
	message := []byte("every byte")
	a := newAuthority(t, "every byte", leafSpec{})
	when := now()
	resp := a.stamp(t, message, stamp{when: when, nonce: big.NewInt(42)})
	orig, err := timestamp.ParseResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	origP7, err := pkcs7.Parse(orig.RawToken)
	if err != nil {
		t.Fatal(err)
	}
	for i := range resp {
		for _, mask := range []byte{0x01, 0x80} {
			tampered := bytes.Clone(resp)
			tampered[i] ^= mask
			got, err := Verify(tampered, message, a.chain)
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("byte %d ^ %#x: %v, want ErrInvalid", i, mask, err)
				}
				continue
			}
			// Accepted: the change must be outside what the authority signed.
			ts, perr := timestamp.ParseResponse(tampered)
			if perr != nil {
				t.Fatalf("byte %d ^ %#x verified but does not parse: %v", i, mask, perr)
			}
			p7, perr := pkcs7.Parse(ts.RawToken)
			if perr != nil {
				t.Fatalf("byte %d ^ %#x verified but its token does not parse: %v", i, mask, perr)
			}
			if !got.Equal(when) || !bytes.Equal(p7.Content, origP7.Content) {
				t.Errorf("byte %d ^ %#x verified with another TSTInfo (time %v)", i, mask, got)
			}
		}
	}
}

// tsa is an authority served over HTTP, with the requests it saw.
type tsa struct {
	srv  *httptest.Server
	when time.Time

	mu   sync.Mutex
	seen []*timestamp.Request
	hdr  []http.Header
}

func serve(t *testing.T, a *authority, answer func(w http.ResponseWriter, r *http.Request, req *timestamp.Request, ts *timestamp.Timestamp) []byte) *tsa {
	t.Helper()
	s := &tsa{when: now()}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "want POST", http.StatusMethodNotAllowed)
			return
		}
		req, err := timestamp.ParseRequest(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.seen = append(s.seen, req)
		s.hdr = append(s.hdr, r.Header.Clone())
		s.mu.Unlock()
		ts := &timestamp.Timestamp{
			HashAlgorithm:     req.HashAlgorithm,
			HashedMessage:     req.HashedMessage,
			Time:              s.when,
			Nonce:             req.Nonce,
			Policy:            testPolicy,
			Accuracy:          time.Second,
			AddTSACertificate: req.Certificates,
		}
		var resp []byte
		if answer != nil {
			resp = answer(w, r, req, ts)
			if resp == nil {
				return // answer wrote its own
			}
		} else {
			resp, err = ts.CreateResponseWithOpts(a.leaf, a.leafKey, crypto.SHA256)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		w.Header().Set("Content-Type", replyContentType)
		_, _ = w.Write(resp)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// signed answers the request's own timestamp, after change.
func signed(t *testing.T, a *authority, change func(ts *timestamp.Timestamp)) func(http.ResponseWriter, *http.Request, *timestamp.Request, *timestamp.Timestamp) []byte {
	return func(w http.ResponseWriter, _ *http.Request, _ *timestamp.Request, ts *timestamp.Timestamp) []byte {
		change(ts)
		resp, err := ts.CreateResponseWithOpts(a.leaf, a.leafKey, crypto.SHA256)
		if err != nil {
			t.Errorf("CreateResponseWithOpts: %v", err)
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return nil
		}
		return resp
	}
}

func fixed(resp []byte) func(http.ResponseWriter, *http.Request, *timestamp.Request, *timestamp.Timestamp) []byte {
	return func(http.ResponseWriter, *http.Request, *timestamp.Request, *timestamp.Timestamp) []byte { return resp }
}

func TestRequest(t *testing.T) {
	message := []byte("a Rekor v2 entry's signature")
	a := newAuthority(t, "request", leafSpec{})

	for _, tc := range []struct {
		name string
		hc   *http.Client
	}{{"default client", nil}, {"own client", &http.Client{Timeout: 10 * time.Second}}} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, a, nil)
			resp, when, err := Request(context.Background(), tc.hc, s.srv.URL, message, a.chain)
			if err != nil {
				t.Fatalf("Request: %v", err)
			}
			if !when.Equal(s.when) {
				t.Fatalf("Request: time %v, want %v", when, s.when)
			}
			got, err := Verify(resp, message, a.chain)
			if err != nil {
				t.Fatalf("Verify of the answer: %v", err)
			}
			if !got.Equal(when) {
				t.Fatalf("Verify: time %v, Request said %v", got, when)
			}
			if _, err := Verify(resp, []byte("another"), a.chain); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Verify of the answer over another message: %v, want ErrInvalid", err)
			}

			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.seen) != 1 {
				t.Fatalf("%d requests, want 1", len(s.seen))
			}
			req, hdr := s.seen[0], s.hdr[0]
			imprint := sha256.Sum256(message)
			switch {
			case req.HashAlgorithm != crypto.SHA256 || !bytes.Equal(req.HashedMessage, imprint[:]):
				t.Errorf("request imprint %v %x, want SHA-256 %x", req.HashAlgorithm, req.HashedMessage, imprint)
			case req.Nonce == nil || req.Nonce.Sign() <= 0:
				t.Errorf("request nonce %v, want a random one", req.Nonce)
			case !req.Certificates:
				t.Error("request does not ask for the signing certificate")
			case hdr.Get("Content-Type") != queryContentType:
				t.Errorf("Content-Type %q", hdr.Get("Content-Type"))
			case hdr.Get("Accept") != replyContentType:
				t.Errorf("Accept %q", hdr.Get("Accept"))
			}
		})
	}

	t.Run("nonces differ", func(t *testing.T) {
		s := serve(t, a, nil)
		for range 2 {
			if _, _, err := Request(context.Background(), nil, s.srv.URL, message, a.chain); err != nil {
				t.Fatal(err)
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.seen[0].Nonce.Cmp(s.seen[1].Nonce) == 0 {
			t.Fatalf("two requests with nonce %v", s.seen[0].Nonce)
		}
	})
}

func TestRequestStatus(t *testing.T) {
	a := newAuthority(t, "status", leafSpec{})
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{http.StatusBadRequest, "bad request\n", "bad request"},
		{http.StatusUnauthorized, "", ""},
		{http.StatusNotFound, "  no such authority  ", "no such authority"},
		{http.StatusInternalServerError, "boom", "boom"},
		{http.StatusServiceUnavailable, long, long[:200]},
		{http.StatusNoContent, "", ""},
		{http.StatusFound, "elsewhere", "elsewhere"}, // no Location: the client does not follow it
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			s := serve(t, a, func(w http.ResponseWriter, _ *http.Request, _ *timestamp.Request, _ *timestamp.Timestamp) []byte {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
				return nil
			})
			resp, when, err := Request(context.Background(), nil, s.srv.URL, []byte("m"), a.chain)
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("Request: %v, want *StatusError", err)
			}
			if se.Status != tc.status || se.Message != tc.want {
				t.Fatalf("StatusError %d %q, want %d %q", se.Status, se.Message, tc.status, tc.want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", tc.status)) {
				t.Fatalf("error %q does not say the status", err)
			}
			if resp != nil || !when.IsZero() {
				t.Fatalf("Request failed but returned %d bytes, %v", len(resp), when)
			}
		})
	}

	t.Run("granted answer with status 500", func(t *testing.T) {
		s := serve(t, a, func(w http.ResponseWriter, _ *http.Request, _ *timestamp.Request, ts *timestamp.Timestamp) []byte {
			resp, err := ts.CreateResponseWithOpts(a.leaf, a.leafKey, crypto.SHA256)
			if err != nil {
				t.Error(err)
			}
			w.Header().Set("Content-Type", replyContentType)
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(resp)
			return nil
		})
		_, _, err := Request(context.Background(), nil, s.srv.URL, []byte("m"), a.chain)
		var se *StatusError
		if !errors.As(err, &se) || se.Status != http.StatusInternalServerError {
			t.Fatalf("Request: %v, want *StatusError 500", err)
		}
	})
}

func TestRequestRefuses(t *testing.T) {
	message := []byte("refused")
	a := newAuthority(t, "refuses", leafSpec{})
	evil := newAuthority(t, "evil", leafSpec{})
	plus1 := func(ts *timestamp.Timestamp) { ts.Nonce = new(big.Int).Add(ts.Nonce, big.NewInt(1)) }

	type answer = func(http.ResponseWriter, *http.Request, *timestamp.Request, *timestamp.Timestamp) []byte
	for _, tc := range []struct {
		name    string
		answer  answer
		chain   []*x509.Certificate
		invalid bool   // want ErrInvalid
		want    string // in the error
	}{
		{name: "another nonce", answer: signed(t, a, plus1), invalid: true, want: "nonce"},
		{name: "no nonce", answer: signed(t, a, func(ts *timestamp.Timestamp) { ts.Nonce = nil }), invalid: true, want: "nonce"},
		{name: "another nonce, certificate left out", answer: signed(t, a, func(ts *timestamp.Timestamp) { plus1(ts); ts.AddTSACertificate = false }), invalid: true, want: "nonce"},
		{name: "replayed answer", answer: fixed(a.stamp(t, message, stamp{nonce: big.NewInt(7)})), invalid: true, want: "nonce"},
		{name: "another message", answer: signed(t, a, func(ts *timestamp.Timestamp) { h := sha256.Sum256([]byte("other")); ts.HashedMessage = h[:] }), invalid: true, want: "another message"},
		{name: "another authority", answer: nil, chain: evil.chain, invalid: true}, // a good answer, another chain
		{name: "rejection", answer: fixed(errorResponse(t, timestamp.Rejection, timestamp.BadRequest)), invalid: true},
		{name: "garbage", answer: fixed([]byte("<html>hello</html>")), invalid: true},
		{name: "empty 200", answer: func(w http.ResponseWriter, _ *http.Request, _ *timestamp.Request, _ *timestamp.Timestamp) []byte {
			w.WriteHeader(http.StatusOK)
			return nil
		}, invalid: true},
		{name: "exactly MaxResponseBytes of garbage", answer: fixed(bytes.Repeat([]byte{'x'}, MaxResponseBytes)), invalid: true},
		{name: "one byte over MaxResponseBytes", answer: fixed(bytes.Repeat([]byte{'x'}, MaxResponseBytes+1)), want: "over"},
		{name: "a valid answer padded over MaxResponseBytes", answer: signed(t, a, func(ts *timestamp.Timestamp) {
			ts.ExtraExtensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 2, 3, 4}, Value: make([]byte, MaxResponseBytes)}}
		}), want: "over"},
		{name: "far over MaxResponseBytes", answer: func(w http.ResponseWriter, _ *http.Request, _ *timestamp.Request, _ *timestamp.Timestamp) []byte {
			w.Header().Set("Content-Type", replyContentType)
			chunk := bytes.Repeat([]byte{0x30}, 32<<10)
			for range 64 {
				if _, err := w.Write(chunk); err != nil {
					return nil
				}
			}
			return nil
		}, want: "over"},
		{name: "over MaxResponseBytes with status 500", answer: func(w http.ResponseWriter, _ *http.Request, _ *timestamp.Request, _ *timestamp.Timestamp) []byte {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(bytes.Repeat([]byte{'x'}, MaxResponseBytes+1))
			return nil
		}, want: "over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, a, tc.answer)
			chain := tc.chain
			if chain == nil {
				chain = a.chain
			}
			resp, when, err := Request(context.Background(), nil, s.srv.URL, message, chain)
			if err == nil {
				t.Fatalf("Request: accepted (time %v)", when)
			}
			if resp != nil || !when.IsZero() {
				t.Fatalf("Request failed but returned %d bytes, %v", len(resp), when)
			}
			if tc.invalid != errors.Is(err, ErrInvalid) {
				t.Fatalf("Request: %v, ErrInvalid %v, want %v", err, errors.Is(err, ErrInvalid), tc.invalid)
			}
			var se *StatusError
			if errors.As(err, &se) {
				t.Fatalf("Request: %v, not a status error", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Request: %v, want %q in it", err, tc.want)
			}
		})
	}
}

func TestRequestContext(t *testing.T) {
	a := newAuthority(t, "slow", leafSpec{})
	release := make(chan struct{})
	s := serve(t, a, func(w http.ResponseWriter, r *http.Request, _ *timestamp.Request, _ *timestamp.Timestamp) []byte {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return nil
	})
	t.Cleanup(func() { close(release) }) // before the server closes: cleanups run last first

	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, _, err := Request(ctx, nil, s.srv.URL, []byte("m"), a.chain)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Request: %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Request returned after %v", d)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, _, err := Request(ctx, nil, s.srv.URL, []byte("m"), a.chain)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Request: %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Request returned after %v", d)
		}
	})
	t.Run("canceled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, _, err := Request(ctx, nil, s.srv.URL, []byte("m"), a.chain); !errors.Is(err, context.Canceled) {
			t.Fatalf("Request: %v, want context.Canceled", err)
		}
	})
	t.Run("client timeout", func(t *testing.T) {
		hc := &http.Client{Timeout: 100 * time.Millisecond}
		start := time.Now()
		_, _, err := Request(context.Background(), hc, s.srv.URL, []byte("m"), a.chain)
		if err == nil || errors.Is(err, ErrInvalid) {
			t.Fatalf("Request: %v, want a timeout", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Request returned after %v", d)
		}
	})
	t.Run("bad URL", func(t *testing.T) {
		if _, _, err := Request(context.Background(), nil, "://no", []byte("m"), a.chain); err == nil {
			t.Fatal("Request: accepted a bad URL")
		}
	})
}

func pemOf(certs ...*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}

func TestParseChainPEM(t *testing.T) {
	a := newAuthority(t, "pem", leafSpec{})
	chainPEM := pemOf(a.chain...)
	key, err := x509.MarshalECPrivateKey(a.leafKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: key})
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

	for _, tc := range []struct {
		name string
		text []byte
		want []*x509.Certificate // nil: want an error
	}{
		{name: "chain", text: chainPEM, want: a.chain},
		{name: "one certificate", text: pemOf(a.root), want: []*x509.Certificate{a.root}},
		{name: "surrounding whitespace", text: cat([]byte("\n\t \r\n"), chainPEM, []byte("\n\n  ")), want: a.chain},
		{name: "CRLF line ends", text: bytes.ReplaceAll(chainPEM, []byte("\n"), []byte("\r\n")), want: a.chain},
		{name: "order kept", text: pemOf(a.root, a.leaf), want: []*x509.Certificate{a.root, a.leaf}},

		{name: "nil", text: nil},
		{name: "empty", text: []byte{}},
		{name: "whitespace only", text: []byte(" \n\t\r\n")},
		{name: "private key block", text: keyPEM},
		{name: "key after the chain", text: cat(chainPEM, keyPEM)},
		{name: "key inside the chain", text: cat(pemOf(a.leaf), keyPEM, pemOf(a.root))},
		{name: "lower-case block type", text: bytes.ReplaceAll(chainPEM, []byte("CERTIFICATE"), []byte("certificate"))},
		{name: "trusted certificate block", text: bytes.ReplaceAll(chainPEM, []byte("CERTIFICATE"), []byte("TRUSTED CERTIFICATE"))},
		{name: "trailing garbage", text: cat(chainPEM, []byte("garbage"))},
		{name: "trailing garbage line", text: cat(chainPEM, []byte("\n# end of chain\n"))},
		{name: "truncated block", text: chainPEM[:len(chainPEM)-20]},
		{name: "DER, not PEM", text: a.leaf.Raw},
		{name: "not a certificate inside", text: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")})},
		{name: "certificate with trailing data inside", text: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cat(a.leaf.Raw, []byte{0})})},
		{name: "leading garbage", text: cat([]byte("garbage\n"), chainPEM)},
		{name: "garbage between blocks", text: cat(pemOf(a.leaf), []byte("garbage\n"), pemOf(a.inter, a.root))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseChainPEM(tc.text)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("ParseChainPEM: accepted, %d certificates", len(got))
				}
				if got != nil {
					t.Fatalf("ParseChainPEM failed but returned %d certificates", len(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseChainPEM: %v", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("ParseChainPEM: %d certificates, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if !got[i].Equal(tc.want[i]) {
					t.Fatalf("certificate %d is %q, want %q", i, got[i].Subject, tc.want[i].Subject)
				}
			}
		})
	}

	t.Run("parsed chain verifies", func(t *testing.T) {
		chain, err := ParseChainPEM(chainPEM)
		if err != nil {
			t.Fatal(err)
		}
		when := now()
		if got, err := Verify(a.stamp(t, []byte("m"), stamp{when: when}), []byte("m"), chain); err != nil || !got.Equal(when) {
			t.Fatalf("Verify with the parsed chain: %v, %v", got, err)
		}
	})
}
