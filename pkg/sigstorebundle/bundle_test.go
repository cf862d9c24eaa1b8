package sigstorebundle_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/sigstorebundle"
)

const hint = "the federation key's fingerprint"

// checkBundle checks that got restates l's bundle as a Sigstore bundle of the logged
// message signature, naming the log by logID and the entry's type by version.
func checkBundle(t *testing.T, l logged, got *sigstorebundle.Bundle, logID []byte, version string) {
	t.Helper()
	b64 := base64.StdEncoding.EncodeToString
	lb := &l.bundle
	if got.MediaType != "application/vnd.dev.sigstore.bundle.v0.3+json" {
		t.Errorf("mediaType %q", got.MediaType)
	}
	if got.VerificationMaterial.PublicKey.Hint != hint {
		t.Errorf("publicKey.hint %q, want %q", got.VerificationMaterial.PublicKey.Hint, hint)
	}

	body, _ := base64.StdEncoding.DecodeString(lb.Body)
	h, err := protocol.ParseHashedRekord(body)
	if err != nil {
		t.Fatal(err)
	}
	sig := got.MessageSignature
	if sig.MessageDigest.Algorithm != "SHA2_512" || sig.MessageDigest.Digest != b64(h.Digest) || sig.Signature != b64(h.Signature) {
		t.Errorf("messageSignature %+v, want the body's digest %s and signature %s", sig, b64(h.Digest), b64(h.Signature))
	}
	digest, err := base64.StdEncoding.DecodeString(sig.MessageDigest.Digest)
	if err != nil {
		t.Fatal(err)
	}
	signature, err := base64.StdEncoding.DecodeString(sig.Signature)
	if err != nil {
		t.Fatal(err)
	}
	if want := sha512.Sum512(l.content); !bytes.Equal(digest, want[:]) {
		t.Errorf("messageDigest is not the SHA-512 of the logged content")
	}
	if err := ed25519.VerifyWithOptions(l.fedKey, digest, signature, &ed25519.Options{Hash: crypto.SHA512}); err != nil {
		t.Errorf("the message signature does not verify (Ed25519ph) under the federation key: %v", err)
	}

	if n := len(got.VerificationMaterial.TlogEntries); n != 1 {
		t.Fatalf("%d tlog entries, want 1", n)
	}
	e := got.VerificationMaterial.TlogEntries[0]
	if e.LogID.KeyID != b64(logID) {
		t.Errorf("logId.keyId %s, want %s", e.LogID.KeyID, b64(logID))
	}
	if e.KindVersion != (sigstorebundle.KindVersion{Kind: "hashedrekord", Version: version}) || h.APIVersion != version {
		t.Errorf("kindVersion %+v, the body's apiVersion %s, want %s", e.KindVersion, h.APIVersion, version)
	}
	if e.LogIndex != strconv.FormatInt(lb.LogIndex, 10) || e.IntegratedTime != strconv.FormatInt(lb.IntegratedTime, 10) {
		t.Errorf("logIndex %s integratedTime %s, want %d %d", e.LogIndex, e.IntegratedTime, lb.LogIndex, lb.IntegratedTime)
	}
	if e.CanonicalizedBody != lb.Body {
		t.Errorf("canonicalizedBody is not the logged body")
	}
	p, want := e.InclusionProof, lb.Verification.InclusionProof
	root, _ := hex.DecodeString(want.RootHash)
	if p.LogIndex != strconv.FormatInt(want.LogIndex, 10) || p.TreeSize != strconv.FormatInt(want.TreeSize, 10) ||
		p.RootHash != b64(root) || p.Checkpoint.Envelope != want.Checkpoint {
		t.Errorf("inclusionProof %+v, want %+v with rootHash %s", p, want, b64(root))
	}
	var hashes []string
	for _, s := range want.Hashes {
		raw, _ := hex.DecodeString(s)
		hashes = append(hashes, b64(raw))
	}
	if !slices.Equal(p.Hashes, hashes) || len(p.Hashes) != len(want.Hashes) {
		t.Errorf("inclusionProof.hashes %q, want %q", p.Hashes, hashes)
	}
	set := lb.Verification.SignedEntryTimestamp
	if (set == "") != (e.InclusionPromise == nil) || (set != "" && e.InclusionPromise.SignedEntryTimestamp != set) {
		t.Errorf("inclusionPromise %+v, the bundle's signed entry timestamp %q", e.InclusionPromise, set)
	}
	ts := got.VerificationMaterial.TimestampVerificationData
	var gotTS []string
	if ts != nil {
		for _, s := range ts.RFC3161Timestamps {
			gotTS = append(gotTS, s.SignedTimestamp)
		}
	}
	if (ts == nil) != (len(lb.Verification.RFC3161Timestamps) == 0) || !slices.Equal(gotTS, lb.Verification.RFC3161Timestamps) {
		t.Errorf("rfc3161Timestamps %q, want %q", gotTS, lb.Verification.RFC3161Timestamps)
	}
	checkJSON(t, got, set != "", ts != nil)
}

// checkJSON checks the bundle's JSON as Sigstore's protobuf JSON reader sees it: int64
// members as strings, and the optional members only when there is something in them.
func checkJSON(t *testing.T, b *sigstorebundle.Bundle, promise, timestamps bool) {
	t.Helper()
	raw, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		VerificationMaterial struct {
			TlogEntries []map[string]json.RawMessage `json:"tlogEntries"`
			Timestamps  json.RawMessage              `json:"timestampVerificationData"`
		} `json:"verificationMaterial"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	e := v.VerificationMaterial.TlogEntries[0]
	for _, name := range []string{"logIndex", "integratedTime"} {
		if !strings.HasPrefix(string(e[name]), `"`) {
			t.Errorf("%s is %s, want a JSON string", name, e[name])
		}
	}
	if _, ok := e["inclusionPromise"]; ok != promise {
		t.Errorf("inclusionPromise present: %v, want %v\n%s", ok, promise, raw)
	}
	if ok := v.VerificationMaterial.Timestamps != nil; ok != timestamps {
		t.Errorf("timestampVerificationData present: %v, want %v\n%s", ok, timestamps, raw)
	}
}

// An embedded log's entry (hashedrekord 0.0.1) is named by its bundle's logID, the
// SHA-256 of the log's PKIX key, and carries the log's signed entry timestamp.
func TestNewEmbeddedLogEntry(t *testing.T) {
	for name, fixture := range map[string]func(*testing.T) logged{"vector": vectorEntry, "embedded log": embeddedEntry} {
		t.Run(name, func(t *testing.T) {
			l := fixture(t)
			got, err := sigstorebundle.New(&l.bundle, l.logKey, hint)
			if err != nil {
				t.Fatal(err)
			}
			logID, err := hex.DecodeString(l.bundle.LogID)
			if err != nil {
				t.Fatal(err)
			}
			der, err := x509.MarshalPKIXPublicKey(l.logKey)
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(der); !bytes.Equal(logID, sum[:]) {
				t.Fatalf("the fixture's logID is not the SHA-256 of its log key")
			}
			if l.bundle.Verification.SignedEntryTimestamp == "" {
				t.Fatal("the fixture has no signed entry timestamp")
			}
			checkBundle(t, l, got, logID, "0.0.1")
		})
	}
}

// A Rekor v2 entry (hashedrekord 0.0.2) is named by the C2SP key ID of its checkpoint's
// signer, has no inclusion promise, and carries its RFC 3161 timestamps.
func TestNewRekorV2Entry(t *testing.T) {
	log := newV2Log(t)
	_, fed, _ := ed25519.GenerateKey(rand.Reader)
	l := log.entry(t, fed, anchorContent(t, "v2 anchor"))
	got, err := sigstorebundle.New(&l.bundle, l.logKey, hint)
	if err != nil {
		t.Fatal(err)
	}
	want := checkpointKeyID(v2Origin, log.pub)
	checkBundle(t, l, got, want, "0.0.2")
	if got.VerificationMaterial.TlogEntries[0].IntegratedTime != "0" {
		t.Errorf("integratedTime %s: a Rekor v2 entry states none", got.VerificationMaterial.TlogEntries[0].IntegratedTime)
	}
	for _, ts := range [][]string{nil, v2Timestamps[:1]} { // all of them, or none, each in order
		l := l
		l.bundle.Verification.RFC3161Timestamps = ts
		got, err := sigstorebundle.New(&l.bundle, l.logKey, hint)
		if err != nil {
			t.Fatal(err)
		}
		checkBundle(t, l, got, want, "0.0.2")
	}

	// The key ID names the key that signed the entry's checkpoint: its signature line
	// starts with the ID's first four bytes.
	_, sigs, err := protocol.ParseNote([]byte(l.bundle.Verification.InclusionProof.Checkpoint))
	if err != nil || len(sigs) != 1 {
		t.Fatalf("checkpoint signatures %v: %v", sigs, err)
	}
	if sigs[0].Name != v2Origin || sigs[0].KeyHash != binary.BigEndian.Uint32(want) {
		t.Errorf("the checkpoint is signed as %s %08x, the bundle names the log %x", sigs[0].Name, sigs[0].KeyHash, want)
	}

	// Sigstore's verifiers find the log by that ID in the trusted root.
	root, err := sigstorebundle.NewTrustedRoot([]sigstorebundle.Log{{BaseURL: "http://127.0.0.1:3120", Origin: v2Origin, Key: log.pub,
		Since: time.Unix(0, 0)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, root := got.VerificationMaterial.TlogEntries[0].LogID, root.Tlogs[0].LogID; got != root {
		t.Errorf("the bundle names the log %s, the trusted root %s", got.KeyID, root.KeyID)
	}
}

// A Rekor v2 log with an ECDSA key is named by the SHA-256 of its PKIX key, as
// rekor-tiles names it (its ECDSA note key IDs do not follow C2SP), whatever the origin.
func TestNewRekorV2EntryOfAnECDSALog(t *testing.T) {
	_, fed, _ := ed25519.GenerateKey(rand.Reader)
	l := newV2Log(t).entry(t, fed, anchorContent(t, "v2 anchor on an ECDSA log"))
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if l.bundle.LogID, err = protocol.LogID(&key.PublicKey); err != nil {
		t.Fatal(err)
	}
	got, err := sigstorebundle.New(&l.bundle, &key.PublicKey, hint)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	sum := sha256.Sum256(der)
	if id := got.VerificationMaterial.TlogEntries[0].LogID.KeyID; id != base64.StdEncoding.EncodeToString(sum[:]) {
		t.Errorf("logId %s, want the SHA-256 of the PKIX key %x", id, sum)
	}
	root, err := sigstorebundle.NewTrustedRoot([]sigstorebundle.Log{{BaseURL: "http://127.0.0.1:3120", Origin: v2Origin, Key: &key.PublicKey}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, root := got.VerificationMaterial.TlogEntries[0].LogID, root.Tlogs[0].LogID; got != root {
		t.Errorf("the bundle names the log %s, the trusted root %s", got.KeyID, root.KeyID)
	}
}

// checkpointKeyID is the C2SP signed-note key ID of an Ed25519 key, computed here.
func checkpointKeyID(name string, key ed25519.PublicKey) []byte {
	sum := sha256.Sum256(slices.Concat([]byte(name), []byte{'\n', 0x01}, key))
	return sum[:]
}

// CheckpointKeyID is the untruncated C2SP key ID: SHA-256 of the name, a newline, 0x01
// and the key, whose first four bytes are the key hash golang.org/x/mod/sumdb/note
// computes for the same key and name.
func TestCheckpointKeyID(t *testing.T) {
	for _, name := range []string{v2Origin, "rekor.example.dev", "log.example/cairn"} {
		log := newV2Log(t)
		got := sigstorebundle.CheckpointKeyID(name, log.pub)
		if want := checkpointKeyID(name, log.pub); !bytes.Equal(got, want) {
			t.Errorf("%s: CheckpointKeyID %x, want %x", name, got, want)
		}
		vkey, err := note.NewEd25519VerifierKey(name, log.pub)
		if err != nil {
			t.Fatal(err)
		}
		v, err := note.NewVerifier(vkey)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != sha256.Size || binary.BigEndian.Uint32(got) != v.KeyHash() {
			t.Errorf("%s: CheckpointKeyID %x, note's key hash %08x", name, got, v.KeyHash())
		}
		if name == v2Origin {
			gv, err := note.NewVerifier(log.vkey)
			if err != nil || gv.KeyHash() != v.KeyHash() {
				t.Errorf("note.GenerateKey's verifier key hash %08x (%v), want %08x", gv.KeyHash(), err, v.KeyHash())
			}
		}
	}
	log := newV2Log(t)
	if a, b := sigstorebundle.CheckpointKeyID("a.example", log.pub), sigstorebundle.CheckpointKeyID("b.example", log.pub); bytes.Equal(a, b) {
		t.Error("CheckpointKeyID does not depend on the name")
	}
}

// noKey stands for no log key in TestNewRefuses.
type noKey struct{}

// New refuses what it cannot restate faithfully, and returns no bundle.
func TestNewRefuses(t *testing.T) {
	_, fed, _ := ed25519.GenerateKey(rand.Reader)
	v1 := vectorEntry(t)
	v2 := newV2Log(t).entry(t, fed, anchorContent(t, "v2 anchor to refuse"))
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	malformed := protocol.ErrMalformed.Error()
	stripOrigin := func(b *protocol.LogBundle) {
		cp := &b.Verification.InclusionProof.Checkpoint
		*cp = strings.TrimPrefix(*cp, v2Origin)
	}
	for name, c := range map[string]struct {
		from   logged
		key    crypto.PublicKey // nil: the fixture's; noKey{}: none
		want   string           // in the error
		tamper func(b *protocol.LogBundle)
	}{
		"a body that is not base64":                {v1, nil, "log bundle body", func(b *protocol.LogBundle) { b.Body = "{not base64}" }},
		"a body that is not JSON":                  {v1, nil, malformed, func(b *protocol.LogBundle) { b.Body = b64("hashedrekord") }},
		"an empty body":                            {v1, nil, malformed, func(b *protocol.LogBundle) { b.Body = "" }},
		"a rekord body":                            {v1, nil, malformed, func(b *protocol.LogBundle) { b.Body = b64(`{"apiVersion":"0.0.1","kind":"rekord","spec":{}}`) }},
		"an intoto body":                           {v2, nil, malformed, func(b *protocol.LogBundle) { b.Body = b64(`{"apiVersion":"0.0.2","kind":"intoto","spec":{}}`) }},
		"a proof hash that is not hex":             {v1, nil, "proof hash 0", func(b *protocol.LogBundle) { b.Verification.InclusionProof.Hashes = []string{"zz"} }},
		"a v2 proof hash that is not hex":          {v2, nil, "proof hash 0", func(b *protocol.LogBundle) { b.Verification.InclusionProof.Hashes[0] += "g" }},
		"a root hash that is not hex":              {v1, nil, "root hash", func(b *protocol.LogBundle) { b.Verification.InclusionProof.RootHash = "root" }},
		"a logID that is not hex":                  {v1, nil, "invalid byte", func(b *protocol.LogBundle) { b.LogID = "log" }},
		"a v2 entry of an RSA log":                 {v2, &rsaKey.PublicKey, "*rsa.PublicKey, want Ed25519 or ECDSA", nil},
		"a v2 entry of no log key":                 {v2, noKey{}, "log key is <nil>", nil},
		"a v2 checkpoint without an origin":        {v2, nil, "no origin line", stripOrigin},
		"a v2 checkpoint of one line":              {v2, nil, "no origin line", func(b *protocol.LogBundle) { b.Verification.InclusionProof.Checkpoint = v2Origin }},
		"a v2 entry without a checkpoint":          {v2, nil, "no origin line", func(b *protocol.LogBundle) { b.Verification.InclusionProof.Checkpoint = "" }},
		"a v2 checkpoint with an empty first line": {v2, nil, "no origin line", func(b *protocol.LogBundle) { b.Verification.InclusionProof.Checkpoint = "\n" }},
	} {
		t.Run(name, func(t *testing.T) {
			b := c.from.bundle
			b.Verification.InclusionProof.Hashes = slices.Clone(b.Verification.InclusionProof.Hashes)
			if c.tamper != nil {
				c.tamper(&b)
			}
			key := c.from.logKey
			switch k := c.key.(type) {
			case nil:
			case noKey:
				key = nil
			default:
				key = k
			}
			got, err := sigstorebundle.New(&b, key, hint)
			if err == nil || got != nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New: %+v, %v; want an error saying %q and no bundle", got, err, c.want)
			}
		})
	}
}
