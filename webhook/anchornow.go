package webhook

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"

	"k8s.io/client-go/util/retry"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// POST /federation/anchor runs an anchor now. Every replica serves it, but only the
// elected leader's Federation controller anchors, so the API does not run the anchor
// itself: it writes an anchor request into the Federation (fv1.AnchorRequestAnnotation,
// the Kubernetes request/handled pattern, as Flux's requestedAt annotation), the leader
// runs an anchor at once and records the request in status.anchorRequest in the same
// status write as the anchor, and the API answers from that record
// (anchornow_wait.go). A request already written and not yet handled is joined, not
// overwritten, so concurrent calls coalesce into one run.

// anchorNowResponse is the answer of POST /federation/anchor when the run made an anchor.
type anchorNowResponse struct {
	Status                 string              `json:"status" doc:"anchored."`
	AnchorID               string              `json:"anchor_id" example:"\"anchor-20261124-001\""`
	CrossAnchorHash        string              `json:"cross_anchor_hash" doc:"Hex SHA-256 of the participants' chain signatures in operator ID order, then anchored_at."`
	AnchoredAt             string              `json:"anchored_at" doc:"RFC 3339 UTC with nine fractional digits: the bytes hashed."`
	ParticipatingOperators []string            `json:"participating_operators" doc:"The seed's: the operator IDs the anchor binds, in operator ID order."`
	ParticipantDetails     []anchorParticipant `json:"participant_details" doc:"Cairn's: the operators the anchor binds, in operator ID order, each with the chain signature and last_seq it binds (the receipt form's objects)."`
	TLogLogIndex           *int64              `json:"tlog_log_index" doc:"The log entry's index once the log recorded the anchor and its proof verifies under the log's key; null while the log leg is pending."`
	TLogURL                *string             `json:"tlog_url" doc:"Where the log serves the entry; null while pending."`
	SubmissionsAnchored    int                 `json:"submissions_anchored" doc:"How many accepted submissions the anchor binds (older pending ones of an operator included)."`
	// The seed's members (LEGACY-BIJOTEL §3.5), strings as the seed sent them.
	ParticipantCount string `json:"participant_count" doc:"The seed's: the number of participants, as a decimal string."`
	RekorLogIndex    string `json:"rekor_log_index" doc:"The seed's: tlog_log_index as a decimal string, \"\" while pending."`
	RequestID        string `json:"request_id" doc:"The anchor request's ID: status.anchorRequest.id of the Federation."`
	// Cairn's: a run binds at most 5,000 operators an anchor.
	Anchors []anchorNowPart `json:"anchors,omitempty" doc:"Cairn's: every anchor of a run that made more than one (it binds at most 5,000 operators an anchor), in order; the members above are then the last one's, and submissions_anchored counts the whole run's."`
}

// anchorNowPart is one anchor of a run that made several.
type anchorNowPart struct {
	AnchorID         string `json:"anchor_id" example:"\"anchor-20261124-001\""`
	CrossAnchorHash  string `json:"cross_anchor_hash"`
	ParticipantCount int    `json:"participant_count" doc:"How many operators this anchor binds."`
	TLogLogIndex     *int64 `json:"tlog_log_index" doc:"As the run's: null while this anchor's log leg is pending or unverified."`
}

// anchorNoOpResponse is the answer when the run made no anchor: the seed's no-op.
type anchorNoOpResponse struct {
	Status    string `json:"status" doc:"no-op."`
	Reason    string `json:"reason" doc:"The seed's: not enough participants."`
	Message   string `json:"message" doc:"The controller's account: how many operators have pending submissions and minParticipants."`
	RequestID string `json:"request_id" doc:"The anchor request's ID."`
}

// serveAnchorNow answers POST /federation/anchor.
func (s *Server) serveAnchorNow(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	fed, err := s.authenticateAdmin(ctx, r)
	if err != nil {
		s.fail(ctx, w, "check the admin token", err)
		return
	}
	id, err := s.requestAnchor(ctx)
	if err != nil {
		s.fail(ctx, w, "request an anchor", err)
		return
	}
	answer, err := s.awaitAnchor(ctx, fed, id)
	if err != nil {
		s.fail(ctx, w, "wait for the anchor", err)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// authenticateAdmin checks r's "Authorization: Bearer <token>" against the admin token
// in the served Federation's admin Secret, read from the API server on every request. The
// comparison is constant-time (of the SHA-256 of both, so that not even the length is
// compared early). Errors are 401 missing_token or invalid_admin_token, 503
// federation_not_ready or admin_token_not_configured; none repeats anything sent or
// stored.
func (s *Server) authenticateAdmin(ctx context.Context, r *http.Request) (*fv1.Federation, error) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return nil, adminTokenError("missing_token", "send Authorization: Bearer <admin token>")
	}
	fed, err := s.loadFederation(ctx)
	if err != nil {
		return nil, err
	}
	token, err := federation.AdminToken(ctx, s.apiReader, fed)
	if errors.Is(err, federation.ErrNoAdminSecret) {
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "federation_not_ready",
			message: "the federation " + s.federation.String() + " has no admin Secret yet"}
	}
	if err != nil {
		return nil, err
	}
	if len(token) == 0 {
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "admin_token_not_configured",
			message: "the federation's admin Secret holds no token: admin endpoints are disabled"}
	}
	got, want := sha256.Sum256([]byte(header)), sha256.Sum256(append([]byte("Bearer "), token...))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return nil, adminTokenError("invalid_admin_token", "the admin token is not this federation's")
	}
	return fed, nil
}

// adminTokenError is a 401 about the admin bearer token, with WWW-Authenticate.
func adminTokenError(code, msg string) *apiError {
	return &apiError{status: http.StatusUnauthorized, code: code, message: msg,
		header: map[string]string{"WWW-Authenticate": `Bearer realm="cairn-federation-admin"`}}
}

// requestAnchor writes a new anchor request into the Federation, or joins the one that
// is there and not handled yet, and returns its ID. The Federation is read from the API
// server and updated at that resourceVersion; a conflict (another request, or a status
// write) reads it again and decides again.
func (s *Server) requestAnchor(ctx context.Context) (string, error) {
	var id string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var fed fv1.Federation
		if err := s.apiReader.Get(ctx, s.federation, &fed); err != nil {
			return err
		}
		if id = federation.PendingAnchorRequest(&fed); id != "" {
			return nil // join it
		}
		var err error
		if id, err = newAnchorRequestID(s.now().UTC().Format("20060102T150405Z")); err != nil {
			return err
		}
		if fed.Annotations == nil {
			fed.Annotations = map[string]string{}
		}
		fed.Annotations[fv1.AnchorRequestAnnotation] = id
		return s.client.Update(ctx, &fed)
	})
	return id, err
}

// newAnchorRequestID is "api-<at>-<16 random hex>": unique, and a valid request ID.
func newAnchorRequestID(at string) (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "api-" + at + "-" + hex.EncodeToString(b), nil
}

// newAnchorNowResponse is the answer for ca, a trusted anchor made by request id, which
// binds submissions; its log members are shown only when logVerified.
func newAnchorNowResponse(ca *fv1.CrossAnchor, id string, submissions int, logVerified bool) anchorNowResponse {
	rec := newAnchorRecord(ca, logVerified)
	ans := anchorNowResponse{Status: "anchored", AnchorID: rec.AnchorID, CrossAnchorHash: rec.CrossAnchorHash, AnchoredAt: rec.AnchoredAt,
		ParticipatingOperators: participantIDs(rec.ParticipatingOperators), ParticipantDetails: rec.ParticipatingOperators,
		TLogLogIndex: rec.TLogLogIndex, TLogURL: rec.TLogURL,
		SubmissionsAnchored: submissions, ParticipantCount: strconv.Itoa(rec.Participants), RequestID: id}
	if rec.TLogLogIndex != nil {
		ans.RekorLogIndex = strconv.FormatInt(*rec.TLogLogIndex, 10)
	}
	return ans
}

// participantIDs are the operator IDs of ps, in their order: the seed's service form of
// participating_operators.
func participantIDs(ps []anchorParticipant) []string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.OperatorID
	}
	return ids
}
