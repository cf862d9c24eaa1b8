package sigstorebundle_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// logged is a log proof bundle with the log key it verifies under, the federation key
// that signed its entry and the content the entry logs.
type logged struct {
	bundle  protocol.LogBundle
	logKey  crypto.PublicKey
	fedKey  ed25519.PublicKey
	content []byte
}

// verified checks that l's bundle verifies as a log's own: every fixture is one a
// caller of New could have checked (protocol.VerifyLogBundle), logging l.content.
func (l logged) verified(t *testing.T) logged {
	t.Helper()
	body, err := protocol.VerifyLogBundle(&l.bundle, protocol.LogVerifyOptions{Key: l.logKey})
	if err != nil {
		t.Fatalf("the fixture's bundle does not verify: %v", err)
	}
	if err := protocol.VerifyHashedRekord(body, l.content, l.fedKey); err != nil {
		t.Fatalf("the fixture's bundle does not log its content: %v", err)
	}
	return l
}

// anchorContent is the logged content of a cross-anchor whose hash is the SHA-256 of s.
func anchorContent(t *testing.T, s string) []byte {
	t.Helper()
	sum := sha256.Sum256([]byte(s))
	content, err := protocol.CrossAnchorLogContent(hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	return content
}

// vectorEntry is the log leg of pkg/protocol's logged receipt vector: an entry of the
// embedded log (hashedrekord 0.0.1, Ed25519 log key, a signed entry timestamp).
func vectorEntry(t *testing.T) logged {
	t.Helper()
	raw, err := os.ReadFile("../protocol/testdata/vectors/receipt-logged.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Inputs struct {
			Receipt string `json:"receipt"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var r protocol.Receipt
	if err := json.Unmarshal([]byte(v.Inputs.Receipt), &r); err != nil {
		t.Fatal(err)
	}
	var l logged
	if err := json.Unmarshal(r.TLogEntry, &l.bundle); err != nil {
		t.Fatal(err)
	}
	if l.logKey, err = protocol.ParseLogPublicKeyPEM([]byte(*r.TLogPublicKeyPEM)); err != nil {
		t.Fatal(err)
	}
	if l.fedKey, err = protocol.ParsePublicKeyPEM([]byte(r.FederationPublicKeyPEM)); err != nil {
		t.Fatal(err)
	}
	if l.content, err = protocol.CrossAnchorLogContent(r.CrossAnchorHash); err != nil {
		t.Fatal(err)
	}
	return l.verified(t)
}

// embeddedEntry is the middle one of three entries of a fresh embedded log, read back as
// the controllers read it: its proof has hashes on both sides.
func embeddedEntry(t *testing.T) logged {
	t.Helper()
	ctx := t.Context()
	skey, err := tlog.GenerateLogKey("cairn.test/sigstorebundle")
	if err != nil {
		t.Fatal(err)
	}
	log, err := tlog.OpenEmbedded(ctx, tlog.EmbeddedOptions{Dir: t.TempDir(), PrivateKey: skey, URL: "http://127.0.0.1/tlog"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close(ctx) })
	pub, fed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	l := logged{fedKey: pub}
	var middle int64
	for n := range 3 {
		content := anchorContent(t, fmt.Sprint("embedded anchor ", n))
		body, err := protocol.NewHashedRekord(content, fed)
		if err != nil {
			t.Fatal(err)
		}
		e, err := log.Upload(ctx, body)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			middle, l.content = e.Index, content
		}
	}
	e, err := log.Entry(ctx, middle)
	if err != nil {
		t.Fatal(err)
	}
	l.bundle = e.Bundle
	if l.logKey, err = log.PublicKey(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(l.bundle.Verification.InclusionProof.Hashes); n == 0 {
		t.Fatalf("entry %d of 3 has a proof without hashes", middle)
	}
	return l.verified(t)
}

// v2Origin is the checkpoint origin of the synthetic Rekor v2 log, the host name of a
// log at 127.0.0.1, as Sigstore's verifiers expect it.
const v2Origin = "127.0.0.1"

// v2Log is a synthetic Rekor v2 log: a C2SP signed-note Ed25519 key named v2Origin.
type v2Log struct {
	signer note.Signer
	vkey   string // its verifier key, name+hash+base64(0x01 || key)
	pub    ed25519.PublicKey
}

func newV2Log(t *testing.T) v2Log {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, v2Origin)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(vkey, "+", 3) // name+hash+key: a name has no "+", the base64 may
	raw, err := base64.StdEncoding.DecodeString(parts[len(parts)-1])
	if err != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != 0x01 {
		t.Fatalf("verifier key %q: %v", vkey, err)
	}
	return v2Log{signer: signer, vkey: vkey, pub: ed25519.PublicKey(raw[1:])}
}

// v2Timestamps stand for the RFC 3161 answers a Rekor v2 entry carries; New carries them
// over without reading them.
var v2Timestamps = []string{base64.StdEncoding.EncodeToString([]byte("first TimeStampResp")),
	base64.StdEncoding.EncodeToString([]byte("second TimeStampResp"))}

// entry is the bundle of the hashedrekord 0.0.2 body Rekor v2 records for content
// signed by fed, leaf 0 of a two-leaf tree whose checkpoint l signs, as
// tlog.RekorV2 builds it (no signed entry timestamp, integratedTime 0), with
// v2Timestamps.
func (l v2Log) entry(t *testing.T, fed ed25519.PrivateKey, content []byte) logged {
	t.Helper()
	body, err := protocol.NewHashedRekord(content, fed)
	if err != nil {
		t.Fatal(err)
	}
	_, v2, err := protocol.HashedRekordV2Request(body)
	if err != nil {
		t.Fatal(err)
	}
	h := rfc6962.DefaultHasher
	leaf, sibling := h.HashLeaf(v2), h.HashLeaf([]byte("another entry"))
	root := h.HashChildren(leaf, sibling)
	cp, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n2\n%s\n", v2Origin, base64.StdEncoding.EncodeToString(root))}, l.signer)
	if err != nil {
		t.Fatal(err)
	}
	logID, err := protocol.LogID(l.pub)
	if err != nil {
		t.Fatal(err)
	}
	b := protocol.LogBundle{UUID: hex.EncodeToString(leaf), Body: base64.StdEncoding.EncodeToString(v2), LogID: logID,
		Verification: protocol.LogVerification{RFC3161Timestamps: v2Timestamps,
			InclusionProof: protocol.InclusionProof{RootHash: hex.EncodeToString(root), TreeSize: 2,
				Hashes: []string{hex.EncodeToString(sibling)}, Checkpoint: string(cp)}}}
	return logged{bundle: b, logKey: l.pub, fedKey: fed.Public().(ed25519.PublicKey), content: content}.verified(t)
}
