package webhook

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Operator bearer tokens (docs/PROTOCOL.md §5): "Bearer <operator_id>.<nonce>.<sig_b64>",
// the nonce either bound to the request body and the time, or a challenge this federation
// issued. authenticate checks everything that can be checked before the body is read;
// a body-nonce token is finished by operatorAuth.checkBody once the body's SHA-256 is
// known, so a streamed body is hashed as it is read and never held.

// operatorAuth is a token whose signature verified under its operator's current key.
type operatorAuth struct {
	// operator is the registered operator the token names, read from the cache; it may
	// have withdrawn (the caller decides whether that matters).
	operator *fv1.FederationOperator
	token    *protocol.Token
	now      time.Time
}

// ID is the operator ID the token proved.
func (a *operatorAuth) ID() string { return a.token.OperatorID }

// authenticate verifies r's operator bearer token: its shape, that its operator is
// registered, its signature under the operator's current key, and then its nonce: a
// body nonce's time within protocol.TokenMaxAge (its hash is checkBody's), or a
// challenge issued by this federation, unexpired and not used before (it is used now).
// Past that, the per-operator rate limit applies. Errors are 401 missing_token,
// invalid_token, unknown_operator, token_expired or token_replayed, 403
// operator_pending_approval (a Pending operator's token verifying under its key), or 429
// rate_limited; none repeats the signature or a value that would have passed.
func (s *Server) authenticate(ctx context.Context, r *http.Request) (*operatorAuth, error) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return nil, tokenError("missing_token", "send Authorization: Bearer <operator_id>.<nonce>.<signature>")
	}
	tok, err := protocol.ParseAuthorization(header)
	if err != nil {
		return nil, tokenError("invalid_token", err.Error())
	}
	fo, err := s.cachedOperator(ctx, tok.OperatorID)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.code == "operator_not_found" {
			if err := s.pendingTokenError(ctx, tok); err != nil { // approve.go
				return nil, err
			}
			return nil, tokenError("unknown_operator", "no operator "+tok.OperatorID+" is registered with this federation")
		}
		return nil, err
	}
	// VerifyAs, not Verify: after a rotation the operator keeps its ID and signs with its
	// new key, whose own ID differs.
	if err := tok.VerifyAs(currentPub(fo)); err != nil {
		return nil, tokenError("invalid_token", "the token's signature does not verify under operator "+tok.OperatorID+"'s current key")
	}
	now := s.now()
	if protocol.IsChallenge(tok.Nonce) {
		if err := s.spendChallenge(ctx, tok.Nonce, now); err != nil {
			return nil, err
		}
	} else if err := tok.CheckNonceTime(now, protocol.TokenMaxAge); err != nil {
		return nil, tokenError("token_expired", fmt.Sprintf("the token's nonce time is more than %s from the federation's clock (%s); sign a new one",
			protocol.TokenMaxAge, now.UTC().Format(time.RFC3339)))
	}
	if s.operatorLimiter != nil {
		if wait, ok := s.operatorLimiter.allow(tok.OperatorID); !ok {
			return nil, &apiError{status: http.StatusTooManyRequests, code: "rate_limited", retryAfter: wait,
				message: "too many requests from operator " + tok.OperatorID + "; retry after the Retry-After seconds"}
		}
	}
	return &operatorAuth{operator: fo, token: tok, now: now}, nil
}

// checkBody finishes a body-nonce token: digest must be the SHA-256 of the body the
// request carried. A challenge token binds no body.
func (a *operatorAuth) checkBody(digest [sha256.Size]byte) error {
	if protocol.IsChallenge(a.token.Nonce) {
		return nil
	}
	if err := a.token.CheckBodyDigest(a.now, digest, protocol.TokenMaxAge); err != nil {
		return tokenError("invalid_token", "the token's nonce does not bind this request's body: sign <unix_seconds>-<hex SHA-256 of the body>")
	}
	return nil
}

// spendChallenge checks that nonce is a challenge this federation issued and has not
// expired, and uses it up for every replica.
func (s *Server) spendChallenge(ctx context.Context, nonce string, now time.Time) error {
	key, err := s.loadChallengeKey(ctx)
	if err != nil {
		return err
	}
	expiry, err := checkChallenge(key, nonce, now)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.code == "challenge_expired" {
			return tokenError("token_expired", ae.message)
		}
		return tokenError("invalid_token", "the token's nonce is not a challenge this federation issued")
	}
	if err := s.useChallenge(ctx, nonce, "", "", expiry); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.code == "challenge_replayed" {
			return tokenError("token_replayed", "the token's challenge was used before; get a new one")
		}
		return err
	}
	return nil
}

// tokenError is a 401 answer about the bearer token. It carries WWW-Authenticate.
func tokenError(code, msg string) *apiError {
	return &apiError{status: http.StatusUnauthorized, code: code, message: msg,
		header: map[string]string{"WWW-Authenticate": `Bearer realm="cairn-federation", error="invalid_token"`}}
}

// tokenErrors are the answers of every route that takes an operator bearer token.
var tokenErrors = []errorDoc{
	{http.StatusUnauthorized, []string{"missing_token", "invalid_token", "unknown_operator", "token_expired", "token_replayed"},
		"The Authorization header is absent, malformed, names no registered operator, is not signed by the operator's current key, " +
			"does not bind the body, is more than five minutes from the federation's clock, or spends a challenge that was used before."},
	{http.StatusTooManyRequests, []string{"rate_limited"}, "Past the per-operator rate limit; the Retry-After header says how many seconds to wait."},
	{http.StatusForbidden, []string{"operator_pending_approval"}, "The token is signed by the key of an operator that awaits the federation's approval (Pending); adds \"operator_id\"."},
}
