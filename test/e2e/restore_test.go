package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	tclient "github.com/transparency-dev/tessera/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The commands of docs/OPERATIONS.md "Backup and restore", as an operator types them.
const (
	// secretsBackup writes the federation's Secrets, without the fields the API server
	// sets, to the file $1.
	secretsBackup = `"$KUBECTL" get secret -n default -l federation.cairn.dev/federation=cairn -o yaml | grep -vE '^ +(uid|resourceVersion|creationTimestamp):' > "$1"`
	// operatorsBackup writes the FederationOperators the same way (status is dropped on
	// create: it is a subresource).
	operatorsBackup = `"$KUBECTL" get federationoperators -n default -o yaml | grep -vE '^ +(uid|resourceVersion|creationTimestamp):' > "$1"`
	// recordsBackup keeps the CrossAnchors and Submissions for the record (auditors; they
	// are not restored) and the last anchor's ID in $2.
	recordsBackup = `"$KUBECTL" get crossanchors,submissions -n default -o yaml > "$1" &&
"$KUBECTL" get crossanchors -n default --sort-by=.metadata.name -o jsonpath='{.items[-1:].metadata.name}' > "$2"`
	// federationRestore applies the Federation $1 from Git, told to name its anchors
	// after the last one in $2.
	federationRestore = `"$KUBECTL" annotate --local -f "$1" federation.cairn.dev/anchors-after="$(cat "$2")" -o yaml | "$KUBECTL" apply -f -`
)

// TestRestoreIntoFreshDev backs a federation up and restores it into a fresh `cairn dev`,
// in the order docs/OPERATIONS.md gives: the Secrets and the log's directory first, the
// Federation (from Git) last, then the operators. Federation A: three operators register,
// submit and are anchored; the federation key rotates; they submit and are anchored
// again; every receipt is fetched. Three more operators register under the first key,
// and under the second one rotates its key, one is suspended through the API and one
// withdraws. A is backed up and stopped. Federation B, restored, presents the same keys
// (the operators' pins hold), every earlier receipt verifies offline, and `cairn
// federation audit` re-reads each anchor's log entry from B's log; every verdict holds
// (the rotated-out key does not register again, the suspension and the withdrawal stay);
// a new anchor in B goes into the same log, consistent with A's last checkpoint. Then the
// attack side: a federation restored with the log but without its key Secret, and then
// with another key, neither opens the log nor re-signs it, and says so.
func TestRestoreIntoFreshDev(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// One address for A, B and C in turn: a restored federation keeps its URL, and the
	// operators' pins are per address.
	apiAddr := freeAddresses(t, 1)[0]
	api := &apiClient{t: t, base: "http://" + apiAddr, hc: &http.Client{Timeout: 90 * time.Second}}
	git, backup := t.TempDir(), t.TempDir()
	devFlags := []string{"--serve-addr", "0", "--create-federation=false", "--federation-bind-address", apiAddr}

	// Federation A.
	workA := t.TempDir()
	devA := startDev(ctx, t, workA, "cairn dev: ready", devFlags...)
	kubeA := filepath.Join(workA, ".cairn-dev", "kubeconfig")
	kubectl(t, kubeA, "apply", "-f", writeFile(t, git, "federation.yaml", federationManifest(api.base, "")))
	api.waitReady(ctx)
	orgs := make([]*operatorMachine, 3)
	for i := range orgs {
		orgs[i] = newOperatorMachine(t, fmt.Sprintf("Org %d", i))
		orgs[i].mustRun("federation", "register", "--service", api.base, "--org", orgs[i].org,
			"--public-key", orgs[i].path("keys/public.pem"), "--private-key", orgs[i].path("keys/private.pem"))
	}
	drill := newVerdictDrill(t, api.base) // restore_verdicts_test.go
	token := adminTokenFromKubectl(t, kubeA)
	first := anchorRound(ctx, api, token, orgs, 5, "first.json")
	statusA := federationStatus(t, api)
	keys := map[string]string{first: writeFile(t, git, "federation-1.pem", []byte(statusA.FederationPublicKey))}
	logKey, err := protocol.ParseLogPublicKeyPEM([]byte(statusA.TLogPublicKey))
	if err != nil {
		t.Fatal(err)
	}

	// The federation key rotates (spec.signingKeySecretRef names a new Secret, in Git);
	// the operators pin the new key, as docs/OPERATIONS.md tells them to.
	kubectl(t, kubeA, "apply", "-f", writeFile(t, git, "federation.yaml", federationManifest(api.base, "cairn-signing-key-2")))
	waitFor(ctx, t, "the federation key rotation", "2", func() string {
		return fmt.Sprint(len(strings.Fields(kubectl(t, kubeA, "get", "fed", "cairn", "-o", "jsonpath={.status.keyHistory[*].fingerprint}"))))
	})
	for _, o := range append(orgs, drill.machines()...) {
		o.mustRun("federation", "status", "--trust-new-key")
	}
	// Under the new key, the federation rotates one drill operator's key, suspends one
	// through the API and takes the third's withdrawal.
	drill.decide(api, token)
	second := anchorRound(ctx, api, token, orgs, 3, "second.json", "--since", first)
	keys[second] = writeFile(t, git, "federation-2.pem", []byte(federationStatus(t, api).FederationPublicKey))
	lastA := readCheckpoint(ctx, t, api, logKey)

	// The backup, then A stops.
	shell(t, kubeA, secretsBackup, filepath.Join(backup, "secrets.yaml"))
	shell(t, kubeA, operatorsBackup, filepath.Join(backup, "operators.yaml"))
	shell(t, kubeA, recordsBackup, filepath.Join(backup, "records.yaml"), filepath.Join(backup, "last-anchor"))
	if got := string(readFile(t, filepath.Join(backup, "last-anchor"))); got != second {
		t.Fatalf("the backup's last anchor is %q, want %s", got, second)
	}
	devA.interrupt(t)
	api.waitDown(ctx)
	copyTree(t, filepath.Join(workA, ".cairn-dev", "tlog", "default", "cairn"), filepath.Join(backup, "tlog"))

	// Federation B: a fresh cairn dev, restored.
	workB := t.TempDir()
	devB := startDev(ctx, t, workB, "cairn dev: ready", devFlags...)
	kubeB := filepath.Join(workB, ".cairn-dev", "kubeconfig")
	kubectl(t, kubeB, "apply", "-f", filepath.Join(backup, "secrets.yaml"))
	copyTree(t, filepath.Join(backup, "tlog"), filepath.Join(workB, ".cairn-dev", "tlog", "default", "cairn"))
	shell(t, kubeB, federationRestore, filepath.Join(git, "federation.yaml"), filepath.Join(backup, "last-anchor"))
	kubectl(t, kubeB, "apply", "-f", filepath.Join(backup, "operators.yaml"))
	api.waitReady(ctx)
	waitFor(ctx, t, "B's Federation to be Ready with its log", "True True", func() string {
		return kubectl(t, kubeB, "get", "fed", "cairn", "-o",
			`jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="LogReachable")].status}`)
	})
	statusB := federationStatus(t, api)
	if statusB.FederationPublicKey != string(readFile(t, keys[second])) || statusB.TLogPublicKey != statusA.TLogPublicKey {
		t.Fatalf("B presents other keys than A did:\nB: %+v\nA's last federation key:\n%s\nA's log key:\n%s", statusB, readFile(t, keys[second]), statusA.TLogPublicKey)
	}
	for _, o := range orgs {
		wantOutput(t, o.mustRun("federation", "status"), "pinned") // exit 0: the pins hold
		for anchor, exports := range map[string]string{first: "first.json", second: "second.json"} {
			receipt := filepath.Join(o.path("receipts"), anchor+".json")
			wantOutput(t, o.mustRun("federation", "verify", receipt, "--federation-key", keys[anchor]), "MATCH")
			out := o.mustRun(auditArgs(receipt, keys[anchor], api.base, orgs, exports)...)
			wantOutput(t, out, "AUDIT PASSED")
			if !regexp.MustCompile(`(?m)^  ok  +tlog_entry +log \w+ holds the anchor at index \d+, proved against its checkpoint`).MatchString(out) {
				t.Fatalf("%s: audit of %s did not read its log entry from B's log:\n%s", o.org, anchor, out)
			}
		}
	}

	// Every verdict the federation gave before the backup holds.
	drill.check(ctx, t, kubeB, api.base)

	// B anchors again, into the same log. It holds no Submissions, so each operator's
	// next submission starts its chain again at seq 1.
	for _, o := range orgs {
		waitFor(ctx, t, o.org+" registered again in B", "Active", func() string {
			return kubectl(t, kubeB, "get", "fo", "-o", fmt.Sprintf(`jsonpath={.items[?(@.spec.orgName==%q)].status.phase}`, o.org))
		})
	}
	third := anchorRound(ctx, api, token, orgs, 2, "third.json", "--since", second)
	if third == first || third == second {
		t.Errorf("B named its anchor %s, an ID A gave another anchor", third)
	}
	lastB := readCheckpoint(ctx, t, api, logKey)
	verifyConsistency(ctx, t, api, lastA, lastB)
	devB.interrupt(t)
	api.waitDown(ctx)

	// Federation C: the log restored without its key Secret, then with another key.
	workC := t.TempDir()
	devC := startDev(ctx, t, workC, "cairn dev: ready", devFlags...)
	kubeC := filepath.Join(workC, ".cairn-dev", "kubeconfig")
	kubectl(t, kubeC, "apply", "-f", filepath.Join(backup, "secrets.yaml"))
	kubectl(t, kubeC, "delete", "secret", "cairn-log-key")
	logDirC := filepath.Join(workC, ".cairn-dev", "tlog", "default", "cairn")
	copyTree(t, filepath.Join(backup, "tlog"), logDirC)
	checkpoint := readFile(t, filepath.Join(logDirC, "checkpoint"))
	kubectl(t, kubeC, "apply", "-f", filepath.Join(git, "federation.yaml"))
	refusedLoudly(ctx, t, kubeC, fv1.ReasonLogKeyMissing)
	kubectlFails(t, kubeC, "get", "secret", "cairn-log-key") // no key was generated
	if code, out := orgs[0].run("federation", "status"); code != 1 || !strings.Contains(out, "federation_not_ready") {
		t.Errorf("status of a federation whose log has no key: exit %d, want 1 with federation_not_ready\n%s", code, out)
	}
	otherKey, err := tlog.GenerateLogKey("cairn.federation/default/cairn")
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, kubeC, "create", "secret", "generic", "cairn-log-key", "--from-literal=log.key="+otherKey)
	kubectl(t, kubeC, "label", "secret", "cairn-log-key", "federation.cairn.dev/federation=cairn")
	kubectl(t, kubeC, "annotate", "fed", "cairn", "restore.example/poke=1") // Secrets are not watched
	refusedLoudly(ctx, t, kubeC, fv1.ReasonLogKeyMismatch)
	if code, out := orgs[0].run("federation", "status"); code != 3 || !strings.Contains(out, "--trust-new-key") {
		t.Errorf("status of a federation presenting another log key: exit %d, want 3\n%s", code, out)
	}
	if now := readFile(t, filepath.Join(logDirC, "checkpoint")); string(now) != string(checkpoint) {
		t.Errorf("the log was re-signed under a key its receipts do not name:\nwas %q\nnow %q", checkpoint, now)
	}
	devC.interrupt(t)
}

// federationManifest is the Federation kept in Git: anchors only on request, with the key
// in signingKey (empty: the default Secret).
func federationManifest(publicURL, signingKey string) []byte {
	m := fmt.Sprintf(`apiVersion: federation.cairn.dev/v1alpha1
kind: Federation
metadata:
  name: cairn
  namespace: default
spec:
  anchorInterval: 24h
  minParticipants: 1
  publicURL: %s
  transparencyLog:
    type: embedded
`, publicURL)
	if signingKey != "" {
		m += "  signingKeySecretRef:\n    name: " + signingKey + "\n"
	}
	return []byte(m)
}

// anchorRound has each operator seal n spans and submit them (keeping the export in
// export), asks for an anchor, and waits until each holds its logged receipt (fetched
// with the receipts flags extra). It returns the anchor's ID.
func anchorRound(ctx context.Context, api *apiClient, token string, orgs []*operatorMachine, n int, export string, extra ...string) string {
	api.t.Helper()
	for _, o := range orgs {
		o.seal(n)
		wantOutput(api.t, o.mustRun("federation", "submit", "--db", o.db, "--save-export", o.path(export)), "accepted sub-")
	}
	var anchored struct {
		Status   string `json:"status"`
		AnchorID string `json:"anchor_id"`
	}
	api.do(http.MethodPost, "/federation/anchor", nil, "Bearer "+token, http.StatusOK, &anchored)
	if anchored.Status != "anchored" {
		api.t.Fatalf("POST /federation/anchor: %+v", anchored)
	}
	for _, o := range orgs {
		o.loggedReceiptFile(ctx, anchored.AnchorID, extra...)
	}
	return anchored.AnchorID
}

// statusAnswer is the part of GET /federation/status a restore must keep.
type statusAnswer struct {
	FederationPublicKey string `json:"federation_public_key"`
	TLogPublicKey       string `json:"tlog_public_key"`
}

func federationStatus(t *testing.T, api *apiClient) statusAnswer {
	t.Helper()
	var st statusAnswer
	api.do(http.MethodGet, "/federation/status", nil, "", http.StatusOK, &st)
	return st
}

// adminTokenFromKubectl reads the admin token as docs/OPERATIONS.md says.
func adminTokenFromKubectl(t *testing.T, kubeconfig string) string {
	t.Helper()
	token, err := base64.StdEncoding.DecodeString(kubectl(t, kubeconfig, "get", "secret", "cairn-admin", "-o", "jsonpath={.data.token}"))
	if err != nil {
		t.Fatal(err)
	}
	return string(token)
}

// shell runs a documented command with KUBECTL (and KUBECONFIG) set and args as $1....
func shell(t *testing.T, kubeconfig, script string, args ...string) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"-o", "pipefail", "-c", script, "backup"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL="+filepath.Join(assetsDir(t), "kubectl"), "KUBECONFIG="+kubeconfig)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// copyTree copies a directory as `cp -a` does: the documented way to back up and restore
// the embedded log's directory on one machine.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", from, to, err, out)
	}
}

// auditArgs audits receipt with the exports named export of every operator, under the
// federation key key, reading the log from the federation at base.
func auditArgs(receipt, key, base string, orgs []*operatorMachine, export string) []string {
	args := []string{"federation", "audit", "--receipt", receipt, "--federation-key", key, "--log", base + "/federation/log"}
	for _, o := range orgs {
		args = append(args, "--export", o.path(export))
	}
	return args
}

// readCheckpoint fetches the federation's log checkpoint and verifies it under key.
func readCheckpoint(ctx context.Context, t *testing.T, api *apiClient, key any) *protocol.Checkpoint {
	t.Helper()
	f := logFetcher(t, api)
	raw, err := f.ReadCheckpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := protocol.OpenCheckpoint(raw, key)
	if err != nil {
		t.Fatalf("checkpoint %q: %v", raw, err)
	}
	return cp
}

func logFetcher(t *testing.T, api *apiClient) *tclient.HTTPFetcher {
	t.Helper()
	base, err := url.Parse(api.base + "/federation/log/")
	if err != nil {
		t.Fatal(err)
	}
	f, err := tclient.NewHTTPFetcher(base, api.hc)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// verifyConsistency proves, from the log's tiles, that newer extends older.
func verifyConsistency(ctx context.Context, t *testing.T, api *apiClient, older, newer *protocol.Checkpoint) {
	t.Helper()
	if newer.Origin != older.Origin || newer.Size <= older.Size {
		t.Fatalf("the log after the restore (%s, %d entries) does not extend the one before (%s, %d entries)",
			newer.Origin, newer.Size, older.Origin, older.Size)
	}
	pb, err := tclient.NewProofBuilder(ctx, newer.Size, logFetcher(t, api).ReadTile)
	if err != nil {
		t.Fatal(err)
	}
	hashes, err := pb.ConsistencyProof(ctx, older.Size, newer.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, older.Size, newer.Size, hashes, older.Root, newer.Root); err != nil {
		t.Fatalf("the log after the restore is not consistent with the one before: %v", err)
	}
}

// refusedLoudly waits until the Federation says, in its conditions and in a Warning
// Event, that its log stays closed for reason.
func refusedLoudly(ctx context.Context, t *testing.T, kubeconfig, reason string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	waitFor(ctx, t, "the Federation to refuse its log", "False/"+reason+" False/"+reason, func() string {
		return kubectl(t, kubeconfig, "get", "fed", "cairn", "-o",
			`jsonpath={.status.conditions[?(@.type=="LogReachable")].status}/{.status.conditions[?(@.type=="LogReachable")].reason} `+
				`{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}`)
	})
	waitFor(ctx, t, "a Warning Event "+reason, "true", func() string {
		events := kubectl(t, kubeconfig, "get", "events", "--field-selector", "involvedObject.kind=Federation,type=Warning", "-o", "jsonpath={.items[*].reason}")
		return fmt.Sprint(strings.Contains(events, reason))
	})
}
