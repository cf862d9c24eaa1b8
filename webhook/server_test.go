package webhook

import (
	"context"
	"net"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("The runnable", func() {
	It("serves on every replica, not only the leader, until its context ends", func() {
		s := newServer(Options{})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		addr := ln.Addr().String()
		Expect(ln.Close()).To(Succeed())

		r := s.Runnable(addr)
		Expect(r.NeedLeaderElection()).To(BeFalse())
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Start(runCtx) }()
		Eventually(func(g Gomega) {
			resp, err := http.Get("http://" + addr + "/federation/register/challenge")
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = resp.Body.Close() }()
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
		}).Should(Succeed())
		stop()
		Eventually(done).Should(Receive(BeNil()))
	})
})

var _ = Describe("Unknown routes", func() {
	It("answer 404 and 405 in the one error shape", func() {
		s := newServer(Options{})
		a := do(s, http.MethodGet, "/federation/nothing", nil)
		Expect(a.status).To(Equal(http.StatusNotFound))
		Expect(a.body).To(HaveKeyWithValue("error", "not_found"))
		a = do(s, http.MethodPost, "/federation/status", nil)
		Expect(a.status).To(Equal(http.StatusMethodNotAllowed))
		Expect(a.body).To(HaveKeyWithValue("error", "method_not_allowed"))
		Expect(a.header.Get("Allow")).To(Equal("GET"))
	})
})
