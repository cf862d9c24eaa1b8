package webhook

import (
	"database/sql"
	"net/http"
	"net/url"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/history"
)

var _ = Describe("Records moved to the history store", Ordered, func() {
	var (
		f          readFederation
		s          *Server
		store      *history.Store
		dbPath     string
		alice, bob registrant
		aliceID    string
		before     map[string]string // the answers while every record was an object
		reads      map[string]func() answer
	)
	BeforeAll(func() {
		f = newReadFederation()
		dbPath = filepath.Join(GinkgoT().TempDir(), "history.db")
		var err error
		store, err = history.Open(ctx, history.Options{Driver: history.SQLite, DSN: dbPath})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(store.Close)
		s = f.serverWith(Options{LogDir: logDir, History: store})
		alice, bob = newRegistrant("History Alice"), newRegistrant("History Bob")
		aliceID = f.register(s, alice)
		bobID := f.register(s, bob)
		f.submit(alice, aliceID, "history-alice-1", 0, 4)
		f.submit(bob, bobID, "history-bob-1", 0, 6)
		key := f.signingKey()
		subA, subB := f.submission("history-alice-1"), f.submission("history-bob-1")
		logged(f.anchorOver("anchor-20261104-001", key, subA, subB))
		logged(f.anchorOver("anchor-20261104-002", key, subA))
		for _, alias := range []string{"history-alice-1", "history-bob-1"} {
			Eventually(func() bool { return f.submission(alias).Status.Anchored }).Should(BeTrue(), alias)
		}

		reads = map[string]func() answer{
			"anchor 001":       func() answer { return do(s, http.MethodGet, "/federation/anchor/anchor-20261104-001", nil) },
			"anchor 002":       func() answer { return do(s, http.MethodGet, "/federation/anchor/anchor-20261104-002", nil) },
			"Alice's receipts": func() answer { return doAuth(s, http.MethodGet, "/receipts", bearer(alice.key, nil), nil) },
			"Alice's receipts, a page at a time": func() answer {
				return doAuth(s, http.MethodGet, "/receipts?limit=1&since=anchor-20261104-001", bearer(alice.key, nil), nil)
			},
			"Alice's summary": func() answer {
				return doAuth(s, http.MethodGet, "/federation/operator/"+aliceID, bearer(alice.key, nil), nil)
			},
		}
		before = map[string]string{}
		for what, read := range reads {
			a := read()
			Expect(a.status).To(Equal(http.StatusOK), what+": "+string(a.raw))
			before[what] = string(a.raw)
		}
		verified := do(s, http.MethodGet, "/federation/verify/anchor-20261104-001", nil)
		Expect(verified.status).To(Equal(http.StatusOK), string(verified.raw))
		Expect(verified.body).To(HaveKeyWithValue("valid", true), string(verified.raw))

		By("moving both anchors and both submissions to the store, as the leader does")
		var fed fv1.Federation
		Expect(k8sClient.Get(ctx, f.key, &fed)).To(Succeed())
		for _, id := range []string{"anchor-20261104-001", "anchor-20261104-002"} {
			var ca fv1.CrossAnchor
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.key.Namespace, Name: id}, &ca)).To(Succeed())
			Expect(store.PutAnchor(ctx, &fed, &ca, key)).To(Succeed())
			moveOut(&ca)
		}
		for _, alias := range []string{"history-alice-1", "history-bob-1"} {
			sub := f.submission(alias)
			Expect(store.PutSubmission(ctx, &fed, sub, key)).To(Succeed())
			moveOut(sub)
		}
	})

	It("answers for them byte for byte as it did while they were objects", func() {
		for what, read := range reads {
			a := read()
			Expect(a.status).To(Equal(http.StatusOK), what+": "+string(a.raw))
			Expect(string(a.raw)).To(Equal(before[what]), what)
		}
	})

	It("lists the stored anchors on the public page, with their log entries", func() {
		a := do(s, http.MethodGet, "/", nil)
		Expect(a.status).To(Equal(http.StatusOK))
		for _, id := range []string{"anchor-20261104-001", "anchor-20261104-002"} {
			Expect(string(a.raw)).To(ContainSubstring(id))
		}
	})

	It("still verifies a stored anchor live, from its stored submissions", func() {
		a := do(s, http.MethodGet, "/federation/verify/anchor-20261104-001", nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("valid", true), string(a.raw))
	})

	It("serves no stored record that was changed in the database: 404, as if deleted", func() {
		db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: dbPath}).String())
		Expect(err).NotTo(HaveOccurred())
		defer db.Close() //nolint:errcheck // a test's read connection
		_, err = db.Exec(`UPDATE cairn_history_anchors SET object = replace(object, '"lastSeq":4', '"lastSeq":9') WHERE anchor_id = 'anchor-20261104-002'`)
		Expect(err).NotTo(HaveOccurred())
		a := do(s, http.MethodGet, "/federation/anchor/anchor-20261104-002", nil)
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "anchor_not_found"))
		receipts := doAuth(s, http.MethodGet, "/receipts", bearer(alice.key, nil), nil)
		Expect(receipts.status).To(Equal(http.StatusOK), string(receipts.raw))
		Expect(string(receipts.raw)).NotTo(ContainSubstring("anchor-20261104-002"))
		Expect(string(receipts.raw)).To(ContainSubstring("anchor-20261104-001"))
	})
})

// moveOut deletes o, as the manager, and waits until the manager's cache no longer has it.
func moveOut(o client.Object) {
	GinkgoHelper()
	Expect(k8sClient.Delete(ctx, o)).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object)))
	}).Should(BeTrue())
}
