package webhook

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Signed statements (docs/PROTOCOL.md §6): a withdrawal, a key rotation and a rename. The API
// verifies each early with the functions the FederationOperator controller decides by,
// writes it into the operator's spec with an Update at the resourceVersion it verified
// against (so a concurrent change conflicts instead of being lost), and answers once the
// controller has applied and logged it, or with the controller's reason for refusing it.

// checkStatementAt checks, before any lookup, that at (the member name) is an RFC 3339
// UTC time within protocol.StatementMaxAge of now: 400 invalid_time or
// time_out_of_window, saying which. The controller's check (the same window) follows.
func checkStatementAt(name, at string, now time.Time) error {
	t, err := time.Parse(time.RFC3339, at)
	if err != nil || !strings.HasSuffix(at, "Z") {
		return &apiError{status: http.StatusBadRequest, code: "invalid_time",
			message: name + " is not an RFC 3339 UTC time such as 2026-11-21T14:00:00Z", extra: map[string]any{"field": name}}
	}
	if d := now.Sub(t); d > protocol.StatementMaxAge || -d > protocol.StatementMaxAge {
		return &apiError{status: http.StatusBadRequest, code: "time_out_of_window",
			message: name + " " + at + " is more than 5m0s from the federation's clock (" + now.UTC().Format(time.RFC3339) +
				"); sign a new statement dated now", extra: map[string]any{"field": name}}
	}
	return nil
}

// requireFields is 400 missing_fields naming, sorted, the members of fields (name to
// value) that are empty; nil when none is.
func requireFields(fields map[string]string) error {
	var names []string
	for name, v := range fields {
		if v == "" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return &apiError{status: http.StatusBadRequest, code: "missing_fields",
		message: "missing fields: " + joinNames(names), extra: map[string]any{"fields": names}}
}

// registeredOperator returns, read fresh from the API server, the registered operator
// whose operator ID is id: 404 operator_not_found when none is registered, 403
// operator_withdrawn when it has withdrawn. The cache finds its name; the object
// verified and updated is the API server's, so its resourceVersion is the one the
// statement was checked against.
func (s *Server) registeredOperator(ctx context.Context, id string) (*fv1.FederationOperator, error) {
	o, err := s.cachedRegistered(ctx, s.federation.Namespace, id)
	if err != nil {
		return nil, err
	}
	var fo fv1.FederationOperator
	switch err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(o), &fo); {
	case apierrors.IsNotFound(err):
		return nil, operatorNotFound(id)
	case err != nil:
		return nil, err
	}
	if fo.Status.Phase == fv1.PhaseWithdrawn {
		return nil, &apiError{status: http.StatusForbidden, code: "operator_withdrawn",
			message: "operator " + id + " has withdrawn from the federation", extra: map[string]any{"operator_id": id}}
	}
	if !federation.Registered(&fo) || len(fo.Status.KeyHistory) == 0 {
		return nil, operatorNotFound(id)
	}
	return &fo, nil
}

// cachedRegistered returns the operator in namespace whose ID is id when the controller
// registered it (federation.Registered), from the cache; else 404 operator_not_found.
func (s *Server) cachedRegistered(ctx context.Context, namespace, id string) (*fv1.FederationOperator, error) {
	fo, err := federation.RegisteredOperator(ctx, s.client, namespace, id)
	if err != nil {
		return nil, err
	}
	if fo == nil {
		return nil, operatorNotFound(id)
	}
	return fo, nil
}

// cachedOperator is cachedRegistered in the served Federation's namespace.
func (s *Server) cachedOperator(ctx context.Context, id string) (*fv1.FederationOperator, error) {
	return s.cachedRegistered(ctx, s.federation.Namespace, id)
}

// operatorNotFound is the 404 of an operator ID no registered operator has.
func operatorNotFound(id string) *apiError {
	return &apiError{status: http.StatusNotFound, code: "operator_not_found",
		message: "no operator " + id + " is registered with this federation", extra: map[string]any{"operator_id": id}}
}

// currentPub is the key fo holds now: the last of its key history.
func currentPub(fo *fv1.FederationOperator) ed25519.PublicKey {
	pub, _ := protocol.ParsePublicKeyPEM([]byte(fo.Status.KeyHistory[len(fo.Status.KeyHistory)-1].PublicKeyPEM))
	return pub
}

// signatureError maps a protocol verification error to an answer: ErrExpired is 400
// time_out_of_window, any other failure 401 invalid_signature.
func signatureError(err error, field string) *apiError {
	if errors.Is(err, protocol.ErrExpired) {
		return &apiError{status: http.StatusBadRequest, code: "time_out_of_window", message: err.Error(),
			extra: map[string]any{"field": field}}
	}
	return &apiError{status: http.StatusUnauthorized, code: "invalid_signature", message: err.Error()}
}

// missingSignature is the 401 of a statement without its signature.
func missingSignature(name string) *apiError {
	return &apiError{status: http.StatusUnauthorized, code: "invalid_signature", message: name + " is missing"}
}

// statementAttempts is how many times a statement is read, checked and written before a
// write conflict is answered 409: the controller writes an operator's status on its
// events (a submission's head, a log entry), and each write changes the resourceVersion
// a statement is written at.
const statementAttempts = 5

// admitAgainOnConflict runs admit, which reads the operator, checks the statement and
// writes it (writeStatement), again while its write meets a conflict, at most
// statementAttempts times: each attempt reads and checks anew, so nothing is written
// over a change the check did not see.
func admitAgainOnConflict(admit func() error) error {
	var err error
	for range statementAttempts {
		var ae *apiError
		if err = admit(); !errors.As(err, &ae) || ae.code != "conflict" {
			return err
		}
	}
	return err
}

// writeStatement updates fo (its spec changed by the caller) at the resourceVersion it
// was read with: 409 conflict when the operator changed since, 400 invalid_field when
// the API server refuses the object.
func (s *Server) writeStatement(ctx context.Context, fo *fv1.FederationOperator) error {
	switch err := s.client.Update(ctx, fo); {
	case apierrors.IsConflict(err):
		return &apiError{status: http.StatusConflict, code: "conflict",
			message: "the operator changed while the statement was checked; send it again",
			extra:   map[string]any{"operator_id": string(fo.Status.OperatorID)}}
	case apierrors.IsInvalid(err):
		return &apiError{status: http.StatusBadRequest, code: "invalid_field", message: err.Error()}
	default:
		return err
	}
}

// awaitVerdict reads fo from the cache until done says the controller applied the
// statement, or the controller's condition cond (SignatureVerified for a rotation or a
// withdrawal, OrganizationVerified for a rename) for fo's generation is False with one
// of the refusal reasons (answered with refuse). Past the register timeout it answers
// 504 with pendingCode.
func (s *Server) awaitVerdict(parent context.Context, fo *fv1.FederationOperator, done func(*fv1.FederationOperator) bool,
	refusals []string, refuse func(reason, msg string) *apiError, pendingCode, pendingMsg string,
) (*fv1.FederationOperator, error) {
	return s.awaitCondition(parent, fo, fv1.ConditionSignatureVerified, done, refusals, refuse, pendingCode, pendingMsg)
}

// awaitCondition is awaitVerdict reading the refusal from condition cond.
func (s *Server) awaitCondition(parent context.Context, fo *fv1.FederationOperator, cond fv1.ConditionType, done func(*fv1.FederationOperator) bool,
	refusals []string, refuse func(reason, msg string) *apiError, pendingCode, pendingMsg string,
) (*fv1.FederationOperator, error) {
	ctx, cancel := context.WithTimeout(parent, s.regTimeout)
	defer cancel()
	key, gen := client.ObjectKeyFromObject(fo), fo.Generation
	t := time.NewTicker(registrationPoll)
	defer t.Stop()
	for {
		var got fv1.FederationOperator
		err := s.client.Get(ctx, key, &got)
		if err == nil {
			if done(&got) {
				return &got, nil
			}
			c := meta.FindStatusCondition(got.Status.Conditions, string(cond))
			if c != nil && c.Status == "False" && c.ObservedGeneration >= gen && slices.Contains(refusals, c.Reason) {
				return nil, refuse(c.Reason, c.Message)
			}
		} else if !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				return nil, err
			}
			return nil, &apiError{status: http.StatusGatewayTimeout, code: pendingCode, message: pendingMsg}
		case <-t.C:
		}
	}
}
