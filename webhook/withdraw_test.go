package webhook

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("POST /federation/withdraw", func() {
	It("refuses a stale or replayed at, and one that is not RFC 3339 UTC, with 400 naming which", func() {
		s := newServer(Options{})
		r := registered(s, "Stale Withdraw Org")
		for _, at := range []time.Time{time.Now().Add(-10 * time.Minute), time.Now().Add(10 * time.Minute)} {
			a := postBody(s, "/federation/withdraw", protocol.NewWithdrawal(r.key, at))
			Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
			Expect(a.body["error"]).To(Equal("time_out_of_window"))
			Expect(a.body["field"]).To(Equal("at"))
		}
		offset := withdrawalAt(r.key, time.Now().In(time.FixedZone("CET", 3600)).Format(time.RFC3339))
		for _, wd := range []protocol.Withdrawal{offset, withdrawalAt(r.key, "yesterday")} {
			a := postBody(s, "/federation/withdraw", wd)
			Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
			Expect(a.body["error"]).To(Equal("invalid_time"))
		}
		Expect(phaseOf(r)).To(Equal(fv1.PhaseActive))
	})

	It("refuses a signature by another key, or none, with 401", func() {
		s := newServer(Options{})
		r, other := registered(s, "Forged Withdraw Org"), newRegistrant("Mallory")
		wd := protocol.NewWithdrawal(r.key, time.Now())
		wd.Signature = signRaw(other.key, string(protocol.WithdrawalMessage(wd.OperatorID, wd.At)))
		a := postBody(s, "/federation/withdraw", wd)
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(a.body["error"]).To(Equal("invalid_signature"))
		wd.Signature = ""
		a = postBody(s, "/federation/withdraw", wd)
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(phaseOf(r)).To(Equal(fv1.PhaseActive))
	})

	It("answers 404 for an operator that is not registered", func() {
		s := newServer(Options{})
		a := postBody(s, "/federation/withdraw", protocol.NewWithdrawal(newRegistrant("Nobody").key, time.Now()))
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body["error"]).To(Equal("operator_not_found"))
	})

	It("withdraws an operator the controller verified and logged, and answers 403 to a second withdrawal", func() {
		s := newServer(Options{})
		r := registered(s, "Leaving Org")
		wd := protocol.NewWithdrawal(r.key, time.Now())
		a := postBody(s, "/federation/withdraw", wd)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("operator_id", wd.OperatorID))
		Expect(a.body).To(HaveKeyWithValue("status", "withdrawn"))
		Expect(a.body).To(HaveKeyWithValue("withdrawn_at", wd.At))
		Expect(a.body).To(HaveKey("tlog_log_index"))

		fo := operatorOf(r)
		Expect(fo.Status.Phase).To(Equal(fv1.PhaseWithdrawn))
		Expect(fo.Status.WithdrawalLogEntry).NotTo(BeNil())
		Expect(a.body["tlog_log_index"]).To(BeNumerically("==", fo.Status.WithdrawalLogEntry.LogIndex))

		By("replaying the same withdrawal, and sending a fresh one")
		for _, again := range []protocol.Withdrawal{wd, protocol.NewWithdrawal(r.key, time.Now())} {
			a = postBody(s, "/federation/withdraw", again)
			Expect(a.status).To(Equal(http.StatusForbidden), string(a.raw))
			Expect(a.body["error"]).To(Equal("operator_withdrawn"))
		}
	})

	It("answers 400 naming the missing fields", func() {
		s := newServer(Options{})
		a := do(s, http.MethodPost, "/federation/withdraw", []byte(`{"signature":"x"}`))
		Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
		Expect(a.body["error"]).To(Equal("missing_fields"))
		Expect(a.body["fields"]).To(Equal([]any{"at", "operator_id"}))
	})
})

// registered registers a new organization through s and returns it.
func registered(s *Server, org string) registrant {
	GinkgoHelper()
	r := newRegistrant(org)
	a := do(s, http.MethodPost, "/federation/register", r.body(challenge(s)))
	Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
	return r
}

// withdrawalAt is r's withdrawal with at exactly as given.
func withdrawalAt(key ed25519.PrivateKey, at string) protocol.Withdrawal {
	id := protocol.OperatorID(key.Public().(ed25519.PublicKey))
	return protocol.Withdrawal{OperatorID: id, At: at, Signature: signRaw(key, string(protocol.WithdrawalMessage(id, at)))}
}

// operatorOf reads r's FederationOperator from the API server.
func operatorOf(r registrant) *fv1.FederationOperator {
	GinkgoHelper()
	var fo fv1.FederationOperator
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fedKey.Namespace, Name: operatorObjectName(r.key.Public().(ed25519.PublicKey))}, &fo)).To(Succeed())
	return &fo
}

func phaseOf(r registrant) fv1.OperatorPhase {
	GinkgoHelper()
	return operatorOf(r).Status.Phase
}

// postBody posts v, as JSON, to path on s.
func postBody(s *Server, path string, v any) answer {
	GinkgoHelper()
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return do(s, http.MethodPost, path, b)
}

var _ = Describe("a statement's update", func() {
	It("answers 409 conflict when the operator changed after it was read, and writes nothing", func() {
		s := newServer(Options{})
		r := registered(s, "Raced Org")
		id := protocol.OperatorID(r.key.Public().(ed25519.PublicKey))
		fo, err := s.registeredOperator(ctx, id)
		Expect(err).NotTo(HaveOccurred())

		By("changing the operator behind the API's back")
		changed := fo.DeepCopy()
		changed.Spec.Contact = "someone-else@example.org"
		Expect(k8sClient.Update(ctx, changed)).To(Succeed())

		wd := protocol.NewWithdrawal(r.key, time.Now())
		fo.Spec.Withdrawal = &fv1.Withdrawal{At: fv1.Timestamp(wd.At), Signature: fv1.Signature(wd.Signature)}
		err = s.writeStatement(ctx, fo)
		var ae *apiError
		Expect(errors.As(err, &ae)).To(BeTrue(), "%v", err)
		Expect(ae.status).To(Equal(http.StatusConflict))
		Expect(ae.code).To(Equal("conflict"))
		got := operatorOf(r)
		Expect(got.Spec.Withdrawal).To(BeNil())
		Expect(got.Spec.Contact).To(Equal("someone-else@example.org"))
	})
})

// conflictOnce answers the first Update of a FederationOperator with a conflict, as the
// API server does when the controller wrote the object between a read and that Update.
type conflictOnce struct {
	client.Client
	conflicts int
}

func (c *conflictOnce) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if fo, ok := obj.(*fv1.FederationOperator); ok && c.conflicts == 0 {
		c.conflicts++
		return apierrors.NewConflict(fv1.GroupVersion.WithResource("federationoperators").GroupResource(), fo.Name, errors.New("the object has been modified"))
	}
	return c.Client.Update(ctx, obj, opts...)
}

var _ = Describe("POST /federation/withdraw while the controller writes the operator", func() {
	It("reads, checks and writes the withdrawal again rather than answer 409, which the seed's table does not have", func() {
		s := newServer(Options{})
		r := registered(s, "Busy Org")
		busy := &conflictOnce{Client: s.client}
		s.client = busy
		a := postBody(s, "/federation/withdraw", protocol.NewWithdrawal(r.key, time.Now()))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(busy.conflicts).To(Equal(1))
		Expect(operatorOf(r).Status.Phase).To(Equal(fv1.PhaseWithdrawn))
	})
})
