package federation

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// signedReceipt writes a receipt signed by a new federation key into dir and returns the
// receipt's path and the key.
func signedReceipt(t *testing.T, dir string) (string, ed25519.PrivateKey) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ps := []protocol.Participant{
		{OperatorID: "op_00000000000000aa", ChainSignature: strings.Repeat("1", 64)},
		{OperatorID: "op_00000000000000bb", ChainSignature: strings.Repeat("2", 64)},
	}
	at := protocol.FormatAnchoredAt(time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC))
	hash, err := protocol.CrossAnchorHash(ps, at)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := protocol.SignReceipt(&protocol.Receipt{
		AnchorID: "anchor-20261121-001", AnchoredAt: at, CrossAnchorHash: hash, ParticipatingOperators: ps,
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "receipt.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, key
}

func writePublicKey(t *testing.T, path string, key ed25519.PrivateKey) {
	t.Helper()
	pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pemText, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFederationVerifyExitCodes(t *testing.T) {
	dir := t.TempDir()
	receipt, key := signedReceipt(t, dir)
	fedKey := filepath.Join(dir, "federation.pub.pem")
	writePublicKey(t, fedKey, key)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	otherKey := filepath.Join(dir, "other.pub.pem")
	writePublicKey(t, otherKey, other)
	tampered := filepath.Join(dir, "tampered.json")
	raw, _ := os.ReadFile(receipt)
	if err := os.WriteFile(tampered, []byte(strings.Replace(string(raw), "18:00:00.000000000Z", "18:00:00.000000001Z", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte(`{"anchor_id":`), 0o644); err != nil {
		t.Fatal(err)
	}
	pinnedDir := filepath.Join(dir, "config")
	writePublicKey(t, filepath.Join(pinnedDir, "federation.pem"), key)
	noConfig := filepath.Join(dir, "empty-config")

	tests := map[string]struct {
		args []string
		want int
	}{
		"matches the given key":         {[]string{receipt, "--federation-key", fedKey, "--config-dir", noConfig}, cmdutil.ExitOK},
		"matches the pinned key":        {[]string{receipt, "--config-dir", pinnedDir}, cmdutil.ExitOK},
		"flag wins over the pinned key": {[]string{receipt, "--federation-key", otherKey, "--config-dir", pinnedDir}, cmdutil.ExitMismatch},
		"signed by another key":         {[]string{receipt, "--federation-key", otherKey, "--config-dir", noConfig}, cmdutil.ExitMismatch},
		"no trusted key at all":         {[]string{receipt, "--config-dir", noConfig}, cmdutil.ExitMismatch},
		"anchored_at changed":           {[]string{tampered, "--federation-key", fedKey}, cmdutil.ExitMismatch},
		"malformed receipt":             {[]string{garbage, "--federation-key", fedKey}, cmdutil.ExitError},
		"missing receipt file":          {[]string{filepath.Join(dir, "nope.json"), "--federation-key", fedKey}, cmdutil.ExitError},
		"unreadable federation key":     {[]string{receipt, "--federation-key", garbage}, cmdutil.ExitError},
		"no receipt argument":           {nil, cmdutil.ExitUsage},
		"two receipt arguments":         {[]string{receipt, receipt}, cmdutil.ExitUsage},
		"unknown flag":                  {[]string{receipt, "--federation-kee", fedKey}, cmdutil.ExitUsage},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := runCairn(t, append([]string{"federation", "verify"}, tc.args...)...)
			if got := cmdutil.ExitCode(err); got != tc.want {
				t.Errorf("exit code %d, want %d (error: %v)\n%s", got, tc.want, err, out)
			}
		})
	}
}

func TestFederationVerifyJSONListsEveryCheck(t *testing.T) {
	dir := t.TempDir()
	receipt, key := signedReceipt(t, dir)
	fedKey := filepath.Join(dir, "federation.pub.pem")
	writePublicKey(t, fedKey, key)
	out, err := runCairn(t, "federation", "verify", receipt, "--federation-key", fedKey, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res verifyResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	if !res.Match || res.ExitCode != cmdutil.ExitOK || len(res.Checks) < 5 {
		t.Fatalf("result %+v", res)
	}
	for _, c := range res.Checks {
		if !c.OK && !c.Skipped {
			t.Errorf("check %s failed on a valid receipt: %s", c.Name, c.Detail)
		}
	}
}

func TestKeygen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	out, err := runCairn(t, "keygen", "--output-dir", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	privText, err := os.ReadFile(filepath.Join(dir, "private.pem"))
	if err != nil {
		t.Fatal(err)
	}
	priv, err := protocol.ParsePrivateKeyPEM(privText)
	if err != nil {
		t.Fatalf("private.pem: %v", err)
	}
	pubText, err := os.ReadFile(filepath.Join(dir, "public.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := protocol.ParsePublicKeyPEM(pubText)
	if err != nil || !pub.Equal(priv.Public()) {
		t.Fatalf("public.pem does not hold the private key's public half: %v", err)
	}
	if !strings.Contains(out, protocol.OperatorID(pub)) {
		t.Errorf("keygen did not print the operator ID %s:\n%s", protocol.OperatorID(pub), out)
	}
	if info, err := os.Stat(filepath.Join(dir, "private.pem")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("private.pem mode %v (%v), want 0600", info.Mode().Perm(), err)
	}

	if _, err := runCairn(t, "keygen", "--output-dir", dir); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second keygen without --force: %v", err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "private.pem")); string(again) != string(privText) {
		t.Fatal("keygen without --force changed private.pem")
	}
	if _, err := runCairn(t, "keygen", "--output-dir", dir, "--force"); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "private.pem")); string(again) == string(privText) {
		t.Fatal("keygen --force did not replace private.pem")
	}
}

// The binary reaches the verdict every committed receipt vector states, in both trust
// modes: ok is exit 0, malformed exit 1, anything else exit 3 (issue 14, hole 10).
func TestFederationVerifyFollowsVectors(t *testing.T) {
	files, err := filepath.Glob("../../../pkg/protocol/testdata/vectors/receipt-*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no receipt vectors: %v", err)
	}
	dir := t.TempDir()
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Inputs   map[string]string `json:"inputs"`
			Expected map[string]string `json:"expected"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		receipt, key := filepath.Join(dir, name+".json"), filepath.Join(dir, name+".pem")
		if err := os.WriteFile(receipt, []byte(v.Inputs["receipt"]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, []byte(v.Inputs["public_key_pem"]), 0o644); err != nil {
			t.Fatal(err)
		}
		for mode, verdict := range v.Expected {
			args := []string{"federation", "verify", receipt, "--config-dir", filepath.Join(dir, "none")}
			if mode == "trusted_key" {
				args = append(args, "--federation-key", key)
			}
			want := cmdutil.ExitMismatch
			switch verdict {
			case "ok":
				want = cmdutil.ExitOK
			case "malformed":
				want = cmdutil.ExitError
			}
			out, err := runCairn(t, args...)
			if got := cmdutil.ExitCode(err); got != want {
				t.Errorf("%s [%s]: exit %d, want %d for %q\n%s", name, mode, got, want, verdict, out)
			}
		}
	}
}

// A legacy receipt's tlog_entry is bound to nothing signed: without --log-key the binary
// says MATCH for what the receipt signs and, on its own line, that the log entry is NOT
// verified; a current receipt's log leg is reported verified without --log-key.
func TestFederationVerifyNeverPassesAnUnverifiedLogLeg(t *testing.T) {
	read := func(name string) map[string]string {
		raw, err := os.ReadFile("../../../pkg/protocol/testdata/vectors/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Inputs map[string]string `json:"inputs"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		return v.Inputs
	}
	dir := t.TempDir()
	for name, want := range map[string]string{
		"receipt-with-tlog-entry.json": "FAIL  tlog_entry             no trusted key to check against: legacy receipt: its tlog_entry is bound to no log key; pass --log-key",
		"receipt-logged.json":          "ok    tlog_entry             log ",
	} {
		in := read(name)
		receipt, key := filepath.Join(dir, name), filepath.Join(dir, name+".pem")
		if err := os.WriteFile(receipt, []byte(in["receipt"]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, []byte(in["public_key_pem"]), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := runCairn(t, "federation", "verify", receipt, "--federation-key", key)
		if !strings.Contains(out, want) {
			t.Errorf("%s: want a line with %q:\n%s", name, want, out)
		}
		if verified := strings.Contains(out, "MATCH     "); verified != (err == nil) || verified != (name == "receipt-logged.json") {
			t.Errorf("%s: err %v with output:\n%s", name, err, out)
		}
	}
}
