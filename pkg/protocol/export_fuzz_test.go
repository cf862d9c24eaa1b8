package protocol

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"
)

// FuzzVerifyExport feeds arbitrary bytes to the streaming reader and verifier. It must
// never panic, every failure must wrap one of the package's sentinels, the verdict must
// be the same reading 7 bytes at a time as 64 KiB, and whatever verifies under the test
// key must be what the test key signed.
func FuzzVerifyExport(f *testing.F) {
	for _, c := range exportCases {
		f.Add(c.export(f))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"entries":[]}`))
	f.Add([]byte(`{"entries":[{"seq":1}],"format":"cairn-chain-v2"}`))
	pub := testKey.Public().(ed25519.PublicKey)
	sentinels := []error{ErrMalformed, ErrSignature, ErrKeyNotTrusted, ErrMismatch, ErrNoTrustedKey}
	f.Fuzz(func(t *testing.T, export []byte) {
		for _, opts := range []VerifyOptions{{Secret: testSecret}, {PublicKey: pub}} {
			report, err := VerifyExport(bytes.NewReader(export), opts)
			// The verdict must not depend on where the reader's buffer refills.
			if _, small := verifyExport(bytes.NewReader(export), opts, 7); verdict(small) != verdict(err) {
				t.Fatalf("7-byte reads give %q (%v), 64 KiB reads %q (%v)", verdict(small), small, verdict(err), err)
			}
			if err == nil {
				if report == nil || report.Header == nil {
					t.Fatal("no report for a verified export")
				}
				continue
			}
			known := false
			for _, s := range sentinels {
				known = known || errors.Is(err, s)
			}
			if !known {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
		}
	})
}
