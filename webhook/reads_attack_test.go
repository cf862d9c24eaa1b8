package webhook

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// The attack of the read-amplification review: anonymous GETs that made the server copy,
// list or verify the whole store on every request. Here a store holds a bystander's
// submissions and anchors besides the operator asked about; a counting client records
// every List each route makes, and the routes may list Submissions, CrossAnchors and
// FederationOperators only through an index, and only objects the answer is about.

// countingClient records the Lists made through it.
type countingClient struct {
	client.Client
	mu    sync.Mutex
	lists []listRecord
}

// listRecord is one List: the kind, whether an index selected it, and what came back.
type listRecord struct {
	kind    string
	indexed bool
	items   []client.Object
}

func (c *countingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := c.Client.List(ctx, list, opts...)
	var o client.ListOptions
	o.ApplyOptions(opts)
	rec := listRecord{kind: fmt.Sprintf("%T", list), indexed: o.FieldSelector != nil && !o.FieldSelector.Empty()}
	if objs, lerr := meta.ExtractList(list); lerr == nil {
		for _, obj := range objs {
			if co, ok := obj.(client.Object); ok {
				rec.items = append(rec.items, co)
			}
		}
	}
	c.mu.Lock()
	c.lists = append(c.lists, rec)
	c.mu.Unlock()
	return err
}

// take returns the Lists recorded since the last take.
func (c *countingClient) take() []listRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.lists
	c.lists = nil
	return out
}

// federationKinds are the lists that grow with the store.
var federationKinds = []string{"*v1alpha1.SubmissionList", "*v1alpha1.CrossAnchorList", "*v1alpha1.FederationOperatorList"}

var _ = Describe("Anonymous reads cost a page, not the store", Ordered, ContinueOnFailure, func() {
	var (
		f        readFederation
		c        *countingClient
		s        *Server
		a, b     registrant
		ida, idb string
		ca       *fv1.CrossAnchor
	)
	BeforeAll(func() {
		f = newReadFederation()
		plain := f.server()
		a, b = newRegistrant("Reads Asked"), newRegistrant("Reads Bystander")
		ida, idb = f.register(plain, a), f.register(plain, b)
		f.submit(a, ida, "reads-a-1", 0, 5)
		f.submit(a, ida, "reads-a-2", 5, 5)
		for i := range 6 { // the rest of the store: another operator's history
			f.submit(b, idb, fmt.Sprintf("reads-b-%d", i), int64(i)*5, 5)
		}
		key := f.signingKey()
		ca = f.anchorOver("anchor-20261124-001", key, f.submission("reads-a-2"), f.submission("reads-b-5"))
		for i := range 4 {
			f.anchor(fmt.Sprintf("anchor-20261125-%03d", i+1), key, idb, "op_00000000000000b1")
		}
		c = &countingClient{Client: mgr.GetClient()}
		var err error
		s, err = New(Options{Client: c, APIReader: mgr.GetAPIReader(), Informers: mgr.GetCache(), Federation: f.key, RatePerSecond: -1, OperatorRatePerSecond: -1})
		Expect(err).NotTo(HaveOccurred())
	})

	// only checks that every List of a federation kind went through an index and returned
	// only objects about operator id (nil: none may be listed at all).
	only := func(route string, lists []listRecord, about func(client.Object) bool) {
		GinkgoHelper()
		for _, l := range lists {
			if !slices.Contains(federationKinds, l.kind) {
				continue
			}
			Expect(about).NotTo(BeNil(), "%s listed %s (%d items): its counts must be kept, not listed", route, l.kind, len(l.items))
			Expect(l.indexed).To(BeTrue(), "%s listed every %s of the namespace (%d items) without an index", route, l.kind, len(l.items))
			for _, o := range l.items {
				Expect(about(o)).To(BeTrue(), "%s listed %s %s, which its answer is not about", route, l.kind, o.GetName())
			}
		}
	}
	bindsA := func(o client.Object) bool {
		switch o := o.(type) {
		case *fv1.Submission:
			return string(o.Spec.OperatorID) == ida
		case *fv1.CrossAnchor:
			return slices.ContainsFunc(o.Spec.Participants, func(p fv1.Participant) bool { return string(p.OperatorID) == ida })
		case *fv1.FederationOperator:
			return string(o.Status.OperatorID) == ida
		}
		return false
	}

	It("GET /federation/status lists nothing that grows with the store", func() {
		c.take()
		Expect(do(s, http.MethodGet, "/federation/status", nil).status).To(Equal(http.StatusOK))
		only("status", c.take(), nil)
	})

	It("GET /federation/operator/{id} lists only the operator's submissions and anchors, through indexes", func() {
		c.take()
		got := do(s, http.MethodGet, "/federation/operator/"+ida, nil)
		Expect(got.status).To(Equal(http.StatusOK), string(got.raw))
		Expect(got.body["submissions"]).To(HaveLen(2))
		Expect(got.body["anchors"]).To(HaveLen(1))
		only("operator", c.take(), bindsA)
	})

	It("GET /receipts lists only the anchors that bind the operator, through an index", func() {
		c.take()
		got := doAuth(s, http.MethodGet, "/receipts", bearer(a.key, nil), nil)
		Expect(got.status).To(Equal(http.StatusOK), string(got.raw))
		Expect(got.body["receipts"]).To(HaveLen(1))
		only("receipts", c.take(), bindsA)
	})

	It("GET /federation/verify/{id} looks up each participant's submission and operator through indexes", func() {
		c.take()
		got := do(s, http.MethodGet, "/federation/verify/"+ca.Name, nil)
		Expect(got.status).To(Equal(http.StatusOK), string(got.raw))
		Expect(got.body["failed_participants"]).To(BeEmpty())
		covered := func(o client.Object) bool {
			switch o := o.(type) {
			case *fv1.Submission:
				return slices.ContainsFunc(ca.Spec.Participants, func(p fv1.Participant) bool {
					return p.OperatorID == o.Spec.OperatorID && p.LastSeq == o.Spec.LastSeq
				})
			case *fv1.FederationOperator:
				return slices.ContainsFunc(ca.Spec.Participants, func(p fv1.Participant) bool { return p.OperatorID == o.Status.OperatorID })
			}
			return false
		}
		only("verify", c.take(), covered)
	})

	It("GET /federation/sidecar/{sha256} finds the submission carrying it through an index", func() {
		c.take()
		got := do(s, http.MethodGet, "/federation/sidecar/"+fmt.Sprintf("%064x", 7), nil)
		Expect(got.status).To(Equal(http.StatusNotFound), string(got.raw))
		only("sidecar", c.take(), func(client.Object) bool { return false })
	})

	It("GET /federation/verify/{id} verifies no signature again for an anchor it verified", func() {
		first := do(s, http.MethodGet, "/federation/verify/"+ca.Name, nil)
		Expect(first.status).To(Equal(http.StatusOK), string(first.raw))
		before := s.verdicts.Stats()
		again := do(s, http.MethodGet, "/federation/verify/"+ca.Name, nil)
		Expect(again.status).To(Equal(http.StatusOK), string(again.raw))
		Expect(again.body["valid"]).To(Equal(first.body["valid"]))
		Expect(again.body["checks"]).To(Equal(first.body["checks"]))
		after := s.verdicts.Stats()
		Expect(after.Misses).To(Equal(before.Misses), "the second request checked a hash or signature again")
		Expect(after.Hits-before.Hits).To(BeNumerically(">=", 1+len(ca.Spec.Participants)),
			"the anchor's spec and every participant's header were answered from memory")
	})

	It("GET /federation/anchor/{id} and GET /federation/status verify the anchor once", func() {
		Expect(do(s, http.MethodGet, "/federation/anchor/"+ca.Name, nil).status).To(Equal(http.StatusOK))
		before := s.verdicts.Stats()
		Expect(do(s, http.MethodGet, "/federation/anchor/"+ca.Name, nil).status).To(Equal(http.StatusOK))
		Expect(s.verdicts.Stats().Misses).To(Equal(before.Misses))
	})

	It("GET / lists no Submission: the page reads each shown operator's head by name", func() {
		c.take()
		Expect(do(s, http.MethodGet, "/", nil).status).To(Equal(http.StatusOK))
		for _, l := range c.take() {
			Expect(l.kind).NotTo(Equal("*v1alpha1.SubmissionList"), "the page listed %d Submissions", len(l.items))
		}
	})

	It("GET /federation/anchor/{id} lists nothing", func() {
		c.take()
		Expect(do(s, http.MethodGet, "/federation/anchor/"+ca.Name, nil).status).To(Equal(http.StatusOK))
		only("anchor", c.take(), nil)
	})
})
