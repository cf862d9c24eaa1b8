package webhook

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// The embedded log's checkpoint as its witnesses cosigned it (the controllers' witnessing
// loop writes tlog.CosignedCheckpointFile beside the log): served at /checkpoint with the
// cosignatures it has, described at /witnesses, shown on the public page. Nothing the file
// holds is shown unless it verifies: the log's signature under the log's key, each
// cosignature under the policy's keys.

// witnessRow is one witness of the policy.
type witnessRow struct {
	Name       string `json:"name" doc:"The witness's name in the Federation's policy."`
	KeyName    string `json:"key_name" doc:"The name its key signs under."`
	URL        string `json:"url" doc:"Where the federation sends it checkpoints (<url>/add-checkpoint)."`
	Cosigned   bool   `json:"cosigned" doc:"Whether its cosignature of the checkpoint is here and verifies."`
	CosignedAt string `json:"cosigned_at,omitempty" doc:"When it cosigned (its cosignature's time), RFC 3339."`
}

// witnessesResponse answers GET /federation/log/witnesses.
type witnessesResponse struct {
	LogVerifierKey string       `json:"log_verifier_key" doc:"The embedded log's signed-note verifier key, <origin>+<hash>+<key>: what a member's witness names the log by (cairn witness serve --log)."`
	Policy         string       `json:"policy" doc:"The Federation's witness policy in the text form cairn federation verify --witness-policy reads; empty when it has none."`
	Quorum         string       `json:"quorum" doc:"What the policy asks, in words, e.g. 2 of (a, b, c); empty without a policy."`
	Checkpoint     string       `json:"checkpoint" doc:"The log's latest checkpoint with the cosignatures it has, a signed note; empty when the log has none."`
	TreeSize       uint64       `json:"tree_size" doc:"Its size."`
	Satisfied      bool         `json:"satisfied" doc:"Whether its cosignatures meet the policy."`
	Witnesses      []witnessRow `json:"witnesses" doc:"The policy's witnesses, in its order."`
}

// cosignedCheckpoint is the log's latest checkpoint, verified under key, with the
// cosignatures of policy's witnesses when the cosigned file is of the same checkpoint.
type cosignedCheckpoint struct {
	text    []byte
	cp      *protocol.Checkpoint
	verdict witness.Verdict
}

// readCosignedCheckpoint reads fed's embedded log's checkpoint from its directory; nil
// when there is none that verifies.
func (s *Server) readCosignedCheckpoint(ctx context.Context, fed *fv1.Federation, key crypto.PublicKey, policy *witness.Policy) *cosignedCheckpoint {
	dir := filepath.Join(s.logDir, fed.Namespace, fed.Name)
	text, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.WarnContext(ctx, "Failed to read the embedded log's checkpoint", "error", err)
		}
		return nil
	}
	cp, err := protocol.OpenCheckpoint(text, key)
	if err != nil {
		s.log.WarnContext(ctx, "Not showing a checkpoint that does not verify under the log's key", "error", err)
		return nil
	}
	out := &cosignedCheckpoint{text: text, cp: cp}
	if policy == nil {
		return out
	}
	cosigned, err := os.ReadFile(filepath.Join(dir, tlog.CosignedCheckpointFile))
	if err != nil || !bytes.HasPrefix(cosigned, text) {
		return out // none yet, or of an older checkpoint
	}
	v, err := policy.Check(cosigned)
	if err != nil {
		s.log.WarnContext(ctx, "Not showing cosignatures that do not verify under the witness policy", "error", err)
		return out
	}
	out.text, out.verdict = cosigned, v
	return out
}

// serveWitnesses answers GET /federation/log/witnesses.
func (s *Server) serveWitnesses(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	fed, ok := s.servedLogFederation(w, r)
	if !ok {
		return
	}
	vkey, err := federation.LogVerifierKey(ctx, s.client, fed)
	if err != nil {
		s.fail(ctx, w, "read the log's key", err)
		return
	}
	key, policy, err := s.logTrust(ctx, fed)
	if err != nil {
		s.fail(ctx, w, "read the log's key", err)
		return
	}
	resp := witnessesResponse{LogVerifierKey: vkey, Witnesses: []witnessRow{}}
	if policy != nil {
		resp.Policy, resp.Quorum = federation.WitnessPolicyText(fed), policy.Quorum()
	}
	cc := s.readCosignedCheckpoint(ctx, fed, key, policy)
	if cc != nil {
		resp.Checkpoint, resp.TreeSize, resp.Satisfied = string(cc.text), cc.cp.Size, cc.verdict.Satisfied
	}
	if policy != nil {
		for i, pw := range policy.Witnesses {
			row := witnessRow{Name: fed.Spec.TransparencyLog.Witnesses.Witnesses[i].Name, KeyName: pw.Key.Name, URL: pw.URL}
			if cc != nil {
				for _, c := range cc.verdict.Cosignatures {
					if c.Key.String() == pw.Key.String() {
						row.Cosigned, row.CosignedAt = true, c.Time.UTC().Format(time.RFC3339)
					}
				}
			}
			resp.Witnesses = append(resp.Witnesses, row)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// serveCheckpoint answers GET /federation/log/checkpoint: the latest checkpoint, with the
// cosignatures of the Federation's witnesses it has.
func (s *Server) serveCheckpoint(w http.ResponseWriter, r *http.Request, fed *fv1.Federation) {
	ctx := r.Context()
	key, policy, err := s.logTrust(ctx, fed)
	if err != nil {
		s.fail(ctx, w, "read the log's key", err)
		return
	}
	cc := s.readCosignedCheckpoint(ctx, fed, key, policy)
	if cc == nil {
		writeError(w, &apiError{status: http.StatusNotFound, code: "not_found", message: "the log has no checkpoint that verifies under its key"})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(cc.text)
}

// logTrust is what the log's checkpoints are checked under: its key, and the Federation's
// witness policy (nil without one, or when it does not parse, which is logged: the
// checkpoint is then shown with the log's signature alone).
func (s *Server) logTrust(ctx context.Context, fed *fv1.Federation) (crypto.PublicKey, *witness.Policy, error) {
	key, err := s.logKey(ctx, fed)
	if err != nil {
		return nil, nil, err
	}
	policy, err := federation.WitnessPolicy(fed)
	if err != nil {
		s.log.WarnContext(ctx, "The Federation's witness policy does not parse", "error", err)
		policy = nil
	}
	return key, policy, nil
}
