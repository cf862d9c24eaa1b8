package webhook

import (
	"context"
	"errors"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// statusResponse is the answer of GET /federation/status.
type statusResponse struct {
	FederationPublicKey string      `json:"federation_public_key" doc:"The key the federation signs with now, PEM."`
	TLogPublicKey       string      `json:"tlog_public_key" doc:"The key the transparency log signs checkpoints with, PKIX PEM; empty for a Rekor log whose key the Federation does not pin."`
	OperatorsActive     int         `json:"operators_active" doc:"Operators the controller registered that are Active."`
	OperatorsTotal      int         `json:"operators_total" doc:"Operators the controller ever registered: Active, Suspended and Withdrawn."`
	SubmissionsLast24h  int         `json:"submissions_last_24h" doc:"Submissions created in the last 24 hours whose signature and continuity the controller verified."`
	LastAnchor          *lastAnchor `json:"last_anchor" doc:"The last anchor, when the federation made it (its signature verifies under the key history); null before the first."`
	UptimeSeconds       int64       `json:"uptime_seconds" doc:"Seconds since this replica's server started."`
	Version             string      `json:"version"`
}

// lastAnchor summarizes the last trusted anchor.
type lastAnchor struct {
	AnchorID     string `json:"anchor_id" example:"\"anchor-20261124-001\""`
	AnchoredAt   string `json:"anchored_at" doc:"RFC 3339 UTC with nine fractional digits, as the receipt spells it."`
	Participants int    `json:"participants" doc:"How many operators the anchor binds."`
}

// serveStatus answers GET /federation/status.
func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	st, err := s.status(ctx)
	if err != nil {
		s.fail(ctx, w, "read the federation's status", err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// status builds the answer from verified state only: operators the controller registered,
// submissions it verified (both counted as the cache's events arrive, never by listing),
// and an anchor whose signature verifies (its verdict remembered for its UID and
// generation, its key looked up in the key history now).
func (s *Server) status(ctx context.Context) (*statusResponse, error) {
	fed, err := s.loadFederation(ctx)
	if err != nil {
		return nil, err
	}
	if fed.Status.PublicKeyPEM == "" {
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "federation_not_ready",
			message: "the federation " + s.federation.String() + " has no signing key yet"}
	}
	logKey, err := federation.LogPublicKeyPEM(ctx, s.client, fed)
	if errors.Is(err, federation.ErrNoLogKey) {
		// The Federation's conditions say why (LogKeyMissing when a restore left it out).
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "federation_not_ready",
			message: "the federation " + s.federation.String() + " has no transparency log key"}
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	st := &statusResponse{FederationPublicKey: string(fed.Status.PublicKeyPEM), TLogPublicKey: logKey,
		UptimeSeconds: int64(now.Sub(s.started) / time.Second), Version: s.version.Version}

	// Kept counts, not a list of the store (kept.go).
	if err := s.kept.synced(ctx); err != nil {
		return nil, err
	}
	st.OperatorsActive, st.OperatorsTotal, st.SubmissionsLast24h = s.kept.statusCounts()
	st.LastAnchor, err = s.lastAnchor(ctx, fed)
	return st, err
}

// lastAnchor is the anchor fed's status names, when it is one the federation made; nil
// otherwise (none yet, deleted, or untrusted, which is logged).
func (s *Server) lastAnchor(ctx context.Context, fed *fv1.Federation) (*lastAnchor, error) {
	if fed.Status.LastAnchor == nil {
		return nil, nil
	}
	var ca fv1.CrossAnchor // read-only: not copied out of the cache (up to 10,000 participants)
	err := s.client.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: string(fed.Status.LastAnchor.AnchorID)}, &ca,
		client.UnsafeDisableDeepCopy)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := s.verdicts.TrustAnchor(fed, &ca); err != nil {
		s.log.WarnContext(ctx, "Left an untrusted last anchor out of the status", "anchorID", ca.Name, "error", err)
		return nil, nil
	}
	return &lastAnchor{AnchorID: string(ca.Spec.AnchorID), AnchoredAt: ca.Spec.AnchoredAt, Participants: federation.ParticipantCount(&ca)}, nil
}
