package protocol_test

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestBijotelReceiptVectors checks the committed receipts of the original product against
// pkg/bijotel.VerifyReceipt, the rules cairn federation verify applies to them, from the
// files alone.
func TestBijotelReceiptVectors(t *testing.T) {
	files, err := filepath.Glob("testdata/vectors/bijotel-receipt-*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bijotel-receipt vectors: %v", err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Desc     string            `json:"desc"`
			Inputs   map[string]string `json:"inputs"`
			Expected map[string]string `json:"expected"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		key, err := protocol.ParsePublicKeyPEM([]byte(v.Inputs["public_key_pem"]))
		if err != nil {
			t.Fatal(err)
		}
		for mode, want := range v.Expected {
			var trusted ed25519.PublicKey
			if mode == "trusted_key" {
				trusted = key
			}
			_, err := bijotel.VerifyReceipt([]byte(v.Inputs["receipt"]), trusted)
			if got := bijotelVerdict(err); got != want {
				t.Errorf("%s [%s]: got %s, want %s (%s; %v)", filepath.Base(file), mode, got, want, v.Desc, err)
			}
		}
	}
}

// bijotelVerdict names a verdict of bijotel.VerifyReceipt as the vectors spell it: a
// mismatch names the check that failed.
func bijotelVerdict(err error) string {
	var ce *bijotel.CheckError
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, protocol.ErrMalformed):
		return "malformed"
	case errors.Is(err, protocol.ErrNoTrustedKey):
		return "no_trusted_key"
	case errors.Is(err, protocol.ErrKeyNotTrusted):
		return "key_not_trusted"
	case errors.Is(err, protocol.ErrSignature):
		return "signature"
	case errors.As(err, &ce) && errors.Is(err, protocol.ErrMismatch):
		return "mismatch " + ce.Check
	}
	return "error: " + err.Error()
}
