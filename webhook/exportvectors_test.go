package webhook

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The federation's submit path reads an export with the same verifier as the CLI and the
// chain API (issue 33): every export vector that fails under the public key alone is
// refused with its verdict, and one that passes is accepted. The vectors' key is the one
// from seed 0x01 (pkg/protocol's testKey), registered here as an operator.
var _ = Describe("POST /federation/submit and the export vectors", func() {
	It("refuses each vector the public key refuses, with its verdict, and takes a valid one", func() {
		s := submitServer(Options{})
		r := registrant{key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize)), org: "Vector Org"}
		Expect(do(s, http.MethodPost, "/federation/register", r.body(challenge(s))).status).To(Equal(http.StatusOK))

		files, err := filepath.Glob("../pkg/protocol/testdata/vectors/export-*.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(len(files)).To(BeNumerically(">", 40))
		var valid []byte
		for _, file := range files {
			export, want := exportVector(file)
			if want == "ok" {
				if filepath.Base(file) == "export-valid.json" {
					valid = export
				}
				continue
			}
			a := submit(s, r.key, export)
			Expect(answerVerdict(a)).To(Equal(want), "%s: %s", filepath.Base(file), a.raw)
			Expect(submissionsOf(idOf(r))).To(BeEmpty(), "%s left a Submission", filepath.Base(file))
		}
		Expect(valid).NotTo(BeEmpty())
		a := submit(s, r.key, valid)
		Expect(a.status).To(BeElementOf(http.StatusOK, http.StatusAccepted), string(a.raw))
		Expect(submissionsOf(idOf(r))).To(HaveLen(1))
	})
})

// exportVector reads a vector file: the export's bytes and its verdict under the public
// key alone.
func exportVector(file string) ([]byte, string) {
	GinkgoHelper()
	raw, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	var v struct {
		Inputs   map[string]string `json:"inputs"`
		Expected map[string]string `json:"expected"`
	}
	Expect(json.Unmarshal(raw, &v)).To(Succeed())
	export := []byte(v.Inputs["export"])
	if b64, ok := v.Inputs["export_base64"]; ok {
		export, err = base64.StdEncoding.DecodeString(b64)
		Expect(err).NotTo(HaveOccurred())
	}
	return export, v.Expected["public_key"]
}

// answerVerdict spells a refused submission's answer the way the vectors spell a verdict:
// 400 malformed_json is "malformed" (or "malformed_entry seq N" when an entry's shape was
// what failed), 422 export_verification_failed is named by its check, seq and message.
func answerVerdict(a answer) string {
	msg, _ := a.body["message"].(string)
	if m := entryReason.FindStringSubmatch(msg); m != nil {
		return m[2] + " seq " + m[1]
	}
	switch {
	case a.status == http.StatusBadRequest && a.body["error"] == "malformed_json":
		return "malformed"
	case a.status != http.StatusUnprocessableEntity || a.body["error"] != "export_verification_failed":
		return fmt.Sprintf("HTTP %d %v", a.status, a.body["error"])
	case a.body["check"] == "trusted_key":
		return "key_not_trusted"
	case a.body["check"] == "envelope_signature":
		return "signature"
	}
	if m := mismatchOf.FindStringSubmatch(msg); m != nil {
		return "mismatch " + m[1]
	}
	return fmt.Sprintf("%v: %s", a.body["check"], msg)
}

var (
	entryReason = regexp.MustCompile(`entry seq (\d+): ([a-z_]+)`)
	mismatchOf  = regexp.MustCompile(`failed: ([a-z_]+) mismatch:`)
)
