package e2e

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestOneMemberCannotStopTheFederation runs the availability attacks of the federation's
// second attack review against a fresh `cairn dev`, driven only as its users drive it:
// the federation API, the cairn CLI, and kubectl as a namespace user. After each attack
// the honest operator's next segment must be anchored by the next run.
func TestOneMemberCannotStopTheFederation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts cairn dev")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	work := t.TempDir()
	dev := startDev(ctx, t, work, "cairn dev: ready")
	kubeconfig := filepath.Join(work, ".cairn-dev", "kubeconfig")
	api := &apiClient{t: t, base: "http://" + dev.federationAddr, hc: &http.Client{Timeout: 90 * time.Second}}
	api.waitReady(ctx)
	token, err := base64.StdEncoding.DecodeString(kubectl(t, kubeconfig, "get", "secret", "-n", "default", "cairn-admin",
		"-o", "jsonpath={.data.token}"))
	if err != nil {
		t.Fatal(err)
	}
	admin := "Bearer " + string(token)
	alice := namespaceUser(t, kubeconfig, "alice", "default")

	honest := newOperatorMachine(t, "Honest Org")
	honest.mustRun("federation", "register", "--service", api.base, "--org", honest.org,
		"--public-key", honest.path("keys/public.pem"), "--private-key", honest.path("keys/private.pem"))
	honestID := operatorIDOf(t, honest)
	// nextSegment has the honest operator seal and submit its next segment and requires
	// that the next run binds it: the attack before it stalled nothing.
	nextSegment := func(after string) string {
		t.Helper()
		honest.seal(3)
		wantOutput(t, honest.mustRun("federation", "submit", "--db", honest.db), "continuity verified true")
		var run anchorRun
		api.do(http.MethodPost, "/federation/anchor", nil, admin, http.StatusOK, &run)
		for _, p := range run.ParticipatingOperators {
			if p.OperatorID == honestID && p.LastSeq == int64(honest.sealed) {
				return run.AnchorID
			}
		}
		t.Fatalf("after %s: the run %s (%+v) does not bind the honest operator at seq %d", after, run.AnchorID, run.ParticipatingOperators, honest.sealed)
		return ""
	}
	nextSegment("registering")

	t.Run("one chain signature twice", func(t *testing.T) {
		mallory := newOperatorMachine(t, "Mallory")
		mallory.mustRun("federation", "register", "--service", api.base, "--org", mallory.org,
			"--public-key", mallory.path("keys/public.pem"), "--private-key", mallory.path("keys/private.pem"))
		key := privateKeyOf(t, mallory)
		x := strings.Repeat("ab", 32) // the federation holds no HMAC secret: it cannot tell
		for _, seq := range []int64{1, 2} {
			export := headerOnlyExport(t, key, seq, x)
			api.do(http.MethodPost, "/federation/submit", export, bearer(t, key, export), http.StatusOK, nil)
		}
		nextSegment("Mallory's exports")
		nextSegment("the run that bound them") // the run after the one that bound Mallory
	})

	t.Run("a namespace user deletes the last anchor", func(t *testing.T) {
		last := nextSegment("nothing")
		out := kubectlFails(t, kubeconfig, "--as", alice, "delete", "crossanchor", "-n", "default", last, "--wait=false")
		wantOutput(t, out, "only the federation manager")
		out = kubectlFails(t, kubeconfig, "--as", alice, "patch", "crossanchor", "-n", "default", last, "--type=merge",
			"-p", `{"metadata":{"ownerReferences":null,"finalizers":[]}}`)
		wantOutput(t, out, "denied")
		kubectl(t, kubeconfig, "get", "crossanchor", "-n", "default", last)
		nextSegment("the deletion")
	})

	t.Run("a second Federation", func(t *testing.T) {
		second := writeFile(t, work, "second.yaml", []byte("apiVersion: federation.cairn.dev/v1alpha1\nkind: Federation\n"+
			"metadata:\n  name: second\n  namespace: default\nspec:\n  anchorInterval: 1m\n  transparencyLog:\n    type: embedded\n"))
		wantOutput(t, kubectlFails(t, kubeconfig, "--as", alice, "create", "-f", second), "already has Federation cairn")
		nextSegment("the second Federation")
	})

	t.Run("one address registers past its limit", func(t *testing.T) {
		refused := false
		for i := range 12 {
			o := newOperatorMachine(t, fmt.Sprintf("Flood %d", i))
			code, out := o.run("federation", "register", "--service", api.base, "--org", o.org,
				"--public-key", o.path("keys/public.pem"), "--private-key", o.path("keys/private.pem"))
			if code != 0 {
				wantOutput(t, out, "registration_rate_limited")
				refused = true
				break
			}
		}
		if !refused {
			t.Fatal("one address registered 12 operators in a moment, past the limit of 10 an hour")
		}
		nextSegment("the flood")
	})

	t.Run("anonymous reads", func(t *testing.T) {
		// As fast as one client can: the per-address limit answers 429 at some point, and
		// the reads cost a page each, not the store (webhook's counting specs).
		for i := 0; ; i++ {
			path := []string{"/federation/status", "/federation/operator/" + honestID}[i%2]
			resp, err := api.hc.Get(api.base + path)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests {
				wait, err := time.ParseDuration(resp.Header.Get("Retry-After") + "s")
				if err != nil {
					t.Fatalf("429 with Retry-After %q", resp.Header.Get("Retry-After"))
				}
				time.Sleep(wait)
				break
			}
			if resp.StatusCode != http.StatusOK || i > 10_000 {
				t.Fatalf("GET %s: %d after %d reads", path, resp.StatusCode, i)
			}
		}
		nextSegment("the reads")
	})
}

// anchorRun is what POST /federation/anchor answers of a run.
type anchorRun struct {
	AnchorID               string `json:"anchor_id"`
	ParticipatingOperators []struct {
		OperatorID string `json:"operator_id"`
		LastSeq    int64  `json:"last_seq"`
	} `json:"participant_details"`
}

// namespaceUser gives user the rights a namespace's users have on the federation's
// kinds in ns (all verbs, as a namespace admin's role would) and returns the name
// kubectl impersonates.
func namespaceUser(t *testing.T, kubeconfig, user, ns string) string {
	t.Helper()
	rbac := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: %[1]s, namespace: %[2]s}
rules:
- apiGroups: ["federation.cairn.dev"]
  resources: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: %[1]s, namespace: %[2]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: %[1]s}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: %[1]s}
`, user, ns)
	kubectl(t, kubeconfig, "apply", "-f", writeFile(t, t.TempDir(), "rbac.yaml", []byte(rbac)))
	return user
}

// privateKeyOf reads m's private key, as `cairn keygen` wrote it.
func privateKeyOf(t *testing.T, m *operatorMachine) ed25519.PrivateKey {
	t.Helper()
	key, err := protocol.ParsePrivateKeyPEM(readFile(t, m.path("keys/private.pem")))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// operatorIDOf is m's operator ID.
func operatorIDOf(t *testing.T, m *operatorMachine) string {
	t.Helper()
	return protocol.OperatorID(privateKeyOf(t, m).Public().(ed25519.PublicKey))
}

// headerOnlyExport is an export of the single entry seq of a chain, without its entries,
// with chain signature cs, signed by key: what a member can send whatever its chain holds.
func headerOnlyExport(t *testing.T, key ed25519.PrivateKey, seq int64, cs string) []byte {
	t.Helper()
	hash := func(n int64) string {
		if n == 0 {
			return protocol.GenesisPrevHash
		}
		return strings.Repeat(fmt.Sprintf("%02x", n), 32)
	}
	h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion,
		ExportedAt: time.Now().UTC().Truncate(time.Second).Format(time.RFC3339), EntryCount: seq, FirstSeq: seq, LastSeq: seq,
		FirstPrevHash: hash(seq - 1), LastHMACHash: hash(seq), ChainSignature: cs, EntriesRoot: strings.Repeat("cd", 32)}
	signed, err := h.SignedBytes()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := json.Marshal(protocol.EnvelopeSignature{Algorithm: protocol.SignatureAlgorithm, PublicKey: string(pub),
		Value: base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed))})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Concat(signed[:len(signed)-1], []byte(`,"signature":`), sig, []byte("}"))
}

// bearer is the body-bound token of key's operator for body.
func bearer(t *testing.T, key ed25519.PrivateKey, body []byte) string {
	t.Helper()
	tok, err := protocol.SignToken(key, protocol.BodyNonce(time.Now(), body))
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + tok
}
