package webhook

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cairn-dev/cairn/internal/slowloris"
)

// runServer serves s as the manager runs it (its Runnable) on a free loopback address
// until the spec ends, and returns the address once it answers.
func runServer(s *Server) string {
	GinkgoHelper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := ln.Addr().String()
	Expect(ln.Close()).To(Succeed())
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Runnable(addr).Start(runCtx) }()
	DeferCleanup(func() {
		stop()
		Eventually(done).Should(Receive(BeNil()))
	})
	Eventually(func() error { return challengeServed(addr) }).Should(Succeed())
	return addr
}

// challengeServed gets a challenge from the API at addr.
func challengeServed(addr string) error {
	resp, err := http.Get("http://" + addr + "/federation/register/challenge")
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /federation/register/challenge: %s", resp.Status)
	}
	return nil
}

var _ = Describe("Slow clients", func() {
	It("are cut off by the read-header, read and idle timeouts while others are served", func() {
		s := newServer(Options{ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second,
			WriteTimeout: 4 * time.Second, IdleTimeout: 2 * time.Second})
		addr := runServer(s)
		for _, path := range []string{"/federation/submit", "/federation/register"} {
			Expect(slowloris.Run(slowloris.Target{Addr: addr, GetPath: "/federation/register/challenge",
				PostPath: path, ContentType: "application/json",
				ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second,
				Served: func() error { return challengeServed(addr) }})).To(Succeed(), path)
		}
		Expect(challengeServed(addr)).To(Succeed())
	})

	It("meet a server with every timeout set by default", func() {
		srv := newServer(Options{}).httpServer(ctx)
		Expect(srv.ReadHeaderTimeout).To(Equal(DefaultReadHeaderTimeout))
		Expect(srv.ReadTimeout).To(Equal(DefaultReadTimeout))
		Expect(srv.WriteTimeout).To(Equal(DefaultWriteTimeout))
		Expect(srv.IdleTimeout).To(Equal(DefaultIdleTimeout))
		// The write timeout runs from the end of the headers: it must outlast the read of a
		// body and the wait for the controller.
		Expect(srv.WriteTimeout).To(BeNumerically(">", srv.ReadTimeout+DefaultRegisterTimeout))
		Expect(srv.MaxHeaderBytes).To(BeNumerically(">", 0))
	})
})
