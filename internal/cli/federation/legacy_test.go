package federation

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// writeLegacyFile writes data to name in dir and returns its path.
func writeLegacyFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func legacyKeyFile(t *testing.T, dir, name string, key ed25519.PrivateKey, newline bool) string {
	t.Helper()
	text, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if !newline {
		text = text[:len(text)-1]
	}
	return writeLegacyFile(t, dir, name, text)
}

// TestLegacyVerifyExport runs verify-export on BIJOTEL exports in each trust mode: exit 0
// and "valid" only with the secret, "signature valid, entries not bound" (exit 3) with
// the public key alone, the file's SHA-256 always printed.
func TestLegacyVerifyExport(t *testing.T) {
	dir := t.TempDir()
	secret := bijoteltest.Secret()
	v2 := bijoteltest.ExportSpec{Format: bijotel.FormatV2, Signed: true, FirstSeq: 1, N: 20}
	files := map[string][]byte{
		"v2":        bijoteltest.Export(secret, v2),
		"v1":        bijoteltest.Export(secret, bijoteltest.ExportSpec{Format: bijotel.FormatV1, FirstSeq: 1, N: 20}),
		"segment":   bijoteltest.Export(secret, bijoteltest.ExportSpec{Format: bijotel.FormatV2, Signed: true, FirstSeq: 41, N: 10}),
		"truncated": bijoteltest.Export(secret, v2)[:500],
	}
	for _, tamper := range bijoteltest.Tampers {
		files[string(tamper)] = bijoteltest.TamperedExport(secret, v2, tamper)
	}
	path := map[string]string{}
	for name, data := range files {
		path[name] = writeLegacyFile(t, dir, name+".json", data)
	}
	pub := legacyKeyFile(t, dir, "bijotel_public.pem", bijoteltest.OperatorKey(), true)
	secretFile := writeLegacyFile(t, dir, "secret.hex", []byte(bijoteltest.SecretHex+"\n"))
	withSecret := []string{"--secret-hex", bijoteltest.SecretHex}
	cases := map[string]struct {
		file    string
		args    []string
		env     bool // CAIRN_HMAC_SECRET set
		want    int
		verdict string // the first line's start
	}{
		"v2 secret":                          {"v2", withSecret, false, cmdutil.ExitOK, "valid: bijotel-chain-v2 export of seq 1..20"},
		"v2 secret from the environment":     {"v2", nil, true, cmdutil.ExitOK, "valid:"},
		"v2 secret file":                     {"v2", []string{"--secret-file", secretFile}, false, cmdutil.ExitOK, "valid:"},
		"v2 both":                            {"v2", append([]string{"--public-key", pub}, withSecret...), false, cmdutil.ExitOK, "valid:"},
		"v2 public key only is not bound":    {"v2", []string{"--public-key", pub}, false, cmdutil.ExitMismatch, "signature valid, entries not bound:"},
		"v2 neither":                         {"v2", nil, false, cmdutil.ExitMismatch, "consistent, bound to nothing:"},
		"v1 secret":                          {"v1", withSecret, false, cmdutil.ExitOK, "valid: bijotel-chain-v1"},
		"v1 public key only":                 {"v1", []string{"--public-key", pub}, false, cmdutil.ExitMismatch, "consistent, bound to nothing:"},
		"segment secret":                     {"segment", withSecret, false, cmdutil.ExitOK, "valid: bijotel-chain-v2 export of seq 41..50"},
		"wrong secret":                       {"v2", []string{"--secret-hex", strings.Repeat("ab", 32)}, false, cmdutil.ExitMismatch, "invalid:"},
		"forged body, secret":                {"forged_body_recomputed_hash", withSecret, false, cmdutil.ExitMismatch, "invalid:"},
		"forged body, public key undetected": {"forged_body_recomputed_hash", []string{"--public-key", pub}, false, cmdutil.ExitMismatch, "signature valid, entries not bound:"},
		"truncated tail, secret":             {"truncated_tail_signature_kept", withSecret, false, cmdutil.ExitMismatch, "invalid:"},
		"truncated tail, public key":         {"truncated_tail_signature_kept", []string{"--public-key", pub}, false, cmdutil.ExitMismatch, "signature valid, entries not bound:"},
		"deleted middle, public key":         {"deleted_middle_entry", []string{"--public-key", pub}, false, cmdutil.ExitMismatch, "invalid:"},
		"key swap, public key":               {"key_swap_resigned", []string{"--public-key", pub}, false, cmdutil.ExitMismatch, "invalid:"},
		"count mismatch, secret":             {"entries_count_mismatch", withSecret, false, cmdutil.ExitMismatch, "invalid:"},
		"tampered signature, both":           {"tampered_signature", append([]string{"--public-key", pub}, withSecret...), false, cmdutil.ExitMismatch, "invalid:"},
		"body byte, secret":                  {"body_byte", withSecret, false, cmdutil.ExitMismatch, "invalid:"},
		"cut file":                           {"truncated", withSecret, false, cmdutil.ExitError, ""},
		"short secret":                       {"v2", []string{"--secret-hex", "abcd"}, false, cmdutil.ExitUsage, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.env {
				t.Setenv("CAIRN_HMAC_SECRET", bijoteltest.SecretHex)
			}
			out, err := runCairn(t, append([]string{"verify-export", path[tc.file]}, tc.args...)...)
			if got := cmdutil.ExitCode(err); got != tc.want {
				t.Fatalf("exit %d, want %d (%v)\n%s", got, tc.want, err, out)
			}
			if tc.verdict == "" {
				return
			}
			if !strings.HasPrefix(out, tc.verdict) {
				t.Errorf("first line %q, want it to start %q", strings.SplitN(out, "\n", 2)[0], tc.verdict)
			}
			sum := sha256.Sum256(files[tc.file])
			if !strings.Contains(out, "sha256: "+hex.EncodeToString(sum[:])+"  "+path[tc.file]+"\n") {
				t.Errorf("no sha256 line of the file:\n%s", out)
			}
			if strings.Contains(out, "VALID") || (tc.want != cmdutil.ExitOK && strings.HasPrefix(out, "valid")) {
				t.Errorf("says valid for what it did not bind:\n%s", out)
			}
		})
	}
}

// TestLegacyFederationVerify runs federation verify on the original's receipts: the
// federation key is required (usage error without it), compared as a key (a PEM without
// its final newline is the same key), and the Rekor leg is never reported verified.
func TestLegacyFederationVerify(t *testing.T) {
	dir := t.TempDir()
	noConfig := filepath.Join(dir, "none")
	fedKey := legacyKeyFile(t, dir, "federation.pem", bijoteltest.FederationKey(), true)
	fedKeyNoNewline := legacyKeyFile(t, dir, "federation-env.pem", bijoteltest.FederationKey(), false)
	otherKey := legacyKeyFile(t, dir, "attacker.pem", bijoteltest.AttackerKey(), true)
	receipt2 := writeLegacyFile(t, dir, "r2.json", bijoteltest.Receipt(bijoteltest.ReceiptSpec{Operators: 2}))
	receipt3 := writeLegacyFile(t, dir, "r3.json", bijoteltest.Receipt(bijoteltest.ReceiptSpec{Operators: 3, Logged: true}))
	malformed := writeLegacyFile(t, dir, "bad.json", []byte(`{"anchor_id":"anchor_x","rekor_url":null}`))
	cases := map[string]struct {
		args []string
		want int
	}{
		"2 operators":                 {[]string{receipt2, "--federation-key", fedKey}, cmdutil.ExitOK},
		"3 operators, logged":         {[]string{receipt3, "--federation-key", fedKeyNoNewline}, cmdutil.ExitOK},
		"no federation key":           {[]string{receipt2}, cmdutil.ExitUsage},
		"log key given":               {[]string{receipt2, "--federation-key", fedKey, "--log-key", fedKey}, cmdutil.ExitUsage},
		"another federation's key":    {[]string{receipt2, "--federation-key", otherKey}, cmdutil.ExitMismatch},
		"malformed receipt":           {[]string{malformed, "--federation-key", fedKey}, cmdutil.ExitError},
		"missing file":                {[]string{filepath.Join(dir, "nope.json"), "--federation-key", fedKey}, cmdutil.ExitError},
		"unreadable federation key":   {[]string{receipt2, "--federation-key", filepath.Join(dir, "nope.pem")}, cmdutil.ExitError},
		"federation key is a receipt": {[]string{receipt2, "--federation-key", receipt3}, cmdutil.ExitError},
	}
	for _, tamper := range bijoteltest.ReceiptTampers {
		p := writeLegacyFile(t, dir, string(tamper)+".json", bijoteltest.TamperedReceipt(bijoteltest.ReceiptSpec{Operators: 3}, tamper))
		cases[string(tamper)] = struct {
			args []string
			want int
		}{[]string{p, "--federation-key", fedKey}, cmdutil.ExitMismatch}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := runCairn(t, append([]string{"federation", "verify", "--config-dir", noConfig}, tc.args...)...)
			if got := cmdutil.ExitCode(err); got != tc.want {
				t.Fatalf("exit %d, want %d (%v)\n%s", got, tc.want, err, out)
			}
		})
	}

	out, err := runCairn(t, "federation", "verify", "--config-dir", noConfig, receipt3, "--federation-key", fedKey, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res verifyResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !res.Match || res.Format != legacyReceiptFormat || len(res.Checks) != 6 {
		t.Fatalf("result %+v", res)
	}
	if rekor := res.Checks[5]; rekor.Name != "rekor" || rekor.OK || !rekor.Skipped || !strings.Contains(rekor.Detail, "not checked offline") {
		t.Errorf("the Rekor leg is %+v, want skipped and not checked", rekor)
	}
}
