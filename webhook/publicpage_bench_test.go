package webhook

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkPublicPage times GET / on a federation of 1,000 operators (each with a head
// submission) and 10,000 anchors the federation signed, three participants each: the
// first page and the 100th page of anchors. The lists come from memory as the cache gives
// them; each request still sorts every key and verifies the page's 50 anchors. The log is
// a Rekor log with a pinned key and no snapshot, so no log entry is verified (on a logged
// federation each row adds its entry's proof check).
func BenchmarkPublicPage(b *testing.B) {
	m, _ := pageFixture(b, 1000, 10000)
	s, err := New(Options{Client: m, APIReader: m, Informers: noInformers(), Federation: types.NamespacedName{Namespace: "bench", Name: "cairn"}, RatePerSecond: -1})
	if err != nil {
		b.Fatal(err)
	}
	deep := pageKey{At: m.anchors[10000-1-100*pageSize].Spec.AnchoredAt, Name: m.anchors[10000-1-100*pageSize].Name}
	for name, path := range map[string]string{
		"first":             "/",
		"anchors-page-101":  "/?anchors_page_token=" + encodePageKey(&deep),
		"operators-page-20": "/?operators_page_token=" + string(m.operators[950].Status.OperatorID),
	} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
				}
			}
		})
	}
}
