package federation

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// vectorFile is one file of pkg/protocol/testdata/vectors.
type vectorFile struct {
	Desc     string            `json:"desc"`
	Inputs   map[string]string `json:"inputs"`
	Expected map[string]string `json:"expected"`
}

// readVectors reads the committed vectors whose names match pattern.
func readVectors(t *testing.T, pattern string) map[string]vectorFile {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("../../../pkg/protocol/testdata/vectors", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors %s: %v", pattern, err)
	}
	out := map[string]vectorFile{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v vectorFile
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(file), ".json")] = v
	}
	return out
}

// wantExit is the exit status of a verdict: ok 0, malformed 1, anything else 3.
func wantExit(verdict string) int {
	switch verdict {
	case "ok":
		return cmdutil.ExitOK
	case "malformed":
		return cmdutil.ExitError
	}
	return cmdutil.ExitMismatch
}

// TestVerifyExportFollowsVectors runs cairn verify-export on every committed export
// vector in each trust mode and requires the exit status of the vector's verdict: the
// command uses the one export verifier, imported-row rules included (issue 33).
func TestVerifyExportFollowsVectors(t *testing.T) {
	t.Setenv("CAIRN_HMAC_SECRET", "")
	dir := t.TempDir()
	for name, v := range readVectors(t, "export-*.json") {
		export := []byte(v.Inputs["export"])
		if b64, ok := v.Inputs["export_base64"]; ok {
			var err error
			if export, err = base64.StdEncoding.DecodeString(b64); err != nil {
				t.Fatal(err)
			}
		}
		file, key := filepath.Join(dir, name+".json"), filepath.Join(dir, name+".pem")
		if err := os.WriteFile(file, export, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, []byte(v.Inputs["public_key_pem"]), 0o644); err != nil {
			t.Fatal(err)
		}
		for mode, verdict := range v.Expected {
			args := []string{"verify-export", file}
			if mode == "secret" || mode == "both" {
				args = append(args, "--secret-hex", v.Inputs["secret_hex"])
			}
			if mode == "public_key" || mode == "both" {
				args = append(args, "--public-key", key)
			}
			out, err := runCairn(t, args...)
			if got := cmdutil.ExitCode(err); got != wantExit(verdict) {
				t.Errorf("%s [%s]: exit %d, want %d for %q\n%s", name, mode, got, wantExit(verdict), verdict, out)
			}
			// An entry's verdict "<reason> seq <n>" is printed as "entry seq <n>: <reason>".
			if f := strings.Fields(verdict); len(f) == 3 && f[1] == "seq" {
				if want := "entry seq " + f[2] + ": " + f[0]; err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s [%s]: error %v, want %q", name, mode, err, want)
				}
			}
		}
	}
}

// An imported chain's export names its bridge and what was checked of the imported rows;
// one that ends inside the import, checked with the secret alone, does not call itself
// valid and names entries_root as not authenticated.
func TestVerifyExportSaysWhatItCheckedOfImportedRows(t *testing.T) {
	t.Setenv("CAIRN_HMAC_SECRET", "")
	vs := readVectors(t, "export-imported-*.json")
	dir := t.TempDir()
	for name, want := range map[string][]string{
		"export-imported-valid": {"checks passed, not all authenticated: export of seq 1..8", "not authenticated: exported_at (", "imported: entries 2..6 are BIJOTEL rows 1..5 behind the bridge record; their columns match legacy_rows_sha256, and the secret re-derives the legacy chain"},
		"export-imported-ends-inside-the-import": {"checks passed, not all authenticated: export of seq 1..4",
			"imported: entries 2..6 are BIJOTEL rows 1..5 behind the bridge record; their columns were not checked",
			"not authenticated: exported_at, entries_root"},
	} {
		v := vs[name]
		file := filepath.Join(dir, name+".json")
		if err := os.WriteFile(file, []byte(v.Inputs["export"]), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := runCairn(t, "verify-export", file, "--secret-hex", v.Inputs["secret_hex"])
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", name, w, out)
			}
		}
	}
}

// TestFederationVerifyFollowsBijotelVectors runs cairn federation verify on every receipt
// of the original product among the vectors: with --federation-key the exit status of the
// vector's verdict under the original's rules; without it the command refuses to run
// (exit 2), malformed or not, since no key pinned for a Cairn federation applies to the
// original's.
func TestFederationVerifyFollowsBijotelVectors(t *testing.T) {
	dir := t.TempDir()
	for name, v := range readVectors(t, "bijotel-receipt-*.json") {
		receipt, key := filepath.Join(dir, name+".json"), filepath.Join(dir, name+".pem")
		if err := os.WriteFile(receipt, []byte(v.Inputs["receipt"]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, []byte(v.Inputs["public_key_pem"]), 0o644); err != nil {
			t.Fatal(err)
		}
		for mode, verdict := range v.Expected {
			args := []string{"federation", "verify", receipt, "--config-dir", filepath.Join(dir, "none")}
			want := cmdutil.ExitUsage
			if mode == "trusted_key" {
				args, want = append(args, "--federation-key", key), wantExit(verdict)
			}
			out, err := runCairn(t, args...)
			if got := cmdutil.ExitCode(err); got != want {
				t.Errorf("%s [%s]: exit %d, want %d for %q\n%s", name, mode, got, want, verdict, out)
			}
		}
	}
}
