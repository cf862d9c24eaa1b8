package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// update rewrites the committed test vectors: go test ./pkg/protocol -run Vectors -update.
var update = flag.Bool("update", false, "rewrite testdata/vectors from the generators")

const vectorDir = "testdata/vectors"

// vector is one file of testdata/vectors: inputs and the verdict of each trust mode.
type vector struct {
	Desc     string            `json:"desc"`
	Kind     string            `json:"kind"` // "export" or "receipt"
	Inputs   map[string]string `json:"inputs"`
	Expected map[string]string `json:"expected"`
}

// generateVectors builds every vector from the case tables, keyed by file name.
func generateVectors(tb testing.TB) map[string][]byte {
	pubPEM, err := MarshalPublicKeyPEM(testKey.Public().(ed25519.PublicKey))
	if err != nil {
		tb.Fatal(err)
	}
	files := map[string][]byte{}
	add := func(name string, v vector) {
		raw, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			tb.Fatal(err)
		}
		files[name+".json"] = append(raw, '\n')
	}
	for name, c := range exportCases {
		inputs := map[string]string{
			"export":         string(c.export(tb)),
			"secret_hex":     hex.EncodeToString(testSecret),
			"public_key_pem": string(pubPEM),
		}
		if !utf8.ValidString(inputs["export"]) { // JSON cannot carry it as a string
			inputs["export_base64"] = base64.StdEncoding.EncodeToString([]byte(inputs["export"]))
			delete(inputs, "export")
		}
		add("export-"+name, vector{
			Desc:     c.desc,
			Kind:     "export",
			Inputs:   inputs,
			Expected: map[string]string{"secret": c.secret, "public_key": c.public, "both": c.both},
		})
	}
	for name, v := range receiptVectors(tb) {
		add("receipt-"+name, v)
	}
	for name, v := range tokenVectors(tb) {
		add(name, v)
	}
	for name, v := range bijotelReceiptVectors(tb) {
		add(name, v)
	}
	return files
}

func TestVectorsAreCurrent(t *testing.T) {
	want := generateVectors(t)
	if *update {
		if err := os.RemoveAll(vectorDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(vectorDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, raw := range want {
			if err := os.WriteFile(filepath.Join(vectorDir, name), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := os.ReadDir(vectorDir)
	if err != nil {
		t.Fatalf("read %s (run go test ./pkg/protocol -run Vectors -update): %v", vectorDir, err)
	}
	var problems []string
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			problems = append(problems, e.Name()+": committed but no longer generated")
		}
	}
	for name, raw := range want {
		got, err := os.ReadFile(filepath.Join(vectorDir, name))
		switch {
		case err != nil:
			problems = append(problems, name+": not committed")
		case !bytes.Equal(got, raw):
			problems = append(problems, name+": committed bytes differ from the generator's")
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		t.Fatalf("test vectors are stale; review and run go test ./pkg/protocol -run Vectors -update:\n%s", strings.Join(problems, "\n"))
	}
}

// externalKinds are the vector kinds another package verifies: a receipt of the original
// product (pkg/bijotel, checked by TestBijotelReceiptVectors).
var externalKinds = map[string]bool{"bijotel-receipt": true}

// TestVectorVerdicts checks every committed vector against the verifiers, from the files
// alone, as an independent implementation would.
func TestVectorVerdicts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors in %s: %v", vectorDir, err)
	}
	var failures []string
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if externalKinds[v.Kind] {
			continue
		}
		for mode, want := range v.Expected {
			if got := runVector(t, v, mode); got != want {
				failures = append(failures, filepath.Base(file)+" ["+mode+"]: got "+got+", want "+want+" ("+v.Desc+")")
			}
		}
	}
	if len(failures) > 0 {
		slices.Sort(failures)
		t.Fatalf("%d vector verdicts wrong:\n%s", len(failures), strings.Join(failures, "\n"))
	}
}

// TestGeneratedVectorVerdicts checks every vector the generators make, before it is
// committed: a new case is an attack test that runs on the verifier as it is.
func TestGeneratedVectorVerdicts(t *testing.T) {
	var failures []string
	for name, raw := range generateVectors(t) {
		var v vector
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if externalKinds[v.Kind] {
			continue
		}
		for mode, want := range v.Expected {
			if got := runVector(t, v, mode); got != want {
				failures = append(failures, name+" ["+mode+"]: got "+got+", want "+want+" ("+v.Desc+")")
			}
		}
	}
	if len(failures) > 0 {
		slices.Sort(failures)
		t.Fatalf("%d vector verdicts wrong:\n%s", len(failures), strings.Join(failures, "\n"))
	}
}

// runVector verifies v's input in one trust mode and returns the verdict.
func runVector(t testing.TB, v vector, mode string) string {
	t.Helper()
	var pub ed25519.PublicKey
	if pemText, ok := v.Inputs["public_key_pem"]; ok && (mode == "public_key" || mode == "both" || mode == "trusted_key") {
		var err error
		if pub, err = ParsePublicKeyPEM([]byte(pemText)); err != nil {
			t.Fatal(err)
		}
	}
	switch v.Kind {
	case "export":
		var secret []byte
		if mode == "secret" || mode == "both" {
			var err error
			if secret, err = hex.DecodeString(v.Inputs["secret_hex"]); err != nil {
				t.Fatal(err)
			}
		}
		export := []byte(v.Inputs["export"])
		if b64, ok := v.Inputs["export_base64"]; ok {
			var err error
			if export, err = base64.StdEncoding.DecodeString(b64); err != nil {
				t.Fatal(err)
			}
		}
		_, err := VerifyExport(bytes.NewReader(export), VerifyOptions{Secret: secret, PublicKey: pub})
		return verdict(err)
	case "receipt":
		_, err := VerifyReceipt([]byte(v.Inputs["receipt"]), pub)
		return verdict(err)
	case "token":
		return runTokenVector(t, v)
	}
	t.Fatalf("unknown vector kind %q", v.Kind)
	return ""
}
