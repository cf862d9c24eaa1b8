package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestVerifyHeaderOnlyExportSaysWhatItChecked is hole 8 of issue 14 over HTTP: a
// header-only export checked with the secret alone has no HMAC to check, and its
// first_seq, first_prev_hash, entries_root and exported_at are vouched for by nothing
// the caller trusts. The answer must say so rather than hmacs_checked: true.
func TestVerifyHeaderOnlyExportSaysWhatItChecked(t *testing.T) {
	f := newFixture(t, 20, nil)
	resp, export := f.postJSON("/api/export", `{"header_only":true}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %s", resp.StatusCode, export)
	}
	ct, body := upload(t, "file", string(export))
	resp, out := f.do(http.MethodPost, "/api/export/verify?use_server_secret=true", ct, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got["valid"] != true || got["hmacs_checked"] != false || got["chain_signature_checked"] != true {
		t.Errorf("valid %v, hmacs_checked %v, chain_signature_checked %v; want true, false, true\n%s",
			got["valid"], got["hmacs_checked"], got["chain_signature_checked"], out)
	}
	unauth, _ := json.Marshal(got["unauthenticated"])
	if string(unauth) != `["exported_at","first_seq","first_prev_hash","entries_root"]` {
		t.Errorf("unauthenticated %s\n%s", unauth, out)
	}
	if note, _ := got["note"].(string); !strings.Contains(note, "header-only") || !strings.Contains(note, "not authenticated") {
		t.Errorf("note %q does not say what a header-only check leaves out", note)
	}
}
