package webhook

import (
	"fmt"
	"net/http"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("POST /federation/submit under racing clients", func() {
	It("lands exactly one of the exports racing for one segment, and every other operator's once", func() {
		// Two servers on the manager, each with its own limiters, as two replicas would be;
		// the racer's 20 clients are more than an operator may have in flight by default.
		racing := Options{MaxOperatorSubmissionsInFlight: 20}
		s, other := submitServer(racing), submitServer(racing)
		racer := registered(s, "Racing Org")
		c := newChain(racer.key, "racing", 10)
		fork := newChain(racer.key, "racing fork", 10)
		exports := [2][]byte{c.export(1, 10, exportTime()), fork.export(1, 10, exportTime())}
		const bystanders, perBystander = 10, 3
		type send struct {
			r     registrant
			body  []byte
			which int // the racer's export sent, or -1
		}
		var sends []send
		for i := range 20 { // 10 clients send each of two exports of the racer's seq 1..10
			sends = append(sends, send{racer, exports[i%2], i % 2})
		}
		for i := range bystanders {
			r := registered(s, fmt.Sprintf("Bystander %d", i))
			body := newChain(r.key, fmt.Sprintf("bystander %d", i), 5).export(1, 5, exportTime())
			for range perBystander {
				sends = append(sends, send{r, body, -1})
			}
		}
		Expect(sends).To(HaveLen(50))

		answers := make([]answer, len(sends))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, sd := range sends {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				<-start
				server := s
				if i%2 == 1 { // half the clients reach the other server
					server = other
				}
				answers[i] = submit(server, sd.r.key, sd.body)
			}()
		}
		close(start)
		wg.Wait()

		By("the racer: one export landed, its senders all got it, the other's senders 422")
		subs := submissionsOf(idOf(racer))
		Expect(subs).To(HaveLen(1))
		won := -1
		for i, ch := range []*chain{c, fork} {
			if string(subs[0].Spec.LastHMACHash) == ch.hmacAt(10) {
				won = i
			}
		}
		Expect(won).NotTo(Equal(-1), "the landed Submission is one of the two exports")
		for i, sd := range sends {
			a := answers[i]
			switch {
			case sd.which == won:
				Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
				Expect(a.body["submission_id"]).To(Equal(subs[0].Name))
			case sd.which >= 0:
				Expect(a.status).To(Equal(http.StatusUnprocessableEntity), string(a.raw))
				Expect(a.body["error"]).To(Equal("continuity_violation"))
				Expect(a.body["conflicting_submission_id"]).To(Equal(subs[0].Name))
			default:
				Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
				Expect(a.body["submission_id"]).To(Equal(subName(sd.r, 1)))
			}
		}
		// The FederationOperator controller records the head after the verdict.
		headOf := func(r registrant) func() string {
			return func() string {
				if h := submitOperator(r).Status.Head; h != nil {
					return h.Submission
				}
				return ""
			}
		}
		Eventually(headOf(racer)).Should(Equal(subs[0].Name))

		By("every bystander: one Submission, its head")
		for i := 0; i < bystanders; i++ {
			r := sends[20+i*perBystander].r
			Expect(submissionsOf(idOf(r))).To(HaveLen(1))
			Eventually(headOf(r)).Should(Equal(subName(r, 1)))
		}
	})
})
