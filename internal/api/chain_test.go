package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

func TestListEntries(t *testing.T) {
	f := newFixture(t, 120, nil)
	tests := map[string]struct {
		query            string
		wantFirst, wantN int64
		wantLimit        int
	}{
		"defaults":               {query: "", wantFirst: 1, wantN: 50, wantLimit: 50},
		"a later page":           {query: "?limit=20&offset=40", wantFirst: 41, wantN: 20, wantLimit: 20},
		"the short last page":    {query: "?limit=50&offset=100", wantFirst: 101, wantN: 20, wantLimit: 50},
		"past the end":           {query: "?offset=500", wantLimit: 50},
		"the largest page":       {query: "?limit=1000", wantFirst: 1, wantN: 120, wantLimit: 1000},
		"limit 0 counts only":    {query: "?limit=0", wantLimit: 0},
		"unknown params ignored": {query: "?order=desc&limit=2", wantFirst: 1, wantN: 2, wantLimit: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := f.do(http.MethodGet, "/api/chain"+tc.query, "", nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			var p entryPage
			decode(t, body, &p)
			if p.Total != 120 || p.Limit != tc.wantLimit || int64(len(p.Entries)) != tc.wantN || p.Entries == nil {
				t.Fatalf("total %d, limit %d, %d entries; want 120, %d, %d", p.Total, p.Limit, len(p.Entries), tc.wantLimit, tc.wantN)
			}
			for i, e := range p.Entries {
				if e.Seq != tc.wantFirst+int64(i) {
					t.Fatalf("entry %d has seq %d, want %d", i, e.Seq, tc.wantFirst+int64(i))
				}
			}
			if len(p.Entries) > 0 {
				first, err := f.store.Entry(t.Context(), tc.wantFirst)
				if err != nil {
					t.Fatal(err)
				}
				sum := summaryOf(first)
				if want := summaryViewOf(&sum); !reflect.DeepEqual(p.Entries[0], want) {
					t.Errorf("first entry\n got %+v\nwant %+v", p.Entries[0], want)
				}
			}
		})
	}
	for _, q := range []string{"limit=-1", "limit=abc", "limit=1001", "limit=1.5", "limit=%2B3", "offset=-5", "offset=x", "offset=99999999999999999999999"} {
		resp, body := f.do(http.MethodGet, "/api/chain?"+q, "", nil)
		e := wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
		if name, _, _ := strings.Cut(q, "="); !strings.Contains(e.Message, name) {
			t.Errorf("%s: error %q does not name the parameter", q, e.Message)
		}
	}
}

func TestGetEntry(t *testing.T) {
	f := newFixture(t, 12, nil)
	want, err := f.store.Entry(t.Context(), 7)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := f.do(http.MethodGet, "/api/chain/7", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var got entryDetail
	decode(t, body, &got) // canonical_body_b64 decodes from standard base64 into []byte
	if !bytes.Equal(got.CanonicalBodyB64, want.CanonicalBody) {
		t.Fatalf("canonical_body_b64 %q does not decode to the stored body", got.CanonicalBodyB64)
	}
	if !bytes.Equal(got.Body, want.CanonicalBody) {
		t.Errorf("body %s, want the canonical body %s", got.Body, want.CanonicalBody)
	}
	if got.Seq != 7 || got.HMACHash != want.HMACHash || got.PrevHash != want.PrevHash || got.CanonicalHash != want.CanonicalHash ||
		got.TraceID != want.TraceID || got.SpanID != want.SpanID || got.SpanName != want.SpanName || got.TimestampNSStr != want.TimestampNS ||
		got.TimestampNS == nil || strconv.FormatInt(*got.TimestampNS, 10) != want.TimestampNS {
		t.Errorf("entry %+v %+v, want %+v", got.entryHead, got.entryHashes, want)
	}
	if got.Time != "2026-11-21T12:00:07Z" {
		t.Errorf("time %q", got.Time)
	}
	var span protocol.SpanBody
	if err := json.Unmarshal(got.Body, &span); err != nil || span.Attributes["gen_ai.request.model"] != "gpt-4o" {
		t.Errorf("body does not decode as a span: %+v, %v", span, err)
	}

	for _, seq := range []string{"13", "1000000", "9223372036854775807"} {
		resp, body := f.do(http.MethodGet, "/api/chain/"+seq, "", nil)
		e := wantError(t, resp, body, http.StatusNotFound, codeNotFound)
		if !strings.Contains(e.Message, seq) {
			t.Errorf("404 for %s does not name it: %q", seq, e.Message)
		}
	}
	for _, seq := range []string{"0", "-1", "abc", "1e3", "%2B3", "3.0", "99999999999999999999"} {
		resp, body := f.do(http.MethodGet, "/api/chain/"+seq, "", nil)
		wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
	}

	// A body that is not JSON (tampered) is shown as null, not an error.
	f.tamper(`UPDATE chain SET canonical_body = ? WHERE seq = 3`, []byte("{not json"))
	resp, body = f.do(http.MethodGet, "/api/chain/3", "", nil)
	var bad entryDetail
	decode(t, body, &bad)
	if resp.StatusCode != http.StatusOK || string(bad.Body) != "null" || string(bad.CanonicalBodyB64) != "{not json" {
		t.Errorf("tampered entry: %d %s", resp.StatusCode, body)
	}
}

func TestChainStats(t *testing.T) {
	f := newFixture(t, 30, nil)
	resp, body := f.do(http.MethodGet, "/api/chain/stats", "", nil)
	var st statsView
	decode(t, body, &st)
	last, err := f.store.Entry(t.Context(), 30)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || st.Entries != 30 || st.FirstSeq != 1 || st.LastSeq != 30 ||
		st.LastHMACHash != last.HMACHash || st.LastTimestampNS != last.TimestampNS || st.FileBytes == 0 {
		t.Fatalf("stats %d %+v", resp.StatusCode, st)
	}
	if !st.EntriesCounted {
		t.Errorf("stats without count=false did not count: %+v", st)
	}

	// A row deleted in the middle: the count sees it, the seq range (count=false, constant
	// time) does not; verification is what finds it.
	f.tamper(`DELETE FROM chain WHERE seq = 15`)
	for query, want := range map[string]struct {
		entries int64
		counted bool
	}{"": {29, true}, "?count=true": {29, true}, "?count=false": {30, false}} {
		resp, body := f.do(http.MethodGet, "/api/chain/stats"+query, "", nil)
		st = statsView{}
		decode(t, body, &st)
		if resp.StatusCode != http.StatusOK || st.Entries != want.entries || st.TotalEntries != want.entries || st.EntriesCounted != want.counted || st.LastSeq != 30 {
			t.Errorf("stats%s: %d %+v, want %d entries, counted %t", query, resp.StatusCode, st, want.entries, want.counted)
		}
	}
	resp, body = f.do(http.MethodGet, "/api/chain/stats?count=maybe", "", nil)
	wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
}

func TestVerifyChain(t *testing.T) {
	f := newFixture(t, 40, nil)
	verify := func(body string) verifyResult {
		t.Helper()
		resp, out := f.postJSON("/api/chain/verify", body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("verify %s: %d %s", body, resp.StatusCode, out)
		}
		var res verifyResult
		decode(t, out, &res)
		return res
	}
	tests := map[string]struct {
		body string
		want verifyResult
	}{
		"empty body: smoke":  {body: "", want: verifyResult{Valid: true, Mode: "smoke", FirstSeq: 1, LastSeq: 40, EntriesVerified: 2, Checked: 2, HMACsChecked: true}},
		"empty object":       {body: "{}", want: verifyResult{Valid: true, Mode: "smoke", FirstSeq: 1, LastSeq: 40, EntriesVerified: 2, Checked: 2, HMACsChecked: true}},
		"full":               {body: `{"full":true}`, want: verifyResult{Valid: true, Mode: "full", FirstSeq: 1, LastSeq: 40, EntriesVerified: 40, Checked: 40, HMACsChecked: true}},
		"full over a window": {body: `{"full":true,"first_seq":5,"last_seq":9}`, want: verifyResult{Valid: true, Mode: "full", FirstSeq: 5, LastSeq: 9, EntriesVerified: 5, Checked: 5, HMACsChecked: true}},
		"documented window":  {body: `{"full":true,"seq_start":5,"seq_end":9}`, want: verifyResult{Valid: true, Mode: "full", FirstSeq: 5, LastSeq: 9, EntriesVerified: 5, Checked: 5, HMACsChecked: true}},
		"both names agree":   {body: `{"full":true,"seq_start":5,"first_seq":5,"seq_end":9,"last_seq":9}`, want: verifyResult{Valid: true, Mode: "full", FirstSeq: 5, LastSeq: 9, EntriesVerified: 5, Checked: 5, HMACsChecked: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := verify(tc.body)
			got.ElapsedMS = 0
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}

	bad := map[string]struct {
		contentType, body string
		status            int
		code              string
	}{
		"not JSON":            {body: `{"full":`, status: http.StatusBadRequest, code: codeBadJSON},
		"wrong type":          {body: `{"full":"yes"}`, status: http.StatusBadRequest, code: codeBadJSON},
		"unknown field":       {body: `{"ful":true}`, status: http.StatusBadRequest, code: codeBadJSON},
		"two objects":         {body: `{} {}`, status: http.StatusBadRequest, code: codeBadJSON},
		"trailing garbage":    {body: `{}x`, status: http.StatusBadRequest, code: codeBadJSON},
		"an array":            {body: `[]`, status: http.StatusBadRequest, code: codeBadJSON},
		"window reversed":     {body: `{"first_seq":9,"last_seq":5}`, status: http.StatusBadRequest, code: codeBadParameter},
		"window past end":     {body: `{"last_seq":41}`, status: http.StatusBadRequest, code: codeBadParameter},
		"first past end":      {body: `{"first_seq":41}`, status: http.StatusBadRequest, code: codeBadParameter},
		"negative seq":        {body: `{"first_seq":-1}`, status: http.StatusBadRequest, code: codeBadParameter},
		"seq_start disagrees": {body: `{"seq_start":5,"first_seq":6}`, status: http.StatusBadRequest, code: codeBadParameter},
		"seq_end disagrees":   {body: `{"seq_end":9,"last_seq":8}`, status: http.StatusBadRequest, code: codeBadParameter},
		"seq_end past end":    {body: `{"seq_end":41}`, status: http.StatusBadRequest, code: codeBadParameter},
		"form content type":   {contentType: "application/x-www-form-urlencoded", body: `full=true`, status: http.StatusUnsupportedMediaType, code: codeUnsupportedMedia},
		"huge body":           {body: `{"full":true,"first_seq":1` + strings.Repeat(" ", maxJSONBodyBytes) + `}`, status: http.StatusRequestEntityTooLarge, code: codeBodyTooLarge},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			ct := tc.contentType
			if ct == "" {
				ct = "application/json"
			}
			resp, body := f.do(http.MethodPost, "/api/chain/verify", ct, strings.NewReader(tc.body))
			wantError(t, resp, body, tc.status, tc.code)
		})
	}

	// Tampering is found at its seq by a full verification; smoke checks only the ends.
	f.tamper(`UPDATE chain SET span_name = 'edited' WHERE seq = 17`)
	if got := verify(`{}`); !got.Valid {
		t.Errorf("smoke verification looked at seq 17: %+v", got)
	}
	got := verify(`{"full":true}`)
	if got.Valid || got.FirstBadSeq != 17 || got.Reason != protocol.ReasonColumn || got.Checked != 16 || got.EntriesVerified != 16 ||
		got.Error == nil || *got.Error == "" || got.ErrorSeq == nil || *got.ErrorSeq != 17 || got.WrongSecret {
		t.Errorf("full verification of a chain with seq 17 edited: %+v", got)
	}
}

func TestVerifyReportsAWrongSecret(t *testing.T) {
	f := newFixture(t, 5, nil)
	// Re-key every HMAC as if sealed with another secret: the first entry fails its HMAC,
	// and so does the next, which still links to it.
	entries, _, err := f.store.Summaries(t.Context(), 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	prev := protocol.GenesisPrevHash
	for _, e := range entries {
		h := protocol.EntryHMAC(bytes.Repeat([]byte{0x36}, 32), prev, e.CanonicalHash)
		f.tamper(`UPDATE chain SET prev_hash = ?, hmac_hash = ? WHERE seq = ?`, prev, h, e.Seq)
		prev = h
	}
	resp, body := f.postJSON("/api/chain/verify", `{"full":true}`)
	var res verifyResult
	decode(t, body, &res)
	if resp.StatusCode != http.StatusOK || res.Valid || !res.WrongSecret || res.FirstBadSeq != 1 || res.Reason != protocol.ReasonHMAC {
		t.Fatalf("verify with the wrong secret: %d %+v", resp.StatusCode, res)
	}
}

func TestEmptyChain(t *testing.T) {
	f := newFixture(t, 0, nil)
	resp, body := f.do(http.MethodGet, "/api/chain", "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"entries":[]`) || !strings.Contains(string(body), `"total":0`) {
		t.Errorf("list of an empty chain: %d %s", resp.StatusCode, body)
	}
	resp, body = f.postJSON("/api/chain/verify", `{"full":true}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"valid":true`) || !strings.Contains(string(body), `"checked":0`) {
		t.Errorf("verify of an empty chain: %d %s", resp.StatusCode, body)
	}
	resp, body = f.postJSON("/api/chain/verify", `{"first_seq":1}`)
	wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
	resp, body = f.do(http.MethodGet, "/api/chain/1", "", nil)
	wantError(t, resp, body, http.StatusNotFound, codeNotFound)
	resp, body = f.do(http.MethodGet, "/api/chain/stats", "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"entries":0`) {
		t.Errorf("stats of an empty chain: %d %s", resp.StatusCode, body)
	}
}
