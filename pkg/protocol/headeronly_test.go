package protocol

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"testing"
)

// TestHeaderOnlySecretVerdictIsHonest is hole 8 of issue 14: with only the secret, a
// header-only export has no entry whose HMAC could be checked, and chain_signature covers
// only last_hmac_hash and entry_count. The report must not claim HMACs were checked, and
// must name the header members nothing authenticated.
func TestHeaderOnlySecretVerdictIsHonest(t *testing.T) {
	export := writeExport(t, testChain(t, 5, 8), testKey, true)
	report, err := VerifyExport(bytes.NewReader(export), VerifyOptions{Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	if report.HMACsChecked {
		t.Errorf("header-only export with the secret only: HMACsChecked is true, but it carried no entry")
	}
	assertHeaderReport(t, report)
}

// assertHeaderReport checks what a header-only, secret-only report says it checked.
func assertHeaderReport(t *testing.T, r *ExportReport) {
	t.Helper()
	if !r.ChainSignatureChecked || r.KeyTrusted {
		t.Errorf("ChainSignatureChecked %v, KeyTrusted %v", r.ChainSignatureChecked, r.KeyTrusted)
	}
	if got, want := strings.Join(r.Authenticated, ","), "entry_count,last_seq,last_hmac_hash,chain_signature"; got != want {
		t.Errorf("Authenticated %s, want %s", got, want)
	}
	if got, want := strings.Join(r.Unauthenticated, ","), "exported_at,first_seq,first_prev_hash,entries_root"; got != want {
		t.Errorf("Unauthenticated %s, want %s", got, want)
	}
	var names []string
	for _, c := range r.Checks {
		state := "ok"
		if c.Skipped {
			state = "skipped"
		}
		names = append(names, c.Name+":"+state)
	}
	if got, want := strings.Join(names, " "), "entries:skipped hmacs:skipped header_vs_entries:skipped chain_signature:ok envelope_signature:ok trusted_key:skipped"; got != want {
		t.Errorf("checks %s\nwant   %s", got, want)
	}
}

// TestExportReportAuthenticates checks the members each trust mode authenticates.
func TestExportReportAuthenticates(t *testing.T) {
	pub := testKey.Public().(ed25519.PublicKey)
	full := writeExport(t, testChain(t, 5, 8), testKey, false)
	header := writeExport(t, testChain(t, 5, 8), testKey, true)
	for name, c := range map[string]struct {
		export []byte
		opts   VerifyOptions
		unauth string
		hmacs  bool
	}{
		"secret, entries":     {full, VerifyOptions{Secret: testSecret}, "exported_at", true},
		"secret, header-only": {header, VerifyOptions{Secret: testSecret}, "exported_at,first_seq,first_prev_hash,entries_root", false},
		"key, header-only":    {header, VerifyOptions{PublicKey: pub}, "", false},
		"both, header-only":   {header, VerifyOptions{Secret: testSecret, PublicKey: pub}, "", false},
		"both, entries":       {full, VerifyOptions{Secret: testSecret, PublicKey: pub}, "", true},
	} {
		r, err := VerifyExport(bytes.NewReader(c.export), c.opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := strings.Join(r.Unauthenticated, ","); got != c.unauth || r.HMACsChecked != c.hmacs ||
			len(r.Authenticated)+len(r.Unauthenticated) != len(HeaderMembers) {
			t.Errorf("%s: unauthenticated %q (want %q), authenticated %v, HMACsChecked %v", name, got, c.unauth, r.Authenticated, r.HMACsChecked)
		}
	}
}
