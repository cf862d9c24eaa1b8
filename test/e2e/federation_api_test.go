package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestFederationAPIEndToEnd is the federation's whole story over its HTTP API, with the
// real binary on a real API server: three organizations make chains with `cairn chain
// seal` and exports with `cairn export`, register through the challenge, submit; an admin
// asks for an anchor; each fetches its receipt from /receipts and `cairn federation
// verify` accepts it (exit 0) and refuses a tampered copy (exit 3); /federation/verify/{id}
// reports every check true. It runs on the embedded log and, when hack/rekor-up.sh's
// REKOR_URL is set (make test sets it), on the local Rekor.
func TestFederationAPIEndToEnd(t *testing.T) {
	c, kubeconfig := startAPIServer(t)
	eachLog(t, "api", func(t *testing.T, ns string, log fv1.TransparencyLog) {
		runFederationStory(t, c, kubeconfig, ns, log)
	})
}

// eachLog runs story on the embedded log and, when hack/rekor-up.sh's REKOR_URL is set
// (make test sets it), on the local Rekor, each in a namespace of its own named from
// prefix.
func eachLog(t *testing.T, prefix string, story func(t *testing.T, ns string, log fv1.TransparencyLog)) {
	t.Run("embedded log", func(t *testing.T) {
		story(t, prefix+"-embedded", fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded})
	})
	t.Run("rekor", func(t *testing.T) {
		url := localRekor(t)
		story(t, prefix+"-rekor", fv1.TransparencyLog{Type: fv1.TransparencyLogRekor, URL: url, PublicKeyPEM: rekorPublicKey(t, url)})
	})
}

// localRekor returns hack/rekor-up.sh's REKOR_URL, and skips t when it is not set,
// unless CAIRN_REQUIRE_REKOR is (make test sets both).
func localRekor(t *testing.T) string {
	t.Helper()
	url := os.Getenv("REKOR_URL")
	if url == "" {
		if os.Getenv("CAIRN_REQUIRE_REKOR") != "" {
			t.Fatal("CAIRN_REQUIRE_REKOR is set but REKOR_URL is not: run hack/rekor-up.sh")
		}
		t.Skip("REKOR_URL is not set: run hack/rekor-up.sh (make test does)")
	}
	return url
}

// startFederation creates namespace ns with the Federation "fed" on log, needing three
// participants and anchoring only on request, and runs a manager serving its API until
// stop is called or ctx ends. It returns once the API answers.
func startFederation(ctx context.Context, t *testing.T, c client.Client, kubeconfig, ns string, log fv1.TransparencyLog) (api *apiClient, fed *fv1.Federation, stop context.CancelFunc) {
	t.Helper()
	return startFederationOf(ctx, t, c, kubeconfig, ns, log, 3)
}

// startFederationOf is startFederation with a Federation that needs minParticipants.
func startFederationOf(ctx context.Context, t *testing.T, c client.Client, kubeconfig, ns string, log fv1.TransparencyLog,
	minParticipants int32) (api *apiClient, fed *fv1.Federation, stop context.CancelFunc) {
	t.Helper()
	apiAddr := freeAddresses(t, 1)[0]
	api = &apiClient{t: t, base: "http://" + apiAddr, hc: &http.Client{Timeout: 90 * time.Second}}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	fed = &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fed"}, Spec: fv1.FederationSpec{
		AnchorInterval: metav1.Duration{Duration: 24 * time.Hour}, MinParticipants: minParticipants, TransparencyLog: log, PublicURL: api.base}}
	if err := c.Create(ctx, fed); err != nil {
		t.Fatal(err)
	}
	mgrCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	startAPIManager(mgrCtx, t, kubeconfig, t.TempDir(), ns+"/fed", apiAddr)
	api.waitReady(ctx)
	return api, fed, stop
}

// runFederationStory runs the story in namespace ns with a manager of its own.
func runFederationStory(t *testing.T, c client.Client, kubeconfig, ns string, log fv1.TransparencyLog) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	api, fed, _ := startFederation(ctx, t, c, kubeconfig, ns, log)

	ops := make([]*organization, 3)
	for i := range ops {
		ops[i] = newOrganization(t, fmt.Sprintf("Org %d of %s", i, ns), 5+i)
		ops[i].register(api)
		ops[i].submit(api)
	}

	adminToken := secretValue(ctx, t, c, ns, "fed-admin", federation.AdminTokenSecretKey)
	api.do(http.MethodPost, "/federation/anchor", nil, "Bearer "+strings.Repeat("0", len(adminToken)), http.StatusUnauthorized, nil)
	var anchored struct {
		AnchorID            string   `json:"anchor_id"`
		CrossAnchorHash     string   `json:"cross_anchor_hash"`
		Participants        []string `json:"participating_operators"`
		SubmissionsAnchored int      `json:"submissions_anchored"`
	}
	api.do(http.MethodPost, "/federation/anchor", nil, "Bearer "+adminToken, http.StatusOK, &anchored)
	if len(anchored.Participants) != 3 || anchored.SubmissionsAnchored != 3 || anchored.AnchorID == "" {
		t.Fatalf("POST /federation/anchor: %+v, want 3 participants and 3 submissions anchored", anchored)
	}

	keys := t.TempDir()
	if err := c.Get(ctx, client.ObjectKeyFromObject(fed), fed); err != nil {
		t.Fatal(err)
	}
	fedKey := writeFile(t, keys, "federation.pem", []byte(fed.Status.PublicKeyPEM))
	logKeyPEM, err := federation.LogPublicKeyPEM(ctx, c, fed)
	if err != nil {
		t.Fatal(err)
	}
	logKey := writeFile(t, keys, "log.pem", []byte(logKeyPEM))
	for _, op := range ops {
		receipt := op.loggedReceipt(ctx, api, anchored.AnchorID)
		path := writeFile(t, op.dir, "receipt.json", receipt)
		if code, out := runCairn(t, "federation", "verify", path, "--federation-key", fedKey, "--log-key", logKey); code != 0 {
			t.Fatalf("cairn federation verify of %s's receipt: exit %d, want 0\n%s", op.id, code, out)
		}
		tampered := writeFile(t, op.dir, "tampered.json", tamperReceipt(t, receipt))
		if code, out := runCairn(t, "federation", "verify", tampered, "--federation-key", fedKey, "--log-key", logKey); code != 3 {
			t.Fatalf("cairn federation verify of a tampered receipt: exit %d, want 3\n%s", code, out)
		}
	}

	var verdict struct {
		AnchorID string         `json:"anchor_id"`
		Valid    bool           `json:"valid"`
		Checks   map[string]any `json:"checks"`
	}
	api.do(http.MethodGet, "/federation/verify/"+anchored.AnchorID, nil, "", http.StatusOK, &verdict)
	if !verdict.Valid || len(verdict.Checks) == 0 {
		t.Fatalf("GET /federation/verify/%s: %+v, want valid with its checks", anchored.AnchorID, verdict)
	}
	for name, v := range verdict.Checks {
		switch v := v.(type) {
		case bool:
			if !v {
				t.Errorf("GET /federation/verify/%s: check %s is false", anchored.AnchorID, name)
			}
		case []any: // operator_signatures_verified: the operator IDs
			if name != "operator_signatures_verified" || len(v) != len(ops) {
				t.Errorf("GET /federation/verify/%s: check %s is %v", anchored.AnchorID, name, v)
			}
		default:
			t.Errorf("GET /federation/verify/%s: check %s is %v", anchored.AnchorID, name, v)
		}
	}
}

// organization is one operator: its key, its chain and its export, made by the binary.
type organization struct {
	t      *testing.T
	dir    string
	org    string
	key    ed25519.PrivateKey
	pemTxt string
	id     string
	export []byte
}

// newOrganization makes a key with `cairn keygen`, seals n spans into a new chain with
// `cairn chain seal` and exports the chain with `cairn export`.
func newOrganization(t *testing.T, org string, n int) *organization {
	t.Helper()
	dir := t.TempDir()
	if code, out := runCairn(t, "keygen", "--output-dir", dir); code != 0 {
		t.Fatalf("cairn keygen: exit %d\n%s", code, out)
	}
	spansFile := writeFile(t, dir, "spans.jsonl", spanLines(0, n))
	db, export := filepath.Join(dir, "chain.db"), filepath.Join(dir, "export.json")
	secret := "--secret-hex=" + strings.Repeat("5a", 32)
	if code, out := runCairn(t, "chain", "seal", "--db", db, "--file", spansFile, secret); code != 0 {
		t.Fatalf("cairn chain seal: exit %d\n%s", code, out)
	}
	if code, out := runCairn(t, "export", "--db", db, "--sign-key", filepath.Join(dir, "private.pem"), "--output", export, secret); code != 0 {
		t.Fatalf("cairn export: exit %d\n%s", code, out)
	}
	o := &organization{t: t, dir: dir, org: org}
	o.export = readFile(t, export)
	keyPEM := readFile(t, filepath.Join(dir, "private.pem"))
	key, err := protocol.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	o.key, o.pemTxt = key, string(readFile(t, filepath.Join(dir, "public.pem")))
	o.id = protocol.OperatorID(key.Public().(ed25519.PublicKey))
	return o
}

// spanLines returns n spans, the first numbered from, one JSON object a line, as `cairn
// chain seal --file` reads them.
func spanLines(from, n int) []byte {
	var spans strings.Builder
	for i := from; i < from+n; i++ {
		start := int64(1795262400000000000) + int64(i)*int64(time.Second)
		fmt.Fprintf(&spans, `{"name":"chat","kind":"CLIENT","attributes":{"gen_ai.request.model":"m","gen_ai.usage.output_tokens":%d},`+
			`"status_code":"OK","status_description":"","start_time_ns":"%d","end_time_ns":"%d","trace_id":"%032x","span_id":"%016x"}`+"\n",
			10+i, start, start+500_000_000, i+1, i+1)
	}
	return []byte(spans.String())
}

// register registers o through a challenge.
func (o *organization) register(api *apiClient) {
	var ch struct {
		Nonce string `json:"nonce"`
	}
	api.do(http.MethodGet, "/federation/register/challenge", nil, "", http.StatusOK, &ch)
	sig, err := protocol.SignChallenge(o.key, ch.Nonce)
	if err != nil {
		o.t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"public_key_pem": o.pemTxt, "org_name": o.org, "nonce": ch.Nonce,
		"nonce_signature": sig, "proof_of_possession": protocol.SignRegistration(o.key, o.org)})
	var reg struct {
		OperatorID string `json:"operator_id"`
	}
	api.do(http.MethodPost, "/federation/register", body, "", http.StatusOK, &reg)
	if reg.OperatorID != o.id {
		o.t.Fatalf("registered as %q, want %s", reg.OperatorID, o.id)
	}
}

// submit sends o's export with a body-bound token and expects it accepted.
func (o *organization) submit(api *apiClient) {
	var sub struct {
		SubmissionID       string `json:"submission_id"`
		Verified           bool   `json:"verified"`
		ContinuityVerified bool   `json:"continuity_verified"`
	}
	api.do(http.MethodPost, "/federation/submit", o.export, o.token(o.export), http.StatusOK, &sub)
	if sub.SubmissionID == "" || !sub.Verified || !sub.ContinuityVerified {
		o.t.Fatalf("POST /federation/submit: %+v, want a verified submission", sub)
	}
}

// token is o's bearer token for body.
func (o *organization) token(body []byte) string {
	tok, err := protocol.SignToken(o.key, protocol.BodyNonce(time.Now(), body))
	if err != nil {
		o.t.Fatal(err)
	}
	return "Bearer " + tok
}

// loggedReceipt fetches o's receipt of anchorID from /receipts until it carries its log
// proof.
func (o *organization) loggedReceipt(ctx context.Context, api *apiClient, anchorID string) []byte {
	for {
		var page struct {
			Receipts []json.RawMessage `json:"receipts"`
		}
		api.do(http.MethodGet, "/receipts", nil, o.token(nil), http.StatusOK, &page)
		for _, raw := range page.Receipts {
			var r struct {
				AnchorID string          `json:"anchor_id"`
				Entry    json.RawMessage `json:"tlog_entry"`
			}
			if err := json.Unmarshal(raw, &r); err != nil {
				o.t.Fatal(err)
			}
			if r.AnchorID == anchorID && len(r.Entry) > 0 && string(r.Entry) != "null" {
				return raw
			}
		}
		select {
		case <-ctx.Done():
			o.t.Fatalf("no logged receipt of %s for %s: %d receipts", anchorID, o.id, len(page.Receipts))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tamperReceipt changes the first participant's chain signature.
func tamperReceipt(t *testing.T, raw []byte) []byte {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	p := r["participating_operators"].([]any)[0].(map[string]any)
	p["chain_signature"] = strings.Repeat("0", 64)
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// apiClient calls the federation API and decodes its answers.
type apiClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

// do sends body (nil: none) with the Authorization header auth ("" none), requires status
// and decodes the answer into out.
func (a *apiClient) do(method, path string, body []byte, auth string, status int, out any) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.base+path, bytes.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	if resp.StatusCode != status {
		a.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, got, status)
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			a.t.Fatalf("%s %s: %v in %s", method, path, err, got)
		}
	}
}

// waitReady waits until the API answers /federation/status with 200: the manager is up
// and the Federation has its key.
func (a *apiClient) waitReady(ctx context.Context) {
	a.t.Helper()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/federation/status", nil)
		if resp, err := a.hc.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			a.t.Fatal("the federation API never answered /federation/status with 200")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitDown waits until nothing answers at the API's address.
func (a *apiClient) waitDown(ctx context.Context) {
	a.t.Helper()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/federation/status", nil)
		resp, err := a.hc.Do(req)
		if err != nil {
			return
		}
		_ = resp.Body.Close()
		select {
		case <-ctx.Done():
			a.t.Fatal("the federation API still answers")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startAPIManager runs `cairn manager` serving the API of federation on apiAddr until ctx
// ends.
func startAPIManager(ctx context.Context, t *testing.T, kubeconfig, logDir, federation, apiAddr string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, cairnBin, "manager", "--kubeconfig", kubeconfig, "--log-dir", logDir,
		"--metrics-bind-address", "0", "--health-probe-bind-address", freeAddresses(t, 1)[0],
		"--federation-bind-address", apiAddr, "--federation", federation)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("manager printed:\n%s", out.String())
		}
	})
}

// runCairn runs the binary and returns its exit code and output.
func runCairn(t *testing.T, args ...string) (int, string) {
	t.Helper()
	out, err := exec.Command(cairnBin, args...).CombinedOutput()
	if err != nil {
		return exitCode(err), string(out)
	}
	return 0, string(out)
}

// secretValue reads key of Secret ns/name.
func secretValue(ctx context.Context, t *testing.T, c client.Client, ns, name, key string) string {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data[key])
}

// rekorPublicKey fetches the local Rekor's public key, which the Federation pins.
func rekorPublicKey(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(url, "/")+"/api/v1/log/publicKey", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/x-pem-file") // else Rekor quotes it as a JSON string
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Rekor public key: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
