package webhook

import (
	"context"
	"crypto"
	"errors"
	"net/http"
	"regexp"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// anchorIDPattern is an anchor ID's grammar, as the CrossAnchor CRD validates it.
var anchorIDPattern = regexp.MustCompile(`^anchor-[0-9]{8}-[0-9]{3}$`)

// anchorRecord is the answer of GET /federation/anchor/{id}: the seed's anchor record
// (LEGACY-BIJOTEL §3.5, GET /anchor/{id}) under the seed's names, plus Cairn's.
type anchorRecord struct {
	AnchorID               string              `json:"anchor_id" example:"\"anchor-20261124-001\""`
	CrossAnchorHash        string              `json:"cross_anchor_hash" doc:"Hex SHA-256 of the participants' chain signatures in operator ID order, then anchored_at."`
	AnchoredAt             string              `json:"anchored_at" doc:"RFC 3339 UTC with nine fractional digits: the bytes hashed."`
	ParticipatingOperators []anchorParticipant `json:"participating_operators" doc:"The operators the anchor binds, in operator ID order."`
	RekorLogIndex          *int64              `json:"rekor_log_index" doc:"The seed's name for the log entry's index: equal to tlog_log_index whatever the log; null until the log records the anchor and its proof verifies under the log's key."`
	RekorURL               *string             `json:"rekor_url" doc:"The seed's name for the log entry's URL: equal to tlog_url; null before the log records the anchor."`
	FederationSignature    string              `json:"federation_signature" doc:"Base64 Ed25519 signature over the receipt payload as signed when the anchor was made (log members null)."`
	FederationPublicKeyPEM string              `json:"federation_public_key_pem" doc:"The key that signed the anchor (its own snapshot, not the current key)."`
	// Cairn's members.
	TLogLogIndex *int64            `json:"tlog_log_index" doc:"The transparency log's index of the anchor's entry; null until it is logged and its proof verifies under the log's key."`
	TLogURL      *string           `json:"tlog_url" doc:"Where the log serves the entry; null before logging."`
	Participants int               `json:"participants" doc:"How many operators the anchor binds."`
	AnchorForm   string            `json:"anchor_form,omitempty" doc:"merkle-v1 for an anchor of the Merkle form (docs/PROTOCOL.md §7), whose participating_operators are not shown: each participant's receipt proves its own leaf. Absent for the seed form."`
	Tree         *anchorTreeRecord `json:"tree,omitempty" doc:"A Merkle-form anchor's tree: its size and root."`
	Phase        string            `json:"phase" doc:"PendingTLog until the log records the anchor and its proof verifies, then Anchored."`
}

// anchorParticipant is one operator an anchor binds.
type anchorParticipant struct {
	OperatorID     string `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	ChainSignature string `json:"chain_signature" doc:"The chain_signature of the operator's submission the anchor binds."`
	LastSeq        int64  `json:"last_seq" doc:"Cairn's: the last_seq of that submission."`
}

// anchorPath reads the {id} of an anchor's route and the Federation. When either fails it
// answers (400 invalid_anchor_id, or the Federation's failure) and ok is false.
func (s *Server) anchorPath(w http.ResponseWriter, r *http.Request) (id string, fed *fv1.Federation, ok bool) {
	id = r.PathValue("id")
	if !anchorIDPattern.MatchString(id) {
		writeError(w, &apiError{status: http.StatusBadRequest, code: "invalid_anchor_id",
			message: "an anchor ID looks like anchor-20261124-001"})
		return "", nil, false
	}
	fed, err := s.loadFederation(r.Context())
	if err != nil {
		s.fail(r.Context(), w, "read the federation", err)
		return "", nil, false
	}
	return id, fed, true
}

// serveAnchor answers GET /federation/anchor/{id}.
func (s *Server) serveAnchor(w http.ResponseWriter, r *http.Request) {
	fed, ca, ok := s.pathAnchor(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, newAnchorRecord(ca, s.logLegVerified(r.Context(), fed, ca)))
}

// pathAnchor returns the anchor the path's {id} names, when the federation made it
// (trustedAnchor); otherwise it answers the request itself and returns false.
func (s *Server) pathAnchor(w http.ResponseWriter, r *http.Request) (*fv1.Federation, *fv1.CrossAnchor, bool) {
	id, fed, ok := s.anchorPath(w, r)
	if !ok {
		return nil, nil, false
	}
	ca, err := s.trustedAnchor(r.Context(), fed, id)
	if err != nil {
		s.fail(r.Context(), w, "read the anchor", err)
		return nil, nil, false
	}
	return fed, ca, true
}

// logLegVerified reports whether the log entry ca's status records verifies under the
// key of fed's log (federation.VerifyLogLeg): status is the manager's word, and a log
// index nothing proved is not shown as the federation's.
func (s *Server) logLegVerified(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) bool {
	if ca.Status.Phase != fv1.PhaseAnchored {
		return false
	}
	pemText, err := federation.LogPublicKeyPEM(ctx, s.client, fed)
	if err == nil && pemText == "" {
		err = errors.New("the Federation pins no log key")
	}
	var key crypto.PublicKey
	if err == nil {
		key, err = protocol.ParseLogPublicKeyPEM([]byte(pemText))
	}
	if err == nil && !s.verdicts.VerifyLogLeg(ca, key) {
		err = federation.VerifyLogLeg(ca, key) // remembered as failing: say why
	}
	if err != nil {
		s.log.WarnContext(ctx, "Not showing an anchor's log entry that does not verify", "anchorID", ca.Name, "error", err)
		return false
	}
	return true
}

// anchorNotFound is the 404 of an anchor the federation did not make or that does not
// exist: the two answers are the same, so that a forged record's existence is not shown.
func anchorNotFound(id string) *apiError {
	return &apiError{status: http.StatusNotFound, code: "anchor_not_found", message: "the federation made no anchor " + id}
}

// trustedAnchor returns the CrossAnchor id of fed, uncopied from the cache (the caller
// must not write to it), when the federation made it (federation.TrustAnchor, its verdict
// remembered), else 404 anchor_not_found.
func (s *Server) trustedAnchor(ctx context.Context, fed *fv1.Federation, id string) (*fv1.CrossAnchor, error) {
	ca, err := s.anchorNamed(ctx, fed, id) // read-only: not copied out of the cache (up to 10,000 participants)
	if err != nil {
		return nil, err
	}
	if ca == nil {
		return nil, anchorNotFound(id)
	}
	if err := s.verdicts.TrustAnchor(fed, ca); err != nil {
		s.log.WarnContext(ctx, "Refused to serve an untrusted anchor", "anchorID", id, "error", err)
		return nil, anchorNotFound(id)
	}
	return ca, nil
}

// anchorTreeRecord is a Merkle-form anchor's tree.
type anchorTreeRecord struct {
	Size     int64  `json:"size" doc:"The number of leaves: one a participant."`
	RootHash string `json:"root_hash" doc:"The tree's RFC 6962 root, in hex; cross_anchor_hash binds it with the size and anchored_at."`
}

// newAnchorRecord is ca's record; ca must be trusted. Its log members are shown only when
// logVerified.
func newAnchorRecord(ca *fv1.CrossAnchor, logVerified bool) anchorRecord {
	rec := anchorRecord{AnchorID: string(ca.Spec.AnchorID), CrossAnchorHash: string(ca.Spec.CrossAnchorHash),
		AnchoredAt: ca.Spec.AnchoredAt, FederationSignature: string(ca.Spec.FederationSignature),
		FederationPublicKeyPEM: string(ca.Spec.FederationPublicKeyPEM), Participants: len(ca.Spec.Participants),
		Phase: string(fv1.PhasePendingTLog), ParticipatingOperators: make([]anchorParticipant, len(ca.Spec.Participants))}
	for i, p := range ca.Spec.Participants {
		rec.ParticipatingOperators[i] = anchorParticipant{OperatorID: string(p.OperatorID),
			ChainSignature: string(p.ChainSignature), LastSeq: p.LastSeq}
	}
	if federation.IsMerkle(ca) {
		rec.Participants, rec.AnchorForm = federation.ParticipantCount(ca), string(ca.Spec.AnchorForm)
		rec.Tree = &anchorTreeRecord{Size: ca.Spec.Tree.Size, RootHash: string(ca.Spec.Tree.RootHash)}
	}
	if logVerified && ca.Status.LogEntry != nil {
		index, url := ca.Status.LogEntry.LogIndex, ca.Status.LogEntry.URL
		rec.TLogLogIndex, rec.RekorLogIndex = &index, &index
		if url != "" {
			rec.TLogURL, rec.RekorURL = &url, &url
		}
		rec.Phase = string(fv1.PhaseAnchored)
	}
	return rec
}
