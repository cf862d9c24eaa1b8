package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestExportVerifyFollowsVectors posts every committed export vector to POST
// /api/export/verify in each trust mode (the secret in X-Secret-Hex, the key in the
// public_key field) and requires the vector's verdict: the chain service uses the one
// export verifier, imported-row rules included (issue 33).
func TestExportVerifyFollowsVectors(t *testing.T) {
	files, err := filepath.Glob("../../pkg/protocol/testdata/vectors/export-*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no export vectors: %v", err)
	}
	f := newFixture(t, 0, nil)
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
		export := v.Inputs["export"]
		if b64, ok := v.Inputs["export_base64"]; ok {
			b, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatal(err)
			}
			export = string(b)
		}
		for mode, want := range v.Expected {
			var fields, headers []string
			if mode == "public_key" || mode == "both" {
				fields = append(fields, "public_key", v.Inputs["public_key_pem"])
			}
			if mode == "secret" || mode == "both" {
				headers = append(headers, "X-Secret-Hex", v.Inputs["secret_hex"])
			}
			ct, body := upload(t, append(fields, "file", export)...)
			resp, out := f.do(http.MethodPost, "/api/export/verify", ct, body, headers...)
			var res exportVerifyResult
			if err := json.Unmarshal(out, &res); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%s [%s]: %d %s", filepath.Base(file), mode, resp.StatusCode, out)
			}
			if got := apiVerdict(&res); got != want {
				t.Errorf("%s [%s]: got %s, want %s (%s)", filepath.Base(file), mode, got, want, res.Error)
			}
		}
	}
}

// apiVerdict names an answer of POST /api/export/verify as the vectors spell verdicts.
func apiVerdict(res *exportVerifyResult) string {
	switch {
	case res.Valid:
		return "ok"
	case res.ReasonCode == reasonHeaderMismatch:
		return "mismatch " + res.Field
	case res.Seq > 0:
		return res.ReasonCode + " seq " + strconv.FormatInt(res.Seq, 10)
	}
	return strings.TrimSpace(res.ReasonCode)
}
