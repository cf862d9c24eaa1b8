package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestVerifyQuotesLongValuesShort changes the span_name column of entry 2 to 1.5 MB: the
// verification's error quotes at most protocol.MaxQuoted bytes of it and says how long it
// was, and the structured fields are as for any column mismatch.
func TestVerifyQuotesLongValuesShort(t *testing.T) {
	f := newFixture(t, 3, nil)
	f.tamper(`UPDATE chain SET span_name = ? WHERE seq = 2`, strings.Repeat("x", 3<<19))
	resp, body := f.postJSON("/api/chain/verify", `{"full":true}`)
	if len(body) > 4096 {
		t.Fatalf("answer of %d bytes: %.400s", len(body), body)
	}
	var res verifyResult
	decode(t, body, &res)
	if resp.StatusCode != http.StatusOK || res.Valid || res.FirstBadSeq != 2 || res.ErrorSeq == nil || *res.ErrorSeq != 2 ||
		res.Reason != protocol.ReasonColumn || res.Error == nil {
		t.Fatalf("verify: %d %s", resp.StatusCode, body)
	}
	if msg := *res.Error; len(msg) > 2*protocol.MaxQuoted+100 || !strings.Contains(msg, "… (1572864 bytes)") {
		t.Errorf("error of %d bytes: %s", len(msg), msg)
	}
}
