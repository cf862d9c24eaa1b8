package webhook

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("GET /federation/log/...", func() {
	It("serves the embedded log's checkpoint and tiles as the controllers wrote them", func() {
		s := newServer(Options{LogDir: logDir})
		dir := filepath.Join(logDir, fedKey.Namespace, fedKey.Name)
		var a answer
		Eventually(func(g Gomega) {
			a = do(s, http.MethodGet, "/federation/log/checkpoint", nil)
			g.Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
			onDisk, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(a.raw).To(Equal(onDisk))
		}).Should(Succeed())
		Expect(a.header.Get("Content-Type")).To(HavePrefix("text/plain"))
		Expect(a.header.Get("Cache-Control")).To(Equal("no-cache"))
		lines := strings.Split(string(a.raw), "\n")
		size, err := strconv.ParseInt(lines[1], 10, 64)
		Expect(err).NotTo(HaveOccurred())
		Expect(size).To(BeNumerically(">=", 1), "the genesis record is logged")

		if size < 256 { // one partial tile of each kind
			tile := do(s, http.MethodGet, "/federation/log/tile/0/000.p/"+lines[1], nil)
			Expect(tile.status).To(Equal(http.StatusOK), string(tile.raw))
			Expect(tile.raw).To(HaveLen(32 * int(size)))
			Expect(tile.header.Get("Content-Type")).To(Equal("application/octet-stream"))
			entries := do(s, http.MethodGet, "/federation/log/tile/entries/000.p/"+lines[1], nil)
			Expect(entries.status).To(Equal(http.StatusOK), string(entries.raw))
			Expect(entries.raw).NotTo(BeEmpty())
		}
	})

	It("serves nothing else of the log's directory, and nothing without a log directory", func() {
		s := newServer(Options{LogDir: logDir})
		for _, p := range []string{"/federation/log/leaf-index.db", "/federation/log/tile/", "/federation/log/tile/../leaf-index.db",
			"/federation/log/tile/%2e%2e/leaf-index.db", "/federation/log/tile/0/999"} {
			a := do(s, http.MethodGet, p, nil)
			Expect(a.status).To(Equal(http.StatusNotFound), p)
			Expect(a.raw).NotTo(ContainSubstring("SQLite"), p)
			if a.body != nil {
				Expect(a.body["error"]).To(BeElementOf("not_found", "log_not_served"), p)
			}
		}
		a := do(newServer(Options{}), http.MethodGet, "/federation/log/checkpoint", nil)
		Expect(a.status).To(Equal(http.StatusNotFound))
		Expect(a.body).To(HaveKeyWithValue("error", "log_not_served"))
	})
})
