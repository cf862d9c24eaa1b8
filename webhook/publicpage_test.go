package webhook

import (
	"bytes"
	"crypto/ed25519"
	"net/http"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/net/html"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

var _ = Describe("GET / (the public page)", Ordered, func() {
	var (
		f              readFederation
		s              *Server
		fed            fv1.Federation
		aliceID, bobID string
	)
	BeforeAll(func() {
		f = newReadFederation()
		s = f.serverWith(Options{LogDir: logDir})
		alice, bob := newRegistrant("Page Alice"), newRegistrant("Page <b>Bob</b>")
		aliceID, bobID = f.register(s, alice), f.register(s, bob)
		f.register(s, newRegistrant("Page Carol"))
		f.submit(alice, aliceID, "page-alice-1", 0, 3)
		subA := f.submission("page-alice-1")
		key := f.signingKey()
		logged(f.anchorOver("anchor-20261105-001", key, subA))
		logged(f.anchorOver("anchor-20261105-002", key, subA))
		_, forger, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		f.anchorOver("anchor-20261105-003", forger, subA) // not the federation's: never shown
		logged(f.anchorOver("anchor-20261105-004", key, subA))
		Expect(k8sClient.Get(ctx, f.key, &fed)).To(Succeed())
	})

	It("shows the key, the operators and the anchors the federation made with their verified log entries, not a forged one", func() {
		a := doAuth(s, http.MethodGet, "/", "", nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.header.Get("Content-Type")).To(HavePrefix("text/html"))
		Expect(a.header.Get("Content-Security-Policy")).To(ContainSubstring("default-src 'none'"))
		doc := parsePage(a.raw)

		Expect(text(byID(doc, "fingerprint"))).To(Equal(string(fed.Status.PublicKeyFingerprint)))
		Expect(text(byID(doc, "federation-key"))).To(Equal(string(fed.Status.PublicKeyPEM)))
		Expect(text(byID(doc, "key-history"))).To(ContainSubstring(string(fed.Status.KeyHistory[0].Fingerprint)))
		Expect(text(byID(doc, "genesis"))).To(ContainSubstring("log index"))
		Expect(text(byID(doc, "checkpoint"))).To(ContainSubstring("verified under the log's key"))

		ops := text(byID(doc, "operators"))
		Expect(ops).To(ContainSubstring(aliceID))
		Expect(ops).To(ContainSubstring("Page Alice"))
		Expect(ops).To(ContainSubstring("Page <b>Bob</b>"), "an org name is shown as text")
		Expect(string(a.raw)).NotTo(ContainSubstring("<b>Bob</b>"), "an org name is escaped")
		Expect(ops).To(ContainSubstring(string(fv1.PhaseActive)))
		Expect(rowOf(doc, "operators", aliceID)).To(MatchRegexp(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s*$`), "Alice's last submission is shown")

		Expect(anchorRows(doc)).To(Equal([]string{"anchor-20261105-004", "anchor-20261105-002", "anchor-20261105-001"}),
			"the forged anchor-20261105-003 is not shown")
		link := find(byID(doc, "anchor-20261105-001"), func(n *html.Node) bool { return n.Data == "a" && strings.HasPrefix(attr(n, "href"), logPrefix) })
		Expect(link).NotTo(BeNil(), "the anchor's log index links the served log")
		href := attr(link, "href")
		Expect(href).To(HavePrefix(logPrefix + "/tile/entries/"))
		tile := doAuth(s, http.MethodGet, href, "", nil)
		Expect(tile.status).To(Equal(http.StatusOK), "the linked entry bundle is served: "+href)
	})

	It("pages both tables on the server, keeping the other table's page", func() {
		paged := f.serverWith(Options{LogDir: logDir})
		paged.pageRows = 2
		doc := parsePage(doAuth(paged, http.MethodGet, "/", "", nil).raw)
		Expect(anchorRows(doc)).To(Equal([]string{"anchor-20261105-004", "anchor-20261105-002"}))
		Expect(operatorRows(doc)).To(HaveLen(2))
		firstOps := operatorRows(doc)

		older := attr(byID(doc, "anchors-next"), "href")
		Expect(older).To(HavePrefix("?anchors_page_token="))
		doc2 := parsePage(doAuth(paged, http.MethodGet, "/"+older, "", nil).raw)
		Expect(anchorRows(doc2)).To(Equal([]string{"anchor-20261105-001"}))
		Expect(byID(doc2, "anchors-next")).To(BeNil(), "the last page of anchors has no next link")
		Expect(operatorRows(doc2)).To(Equal(firstOps), "the operators stay on their page")

		next := attr(byID(doc2, "operators-next"), "href")
		q, err := url.ParseQuery(strings.TrimPrefix(next, "?"))
		Expect(err).NotTo(HaveOccurred())
		Expect(q.Get("anchors_page_token")).NotTo(BeEmpty(), "the anchors stay on their page")
		doc3 := parsePage(doAuth(paged, http.MethodGet, "/"+next, "", nil).raw)
		Expect(operatorRows(doc3)).To(HaveLen(1))
		Expect(append(firstOps, operatorRows(doc3)...)).To(ContainElements(aliceID, bobID))
		Expect(anchorRows(doc3)).To(Equal([]string{"anchor-20261105-001"}))
	})

	It("refuses a page token it did not give, and serves its assets and nothing else under /", func() {
		for _, q := range []string{"?anchors_page_token=bm90LWpzb24", "?anchors_page_token=!!", "?operators_page_token=alice"} {
			a := doAuth(s, http.MethodGet, "/"+q, "", nil)
			Expect(a.status).To(Equal(http.StatusBadRequest), q)
			Expect(a.body).To(HaveKeyWithValue("error", "invalid_page_token"))
		}
		js := doAuth(s, http.MethodGet, "/assets/page.js", "", nil)
		Expect(js.status).To(Equal(http.StatusOK))
		Expect(js.header.Get("Content-Type")).To(HavePrefix("text/javascript"))
		Expect(doAuth(s, http.MethodGet, "/assets/page.css", "", nil).status).To(Equal(http.StatusOK))
		Expect(doAuth(s, http.MethodGet, "/assets/index.html", "", nil).status).To(Equal(http.StatusNotFound))
		Expect(doAuth(s, http.MethodGet, "/nowhere", "", nil).body).To(HaveKeyWithValue("error", "not_found"))
		post := doAuth(s, http.MethodPost, "/", "", nil)
		Expect(post.status).To(Equal(http.StatusMethodNotAllowed))
		Expect(post.header.Get("Allow")).To(Equal("GET"))
	})
})

// parsePage parses an HTML answer.
func parsePage(raw []byte) *html.Node {
	GinkgoHelper()
	doc, err := html.Parse(bytes.NewReader(raw))
	Expect(err).NotTo(HaveOccurred())
	return doc
}

// find is the first node under n (n included) that match accepts, nil when none.
func find(n *html.Node, match func(*html.Node) bool) *html.Node {
	if n == nil {
		return nil
	}
	if n.Type == html.ElementNode && match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if got := find(c, match); got != nil {
			return got
		}
	}
	return nil
}

// findAll is every node under n that match accepts, in document order.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	if n.Type == html.ElementNode && match(n) {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, findAll(c, match)...)
	}
	return out
}

func attr(n *html.Node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func byID(doc *html.Node, id string) *html.Node {
	return find(doc, func(n *html.Node) bool { return attr(n, "id") == id })
}

// text is n's text content.
func text(n *html.Node) string {
	if n == nil {
		return ""
	}
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(text(c))
	}
	return b.String()
}

// anchorRows are the anchor IDs of the anchors table, in order.
func anchorRows(doc *html.Node) []string {
	var ids []string
	for _, tr := range findAll(byID(doc, "anchors"), func(n *html.Node) bool { return n.Data == "tr" && attr(n, "id") != "" }) {
		ids = append(ids, attr(tr, "id"))
	}
	return ids
}

// operatorRows are the operator IDs of the operators table, in order.
func operatorRows(doc *html.Node) []string {
	var ids []string
	for _, a := range findAll(byID(doc, "operators"), func(n *html.Node) bool {
		return n.Data == "a" && strings.HasPrefix(attr(n, "href"), "/federation/operator/")
	}) {
		ids = append(ids, strings.TrimPrefix(attr(a, "href"), "/federation/operator/"))
	}
	return ids
}

// rowOf is the text of the row of table section that mentions id.
func rowOf(doc *html.Node, section, id string) string {
	tr := find(byID(doc, section), func(n *html.Node) bool { return n.Data == "tr" && strings.Contains(text(n), id) })
	return strings.TrimSpace(text(tr))
}
