package protocol

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"
)

// TestMismatchErrorsCarryNoComputedValue is issue 14's hole 1 at its root: a verifier that
// prints the value it recomputed hands whoever submits the input the MAC it lacks.
func TestMismatchErrorsCarryNoComputedValue(t *testing.T) {
	tests := map[string]struct {
		export func(testing.TB) []byte
		// secret is the value that would have passed, recomputed with the secret.
		secret func([]*Entry) string
	}{
		"forged body, its hash recomputed": {
			export: tampered(func(es []*Entry, _ *ExportHeader) ed25519.PrivateKey { forgeBody(es[2]); return testKey }),
			secret: func(es []*Entry) string {
				forgeBody(es[2])
				return EntryHMAC(testSecret, es[2].PrevHash, es[2].CanonicalHash)
			},
		},
		"forged chain_signature": {
			export: tampered(func(_ []*Entry, h *ExportHeader) ed25519.PrivateKey {
				h.ChainSignature = strings.Repeat("ab", 32)
				return testKey
			}),
			secret: func(es []*Entry) string { return ChainSignature(testSecret, es[len(es)-1].HMACHash, int64(len(es))) },
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := VerifyExport(bytes.NewReader(tc.export(t)), VerifyOptions{Secret: testSecret})
			if err == nil {
				t.Fatal("the forgery verifies")
			}
			want := tc.secret(testChain(t, 5, 64))
			for _, form := range []string{"%v", "%+v", "%#v"} {
				if text := fmt.Sprintf(form, err); strings.Contains(text, want) {
					t.Errorf("%s of the error carries the value that would pass: %s", form, text)
				}
			}
		})
	}
}

func TestMismatchErrorPrintsNoWant(t *testing.T) {
	e := &MismatchError{Field: "entries_root", Want: strings.Repeat("1", 64), Got: strings.Repeat("2", 64)}
	if got, want := e.Error(), "entries_root mismatch: stated "+strings.Repeat("2", 64); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
