package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ChallengeLifetime is how long a registration challenge is accepted.
const ChallengeLifetime = 5 * time.Minute

// The used-challenge records: ConfigMaps in the Federation's namespace
// (federation.UsedChallenge).
const (
	// UsedChallengeLabel marks a used-challenge record; its value is "true".
	UsedChallengeLabel = federation.UsedChallengeLabel
	// UsedChallengeExpiresAnnotation holds the challenge's expiry, RFC 3339; past it the
	// record may be deleted.
	UsedChallengeExpiresAnnotation = federation.UsedChallengeExpiresAnnotation
)

// challengeResponse is the answer of GET /federation/register/challenge.
type challengeResponse struct {
	Nonce string `json:"nonce" doc:"cairn-challenge: and 75 characters of [A-Za-z0-9_-]; sign its UTF-8 bytes." example:"\"cairn-challenge:Z2l2ZW4gYnkgdGhlIGZlZGVyYXRpb24\""`
}

// serveChallenge answers GET /federation/register/challenge.
func (s *Server) serveChallenge(w http.ResponseWriter, r *http.Request) {
	key, err := s.loadChallengeKey(r.Context())
	if err != nil {
		s.fail(r.Context(), w, "load the challenge key", err)
		return
	}
	nonce, err := mintChallenge(key, s.now())
	if err != nil {
		s.fail(r.Context(), w, "make a challenge", err)
		return
	}
	writeJSON(w, http.StatusOK, challengeResponse{Nonce: nonce})
}

// mintChallenge returns a challenge that expires ChallengeLifetime after now.
func mintChallenge(key []byte, now time.Time) (string, error) {
	return federation.MintChallenge(key, now.Add(ChallengeLifetime))
}

// checkChallenge returns the expiry of nonce when key's MAC over it verifies and it has
// not expired at now. It does not check it is unused (useChallenge does). The MAC is
// compared in constant time; no error carries a value that would have passed.
func checkChallenge(key []byte, nonce string, now time.Time) (time.Time, error) {
	invalid := &apiError{status: http.StatusUnauthorized, code: "invalid_challenge",
		message: "the nonce is not a challenge this federation issued"}
	if !protocol.IsChallenge(nonce) {
		invalid.message = "the nonce is not " + protocol.ChallengePrefix + " and 16 to 256 characters of [A-Za-z0-9_-]"
		return time.Time{}, invalid
	}
	expiry, err := federation.ChallengeExpiry(key, nonce)
	if err != nil {
		return time.Time{}, invalid
	}
	if !now.Before(expiry) {
		return time.Time{}, &apiError{status: http.StatusUnauthorized, code: "challenge_expired",
			message: fmt.Sprintf("the challenge expired at %s; get a new one", expiry.Format(time.RFC3339))}
	}
	return expiry, nil
}

// useChallenge records nonce as used until expiry, for every replica, by the registration
// of the FederationOperator named operator with orgName (federation.UsedChallenge, which
// the controller checks a challenge proof against): the record's Create is atomic, so of
// two uses one fails, with 401 challenge_replayed.
func (s *Server) useChallenge(ctx context.Context, nonce, operator, orgName string, expiry time.Time) error {
	err := s.client.Create(ctx, federation.UsedChallenge(s.federation.Namespace, nonce, operator, orgName, expiry))
	if apierrors.IsAlreadyExists(err) {
		return &apiError{status: http.StatusUnauthorized, code: "challenge_replayed",
			message: "the challenge was used before; get a new one"}
	}
	return err
}

// collectUsedChallenges deletes the used-challenge records whose challenge has expired
// and returns how many it deleted. A record without a readable expiry is kept.
func (s *Server) collectUsedChallenges(ctx context.Context) (int, error) {
	var list corev1.ConfigMapList
	if err := s.apiReader.List(ctx, &list, client.InNamespace(s.federation.Namespace),
		client.MatchingLabels{UsedChallengeLabel: "true"}); err != nil {
		return 0, err
	}
	now, deleted := s.now(), 0
	for i := range list.Items {
		cm := &list.Items[i]
		expiry, err := time.Parse(time.RFC3339, cm.Annotations[UsedChallengeExpiresAnnotation])
		if err != nil || now.Before(expiry) || !federation.IsUsedChallengeName(cm.Name) {
			continue
		}
		if err := s.client.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
			return deleted, err
		}
		deleted++
	}
	return deleted, nil
}

// loadFederation reads the Federation the server serves: 503 federation_not_ready when it
// does not exist.
func (s *Server) loadFederation(ctx context.Context) (*fv1.Federation, error) {
	var fed fv1.Federation
	if err := s.client.Get(ctx, s.federation, &fed); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &apiError{status: http.StatusServiceUnavailable, code: "federation_not_ready",
				message: "the federation " + s.federation.String() + " does not exist yet"}
		}
		return nil, err
	}
	return &fed, nil
}

// loadChallengeKey returns the Federation's challenge key: 503 federation_not_ready
// while its admin Secret does not exist (the Federation controller makes it on its first
// reconcile; the API writes no Secret). It reads through the cache on every call rather
// than keeping the key: a replaced Secret must change the key on every replica at once.
func (s *Server) loadChallengeKey(ctx context.Context) ([]byte, error) {
	fed, err := s.loadFederation(ctx)
	if err != nil {
		return nil, err
	}
	key, err := federation.ChallengeKey(ctx, s.client, fed)
	if errors.Is(err, federation.ErrNoAdminSecret) {
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "federation_not_ready",
			message: "the federation has no challenge key yet: its controller makes one on its first reconcile; try again shortly"}
	}
	return key, err
}
