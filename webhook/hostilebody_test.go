package webhook

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Hostile bodies", func() {
	It("are refused on every route that takes one: 413 over the limit, 400 nested 100,000 deep", func() {
		const limit = 64 << 10
		small, big := submitServer(Options{MaxBodyBytes: limit}), submitServer(Options{})
		r := registered(big, "Hostile Org")
		var bodyRoutes []route
		for _, rt := range big.routes() {
			if rt.request != nil {
				bodyRoutes = append(bodyRoutes, rt)
			}
		}
		// register, submit, withdraw and rotate-key today; a route added later is walked too.
		Expect(len(bodyRoutes)).To(BeNumerically(">=", 4))
		post := func(s *Server, rt route, body []byte) answer {
			GinkgoHelper()
			path := strings.Replace(rt.path, "{id}", idOf(r), 1)
			req := httptest.NewRequest(rt.method, path, bytes.NewReader(body)).WithContext(ctx)
			req.Header.Set("Content-Type", "application/json")
			switch {
			case rt.path == "/federation/submit": // authenticated by an operator's token: a valid one
				req.Header.Set("Authorization", bodyToken(r.key, body))
			case strings.HasPrefix(rt.path, "/federation/operator/"): // by the admin token
				req.Header.Set("Authorization", "Bearer "+adminToken(submitFed().key))
			}
			return record(s, req)
		}
		for _, rt := range bodyRoutes {
			By(rt.method + " " + rt.path)
			a := post(small, rt, append([]byte("{"), bytes.Repeat([]byte(" "), limit)...))
			Expect(a.status).To(Equal(http.StatusRequestEntityTooLarge), string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("error", "body_too_large"))
			Expect(a.body).To(HaveKeyWithValue("message", Not(BeEmpty())))

			for _, level := range []string{"[", `{"a":`} {
				a = post(big, rt, []byte(strings.Repeat(level, 100_000)))
				Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
				Expect(a.body).To(HaveKeyWithValue("error", Not(BeEmpty())))
				Expect(a.body).To(HaveKeyWithValue("message", Not(BeEmpty())))
			}
			Expect(challenge(big)).NotTo(BeEmpty(), "the server still serves")
		}
	})
})
