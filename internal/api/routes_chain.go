package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Paging of GET /api/chain.
const (
	defaultPageLimit = 50
	maxPageLimit     = 1000
)

// entryReasons are the reasons an entry fails verification (protocol.Reason*).
var entryReasons = []string{protocol.ReasonSeq, protocol.ReasonMalformed, protocol.ReasonLink,
	protocol.ReasonBodyHash, protocol.ReasonNonCanonical, protocol.ReasonColumn, protocol.ReasonHMAC, protocol.ReasonBridge}

// entryHead is what every view of an entry starts with: where it is in the chain, when,
// and which span it holds.
type entryHead struct {
	Seq int64 `json:"seq" doc:"sequence number, from 1, without gaps" example:"12"`
	// TimestampNS is a JSON integer, as documented; it is a pointer only so that a column
	// that is not an integer (only tampering makes one) is written as null.
	TimestampNS    *int64 `json:"timestamp_ns" doc:"the span's start, nanoseconds since the Unix epoch, a JSON integer (null only for a stored column that is not one, which only tampering makes). Values are above 2^53, which JavaScript's Number cannot hold exactly: read timestamp_ns_str there" example:"1795262412000000000"`
	TimestampNSStr string `json:"timestamp_ns_str" doc:"timestamp_ns as a decimal string, exactly as stored: lossless in every JSON parser (in JavaScript, BigInt(timestamp_ns_str))" example:"\"1795262412000000000\""`
	Time           string `json:"time" doc:"timestamp_ns as RFC 3339 UTC, for people" format:"date-time" example:"\"2026-11-21T12:00:12Z\""`
	TraceID        string `json:"trace_id" doc:"32 lowercase hex" example:"\"4bf92f3577b34da6a3ce929d0e0e4736\""`
	SpanID         string `json:"span_id" doc:"16 lowercase hex" example:"\"00f067aa0ba902b7\""`
	SpanName       string `json:"span_name" doc:"the span's name, as in the body" example:"\"chat gpt-4o\""`
	SpanKind       string `json:"span_kind" doc:"the span's kind, as in the body" example:"\"client\""`
}

// entryHashes are an entry's three hashes, which every view of it ends with.
type entryHashes struct {
	CanonicalHash string `json:"canonical_hash" doc:"hex SHA-256 of the canonical body" example:"\"9f2b6c0d4e8a1f3b5c7d9e0f2a4b6c8d0e1f3a5b7c9d2e4f6a8b0c1d3e5f7a9b\""`
	PrevHash      string `json:"prev_hash" doc:"hmac_hash of the previous entry; 64 zeros for seq 1" example:"\"3c5e7a9b1d2f4a6c8e0b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c\""`
	HMACHash      string `json:"hmac_hash" doc:"hex HMAC-SHA256(secret, prev_hash ‖ canonical_hash)" example:"\"7e1d3c5b9a2f4e6d8c0b1a3f5e7d9c2b4a6f8e0d1c3b5a7f9e2d4c6b8a0f1e3d\""`
}

// entrySummary is a chain entry as a page of GET /api/chain shows it: without its body,
// whose size it gives. appendSummaryJSON writes it; the type gives the schema.
type entrySummary struct {
	entryHead
	BodyBytes int64 `json:"body_bytes" doc:"size of the canonical body in bytes; GET /api/chain/{seq} gives the body" example:"1184"`
	entryHashes
}

// entryDetail is an entry as GET /api/chain/{seq} shows it: the members an export gives
// it, the time, and its body decoded. appendEntryJSON writes it; the type gives the schema.
type entryDetail struct {
	entryHead
	CanonicalBodyB64 []byte `json:"canonical_body_b64" doc:"the canonical body (RFC 8785 JSON of the span), base64"`
	entryHashes
	Body json.RawMessage `json:"body" doc:"the canonical body decoded: name, kind, attributes, status_code, status_description, start_time_ns, end_time_ns, trace_id, span_id; null if the stored body is not JSON" example:"{\"attributes\":{\"gen_ai.request.model\":\"gpt-4o\",\"gen_ai.usage.input_tokens\":412},\"end_time_ns\":\"1795262412900000000\",\"kind\":\"client\",\"name\":\"chat gpt-4o\",\"span_id\":\"00f067aa0ba902b7\",\"start_time_ns\":\"1795262412000000000\",\"status_code\":\"OK\",\"status_description\":\"\",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\"}"`
}

// entryPage is the answer of GET /api/chain.
type entryPage struct {
	Entries    []entrySummary `json:"entries" doc:"entries offset+1 through offset+limit, in seq order"`
	Total      int64          `json:"total" doc:"the chain's last seq: its number of entries, since seq has no gaps (verify checks that)" example:"10000"`
	Offset     int            `json:"offset" doc:"the offset asked for" example:"0"`
	Limit      int            `json:"limit" doc:"the limit applied" example:"50"`
	Pagination pagination     `json:"pagination" doc:"the page's place in the chain, as the documented API gives it"`
}

// pagination is the documented paging member of GET /api/chain.
type pagination struct {
	Limit   int  `json:"limit" doc:"the limit applied" example:"50"`
	Offset  int  `json:"offset" doc:"the offset asked for" example:"0"`
	HasMore bool `json:"has_more" doc:"entries follow this page: offset + its entries < total" example:"true"`
}

// statsView is the answer of GET /api/chain/stats.
type statsView struct {
	Entries          int64  `json:"entries" doc:"number of rows"`
	FirstSeq         int64  `json:"first_seq" doc:"lowest seq; 0 for an empty chain"`
	LastSeq          int64  `json:"last_seq" doc:"highest seq; equals entries in an unbroken chain"`
	LastHMACHash     string `json:"last_hmac_hash" doc:"hmac_hash of the last entry: the chain's head" example:"\"7e1d3c5b9a2f4e6d8c0b1a3f5e7d9c2b4a6f8e0d1c3b5a7f9e2d4c6b8a0f1e3d\""`
	FirstTimestampNS string `json:"first_timestamp_ns" doc:"timestamp_ns of the first entry, decimal nanoseconds"`
	LastTimestampNS  string `json:"last_timestamp_ns" doc:"timestamp_ns of the last entry, decimal nanoseconds"`
	FileBytes        int64  `json:"file_bytes" doc:"size of the SQLite file and its write-ahead log"`
	EntriesCounted   bool   `json:"entries_counted" doc:"true: entries counts the rows (reading the whole table); false (count=false): entries is last_seq − first_seq + 1, read in constant time"`

	// The documented API's members.
	TotalEntries  int64   `json:"total_entries" doc:"entries, as the documented API calls it" example:"12"`
	FirstEntry    *string `json:"first_entry" doc:"time of the first entry, RFC 3339 UTC; null for an empty chain" example:"\"2026-11-21T12:00:01Z\""`
	LastEntry     *string `json:"last_entry" doc:"time of the last entry, RFC 3339 UTC; null for an empty chain" example:"\"2026-11-21T12:11:01Z\""`
	AgeDays       float64 `json:"age_days" doc:"days from the first entry to the last, rounded to 3 decimals" example:"0.008"`
	EntriesPerDay float64 `json:"entries_per_day" doc:"total_entries / age_days, rounded to 1 decimal; 0 when age_days is 0" example:"1500"`
	DBSizeBytes   int64   `json:"db_size_bytes" doc:"size of the SQLite file alone, without its write-ahead log (file_bytes counts both)" example:"40960"`
}

// documented fills the documented members of v from the others; dbPath is the chain's
// file.
func (v *statsView) documented(st *store.Stats, dbPath string) {
	v.TotalEntries = st.Entries
	if st.Entries > 0 {
		first := time.Unix(0, st.FirstTimestampNS).UTC().Format(time.RFC3339Nano)
		last := time.Unix(0, st.LastTimestampNS).UTC().Format(time.RFC3339Nano)
		v.FirstEntry, v.LastEntry = &first, &last
		v.AgeDays = math.Round(float64(st.LastTimestampNS-st.FirstTimestampNS)/1e9/86400*1000) / 1000
		if v.AgeDays > 0 {
			v.EntriesPerDay = math.Round(float64(st.Entries)/v.AgeDays*10) / 10
		}
	}
	if fi, err := os.Stat(dbPath); err == nil {
		v.DBSizeBytes = fi.Size()
	}
}

// verifyRequest is the body of POST /api/chain/verify. seq_start and seq_end are the
// documented API's names of the window; first_seq and last_seq are Cairn's earlier ones,
// still accepted. resolve merges them.
type verifyRequest struct {
	Full     bool  `json:"full,omitempty" doc:"check every entry; otherwise (smoke) only the window's first and last" example:"true"`
	SeqStart int64 `json:"seq_start,omitempty" doc:"first seq of the window; absent or 0: 1"`
	SeqEnd   int64 `json:"seq_end,omitempty" doc:"last seq of the window; absent or 0: the chain's last"`
	FirstSeq int64 `json:"first_seq,omitempty" doc:"seq_start under its earlier name; if both are given they must be equal"`
	LastSeq  int64 `json:"last_seq,omitempty" doc:"seq_end under its earlier name; if both are given they must be equal"`
}

// resolve merges each window bound given under two names into first_seq and last_seq,
// and refuses a request that gives one bound two different values.
func (r *verifyRequest) resolve() error {
	for _, b := range []struct {
		documented, earlier string
		doc, old            *int64
	}{{"seq_start", "first_seq", &r.SeqStart, &r.FirstSeq}, {"seq_end", "last_seq", &r.SeqEnd, &r.LastSeq}} {
		if *b.doc != 0 && *b.old != 0 && *b.doc != *b.old {
			return badRequest(codeBadParameter, "%s %d and %s %d disagree: give one", b.documented, *b.doc, b.earlier, *b.old)
		}
		if *b.doc != 0 {
			*b.old = *b.doc
		}
	}
	return nil
}

// verifyResult is the answer of POST /api/chain/verify.
type verifyResult struct {
	Valid           bool        `json:"valid" doc:"every entry checked passed" example:"true"`
	Mode            string      `json:"mode" enum:"smoke,full" doc:"smoke: the window's first and last entries; full: every entry"`
	FirstSeq        int64       `json:"first_seq" doc:"the window checked; 0 for an empty chain" example:"1"`
	LastSeq         int64       `json:"last_seq" doc:"the window checked; 0 for an empty chain" example:"10000"`
	EntriesVerified int64       `json:"entries_verified" doc:"entries that passed every check: the window's length when valid, fewer when not" example:"10000"`
	Checked         int64       `json:"checked" doc:"entries_verified under its earlier name, kept for earlier clients" example:"10000"`
	HMACsChecked    bool        `json:"hmacs_checked" doc:"whether HMACs were recomputed (the server has the secret)" example:"true"`
	FirstBadSeq     int64       `json:"first_bad_seq,omitempty" doc:"seq of the first entry that failed"`
	ErrorSeq        *int64      `json:"error_seq" doc:"seq of the first entry that failed, as the documented API names it; null when valid" example:"null"`
	Reason          string      `json:"reason,omitempty" doc:"why it failed"`
	WrongSecret     bool        `json:"wrong_secret,omitempty" doc:"the failure looks like a wrong HMAC secret rather than tampering"`
	Error           *string     `json:"error" doc:"the failure, for people; null when valid" example:"null"`
	ElapsedMS       float64     `json:"elapsed_ms" doc:"time the verification took, in milliseconds"`
	Import          *importView `json:"import,omitempty" doc:"what was checked of the entries imported from BIJOTEL, when the chain begins with a bridge record (cairn chain import); absent otherwise"`
}

// importView is what a verification checked of the entries a bridge record imports.
type importView struct {
	FirstSeq             int64  `json:"first_seq" doc:"the first imported entry" example:"2"`
	LastSeq              int64  `json:"last_seq" doc:"the last imported entry" example:"100001"`
	LegacyFirstSeq       int64  `json:"legacy_first_seq" doc:"the legacy chain's first seq" example:"1"`
	LegacyLastSeq        int64  `json:"legacy_last_seq" doc:"the legacy chain's last seq" example:"100000"`
	LegacyHeadHMACHash   string `json:"legacy_head_hmac_hash" doc:"the legacy chain's head, as the bridge record binds it"`
	LegacyExportSHA256   string `json:"legacy_export_sha256" doc:"SHA-256 of the legacy export written at import, as the bridge record binds it"`
	ColumnsChecked       bool   `json:"columns_checked" doc:"the window held every imported entry and their columns match the bridge record's digest"`
	LegacyHMACsRederived bool   `json:"legacy_hmacs_rederived" doc:"the server's secret re-derives the legacy chain's head from the imported bodies (the legacy chain was sealed with the same secret)"`
}

func (s *Server) chainRoutes(c *components) group {
	nullableTime := fieldDocs{"timestamp_ns": {Nullable: true}}
	c.Ref("EntrySummary", "A chain entry without its body: its columns, hashes, time and the body's size.", entrySummary{}, nullableTime)
	detail := c.Ref("EntryDetail", "A chain entry as an export carries it (its columns, hashes and canonical body in base64), with its time and its body decoded.", entryDetail{}, nullableTime)
	page := c.Ref("EntryPage", "A page of the chain.", entryPage{}, nil)
	stats := c.Ref("ChainStats", "The chain's size, range and head.", statsView{}, fieldDocs{
		"first_entry": {Nullable: true}, "last_entry": {Nullable: true}})
	verifyReq := c.Ref("VerifyRequest", "What to verify. Every member is optional.", verifyRequest{}, nil)
	verifyRes := c.Ref("VerifyResult", "The verdict on the chain.", verifyResult{}, fieldDocs{"reason": {Enum: entryReasons},
		"error_seq": {Nullable: true}, "error": {Nullable: true}})
	intParam := func(name, in, description string, min, max, def float64) param {
		sc := &schema{Type: "integer", Format: "int64", Minimum: &min}
		if max > 0 {
			sc.Maximum = &max
		}
		if def >= 0 {
			sc.Default = def
		}
		return param{name: name, in: in, description: description, schema: sc}
	}
	return group{name: "chain", description: "Read and verify the chain.", routes: []route{
		{method: http.MethodGet, path: "/api/chain", handler: http.HandlerFunc(s.listEntries), op: operation{
			id: "listEntries", summary: "List entries",
			description: "A page of entries in seq order: seq offset+1 through offset+limit, with the chain's length. Each entry is summarized: its columns and hashes and the size of its body, which can be as large as a prompt; GET /api/chain/{seq} gives the body, POST /api/export every entry with its body. Entries are shown as stored; verify the chain to trust them.",
			params: []param{
				intParam("limit", "query", "entries per page", 0, maxPageLimit, defaultPageLimit),
				intParam("offset", "query", "entries to skip from the start", 0, 0, 0),
			},
			responses: []response{jsonOK("The page.", page)}}},
		{method: http.MethodGet, path: "/api/chain/stats", handler: http.HandlerFunc(s.chainStats), op: operation{
			id: "chainStats", summary: "Chain statistics",
			description: "The number of entries, the seq range, the head hash, the first and last times and the file size. Counting reads the whole table, so this takes time in proportion to the chain; with count=false entries is last_seq − first_seq + 1 (what the chain's ends claim; verification finds a missing row) and the answer takes constant time.",
			params: []param{{name: countParam, in: "query", description: "false: do not count the rows (constant time); absent or true: count them",
				schema: &schema{Type: "boolean", Default: true}}},
			responses: []response{jsonOK("The statistics.", stats)}}},
		{method: http.MethodGet, path: "/api/chain/{seq}", handler: http.HandlerFunc(s.getEntry), op: operation{
			id: "getEntry", summary: "Get one entry", description: "The entry with this seq, as stored, with its canonical body decoded.",
			params:    []param{intParam("seq", "path", "the entry's sequence number", 1, 0, -1)},
			responses: []response{jsonOK("The entry.", detail)}}},
		{method: http.MethodPost, path: "/api/chain/verify", handler: http.HandlerFunc(s.verifyChain), op: operation{
			id: "verifyChain", summary: "Verify the chain",
			description: "Smoke verification checks the window's first and last entries fully (body hash, columns, link, HMAC); full verification checks every entry and that no seq is missing, on all cores. A broken chain is still a 200 answer, with valid false, the first bad seq and the reason.",
			body:        jsonBody("What to verify; an empty body is a smoke verification of the whole chain.", false, verifyReq),
			responses:   []response{jsonOK("The verdict.", verifyRes)}}},
	}}
}

// queryInt reads a non-negative integer query parameter, def when absent, at most max
// when max > 0.
func queryInt(r *http.Request, name string, def, max int) (int, error) {
	text := r.URL.Query().Get(name)
	if text == "" {
		return def, nil
	}
	n, err := strconv.Atoi(text)
	switch {
	case err != nil || !isDigits(text):
		return 0, badRequest(codeBadParameter, "%s %s is not a non-negative integer", name, protocol.Quote(text))
	case max > 0 && n > max:
		return 0, badRequest(codeBadParameter, "%s %d is over the maximum, %d", name, n, max)
	}
	return n, nil
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func (s *Server) listEntries(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", defaultPageLimit, maxPageLimit)
	if err != nil {
		s.writeRequestError(w, r, "list entries", err)
		return
	}
	offset, err := queryInt(r, "offset", 0, 0)
	if err != nil {
		s.writeRequestError(w, r, "list entries", err)
		return
	}
	page, total, err := s.store.Summaries(r.Context(), offset, limit)
	if err != nil {
		s.internalError(w, r, "list entries", err)
		return
	}
	writePage(w, page, total, offset, limit)
}

// countParam is GET /api/chain/stats's query parameter that turns counting off.
const countParam = "count"

func (s *Server) chainStats(w http.ResponseWriter, r *http.Request) {
	count := true
	if text := r.URL.Query().Get(countParam); text != "" {
		var err error
		if count, err = strconv.ParseBool(text); err != nil {
			writeError(w, http.StatusBadRequest, codeBadParameter, fmt.Sprintf("%s %s is not true or false", countParam, protocol.Quote(text)))
			return
		}
	}
	stats := s.store.Stats
	if !count {
		stats = s.store.StatsBySeq
	}
	st, err := stats(r.Context())
	if err != nil {
		s.internalError(w, r, "chain stats", err)
		return
	}
	v := statsView{Entries: st.Entries, FirstSeq: st.FirstSeq, LastSeq: st.LastSeq,
		LastHMACHash: st.LastHMACHash, FirstTimestampNS: strconv.FormatInt(st.FirstTimestampNS, 10),
		LastTimestampNS: strconv.FormatInt(st.LastTimestampNS, 10), FileBytes: st.FileBytes, EntriesCounted: count}
	v.documented(&st, s.dbPath)
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) getEntry(w http.ResponseWriter, r *http.Request) {
	text := r.PathValue("seq")
	seq, err := strconv.ParseInt(text, 10, 64)
	if err != nil || !isDigits(text) || seq < 1 {
		writeError(w, http.StatusBadRequest, codeBadParameter, fmt.Sprintf("seq %s is not a positive integer", protocol.Quote(text)))
		return
	}
	e, err := s.store.Entry(r.Context(), seq)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("the chain has no entry with seq %d", seq))
		return
	}
	if err != nil {
		s.internalError(w, r, "read entry", err)
		return
	}
	writeEntry(w, e)
}

func (s *Server) verifyChain(w http.ResponseWriter, r *http.Request) {
	var req verifyRequest
	if err := decodeJSON(w, r, &req, true); err != nil {
		s.writeRequestError(w, r, "verify", err)
		return
	}
	if err := req.resolve(); err != nil {
		s.writeRequestError(w, r, "verify", err)
		return
	}
	if _, _, err := s.checkWindow(r, req.FirstSeq, req.LastSeq); err != nil {
		s.writeRequestError(w, r, "verify", err)
		return
	}
	start := time.Now()
	report, err := s.store.Verify(r.Context(), store.VerifyOptions{Full: req.Full, From: req.FirstSeq, To: req.LastSeq})
	res := verifyResult{Valid: err == nil, Mode: "smoke", ElapsedMS: float64(time.Since(start).Microseconds()) / 1000}
	if req.Full {
		res.Mode = "full"
	}
	if report != nil {
		res.FirstSeq, res.LastSeq, res.HMACsChecked = report.From, report.To, report.HMACsChecked
		res.EntriesVerified, res.Checked = report.Checked, report.Checked
		if im := report.Import; im != nil {
			b := &im.Bridge
			res.Import = &importView{FirstSeq: b.FirstSeq, LastSeq: b.LastSeq, LegacyFirstSeq: b.LegacyFirstSeq,
				LegacyLastSeq: b.LegacyLastSeq, LegacyHeadHMACHash: b.LegacyHeadHMACHash, LegacyExportSHA256: b.LegacyExportSHA256,
				ColumnsChecked: im.ColumnsChecked, LegacyHMACsRederived: im.LegacyHMACsRederived}
		}
	}
	var ee *protocol.EntryError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		msg := err.Error()
		res.FirstBadSeq, res.ErrorSeq, res.Reason, res.Error = ee.Seq, &ee.Seq, ee.Reason, &msg
		res.WrongSecret = errors.Is(err, store.ErrWrongSecret)
	default:
		s.internalError(w, r, "verify", err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// checkWindow checks a window first..last of seq (0: the chain's first or last) against
// the chain, and resolves it. It returns 0, 0 for an empty chain without a window.
func (s *Server) checkWindow(r *http.Request, first, last int64) (int64, int64, error) {
	if first < 0 || last < 0 {
		return 0, 0, badRequest(codeBadParameter, "first_seq %d and last_seq %d must not be negative", first, last)
	}
	if first > 0 && last > 0 && first > last {
		return 0, 0, badRequest(codeBadParameter, "first_seq %d is after last_seq %d", first, last)
	}
	chainLast, err := s.store.LastSeq(r.Context())
	if err != nil {
		return 0, 0, err
	}
	if chainLast == 0 && first == 0 && last == 0 {
		return 0, 0, nil
	}
	from, to := max(first, 1), last
	if to == 0 {
		to = chainLast
	}
	if from > to || to > chainLast {
		return 0, 0, badRequest(codeBadParameter, "window %d-%d is not in the chain, which ends at seq %d", from, to, chainLast)
	}
	return from, to, nil
}
