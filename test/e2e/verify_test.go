package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// receiptVector writes the receipt and federation key of one committed protocol vector
// into dir and returns their paths.
func receiptVector(t *testing.T, dir, name string) (receipt, key string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "pkg", "protocol", "testdata", "vectors", "receipt-"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Inputs map[string]string }
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	receipt, key = filepath.Join(dir, name+".json"), filepath.Join(dir, "federation.pem")
	for path, text := range map[string]string{receipt: v.Inputs["receipt"], key: v.Inputs["public_key_pem"]} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return receipt, key
}

func TestFederationVerifyExitStatus(t *testing.T) {
	dir := t.TempDir()
	valid, key := receiptVector(t, dir, "valid")
	tampered, _ := receiptVector(t, dir, "changed-anchored-at")
	truncated, _ := receiptVector(t, dir, "truncated")
	emptyConfig := filepath.Join(dir, "no-config")
	tests := map[string]struct {
		args       []string
		want       int
		wantOutput string
	}{
		"match":          {[]string{valid, "--federation-key", key}, 0, "MATCH"},
		"tampered":       {[]string{tampered, "--federation-key", key}, 3, "MISMATCH"},
		"no trusted key": {[]string{valid, "--config-dir", emptyConfig}, 3, "bound to no trusted key"},
		"malformed":      {[]string{truncated, "--federation-key", key}, 1, "malformed"},
		"bad arguments":  {[]string{}, 2, "want one receipt file"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(cairnBin, append([]string{"federation", "verify"}, tc.args...)...).CombinedOutput()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.want || !strings.Contains(string(out), tc.wantOutput) {
				t.Errorf("exit %d, want %d; output should contain %q:\n%s", code, tc.want, tc.wantOutput, out)
			}
		})
	}
}
