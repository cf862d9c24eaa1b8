package api

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"io"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

func TestExportDownloadVerifies(t *testing.T) {
	f := newFixture(t, 25, nil)
	pub := testKey.Public().(ed25519.PublicKey)
	tests := map[string]struct {
		body                     string
		first, last, wantEntries int64
		disposition              string
	}{
		"whole chain, empty body": {body: "", first: 1, last: 25, wantEntries: 25, disposition: `attachment; filename="cairn-chain-1-25.json"`},
		"a window":                {body: `{"first_seq":5,"last_seq":12}`, first: 5, last: 12, wantEntries: 8, disposition: `attachment; filename="cairn-chain-5-12.json"`},
		"from a seq to the end":   {body: `{"first_seq":20}`, first: 20, last: 25, wantEntries: 6, disposition: `attachment; filename="cairn-chain-20-25.json"`},
		"header only":             {body: `{"header_only":true}`, first: 1, last: 25, wantEntries: 0, disposition: `attachment; filename="cairn-chain-1-25.json"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := f.postJSON("/api/export", tc.body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Content-Disposition"); got != tc.disposition {
				t.Errorf("Content-Disposition %q, want %q", got, tc.disposition)
			}
			report, err := protocol.VerifyExport(bytes.NewReader(body), protocol.VerifyOptions{Secret: testSecret, PublicKey: pub})
			if err != nil {
				t.Fatalf("the download does not verify: %v", err)
			}
			h := report.Header
			if h.FirstSeq != tc.first || h.LastSeq != tc.last || h.EntryCount != tc.last || report.Entries != tc.wantEntries || !report.KeyTrusted ||
				report.HMACsChecked != (tc.wantEntries > 0) || !report.ChainSignatureChecked || len(report.Unauthenticated) != 0 {
				t.Errorf("report %+v, header %+v", report, h)
			}
		})
	}

	bad := map[string]struct {
		body   string
		status int
		code   string
	}{
		"bad JSON":        {body: `{"first_seq":}`, status: http.StatusBadRequest, code: codeBadJSON},
		"unknown field":   {body: `{"from":3}`, status: http.StatusBadRequest, code: codeBadJSON},
		"window past end": {body: `{"last_seq":26}`, status: http.StatusBadRequest, code: codeBadParameter},
		"reversed window": {body: `{"first_seq":6,"last_seq":2}`, status: http.StatusBadRequest, code: codeBadParameter},
	}
	for name, tc := range bad {
		resp, body := f.postJSON("/api/export", tc.body)
		t.Run(name, func(t *testing.T) { wantError(t, resp, body, tc.status, tc.code) })
	}
}

func TestExportRefusals(t *testing.T) {
	noKey := newFixture(t, 3, func(o *Options) { o.SigningKey = nil })
	resp, body := noKey.postJSON("/api/export", "")
	if e := wantError(t, resp, body, http.StatusConflict, codeNoSigningKey); !strings.Contains(e.Message, "--sign-key") {
		t.Errorf("the error does not say how to give a key: %q", e.Message)
	}

	empty := newFixture(t, 0, nil)
	resp, body = empty.postJSON("/api/export", "{}")
	wantError(t, resp, body, http.StatusConflict, codeEmptyChain)

	// A chain that does not verify is not exported; a small one fails before any byte of
	// the export is sent, so the answer is a clean error.
	broken := newFixture(t, 10, nil)
	broken.tamper(`UPDATE chain SET span_kind = 'server' WHERE seq = 4`)
	resp, body = broken.postJSON("/api/export", "")
	if e := wantError(t, resp, body, http.StatusConflict, codeChainInvalid); !strings.Contains(e.Message, "seq 4") {
		t.Errorf("the error does not name seq 4: %q", e.Message)
	}
	if resp.Header.Get("Content-Disposition") != "" {
		t.Error("a refused export was still offered as a download")
	}
}

func TestExportFailingMidStreamCutsTheConnection(t *testing.T) {
	// Enough entries that the export's buffer is flushed before the tampered one is read.
	f := newFixture(t, 3000, nil)
	f.tamper(`UPDATE chain SET span_kind = 'server' WHERE seq = 2900`)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.http.URL+"/api/export", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: the export should have started", resp.StatusCode)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Fatal("the export of a broken chain was read to a clean end")
	}
	if !strings.Contains(f.logs.String(), "Export failed after it started") {
		t.Errorf("the failure was not logged:\n%s", f.logs.String())
	}
}

// upload is a multipart form: name, content pairs in order.
func upload(t *testing.T, fields ...string) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		var w io.Writer
		var err error
		if fields[i] == "file" {
			w, err = mw.CreateFormFile("file", "export.json")
		} else {
			w, err = mw.CreateFormField(fields[i])
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), &buf
}

func TestVerifyExportUpload(t *testing.T) {
	f := newFixture(t, 20, nil)
	resp, export := f.postJSON("/api/export", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %s", resp.StatusCode, export)
	}
	pubPEM, err := protocol.MarshalPublicKeyPEM(testKey.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	_, otherPub, _ := ed25519.GenerateKey(nil)
	otherPEM, err := protocol.MarshalPublicKeyPEM(otherPub.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	// Tampered: one body byte changed, the rest intact.
	tampered := bytes.Replace(export, []byte(`"span_kind":"client"`), []byte(`"span_kind":"server"`), 1)
	if bytes.Equal(tampered, export) {
		t.Fatal("the test did not tamper with the export")
	}
	noSecretServer := newFixture(t, 0, func(o *Options) { o.Secret = nil })
	tests := map[string]struct {
		f       *fixture
		query   string
		fields  []string
		headers []string
		want    exportVerifyResult
	}{
		"the server's secret, asked for": {f: f, query: "?use_server_secret=true", fields: []string{"file", string(export)},
			want: exportVerifyResult{Valid: true, Entries: 20, HMACsChecked: true, SecretFrom: "server"}},
		"the server's secret, not asked for: nothing binds the export": {f: f, fields: []string{"file", string(export)},
			want: exportVerifyResult{ReasonCode: reasonNoTrustedKey, Entries: 20, SecretFrom: "none"}},
		"use_server_secret=false": {f: f, query: "?use_server_secret=false", fields: []string{"file", string(export)},
			want: exportVerifyResult{ReasonCode: reasonNoTrustedKey, Entries: 20, SecretFrom: "none"}},
		"the key alone, on a server with a secret": {f: f, fields: []string{"public_key", string(pubPEM), "file", string(export)},
			want: exportVerifyResult{Valid: true, Entries: 20, KeyTrusted: true, SecretFrom: "none"}},

		"the secret in the header and a trusted key": {f: f, fields: []string{"public_key", string(pubPEM), "file", string(export)},
			headers: []string{"X-Secret-Hex", hex.EncodeToString(testSecret)},
			want:    exportVerifyResult{Valid: true, Entries: 20, HMACsChecked: true, KeyTrusted: true, SecretFrom: "header"}},
		"another key is not trusted": {f: f, query: "?use_server_secret=true", fields: []string{"public_key", string(otherPEM), "file", string(export)},
			want: exportVerifyResult{ReasonCode: reasonKeyNotTrusted, Entries: 20, HMACsChecked: true, SecretFrom: "server"}},
		"a wrong secret": {f: f, fields: []string{"file", string(export)},
			headers: []string{"X-Secret-Hex", strings.Repeat("ab", 32)},
			want:    exportVerifyResult{ReasonCode: protocol.ReasonHMAC, Seq: 1, SecretFrom: "header"}},
		"no secret and no key binds nothing": {f: noSecretServer, fields: []string{"file", string(export)},
			want: exportVerifyResult{ReasonCode: reasonNoTrustedKey, Entries: 20, SecretFrom: "none"}},
		"the key alone": {f: noSecretServer, fields: []string{"public_key", string(pubPEM), "file", string(export)},
			want: exportVerifyResult{Valid: true, Entries: 20, KeyTrusted: true, SecretFrom: "none"}},
		"a tampered file": {f: f, query: "?use_server_secret=true", fields: []string{"file", string(tampered)},
			want: exportVerifyResult{ReasonCode: protocol.ReasonColumn, Seq: 1, SecretFrom: "server"}},
		"a truncated file": {f: f, query: "?use_server_secret=true", fields: []string{"file", string(export[:len(export)/2])},
			want: exportVerifyResult{ReasonCode: reasonMalformed, SecretFrom: "server"}},
		"not an export": {f: f, query: "?use_server_secret=true", fields: []string{"file", `{"hello":"world"}`},
			want: exportVerifyResult{ReasonCode: reasonMalformed, SecretFrom: "server"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ct, body := upload(t, tc.fields...)
			resp, out := tc.f.do(http.MethodPost, "/api/export/verify"+tc.query, ct, body, tc.headers...)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, out)
			}
			var got exportVerifyResult
			decode(t, out, &got)
			if got.Valid != (got.Error == "") || (got.Valid && (got.Header == nil || got.Header.LastSeq != 20)) {
				t.Errorf("inconsistent result %s", out)
			}
			if (got.Note == "") != got.HMACsChecked {
				t.Errorf("note %q with hmacs_checked %v", got.Note, got.HMACsChecked)
			}
			if got.Valid && got.ChainSigChecked != (got.SecretFrom != "none") {
				t.Errorf("chain_signature_checked %v with the secret from %s", got.ChainSigChecked, got.SecretFrom)
			}
			// The documented members repeat what the others say.
			if (got.Reason == nil) != got.Valid || (got.Reason != nil && *got.Reason != got.Error) {
				t.Errorf("reason %v with valid %v and error %q", got.Reason, got.Valid, got.Error)
			}
			if (got.EntriesCount == nil) != (got.Entries == 0) || (got.EntriesCount != nil && *got.EntriesCount != got.Entries) {
				t.Errorf("entries_count %v with entries %d", got.EntriesCount, got.Entries)
			}
			if (got.Header == nil) != (got.Format == nil) || (got.Header != nil && (*got.Format != got.Header.Format || *got.HeadHash != got.Header.LastHMACHash)) {
				t.Errorf("format %v and head_hash %v with header %+v", got.Format, got.HeadHash, got.Header)
			}
			got.Reason, got.EntriesCount, got.HeadHash, got.Format = nil, nil, nil, nil
			got.Error, got.Header, got.Field, got.Note = "", nil, "", ""
			got.ChainSigChecked, got.Checks, got.Authenticated, got.Unauthenticated = false, nil, nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v\n%s", got, tc.want, out)
			}
		})
	}

	small := newFixture(t, 0, func(o *Options) { o.MaxUploadBytes = 1024 })
	bad := map[string]struct {
		f           *fixture
		query       string
		contentType string
		body        io.Reader
		headers     []string
		status      int
		code        string
	}{
		"not multipart": {f: f, contentType: "application/json", body: bytes.NewReader(export),
			status: http.StatusUnsupportedMediaType, code: codeUnsupportedMedia},
		"secret not hex": {f: f, headers: []string{"X-Secret-Hex", "zz" + strings.Repeat("0", 62)},
			status: http.StatusBadRequest, code: codeBadParameter},
		"secret too short": {f: f, headers: []string{"X-Secret-Hex", strings.Repeat("0", 30)},
			status: http.StatusBadRequest, code: codeBadParameter},
		"the header's secret and the server's": {f: f, query: "?use_server_secret=true", headers: []string{"X-Secret-Hex", hex.EncodeToString(testSecret)},
			status: http.StatusBadRequest, code: codeBadParameter},
		"use_server_secret not a boolean": {f: f, query: "?use_server_secret=please", status: http.StatusBadRequest, code: codeBadParameter},
		"use_server_secret without one":   {f: noSecretServer, query: "?use_server_secret=true", status: http.StatusConflict, code: codeNoSecret},
		"no file field":                   {f: f, status: http.StatusBadRequest, code: codeBadRequest},
		"unknown field":                   {f: f, status: http.StatusBadRequest, code: codeBadRequest},
		"bad public key":                  {f: f, status: http.StatusBadRequest, code: codeBadParameter},
		"upload too large":                {f: small, status: http.StatusRequestEntityTooLarge, code: codeBodyTooLarge},
	}
	forms := map[string][]string{
		"no file field":    {"public_key", string(pubPEM)},
		"unknown field":    {"secret", "x", "file", string(export)},
		"bad public key":   {"public_key", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "file", string(export)},
		"upload too large": {"file", string(export)},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			ct, body := tc.contentType, tc.body
			if body == nil {
				fields := forms[name]
				if fields == nil {
					fields = []string{"file", string(export)}
				}
				ct, body = upload(t, fields...)
			}
			resp, out := tc.f.do(http.MethodPost, "/api/export/verify"+tc.query, ct, body, tc.headers...)
			e := wantError(t, resp, out, tc.status, tc.code)
			if strings.Contains(e.Message, "zz") {
				t.Errorf("the error quotes the secret: %q", e.Message)
			}
		})
	}
}
