package webhook

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// registerRequest is the body of POST /federation/register: the seed's fields, plus
// Cairn's optional proof of possession. The controller verifies the proof the API puts
// into the FederationOperator: proof_of_possession when sent, else the challenge and its
// signature (spec.challengeProof).
type registerRequest struct {
	PublicKeyPEM      string `json:"public_key_pem" doc:"The operator's Ed25519 public key, PEM (docs/PROTOCOL.md §4)."`
	OrgName           string `json:"org_name" doc:"The organization's name, 1 to 253 characters."`
	ContactEmail      string `json:"contact_email,omitempty" doc:"Who to contact, up to 320 characters."`
	Nonce             string `json:"nonce" doc:"A challenge from GET /federation/register/challenge."`
	NonceSignature    string `json:"nonce_signature" doc:"Base64 Ed25519 signature over the nonce's UTF-8 bytes."`
	ProofOfPossession string `json:"proof_of_possession,omitempty" doc:"Cairn's, optional: base64 Ed25519 signature over \"register <org_name> <fingerprint>\". Without it the signed challenge is the operator's proof of possession (spec.challengeProof)."`
	// Cairn's: a rename signed with the registration, so that the contact is signed too.
	RenameAt        string `json:"rename_at,omitempty" doc:"Optional, with rename_signature: the at of a rename (docs/PROTOCOL.md §6) of the operator to org_name and contact_email, RFC 3339 UTC within five minutes. The proof of possession does not sign contact_email: without a rename it is not shown."`
	RenameSignature string `json:"rename_signature,omitempty" doc:"Optional, with rename_at: base64 Ed25519 signature by public_key_pem's key over \"rename \" and the RFC 8785 JSON of {at, contact, operator_id, org_name}."`
}

// registerResponse answers a registration once the controller has registered and logged
// the operator.
type registerResponse struct {
	OperatorID   string   `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	OrgName      string   `json:"org_name" doc:"The name the operator signed (the proof of possession, or the rename sent with the registration)."`
	PublicKeyPEM string   `json:"public_key_pem" doc:"The key the controller registered."`
	ContactEmail string   `json:"contact_email" doc:"The contact the rename sent with the registration signs; empty without one."`
	RegisteredAt string   `json:"registered_at" doc:"RFC 3339 UTC, seconds." example:"\"2026-11-24T06:00:00Z\""`
	TLogLogIndex int64    `json:"tlog_log_index" doc:"The registration record's index in the federation's transparency log."`
	TLogURL      string   `json:"tlog_url,omitempty" doc:"Where the log serves the record, when it names one."`
	Status       string   `json:"status" doc:"active: the operator is registered and may submit. A registration that waits for approval is answered 202 instead (pendingRegistration)."`
	ApprovedBy   []string `json:"approved_by,omitempty" doc:"Under registration: approval, the lists whose approval registered the operator: gitops (spec.approvedOperators), api (POST /federation/operator/{id}/approve)."`
}

// pendingRegistration answers, with 202 Accepted, a registration the Federation holds for
// its administrators' approval (spec.registration: approval). The operator is not
// registered yet: it has no registration time and no log entry, and may not submit.
type pendingRegistration struct {
	OperatorID   string `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	OrgName      string `json:"org_name"`
	PublicKeyPEM string `json:"public_key_pem"`
	ContactEmail string `json:"contact_email"`
	Status       string `json:"status" doc:"pending_approval." example:"\"pending_approval\""`
	RequestedAt  string `json:"requested_at" doc:"When the federation took the registration, RFC 3339 UTC, seconds." example:"\"2026-11-24T06:00:00Z\""`
}

// Registration statuses, as the answers name them.
const (
	registrationActive  = "active"
	registrationPending = "pending_approval"
)

// missing returns the sorted names of the required members req lacks.
func (req *registerRequest) missing() []string {
	var names []string
	for name, v := range map[string]string{"public_key_pem": req.PublicKeyPEM, "org_name": req.OrgName, "nonce": req.Nonce,
		"nonce_signature": req.NonceSignature} {
		if v == "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// serveRegister answers POST /federation/register.
func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req registerRequest
	if err := decodeJSON(r, &req); err != nil {
		s.fail(ctx, w, "read the registration", err)
		return
	}
	release, err := s.chargeRegistration(r)
	if err != nil {
		s.fail(ctx, w, "register an operator", err)
		return
	}
	fo, err := s.admit(ctx, &req)
	if err != nil {
		release() // nothing was created: the attempt costs the address nothing
		s.fail(ctx, w, "register an operator", err)
		return
	}
	fo, err = s.awaitRegistration(ctx, fo)
	if err != nil {
		s.fail(ctx, w, "wait for the registration", err)
		return
	}
	if fo.Status.Phase == fv1.PhasePending {
		s.log.InfoContext(ctx, "Took a registration that awaits approval", "operatorID", fo.Status.OperatorID, "federationOperator", fo.Name)
		org, contact, _ := federation.ShownOrganization(fo)
		writeJSON(w, http.StatusAccepted, pendingRegistration{OperatorID: string(fo.Status.OperatorID), OrgName: org,
			PublicKeyPEM: req.PublicKeyPEM, ContactEmail: contact, Status: registrationPending,
			RequestedAt: fo.CreationTimestamp.UTC().Format(time.RFC3339)})
		return
	}
	s.log.InfoContext(ctx, "Registered operator through the API", "operatorID", fo.Status.OperatorID,
		"federationOperator", fo.Name, "logIndex", fo.Status.RegistrationLogEntry.LogIndex)
	writeJSON(w, http.StatusOK, registration(fo))
}

// registration is the answer of registered fo, its registration logged.
func registration(fo *fv1.FederationOperator) registerResponse {
	org, contact, key := shownOperator(fo)
	return registerResponse{OperatorID: string(fo.Status.OperatorID), OrgName: org, PublicKeyPEM: key, ContactEmail: contact,
		RegisteredAt: fo.Status.RegisteredAt.UTC().Format(time.RFC3339),
		TLogLogIndex: fo.Status.RegistrationLogEntry.LogIndex, TLogURL: fo.Status.RegistrationLogEntry.URL,
		Status: registrationActive, ApprovedBy: fo.Status.ApprovedBy}
}

// chargeRegistration charges one registration to r's client address (registerlimit.go):
// 429 registration_rate_limited with Retry-After past the limit. release gives the charge
// back.
func (s *Server) chargeRegistration(r *http.Request) (release func(), err error) {
	if s.registrations == nil {
		return func() {}, nil
	}
	release, wait, ok := s.registrations.reserve(addressKey(s.clientAddress(r)))
	if !ok {
		return nil, &apiError{status: http.StatusTooManyRequests, code: "registration_rate_limited", retryAfter: wait,
			message: fmt.Sprintf("this address made %d registrations in the last %s; retry after the Retry-After seconds",
				s.registrations.limit, s.registrations.window)}
	}
	return release, nil
}

// admit checks req, in the seed's order (fields, challenge, signature), then the proof of
// possession and the key's history, uses the challenge and creates the operator.
func (s *Server) admit(ctx context.Context, req *registerRequest) (*fv1.FederationOperator, error) {
	if names := req.missing(); len(names) > 0 {
		return nil, &apiError{status: http.StatusBadRequest, code: "missing_fields",
			message: "missing fields: " + joinNames(names), extra: map[string]any{"fields": names}}
	}
	pub, err := protocol.ParsePublicKeyPEM([]byte(req.PublicKeyPEM))
	if err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: "invalid_public_key", message: "public_key_pem: " + err.Error()}
	}
	key, err := s.loadChallengeKey(ctx)
	if err != nil {
		return nil, err
	}
	expiry, err := checkChallenge(key, req.Nonce, s.now())
	if err != nil {
		return nil, err
	}
	if err := protocol.VerifyChallenge(pub, req.Nonce, req.NonceSignature); err != nil {
		return nil, &apiError{status: http.StatusUnauthorized, code: "invalid_signature",
			message: "nonce_signature does not verify under public_key_pem"}
	}
	if req.ProofOfPossession != "" {
		if err := protocol.VerifyRegistration(pub, req.OrgName, req.ProofOfPossession); err != nil {
			return nil, &apiError{status: http.StatusBadRequest, code: "invalid_proof_of_possession",
				message: "proof_of_possession is not this key's signature over \"register <org_name> <fingerprint>\""}
		}
	}
	id := protocol.OperatorID(pub)
	rename, err := registrationRename(req, pub, s.now())
	if err != nil {
		return nil, err
	}
	holder, err := federation.KeyHolder(ctx, s.client, &fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Namespace: s.federation.Namespace}}, id)
	if err != nil {
		return nil, err
	}
	if holder != nil {
		return nil, keyTaken(id)
	}
	if err := s.checkPendingRoom(ctx); err != nil {
		return nil, err
	}
	name := operatorObjectName(pub)
	if err := s.useChallenge(ctx, req.Nonce, name, req.OrgName, expiry); err != nil {
		return nil, err
	}
	fo := &fv1.FederationOperator{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.federation.Namespace, Name: name},
		Spec: fv1.FederationOperatorSpec{OrgName: req.OrgName, PublicKeyPEM: fv1.PublicKeyPEM(req.PublicKeyPEM),
			Contact: req.ContactEmail, ProofOfPossession: fv1.Signature(req.ProofOfPossession), Rename: rename},
	}
	if req.ProofOfPossession == "" {
		fo.Spec.ChallengeProof = &fv1.ChallengeProof{Nonce: req.Nonce, Signature: fv1.Signature(req.NonceSignature)}
	}
	switch err := s.client.Create(ctx, fo); {
	case apierrors.IsAlreadyExists(err):
		return nil, keyTaken(id)
	case apierrors.IsInvalid(err):
		return nil, &apiError{status: http.StatusBadRequest, code: "invalid_field", message: err.Error()}
	case err != nil:
		return nil, err
	}
	return fo, nil
}

// registrationRename is the rename sent with req (rename_at and rename_signature, both or
// neither) of the operator of pub to org_name and contact_email, checked as the controller
// checks it (federation.CheckRename): nil when req sends none.
func registrationRename(req *registerRequest, pub ed25519.PublicKey, now time.Time) (*fv1.Rename, error) {
	if req.RenameAt == "" && req.RenameSignature == "" {
		return nil, nil
	}
	if req.RenameAt == "" || req.RenameSignature == "" {
		return nil, &apiError{status: http.StatusBadRequest, code: "missing_fields",
			message: "rename_at and rename_signature come together", extra: map[string]any{"fields": []string{"rename_at", "rename_signature"}}}
	}
	if err := checkStatementAt("rename_at", req.RenameAt, now); err != nil {
		return nil, err
	}
	rn := &fv1.Rename{OrgName: req.OrgName, Contact: req.ContactEmail, At: fv1.Timestamp(req.RenameAt), Signature: fv1.Signature(req.RenameSignature)}
	fo := &fv1.FederationOperator{Spec: fv1.FederationOperatorSpec{Rename: rn}}
	fo.Status.OperatorID = fv1.OperatorID(protocol.OperatorID(pub))
	if err := checkRename(fo, pub, now); err != nil {
		return nil, err
	}
	return rn, nil
}

// operatorObjectName names the FederationOperator the API creates for pub: "op-" and the
// operator ID's hex, so that two registrations of one key race for one name.
func operatorObjectName(pub []byte) string {
	return "op-" + protocol.OperatorID(pub)[len("op_"):]
}

// keyTaken is the 409 of a key some operator holds or held.
func keyTaken(id string) *apiError {
	return &apiError{status: http.StatusConflict, code: "key_already_registered",
		message: "an operator holds or once held this key, and an operator ID is never registered twice",
		extra:   map[string]any{"operator_id": id}}
}

// registrationPoll is how often awaitRegistration reads the operator from the cache.
const registrationPoll = 50 * time.Millisecond

// awaitRegistration waits until the controller has made fo Active and logged its
// registration, has made it Pending (it awaits approval), or has rejected it.
func (s *Server) awaitRegistration(parent context.Context, fo *fv1.FederationOperator) (*fv1.FederationOperator, error) {
	ctx, cancel := context.WithTimeout(parent, s.regTimeout)
	defer cancel()
	key := client.ObjectKeyFromObject(fo)
	t := time.NewTicker(registrationPoll)
	defer t.Stop()
	for {
		var got fv1.FederationOperator
		err := s.client.Get(ctx, key, &got)
		if err == nil {
			if done, answer := registrationOutcome(&got); done {
				if answer != nil {
					return nil, answer
				}
				return &got, nil
			}
		} else if !apierrors.IsNotFound(err) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				return nil, err // the client went away
			}
			return nil, &apiError{status: http.StatusGatewayTimeout, code: "registration_pending",
				message: "the federation accepted the registration but has not registered and logged it yet; " +
					"it may still: ask again later with a new challenge, which answers key_already_registered once it has"}
		case <-t.C:
		}
	}
}

// registrationOutcome says whether the controller is done with the registration of fo and,
// when it refused it or found the key's operator withdrawn or suspended in the log (a
// federation restored without its objects), the answer: done with no answer for an
// operator registered and logged (Active) or awaiting approval (Pending).
func registrationOutcome(fo *fv1.FederationOperator) (bool, *apiError) {
	id := string(fo.Status.OperatorID)
	switch fo.Status.Phase {
	case fv1.PhaseActive:
		return fo.Status.RegistrationLogEntry != nil && fo.Status.RegisteredAt != nil, nil
	case fv1.PhasePending:
		return true, nil
	case fv1.PhaseRejected:
		return true, rejected(fo)
	case fv1.PhaseWithdrawn:
		return true, withdrawnError(id)
	case fv1.PhaseSuspended:
		return true, suspendedError(id, readyMessage(fo))
	}
	return false, nil
}

// readyMessage is the message of fo's Ready condition, or "" without one.
func readyMessage(fo *fv1.FederationOperator) string {
	msg, _ := readyCondition(fo)
	return msg
}

// readyCondition is the message and reason of fo's Ready condition.
func readyCondition(fo *fv1.FederationOperator) (msg, reason string) {
	for _, c := range fo.Status.Conditions {
		if c.Type == string(fv1.ConditionReady) {
			msg, reason = c.Message, c.Reason
		}
	}
	return msg, reason
}

// rejected turns the controller's refusal of fo into an answer.
func rejected(fo *fv1.FederationOperator) *apiError {
	msg, reason := readyCondition(fo)
	if msg == "" {
		msg = "the federation refused the registration"
	}
	if reason == fv1.ReasonDuplicateKey {
		e := keyTaken(string(fo.Status.OperatorID))
		e.message = msg
		return e
	}
	return &apiError{status: http.StatusBadRequest, code: "registration_rejected", message: msg, extra: map[string]any{"reason": reason}}
}

// joinNames formats names as the seed's message does: [a, b].
func joinNames(names []string) string {
	out := "["
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out + "]"
}
