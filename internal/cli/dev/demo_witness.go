package dev

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	federationv1alpha1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/manager"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// demoWitnessPolicy is the witness policy the auditor pins, in its directory.
const demoWitnessPolicy = "witnesses.policy"

// witnessesAnswer is the part of GET /federation/log/witnesses the demo reads.
type witnessesAnswer struct {
	LogVerifierKey string `json:"log_verifier_key"`
	Policy         string `json:"policy"`
	Quorum         string `json:"quorum"`
}

// witnesses is step 7: the receipt's log proof carries the members' witnesses'
// cosignatures, and a checkpoint that contradicts one they cosigned is refused.
func (s *demoStory) witnesses(ctx context.Context) (string, error) {
	var ws witnessesAnswer
	if err := s.getJSON(ctx, "/federation/log/witnesses", &ws); err != nil {
		return "", err
	}
	if ws.Policy == "" {
		return "the Federation names no witnesses (cairn dev --witness-addrs= runs none): nothing to show", nil
	}
	if err := os.WriteFile(filepath.Join(s.auditor, demoWitnessPolicy), []byte(ws.Policy), 0o644); err != nil {
		return "", err
	}
	s.sh.note("auditor", "pins the federation's witness policy (GET /federation/log/witnesses), which asks %s, in %s", ws.Quorum, demoWitnessPolicy)
	o := s.orgs[0]
	policy := filepath.Join("..", "auditor", demoWitnessPolicy)
	verify := []string{"federation", "verify", "--config-dir", demoConfigDir, s.receipt(), "--witness-policy", policy}
	if err := s.waitWitnessedReceipt(ctx, o, verify); err != nil {
		return "", err
	}
	res, err := s.sh.must(ctx, o.dir, o.slug, verify...)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(res.stdout, "\n") {
		if strings.Contains(line, "witnesses") {
			s.sh.output(line)
		}
	}
	s.sh.output(res.lastLine())

	answer, err := s.forgeSplitView(ctx, ws)
	if err != nil {
		return "", err
	}
	s.sh.note("federation", "signs, with its log's key, another checkpoint of the size its first witness last cosigned, with another root, and offers it")
	s.sh.output(answer)
	return "the receipt's log proof is cosigned by the members' witnesses, and a witness refuses a checkpoint that contradicts one it cosigned, " +
		"keeping both: a federation cannot show one member a log and an auditor another", nil
}

// waitWitnessedReceipt fetches o's receipts again until verify (args) passes: an anchor's
// proof is renewed once its checkpoint has the witnesses' cosignatures.
func (s *demoStory) waitWitnessedReceipt(ctx context.Context, o *demoOrg, verify []string) error {
	ctx, cancel := context.WithTimeout(ctx, demoLogWait)
	defer cancel()
	receipts := []string{"federation", "receipts", "--config-dir", demoConfigDir, "--output-dir", demoReceipts}
	for {
		if _, err := s.sh.quiet(ctx, o.dir, receipts...); err != nil {
			return err
		}
		res, err := s.sh.quiet(ctx, o.dir, verify...)
		if err != nil {
			return err
		}
		if res.code == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s's receipt of %s never met the witness policy: %s", o.name, s.anchorID, res.errorLine())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// forgeSplitView plays a federation that shows one member another tree: it signs, with its
// log's key (read from its Secret, as the federation's operator can), a checkpoint of the
// size the policy's first witness last cosigned with another root, offers it to that
// witness, and returns the first line of its refusal and how much evidence it keeps.
func (s *demoStory) forgeSplitView(ctx context.Context, ws witnessesAnswer) (string, error) {
	p, err := witness.ParsePolicy([]byte(ws.Policy))
	if err != nil {
		return "", err
	}
	target := p.Witnesses[0]
	signer, err := s.logSigner(ctx)
	if err != nil {
		return "", err
	}
	origin, _, _ := strings.Cut(ws.LogVerifierKey, "+")
	size, err := witnessSize(ctx, target.URL, signer, origin)
	if err != nil {
		return "", err
	}
	root := make([]byte, 32)
	if _, err := rand.Read(root); err != nil {
		return "", err
	}
	forged, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n%d\n%s\n", origin, size, base64.StdEncoding.EncodeToString(root))}, signer)
	if err != nil {
		return "", err
	}
	status, body, err := postCheckpoint(ctx, target.URL, &witness.AddCheckpoint{OldSize: size, Checkpoint: forged})
	if err != nil {
		return "", err
	}
	if status != http.StatusConflict || !strings.Contains(body, "split view") {
		return "", fmt.Errorf("witness %s took a checkpoint that contradicts the one it cosigned: HTTP %d %s", target.Key.Name, status, body)
	}
	first, _, _ := strings.Cut(body, "\n")
	return fmt.Sprintf("%s refused it, HTTP 409: %s (both checkpoints in its answer and kept: GET %s/conflicts/%s)", target.Key.Name, first, target.URL, origin), nil
}

// logSigner reads the Federation's embedded log key from its Secret.
func (s *demoStory) logSigner(ctx context.Context) (note.Signer, error) {
	c, err := client.New(s.t.kube, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		return nil, err
	}
	var fed federationv1alpha1.Federation
	if err := c.Get(ctx, s.t.federation, &fed); err != nil {
		return nil, err
	}
	var sec corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: federation.LogKeySecretName(&fed)}, &sec); err != nil {
		return nil, err
	}
	return note.NewSigner(strings.TrimSpace(string(sec.Data[federation.LogKeySecretKey])))
}

// witnessSize asks a witness the size of the latest checkpoint of the log it cosigned, as
// C2SP tlog-witness lets a client: a checkpoint the log signed, sent from size 0, is
// answered 409 with that size.
func witnessSize(ctx context.Context, url string, signer note.Signer, origin string) (uint64, error) {
	probe, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n1\n%s\n", origin, base64.StdEncoding.EncodeToString(make([]byte, 32)))}, signer)
	if err != nil {
		return 0, err
	}
	status, body, err := postCheckpoint(ctx, url, &witness.AddCheckpoint{Checkpoint: probe})
	if err != nil {
		return 0, err
	}
	size, perr := strconv.ParseUint(strings.TrimSpace(body), 10, 64)
	if status != http.StatusConflict || perr != nil {
		return 0, fmt.Errorf("witness at %s did not say what it cosigned: HTTP %d %s", url, status, body)
	}
	return size, nil
}

// postCheckpoint sends r to the witness at url and returns its answer.
func postCheckpoint(ctx context.Context, url string, r *witness.AddCheckpoint) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/add-checkpoint", bytes.NewReader(r.Marshal()))
	if err != nil {
		return 0, "", err
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(body), err
}

// getJSON reads path of the federation API into v.
func (s *demoStory) getJSON(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.t.federationURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}
