package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// vector is a receipt vector of pkg/protocol's testdata.
type vector struct {
	Desc   string `json:"desc"`
	Inputs struct {
		PublicKeyPEM string `json:"public_key_pem"`
		Receipt      string `json:"receipt"`
	} `json:"inputs"`
	Expected struct {
		TrustedKey string `json:"trusted_key"`
		NoKey      string `json:"no_key"`
	} `json:"expected"`
}

// federationVerdicts are Cairn's verdicts of a failed federation leg: this script must
// fail every vector that has one.
var federationVerdicts = map[string]bool{
	"signature": true, "key_not_trusted": true, "mismatch cross_anchor_hash": true,
	"mismatch inclusion_proof": true, "mismatch participating_operators": true,
}

// logLeg are the vectors whose fault is in their log leg alone, though Cairn's verdict
// names a key.
var logLeg = map[string]bool{"receipt-logged-record-signed-by-another-key": true, "receipt-with-tlog-entry": true}

// TestAgreesWithTheVectors runs the script over Cairn's receipt vectors. It must accept
// every receipt Cairn accepts, and refuse every one whose federation leg Cairn refuses,
// and every receipt of the Merkle form Cairn refuses. What it may accept though Cairn
// refuses it are logged receipts whose log leg fails (the script does not check it) or
// whose keys' PEM layout Cairn is strict about; the test counts them.
func TestAgreesWithTheVectors(t *testing.T) {
	files, err := filepath.Glob("../../pkg/protocol/testdata/vectors/receipt-*.json")
	if err != nil || len(files) < 50 {
		t.Fatalf("found %d receipt vectors: %v", len(files), err)
	}
	var merkle, lenient int
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		var v vector
		if raw, err := os.ReadFile(f); err != nil || json.Unmarshal(raw, &v) != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checks, err := verify([]byte(v.Inputs.Receipt), v.Inputs.PublicKeyPEM)
		isMerkle := strings.HasPrefix(name, "receipt-merkle-")
		if isMerkle {
			merkle++
		}
		switch want := v.Expected.TrustedKey; {
		case want == "ok":
			if err != nil {
				t.Errorf("%s (%s): Cairn accepts it, the script says %v after %q", name, v.Desc, err, checks)
			}
		case logLeg[name] || strings.HasPrefix(name, "receipt-logged-") && !federationVerdicts[want]:
			if err == nil {
				lenient++
			}
		case err == nil:
			t.Errorf("%s (%s): Cairn says %s, the script accepts it", name, v.Desc, want)
		}
	}
	if merkle < 20 {
		t.Errorf("only %d Merkle vectors", merkle)
	}
	t.Logf("%d vectors, %d of the Merkle form; %d refused by Cairn for the log leg or a shape, which this script does not check", len(files), merkle, lenient)
}

// TestExitCodes runs the command as a user would: exit 0 on a match, 3 on a mismatch, 1
// on an unreadable receipt.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "receiptcheck")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	write := func(vectorName string) (receipt, key string) {
		var v vector
		raw, err := os.ReadFile("../../pkg/protocol/testdata/vectors/" + vectorName + ".json")
		if err != nil || json.Unmarshal(raw, &v) != nil {
			t.Fatalf("%s: %v", vectorName, err)
		}
		receipt, key = filepath.Join(dir, vectorName+".json"), filepath.Join(dir, "key.pem")
		if err := os.WriteFile(receipt, []byte(v.Inputs.Receipt), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, []byte(v.Inputs.PublicKeyPEM), 0o600); err != nil {
			t.Fatal(err)
		}
		return receipt, key
	}
	for _, c := range []struct {
		vector string
		code   int
		says   string
	}{
		{"receipt-merkle-valid", 0, "MATCH"},
		{"receipt-merkle-tree-size", 3, "cross_anchor_hash does not recompute"},
		{"receipt-merkle-leaf-last-seq", 3, "does not lead from the leaf"},
		{"receipt-merkle-flipped-signature", 3, "does not verify over the payload"},
		{"receipt-merkle-unknown-form", 1, "UNREADABLE"},
	} {
		receipt, key := write(c.vector)
		cmd := exec.Command(bin, "-federation-key", key, receipt)
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != c.code || !strings.Contains(string(out), c.says) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", c.vector, cmd.ProcessState.ExitCode(), c.code, c.says, out)
		}
	}
	if out, err := exec.Command(bin, filepath.Join(dir, "missing.json")).CombinedOutput(); err == nil || !strings.Contains(string(out), "no such file") {
		t.Errorf("a missing file: %v\n%s", err, out)
	}
}

// TestImportsOnlyTheStandardLibrary holds the script to what it claims.
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/cairn-dev/cairn/test/receiptcheck" {
			t.Errorf("the script imports %s", p)
		}
	}
}
