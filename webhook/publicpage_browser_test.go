package webhook

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"k8s.io/apimachinery/pkg/types"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/browsertest"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestPublicPageInBrowser loads the public page of a fixed federation in headless
// Chromium and drives its receipt box and a verify button: a valid receipt (with a
// non-ASCII member, so the payload's \u escapes are exercised) passes every check, one
// with a chain_signature changed fails cross_anchor_hash, one signed by another key fails
// trusted_key, each named; a dropped file is checked as a chosen one. No console error,
// no request leaving loopback; a screenshot of each state.
func TestPublicPageInBrowser(t *testing.T) {
	m, key := pageFixture(t, 3, 4)
	s, err := New(Options{Client: m, APIReader: m, Informers: noInformers(), Federation: types.NamespacedName{Namespace: "bench", Name: "cairn"}, RatePerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	valid := signedReceipt(t, &m.anchors[0], key, map[string]any{"note": "café 😀 <&> \u007f"})
	_, stranger, _ := ed25519.GenerateKey(nil)
	files := map[string][]byte{
		"valid.json":     valid,
		"tampered.json":  tamperedReceipt(t, valid),
		"other-key.json": signedReceipt(t, &m.anchors[0], stranger, nil),
		"not-json.json":  []byte("{\"anchor_id\": "),
	}
	for name, raw := range files {
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	b := browsertest.New(t, browsertest.FromEnv(os.Getenv))
	ctx := b.Page(t)
	b.Run(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible("#receipt"))
	if got := browsertest.Get(t, b, ctx, chromedp.Text("#fingerprint")); got != string(m.fed.Status.PublicKeyFingerprint) {
		t.Errorf("the page shows the fingerprint %q, want %q", got, m.fed.Status.PublicKeyFingerprint)
	}
	b.Screenshot(t, ctx, "page")

	all := []string{"parse", "participants_order", "cross_anchor_hash", "federation_signature", "trusted_key", "verdict"}
	for _, tc := range []struct {
		file string
		fail []string // the checks that must fail; every other of all must pass
	}{
		{"valid.json", nil},
		{"tampered.json", []string{"cross_anchor_hash", "federation_signature", "verdict"}},
		{"other-key.json", []string{"trusted_key", "verdict"}},
		{"not-json.json", []string{"parse", "verdict"}},
	} {
		b.Run(t, ctx, chromedp.SetUploadFiles("#receipt-file", []string{filepath.Join(dir, tc.file)}),
			chromedp.WaitReady(`#receipt-checks[data-file="`+tc.file+`"]`))
		checkStates(t, b, ctx, tc.file, all, tc.fail)
		b.Screenshot(t, ctx, "receipt "+strings.TrimSuffix(tc.file, ".json"))
	}
	// Receipts of the Merkle form, of one participant among a million: the honest one
	// passes (its time in this tab is logged for docs/BENCHMARKS.md), one with its leaf's
	// last_seq raised fails leaf_inclusion, one with its tree_size changed fails
	// cross_anchor_hash (the proof is the same in both sizes).
	merkle := merkleReceiptAmong(t, key, 1_000_000, 777_777)
	merkleFiles := map[string][]byte{
		"merkle.json":           merkle,
		"merkle-last-seq.json":  editReceipt(t, merkle, func(m map[string]any) { m["leaf"].(map[string]any)["last_seq"] = 8 }),
		"merkle-tree-size.json": editReceipt(t, merkle, func(m map[string]any) { m["inclusion_proof"].(map[string]any)["tree_size"] = 1_000_001 }),
	}
	for name, raw := range merkleFiles {
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	merkleChecks := []string{"parse", "leaf_inclusion", "cross_anchor_hash", "federation_signature", "trusted_key", "verdict"}
	for _, tc := range []struct {
		file string
		fail []string
	}{
		{"merkle.json", nil},
		{"merkle-last-seq.json", []string{"leaf_inclusion", "verdict"}},
		{"merkle-tree-size.json", []string{"cross_anchor_hash", "verdict"}},
	} {
		b.Run(t, ctx, chromedp.SetUploadFiles("#receipt-file", []string{filepath.Join(dir, tc.file)}),
			chromedp.WaitReady(`#receipt-checks[data-file="`+tc.file+`"]`))
		checkStates(t, b, ctx, tc.file, merkleChecks, tc.fail)
		ms := browsertest.Get(t, b, ctx, chromedp.AttributeValue("#receipt-checks", "data-ms"))
		t.Logf("%s (%d bytes): checked in %s ms in the tab", tc.file, len(merkleFiles[tc.file]), ms.Value)
	}
	b.Screenshot(t, ctx, "receipt merkle")

	b.Run(t, ctx, chromedp.SetUploadFiles("#receipt-file", []string{filepath.Join(dir, "not-json.json")}),
		chromedp.WaitReady(`#receipt-checks[data-file="not-json.json"]`))
	verdict := browsertest.Get(t, b, ctx, chromedp.Text(`#receipt-checks li[data-check="verdict"]`))
	if !strings.Contains(verdict, "parse failed") {
		t.Errorf("the verdict of a file that is not JSON is %q, want it to name parse", verdict)
	}

	// The same valid receipt, dropped rather than chosen.
	drop := `(() => { const dt = new DataTransfer(); dt.items.add(new File([` + jsString(t, valid) + `], 'dropped.json', {type: 'application/json'}));
		document.querySelector('#dropzone').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true})); return true; })()`
	browsertest.Get(t, b, ctx, chromedp.Evaluate[bool](drop))
	b.Run(t, ctx, chromedp.WaitReady(`#receipt-checks[data-file="dropped.json"]`))
	checkStates(t, b, ctx, "dropped.json", all, nil)

	// A browser without Ed25519 in WebCrypto: the signature is left to the command, whose
	// key is offered as a download.
	browsertest.Get(t, b, ctx, chromedp.Evaluate[bool](`(() => { window.realImportKey = crypto.subtle.importKey;
		crypto.subtle.importKey = () => Promise.reject(new DOMException('no Ed25519', 'NotSupportedError')); return true; })()`))
	b.Run(t, ctx, chromedp.SetUploadFiles("#receipt-file", []string{filepath.Join(dir, "other-key.json")}),
		chromedp.WaitReady(`#receipt-checks[data-file="other-key.json"]`), chromedp.WaitVisible("#receipt-fallback"))
	for check, want := range map[string]string{"federation_signature": "skip", "cross_anchor_hash": "ok", "trusted_key": "fail", "verdict": "fail"} {
		if got := browsertest.Get(t, b, ctx, chromedp.AttributeValue(`#receipt-checks li[data-check="`+check+`"]`, "data-state")); got.Value != want {
			t.Errorf("without Ed25519: check %s is %q, want %q", check, got.Value, want)
		}
	}
	if got := browsertest.Get(t, b, ctx, chromedp.AttributeValue("#download-key-2", "href")); !strings.HasPrefix(got.Value, "blob:") {
		t.Errorf("the fallback's key link is %q, want a blob: URL of the key", got.Value)
	}
	b.Screenshot(t, ctx, "receipt without Ed25519")
	browsertest.Get(t, b, ctx, chromedp.Evaluate[bool](`(() => { crypto.subtle.importKey = window.realImportKey; return true; })()`))

	// A verify button: the live check's answer, each check shown.
	b.Run(t, ctx, chromedp.Click(`button.verify[data-anchor="`+m.anchors[0].Name+`"]`),
		chromedp.WaitReady(`tr[id="`+m.anchors[0].Name+`"] ul.checks li[data-check="signature_verified"]`))
	if got := browsertest.Get(t, b, ctx, chromedp.AttributeValue(`tr[id="`+m.anchors[0].Name+`"] li[data-check="signature_verified"]`, "data-state")); got.Value != "ok" {
		t.Errorf("the verify button shows signature_verified %q, want ok", got.Value)
	}
	b.Screenshot(t, ctx, "verify button")

	// A phone in dark mode.
	b.Run(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), darkMode)
	b.Screenshot(t, ctx, "phone dark")
	b.NoConsoleErrors(t)
	b.NoExternalRequests(t)
}

// darkMode makes the page's prefers-color-scheme dark.
var darkMode chromedp.Action[chromedp.Void] = func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
	_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
	return chromedp.Void{}, err
}

// checkStates fails t unless the receipt box shows every check of all, those of fail
// failed and the others ok.
func checkStates(t *testing.T, b *browsertest.Browser, ctx context.Context, file string, all, fail []string) {
	t.Helper()
	got := browsertest.Get(t, b, ctx, chromedp.Evaluate[map[string]string](
		`Object.fromEntries(Array.from(document.querySelectorAll('#receipt-checks li'), (li) => [li.dataset.check, li.dataset.state]))`))
	for _, name := range all {
		want := "ok"
		if slices.Contains(fail, name) {
			want = "fail"
		}
		if name == "parse" || !slices.Contains(fail, "parse") || want == "fail" {
			if got[name] != want {
				t.Errorf("%s: check %s is %q, want %q (all: %v)", file, name, got[name], want, got)
			}
		}
	}
}

// signedReceipt is the pending receipt of ca signed by key, with the members of extra
// added before signing.
func signedReceipt(t *testing.T, ca *fv1.CrossAnchor, key ed25519.PrivateKey, extra map[string]any) []byte {
	t.Helper()
	r := protocol.Receipt{AnchorID: string(ca.Spec.AnchorID), AnchoredAt: ca.Spec.AnchoredAt, CrossAnchorHash: string(ca.Spec.CrossAnchorHash)}
	for _, p := range ca.Spec.Participants {
		r.ParticipatingOperators = append(r.ParticipatingOperators, protocol.Participant{OperatorID: string(p.OperatorID), ChainSignature: string(p.ChainSignature)})
	}
	raw, err := protocol.SignReceipt(&r, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(extra) == 0 {
		return raw
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	delete(obj, "federation_signature")
	maps.Copy(obj, extra)
	unsigned, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := protocol.ReceiptPayload(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	obj["federation_signature"] = base64.StdEncoding.EncodeToString(ed25519.Sign(key, payload))
	if raw, err = json.MarshalIndent(obj, "", "  "); err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.VerifyReceipt(raw, key.Public().(ed25519.PublicKey)); err != nil {
		t.Fatalf("the test's receipt does not verify in Go: %v", err)
	}
	return raw
}

// tamperedReceipt changes the first participant's chain_signature of receipt raw.
func tamperedReceipt(t *testing.T, raw []byte) []byte {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	p := obj["participating_operators"].([]any)[0].(map[string]any)
	p["chain_signature"] = strings.Repeat("f", 64)
	out, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jsString is s as a JavaScript string literal.
func jsString(t *testing.T, s []byte) string {
	t.Helper()
	out, err := json.Marshal(string(s))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestPublicPageTimingAtScale loads the public page of a federation of 1,000 operators
// and 10,000 anchors in headless Chromium and logs its paint timing (for
// docs/BENCHMARKS.md; nothing is asserted about speed), after checking that the page
// shows one full page of each table and no console error.
func TestPublicPageTimingAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10,000 signed anchors")
	}
	m, _ := pageFixture(t, 1000, 10000)
	s, err := New(Options{Client: m, APIReader: m, Informers: noInformers(), Federation: types.NamespacedName{Namespace: "bench", Name: "cairn"}, RatePerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	b := browsertest.New(t, browsertest.FromEnv(os.Getenv))
	ctx := b.Page(t)
	b.Run(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible("#anchors-next"))
	rows := browsertest.Get(t, b, ctx, chromedp.Evaluate[[]int](
		`[document.querySelectorAll('#operators tbody tr').length, document.querySelectorAll('#anchors tbody tr').length]`))
	if !slices.Equal(rows, []int{pageSize, pageSize}) {
		t.Errorf("the page shows %v operators and anchors, want %d of each", rows, pageSize)
	}
	t.Logf("1,000 operators, 10,000 anchors: %v", b.Timing(t, ctx))
	b.Screenshot(t, ctx, "scale")
	b.NoConsoleErrors(t)
	b.NoExternalRequests(t)
}
