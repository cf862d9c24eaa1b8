package protocol

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// A signature that decodes to other than 64 bytes, an algorithm other than Ed25519, or a
// public_key that is not an Ed25519 key in §4's exact form is not of the export's shape:
// malformed at step 0, wherever it lies, so it wins over an entry that fails step 1.
// Before, the envelope was read only at step 4, so such an export with a broken entry was
// reported as the entry's failure and without one as malformed: two verdicts for one
// shape fault, depending on the rest of the export.

// envelopeEdited is an export of three entries whose entry 2 fails its body hash in every
// trust mode (when broken), with the envelope's signature object rewritten by edit.
func envelopeEdited(tb testing.TB, broken bool, edit func(sig *EnvelopeSignature)) []byte {
	tb.Helper()
	entries := testChain(tb, 3, 16)
	if broken {
		entries[1].CanonicalHash = strings.Repeat("0", 64)
	}
	export := exportSignedBy(tb, entries, testKey)
	i := strings.LastIndex(string(export), `"signature":`)
	sig := EnvelopeSignature{Algorithm: SignatureAlgorithm, PublicKey: string(mustMarshalPEM(tb, testKey))}
	// Re-sign exactly as appendSignedHeader does, then let edit change the result.
	signedEnd := strings.LastIndex(string(export), `,"signature":`)
	header := "{" + string(export[strings.Index(string(export), "\n],")+3:signedEnd]) + "}"
	sig.Value = base64.StdEncoding.EncodeToString(ed25519.Sign(testKey, []byte(header)))
	edit(&sig)
	obj := `{"algorithm":` + jsonQuote(sig.Algorithm) + `,"public_key":` + jsonQuote(sig.PublicKey) + `,"value":` + jsonQuote(sig.Value) + `}`
	return append(append([]byte{}, export[:i]...), []byte(`"signature":`+obj+"}\n")...)
}

// jsonQuote writes s as a JSON string, escaping only what an export's writer escapes.
func jsonQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func TestEnvelopeShapeIsStepZero(t *testing.T) {
	sixtyThree := base64.StdEncoding.EncodeToString(make([]byte, 63))
	sixtyFive := base64.StdEncoding.EncodeToString(make([]byte, 65))
	identity, _ := hex.DecodeString(smallOrderKeys["identity (order 1)"])
	for name, edit := range map[string]func(sig *EnvelopeSignature){
		"value of 63 bytes":      func(sig *EnvelopeSignature) { sig.Value = sixtyThree },
		"value of 65 bytes":      func(sig *EnvelopeSignature) { sig.Value = sixtyFive },
		"value not base64":       func(sig *EnvelopeSignature) { sig.Value = "not base64!" },
		"algorithm":              func(sig *EnvelopeSignature) { sig.Algorithm = "Ed448" },
		"public_key not PEM":     func(sig *EnvelopeSignature) { sig.PublicKey = "ssh-ed25519 AAAA" },
		"public_key small order": func(sig *EnvelopeSignature) { sig.PublicKey = string(spkiPEM(t, identity)) },
	} {
		t.Run(name, func(t *testing.T) {
			for _, broken := range []bool{false, true} {
				wantVerdict(t, envelopeEdited(t, broken, edit), "malformed")
			}
		})
	}
	// The builder itself makes exports that verify, and ones whose entry 2 fails.
	wantVerdict(t, envelopeEdited(t, false, func(*EnvelopeSignature) {}), "ok")
	wantVerdict(t, envelopeEdited(t, true, func(*EnvelopeSignature) {}), "body_hash_mismatch seq 2")
	// A well-formed signature that does not verify is step 4's: the entry wins.
	flipped := func(sig *EnvelopeSignature) { sig.Value = flipBase64Char(sig.Value, 10) }
	wantVerdict(t, envelopeEdited(t, true, flipped), "body_hash_mismatch seq 2")
	wantVerdict(t, envelopeEdited(t, false, flipped), "signature")
}
