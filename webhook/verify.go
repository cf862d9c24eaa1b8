package webhook

import (
	"context"
	"crypto"
	"errors"
	"net/http"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/anchortree"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// rekorVerifyTimeout bounds each request a live check sends a Rekor log: the check
// answers "log unreachable" rather than wait out the client's retries.
const rekorVerifyTimeout = 10 * time.Second

// serveVerify answers GET /federation/verify/{id}: a live check of the stored anchor id
// (verifycheck.go). An anchor that fails a check is answered 200 with valid false and the
// checks that failed, forged ones included: the answer is a verification, not a record.
func (s *Server) serveVerify(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, fed, ok := s.anchorPath(w, r)
	if !ok {
		return
	}
	ev, err := s.anchorEvidence(ctx, fed, id)
	if err != nil {
		s.fail(ctx, w, "read the anchor's evidence", err)
		return
	}
	res := verifyAnchor(ctx, ev, s.now())
	if !res.Valid {
		s.log.InfoContext(ctx, "An anchor did not verify", "anchorID", id, "reason", *res.Reason)
	}
	writeJSON(w, http.StatusOK, res)
}

// anchorEvidence reads what the live check of anchor id needs, from the cache without
// copying it (nothing here writes to it): the anchor, and for each participant its
// registered operator and its operator's submissions ending at its lastSeq, each found
// through an index (federation.OperatorIDIndex, federation.SubmissionSeqIndex), so the
// reads cost the anchor's participants, not the store. 404 anchor_not_found when no
// CrossAnchor of that name exists in fed's namespace.
func (s *Server) anchorEvidence(ctx context.Context, fed *fv1.Federation, id string) (*anchorEvidence, error) {
	ca, err := s.anchorNamed(ctx, fed, id)
	if err != nil {
		return nil, err
	}
	if ca == nil {
		return nil, anchorNotFound(id)
	}
	ev := &anchorEvidence{fed: fed, ca: ca, participants: ca.Spec.Participants, verdicts: s.verdicts}
	if federation.IsMerkle(ca) {
		ev.participants, ev.treeErr = s.merkleParticipants(ctx, fed, ca)
	}
	ev.covered = make([]participantEvidence, len(ev.participants))
	for i, p := range ev.participants {
		pe := &ev.covered[i]
		if pe.operator, err = federation.RegisteredOperator(ctx, s.client, fed.Namespace, string(p.OperatorID), client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		var subs fv1.SubmissionList
		if err := s.client.List(ctx, &subs, client.InNamespace(fed.Namespace),
			client.MatchingFields{federation.SubmissionSeqIndex: federation.SeqKey(p.OperatorID, p.LastSeq)}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		pe.submissions = subs.Items
		if len(pe.submissions) == 0 { // moved to the history store with its anchor
			if pe.submissions, err = s.storedEnding(ctx, p.OperatorID, p.LastSeq); err != nil {
				return nil, err
			}
		}
	}
	ev.logKey, ev.logKeyErr = s.logKey(ctx, fed)
	ev.readEntry = s.entryReader(fed, ev.logKey)
	return ev, nil
}

// merkleParticipants are the participants of fed's Merkle-form anchor ca that a live
// check verifies one by one: its leaves, from its checked tree, when they are at most
// federation.MaxParticipantsPerAnchor (the most a seed-form anchor checks), else none.
// The error says why the stored leaves do not make ca's tree, or why they could not be
// read; it states no root.
func (s *Server) merkleParticipants(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) ([]fv1.Participant, error) {
	if err := s.verdicts.TrustAnchor(fed, ca); err != nil {
		return nil, errors.New("the anchor is not the federation's, so its leaves are not read")
	}
	tree, err := s.merkle.Tree(ctx, fed, ca)
	if err != nil {
		s.log.WarnContext(ctx, "A Merkle-form anchor's tree did not check", "anchorID", ca.Name, "error", err)
		if errors.Is(err, anchortree.ErrNotTheAnchors) {
			return nil, errors.New("the stored leaves do not make the tree the anchor states")
		}
		return nil, errors.New("the stored leaves could not be read")
	}
	if tree.Size() > federation.MaxParticipantsPerAnchor {
		return nil, nil
	}
	ps := make([]fv1.Participant, 0, tree.Size())
	for _, l := range tree.Leaves() {
		ps = append(ps, federation.ParticipantOfLeaf(l))
	}
	return ps, nil
}

// logKey is the key fed's transparency log signs with (federation.LogPublicKeyPEM): an
// unpinned Rekor key is refused, since a key fetched from the log vouches for nothing.
func (s *Server) logKey(ctx context.Context, fed *fv1.Federation) (crypto.PublicKey, error) {
	pemText, err := federation.LogPublicKeyPEM(ctx, s.client, fed)
	if err != nil {
		s.log.WarnContext(ctx, "Failed to read the log's key", "error", err)
		return nil, errors.New("the log's key could not be read")
	}
	if pemText == "" {
		return nil, errors.New("the Federation pins no key for its Rekor log")
	}
	key, err := protocol.ParseLogPublicKeyPEM([]byte(pemText))
	if err != nil {
		return nil, errors.New("the Federation's log key does not parse")
	}
	return key, nil
}

// entryReader returns how to fetch an entry of fed's log now: the embedded log's files in
// LogDir/<namespace>/<name> (tlog.ReadDirEntry), or the Rekor server (v1 or v2) fed
// names, pinned to key. A replica without a log directory reaches no embedded log.
func (s *Server) entryReader(fed *fv1.Federation, key crypto.PublicKey) func(context.Context, int64) (*tlog.Entry, error) {
	switch fed.Spec.TransparencyLog.Type {
	case fv1.TransparencyLogRekorV2:
		return func(ctx context.Context, index int64) (*tlog.Entry, error) {
			o := federation.RekorV2Options(fed.Spec.TransparencyLog)
			o.Attempts, o.HTTPClient = 1, &http.Client{Timeout: rekorVerifyTimeout}
			rekor, err := tlog.NewRekorV2(o)
			if err != nil {
				return nil, err
			}
			return rekor.Entry(ctx, index)
		}
	case fv1.TransparencyLogRekor:
		return func(ctx context.Context, index int64) (*tlog.Entry, error) {
			rekor, err := tlog.NewRekor(tlog.RekorOptions{URL: fed.Spec.TransparencyLog.URL,
				PublicKeyPEM: []byte(fed.Spec.TransparencyLog.PublicKeyPEM), Attempts: 1,
				HTTPClient: &http.Client{Timeout: rekorVerifyTimeout}})
			if err != nil {
				return nil, err
			}
			return rekor.Entry(ctx, index)
		}
	}
	return func(ctx context.Context, index int64) (*tlog.Entry, error) {
		if s.logDir == "" {
			return nil, &tlog.UnavailableError{Op: "read entry", Err: errors.New("this replica has no log directory")}
		}
		return tlog.ReadDirEntry(ctx, filepath.Join(s.logDir, fed.Namespace, fed.Name), index, key)
	}
}
