package protocol

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
)

// exportCase is an export, honest or tampered with, and the verdict each trust mode must
// reach. Verdicts are written by hand: "ok", or what verdict() makes of the error.
type exportCase struct {
	desc   string
	export func(tb testing.TB) []byte
	secret string // verdict with the secret only
	public string // verdict with the operator's public key only
	both   string // verdict with both
}

// exportCases are the export vectors: every tamper the verifier must catch.
var exportCases = map[string]exportCase{
	"valid": {
		desc:   "an honest export of entries 1-5",
		export: func(tb testing.TB) []byte { return writeExport(tb, testChain(tb, 5, 64), testKey, false) },
		secret: "ok", public: "ok", both: "ok",
	},
	"valid-header-only": {
		desc:   "an honest header-only export of entries 1-5",
		export: func(tb testing.TB) []byte { return writeExport(tb, testChain(tb, 5, 64), testKey, true) },
		secret: "ok", public: "ok", both: "ok",
	},
	"flipped-body-byte": {
		desc: "one byte of entry 3's body changed; nothing recomputed",
		export: tampered(func(es []*Entry, _ *ExportHeader) ed25519.PrivateKey {
			es[2].CanonicalBody = bytes.Replace(es[2].CanonicalBody, []byte("openai"), []byte("openAI"), 1)
			return testKey
		}),
		secret: "body_hash_mismatch seq 3", public: "body_hash_mismatch seq 3", both: "body_hash_mismatch seq 3",
	},
	"forged-body-recomputed-hash": {
		desc: "entry 3's body replaced and its canonical_hash recomputed; the forger has neither the secret nor the key",
		export: tampered(func(es []*Entry, _ *ExportHeader) ed25519.PrivateKey {
			forgeBody(es[2])
			return testKey
		}),
		secret: "hmac_mismatch seq 3", public: "mismatch entries_root", both: "hmac_mismatch seq 3",
	},
	"forged-body-resigned": {
		desc: "entry 3's body forged, the header's entries_root recomputed and the envelope re-signed with the forger's key",
		export: tampered(func(es []*Entry, h *ExportHeader) ed25519.PrivateKey {
			forgeBody(es[2])
			h.EntriesRoot = rootOf(es)
			return otherKey
		}),
		secret: "hmac_mismatch seq 3", public: "key_not_trusted", both: "hmac_mismatch seq 3",
	},
	"truncated-tail": {
		desc: "the last entry dropped; the header, signature and the rest kept",
		export: tampered(func(es []*Entry, _ *ExportHeader) ed25519.PrivateKey {
			es[4] = nil
			return testKey
		}),
		secret: "mismatch last_seq", public: "mismatch last_seq", both: "mismatch last_seq",
	},
	"cut-off": {
		desc: "the export's bytes cut off in the middle of entry 3",
		export: func(tb testing.TB) []byte {
			full := writeExport(tb, testChain(tb, 5, 64), testKey, false)
			cut := bytes.Index(full, []byte(`"seq":3`))
			if cut < 0 {
				tb.Fatal("entry 3 not found")
			}
			return full[:cut]
		},
		secret: "malformed", public: "malformed", both: "malformed",
	},
	"swapped-key": {
		desc: "content untouched; the envelope's public key swapped for an attacker's, who re-signed",
		export: tampered(func([]*Entry, *ExportHeader) ed25519.PrivateKey {
			return otherKey
		}),
		secret: "ok", public: "key_not_trusted", both: "key_not_trusted",
	},
	"flipped-signature": {
		desc: "one character of the envelope signature changed",
		export: func(tb testing.TB) []byte {
			full := writeExport(tb, testChain(tb, 5, 64), testKey, false)
			i := bytes.Index(full, []byte(`"value":"`)) + len(`"value":"`)
			return append(append(full[:i:i], flipBase64Char(string(full[i:i+88]), 10)...), full[i+88:]...)
		},
		secret: "signature", public: "signature", both: "signature",
	},
	"forged-chain-signature": {
		desc: "chain_signature replaced and the envelope re-signed by an attacker",
		export: tampered(func(_ []*Entry, h *ExportHeader) ed25519.PrivateKey {
			h.ChainSignature = hex.EncodeToString(bytes.Repeat([]byte{0xab}, 32))
			return otherKey
		}),
		secret: "mismatch chain_signature", public: "key_not_trusted", both: "mismatch chain_signature",
	},
	"reordered-entries": {
		desc: "entries 2 and 3 swapped",
		export: tampered(func(es []*Entry, _ *ExportHeader) ed25519.PrivateKey {
			es[1], es[2] = es[2], es[1]
			return testKey
		}),
		secret: "seq_gap seq 3", public: "seq_gap seq 3", both: "seq_gap seq 3",
	},
	"column-drift": {
		desc: "entry 2's span_name column changed; its body left alone",
		export: tampered(func(es []*Entry, _ *ExportHeader) ed25519.PrivateKey {
			es[1].SpanName = "chat something-else"
			return testKey
		}),
		secret: "column_mismatch seq 2", public: "column_mismatch seq 2", both: "column_mismatch seq 2",
	},
	"broken-link": {
		desc: "entry 4's prev_hash changed",
		export: tampered(func(es []*Entry, _ *ExportHeader) ed25519.PrivateKey {
			es[3].PrevHash = es[1].HMACHash
			return testKey
		}),
		secret: "broken_link seq 4", public: "broken_link seq 4", both: "broken_link seq 4",
	},
	"unknown-member": {
		desc: "an unsigned top-level member added",
		export: func(tb testing.TB) []byte {
			full := writeExport(tb, testChain(tb, 5, 64), testKey, false)
			return bytes.Replace(full, []byte(`"format":`), []byte(`"comment":"trust me","format":`), 1)
		},
		secret: "malformed", public: "malformed", both: "malformed",
	},
}

// tampered returns an export of entries 1-5 changed by change, which edits the entries
// (a nil entry is dropped) and the header and returns the key that signs the envelope.
func tampered(change func([]*Entry, *ExportHeader) ed25519.PrivateKey) func(testing.TB) []byte {
	return func(tb testing.TB) []byte {
		entries := testChain(tb, 5, 64)
		var honest bytes.Buffer
		w, err := NewExportWriter(&honest, ExportOptions{Secret: testSecret, Key: testKey, ExportedAt: testTime})
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range entries {
			if err := w.Write(e); err != nil {
				tb.Fatal(err)
			}
		}
		h, err := w.Close()
		if err != nil {
			tb.Fatal(err)
		}
		key := change(entries, h)
		b := []byte(`{"entries":[`)
		n := 0
		for _, e := range entries {
			if e == nil {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			b = appendEntryJSON(append(b, '\n'), e)
			n++
		}
		b, err = appendSignedHeader(append(b, "\n],"...), h, key)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
}

// forgeBody rewrites e's body (keeping its columns) and recomputes canonical_hash.
func forgeBody(e *Entry) {
	e.CanonicalBody = bytes.Replace(e.CanonicalBody, []byte(`"gen_ai.usage.tokens":3`), []byte(`"gen_ai.usage.tokens":9`), 1)
	sum := sha256.Sum256(e.CanonicalBody)
	e.CanonicalHash = hex.EncodeToString(sum[:])
}

// rootOf is the entries_root of es, as an attacker would recompute it.
func rootOf(es []*Entry) string {
	tree := newTree()
	for _, e := range es {
		if err := tree.Append(leafHash(appendLeaf(nil, e)), nil); err != nil {
			panic(err)
		}
	}
	root, _ := tree.GetRootHash(nil)
	return hex.EncodeToString(root)
}

// verdict names the outcome of a verification the way the vectors spell it.
func verdict(err error) string {
	var entryErr *EntryError
	var mismatch *MismatchError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &entryErr):
		return fmt.Sprintf("%s seq %d", entryErr.Reason, entryErr.Seq)
	case errors.As(err, &mismatch):
		return "mismatch " + mismatch.Field
	case errors.Is(err, ErrMalformed):
		return "malformed"
	case errors.Is(err, ErrKeyNotTrusted):
		return "key_not_trusted"
	case errors.Is(err, ErrSignature):
		return "signature"
	case errors.Is(err, ErrNoTrustedKey):
		return "no_trusted_key"
	case errors.Is(err, ErrNotIncluded):
		return "not_included"
	case errors.Is(err, ErrExpired):
		return "expired"
	}
	return "error: " + err.Error()
}

// exportModes are the three trust modes, by the name the vectors use.
func exportModes() map[string]VerifyOptions {
	pub := testKey.Public().(ed25519.PublicKey)
	return map[string]VerifyOptions{
		"secret":     {Secret: testSecret},
		"public_key": {PublicKey: pub},
		"both":       {Secret: testSecret, PublicKey: pub},
	}
}

func (c exportCase) want(mode string) string {
	return map[string]string{"secret": c.secret, "public_key": c.public, "both": c.both}[mode]
}

func TestExportTampersAreCaughtInEveryMode(t *testing.T) {
	for name, c := range exportCases {
		export := c.export(t)
		for mode, opts := range exportModes() {
			t.Run(name+"/"+mode, func(t *testing.T) {
				_, err := VerifyExport(bytes.NewReader(export), opts)
				if got, want := verdict(err), c.want(mode); got != want {
					t.Errorf("%s: verdict %q, want %q (error: %v)", c.desc, got, want, err)
				}
			})
		}
	}
}

func TestExportWithoutTrustSaysSo(t *testing.T) {
	export := writeExport(t, testChain(t, 3, 8), testKey, false)
	_, err := VerifyExport(bytes.NewReader(export), VerifyOptions{})
	if !errors.Is(err, ErrNoTrustedKey) {
		t.Fatalf("VerifyExport with no secret and no key: %v, want ErrNoTrustedKey", err)
	}
}
