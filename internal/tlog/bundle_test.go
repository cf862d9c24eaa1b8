package tlog

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// tamperCase is one way of forging a proof bundle, after the inclusion-proof probes of
// transparency-dev/merkle (wrong leaf, index, size or root; hashes removed, added or
// flipped) plus the checkpoint and the signed entry timestamp around them.
type tamperCase struct {
	name   string
	tamper func(b *protocol.LogBundle)
	want   error
}

// bundleFixture is a real bundle of the embedded log: entry 5 of 11, so its proof has
// several hashes, plus another entry and an older checkpoint of the same log.
type bundleFixture struct {
	bundle      protocol.LogBundle
	other       protocol.LogBundle // entry 2
	oldCP       string             // the checkpoint at size 6
	key         crypto.PublicKey
	forgedCP    string                  // the bundle's checkpoint text signed by another key, same name
	signWithKey func(msg []byte) []byte // the log's signer, for SET cases
}

func embeddedFixture(t *testing.T) *bundleFixture {
	t.Helper()
	l := openTestLog(t, t.TempDir())
	var oldCP string
	for n := range 11 {
		body, _ := record(t, n)
		e, err := l.Upload(t.Context(), body)
		if err != nil {
			t.Fatal(err)
		}
		if n == 5 {
			oldCP = e.Bundle.Verification.InclusionProof.Checkpoint
		}
	}
	entry := func(i int64) protocol.LogBundle {
		e, err := l.Entry(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		return e.Bundle
	}
	f := &bundleFixture{bundle: entry(5), other: entry(2), oldCP: oldCP, key: l.pub}
	other, err := GenerateLogKey("cairn.test/embedded")
	if err != nil {
		t.Fatal(err)
	}
	signer, _, err := parseLogKey(other)
	if err != nil {
		t.Fatal(err)
	}
	f.forgedCP = resign(t, f.bundle.Verification.InclusionProof.Checkpoint, signer)
	return f
}

// resign replaces a checkpoint's signatures by signer's.
func resign(t *testing.T, checkpoint string, signer note.Signer) string {
	t.Helper()
	text, _, _ := strings.Cut(checkpoint, "\n\n")
	signed, err := note.Sign(&note.Note{Text: text + "\n"}, signer)
	if err != nil {
		t.Fatal(err)
	}
	return string(signed)
}

// rekorFixture turns the embedded fixture into what a Rekor with an ECDSA P-256 key
// serves: its checkpoint in Rekor's note form, its logID and a signed entry timestamp.
func rekorFixture(t *testing.T) *bundleFixture {
	t.Helper()
	f := embeddedFixture(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(msg []byte) []byte {
		digest := sha256.Sum256(msg)
		sig, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	keyHash := sha256.Sum256(der)
	rekorNote := func(cp string) string {
		text, _, _ := strings.Cut(cp, "\n\n")
		text += "\n"
		sig := append(append([]byte{}, keyHash[:4]...), sign([]byte(text))...)
		return text + "\n\u2014 rekor.test " + base64.StdEncoding.EncodeToString(sig) + "\n"
	}
	for _, b := range []*protocol.LogBundle{&f.bundle, &f.other} {
		b.LogID = hex.EncodeToString(keyHash[:])
		b.IntegratedTime = 1_700_000_000
		b.UUID = "24296fb24b8ad77a" + b.UUID // a tree ID, as a sharded Rekor names entries
		b.Verification.InclusionProof.Checkpoint = rekorNote(b.Verification.InclusionProof.Checkpoint)
		b.Verification.SignedEntryTimestamp = setFor(t, b, sign)
	}
	f.oldCP = rekorNote(f.oldCP)
	f.key, f.signWithKey = &key.PublicKey, sign
	// Rekor's note form with a hash of another key (the key hint is not secret).
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	text, _, _ := strings.Cut(f.bundle.Verification.InclusionProof.Checkpoint, "\n\n")
	digest := sha256.Sum256([]byte(text + "\n"))
	forged, _ := ecdsa.SignASN1(rand.Reader, other, digest[:])
	f.forgedCP = text + "\n\n\u2014 rekor.test " + base64.StdEncoding.EncodeToString(append(keyHash[:4:4], forged...)) + "\n"
	return f
}

func setFor(t *testing.T, b *protocol.LogBundle, sign func([]byte) []byte) string {
	t.Helper()
	payload, err := canonical.Marshal(map[string]any{"body": b.Body, "integratedTime": b.IntegratedTime, "logID": b.LogID, "logIndex": b.LogIndex})
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sign(payload))
}

func (f *bundleFixture) cases() []tamperCase {
	proof := func(b *protocol.LogBundle) *protocol.InclusionProof { return &b.Verification.InclusionProof }
	flip := func(h string) string {
		raw, _ := hex.DecodeString(h)
		raw[0] ^= 8
		return hex.EncodeToString(raw)
	}
	someHash := strings.Repeat("ab", 32)
	cases := []tamperCase{
		{"a different leaf", func(b *protocol.LogBundle) { b.Body, b.UUID = f.other.Body, f.other.UUID }, protocol.ErrNotIncluded},
		{"the UUID of another entry", func(b *protocol.LogBundle) { b.UUID = f.other.UUID }, protocol.ErrMismatch},
		{"index - 1", func(b *protocol.LogBundle) { proof(b).LogIndex-- }, protocol.ErrNotIncluded},
		{"index + 1", func(b *protocol.LogBundle) { proof(b).LogIndex++ }, protocol.ErrNotIncluded},
		{"index ^ 2", func(b *protocol.LogBundle) { proof(b).LogIndex ^= 2 }, protocol.ErrNotIncluded},
		{"tree size * 2", func(b *protocol.LogBundle) { proof(b).TreeSize *= 2 }, protocol.ErrNotIncluded},
		{"tree size / 2", func(b *protocol.LogBundle) { proof(b).TreeSize /= 2 }, protocol.ErrMalformed},
		{"a wrong root", func(b *protocol.LogBundle) { proof(b).RootHash = flip(proof(b).RootHash) }, protocol.ErrNotIncluded},
		{"a random root", func(b *protocol.LogBundle) { proof(b).RootHash = someHash }, protocol.ErrNotIncluded},
		{"the empty tree's root", func(b *protocol.LogBundle) {
			proof(b).RootHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
		}, protocol.ErrNotIncluded},
		{"a truncated proof", func(b *protocol.LogBundle) { proof(b).Hashes = proof(b).Hashes[:len(proof(b).Hashes)-1] }, protocol.ErrNotIncluded},
		{"no proof", func(b *protocol.LogBundle) { proof(b).Hashes = nil }, protocol.ErrNotIncluded},
		{"a trailing hash", func(b *protocol.LogBundle) { proof(b).Hashes = append(proof(b).Hashes, proof(b).RootHash) }, protocol.ErrNotIncluded},
		{"a preceding hash", func(b *protocol.LogBundle) { proof(b).Hashes = append([]string{someHash}, proof(b).Hashes...) }, protocol.ErrNotIncluded},
		{"an inserted hash", func(b *protocol.LogBundle) {
			h := proof(b).Hashes
			proof(b).Hashes = append([]string{h[0], someHash}, h[1:]...)
		}, protocol.ErrNotIncluded},
		{"a hash not 32 bytes", func(b *protocol.LogBundle) { proof(b).Hashes[0] = proof(b).Hashes[0][:62] }, protocol.ErrMalformed},
		{"a checkpoint signed by another key", func(b *protocol.LogBundle) { proof(b).Checkpoint = f.forgedCP }, protocol.ErrNotIncluded},
		{"an older checkpoint of the same log", func(b *protocol.LogBundle) { proof(b).Checkpoint = f.oldCP }, protocol.ErrNotIncluded},
		{"a checkpoint with its size changed", func(b *protocol.LogBundle) {
			proof(b).Checkpoint = strings.Replace(proof(b).Checkpoint, "\n11\n", "\n12\n", 1)
		}, protocol.ErrNotIncluded},
		{"no checkpoint", func(b *protocol.LogBundle) { proof(b).Checkpoint = "" }, protocol.ErrMalformed},
		// Issue 14, hole 10: one syntax for the signature lines, which note.Open reads
		// more leniently.
		{"a signature line ended by CRLF", func(b *protocol.LogBundle) {
			proof(b).Checkpoint = strings.TrimSuffix(proof(b).Checkpoint, "\n") + "\r\n"
		}, protocol.ErrMalformed},
		{"a signature line with a hyphen for the em dash", func(b *protocol.LogBundle) {
			proof(b).Checkpoint = strings.Replace(proof(b).Checkpoint, "\n\u2014 ", "\n- ", 1)
		}, protocol.ErrMalformed},
		{"a signature line with two spaces", func(b *protocol.LogBundle) {
			proof(b).Checkpoint = strings.Replace(proof(b).Checkpoint, "\n\u2014 ", "\n\u2014  ", 1)
		}, protocol.ErrMalformed},
		{"a signature with padding added", func(b *protocol.LogBundle) {
			proof(b).Checkpoint = strings.TrimSuffix(proof(b).Checkpoint, "\n") + "====\n"
		}, protocol.ErrMalformed},
		{"text after the signatures", func(b *protocol.LogBundle) { proof(b).Checkpoint += "trailer" }, protocol.ErrMalformed},
		{"a uuid tree ID not hex", func(b *protocol.LogBundle) { b.UUID = "zzzzzzzzzzzzzzzz" + b.UUID[len(b.UUID)-64:] }, protocol.ErrMalformed},
		{"a uuid in upper case", func(b *protocol.LogBundle) { b.UUID = strings.ToUpper(b.UUID) }, protocol.ErrMalformed},
		{"another log's ID", func(b *protocol.LogBundle) { b.LogID = someHash }, protocol.ErrMismatch},
		{"a body not in base64", func(b *protocol.LogBundle) { b.Body = "{" + b.Body }, protocol.ErrMalformed},
	}
	for i := range len(f.bundle.Verification.InclusionProof.Hashes) {
		cases = append(cases, tamperCase{fmt.Sprintf("proof hash %d with a bit flipped", i), func(b *protocol.LogBundle) {
			proof(b).Hashes[i] = flip(proof(b).Hashes[i])
		}, protocol.ErrNotIncluded})
	}
	{ // both logs sign entry timestamps
		cases = append(cases,
			tamperCase{"no signed entry timestamp", func(b *protocol.LogBundle) { b.Verification.SignedEntryTimestamp = "" }, protocol.ErrNotIncluded},
			tamperCase{"an integrated time the log did not sign", func(b *protocol.LogBundle) { b.IntegratedTime++ }, protocol.ErrNotIncluded},
			tamperCase{"another entry's timestamp", func(b *protocol.LogBundle) {
				b.Verification.SignedEntryTimestamp = f.other.Verification.SignedEntryTimestamp
			}, protocol.ErrNotIncluded},
		)
	}
	return cases
}

func TestBundleTampering(t *testing.T) {
	for name, fixture := range map[string]func(*testing.T) *bundleFixture{"embedded": embeddedFixture, "rekor": rekorFixture} {
		t.Run(name, func(t *testing.T) {
			f := fixture(t)
			opts := protocol.LogVerifyOptions{Key: f.key}
			if _, err := protocol.VerifyLogBundle(&f.bundle, opts); err != nil {
				t.Fatalf("the untouched bundle: %v", err)
			}
			for _, c := range f.cases() {
				b := cloneBundle(f.bundle)
				c.tamper(&b)
				if _, err := protocol.VerifyLogBundle(&b, opts); !errors.Is(err, c.want) {
					t.Errorf("%s: %v, want %v", c.name, err, c.want)
				}
			}
		})
	}
}

func cloneBundle(b protocol.LogBundle) protocol.LogBundle {
	b.Verification.InclusionProof.Hashes = append([]string(nil), b.Verification.InclusionProof.Hashes...)
	return b
}
