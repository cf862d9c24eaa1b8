package webhook

import (
	"bytes"
	"context"
	"crypto"
	"embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/transparency-dev/tessera/api/layout"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// The federation's public page at / (publicpage*.go): the key, the operators and the
// anchors, rendered on the server from verified state only (the same checks the API's
// reads make), and a receipt box that verifies a receipt in the browser (page/page.js).
// Its stylesheet and script are embedded and served under /assets/; the page loads
// nothing else, and its Content-Security-Policy lets it load nothing else.

//go:embed page
var pageFS embed.FS

// pageTemplate is the page, parsed once.
var pageTemplate = template.Must(template.ParseFS(pageFS, "page/index.html"))

// pageSize is how many rows of each table one page shows.
const pageSize = 50

// pageCSP is the page's Content-Security-Policy: its own script and stylesheet, fetches to
// its own origin (the verify button), nothing else.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// publicPage is what the template shows.
type publicPage struct {
	Federation   string
	PublicKeyPEM string
	Fingerprint  string
	KeyHistory   []keyRow
	Genesis      *logLink
	Checkpoint   *checkpointView
	// OperatorsTotal counts every registered operator; Operators is one page of them.
	OperatorsTotal int
	Operators      []operatorRow
	Anchors        []anchorRow
	// OperatorsNext and AnchorsNext are the query of the next page ("" on the last);
	// OperatorsFirst and AnchorsFirst that of the first (shown when not on it).
	OperatorsNext, OperatorsFirst string
	AnchorsNext, AnchorsFirst     string
}

// keyRow is one key of the federation's key history.
type keyRow struct {
	PEM, Fingerprint, ValidFrom, ValidUntil string
	Current                                 bool
	Log                                     *logLink
}

// logLink is a log index and where the page links it ("" when this server cannot link it).
type logLink struct {
	Index int64
	Href  string
}

// checkpointView is the log's latest checkpoint, verified under the log's key.
type checkpointView struct {
	Origin, Root, Text, Href, Source string
	Size                             uint64
	// Witnesses is what the Federation's witness policy makes of it; nil without a policy.
	Witnesses *witnessesView
}

// witnessesView is who cosigned the checkpoint, of the witnesses the policy names.
type witnessesView struct {
	Quorum    string
	Satisfied bool
	Cosigned  []string // their key names
	Missing   []string
}

// servePublicPage answers GET /.
func (s *Server) servePublicPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	opAfter, anchorAfter, err := pageTokens(q)
	if err != nil {
		s.fail(ctx, w, "read the page parameters", err)
		return
	}
	page, err := s.publicPage(ctx, q, opAfter, anchorAfter)
	if err != nil {
		s.fail(ctx, w, "build the public page", err)
		return
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, page); err != nil {
		s.fail(ctx, w, "render the public page", err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(buf.Bytes())
}

// pageTokens reads ?operators_page_token= (the last operator ID of the previous page)
// and ?anchors_page_token= (the key of the last anchor of the previous page, as the API's
// page tokens encode it).
func pageTokens(q url.Values) (string, *pageKey, error) {
	bad := &apiError{status: http.StatusBadRequest, code: "invalid_page_token",
		message: "operators_page_token or anchors_page_token is not one this page gave"}
	opAfter := q.Get("operators_page_token")
	if opAfter != "" && !operatorIDPattern.MatchString(opAfter) {
		return "", nil, bad
	}
	var anchorAfter *pageKey
	if raw := q.Get("anchors_page_token"); raw != "" {
		tok, err := decodePageKey(raw)
		if err != nil {
			return "", nil, bad
		}
		anchorAfter = tok
	}
	return opAfter, anchorAfter, nil
}

// publicPage builds the page: the Federation's keys, one page of each table and the log's
// checkpoint.
func (s *Server) publicPage(ctx context.Context, q url.Values, opAfter string, anchorAfter *pageKey) (*publicPage, error) {
	fed, err := s.loadFederation(ctx)
	if err != nil {
		return nil, err
	}
	if fed.Status.PublicKeyPEM == "" {
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "federation_not_ready",
			message: "the federation " + s.federation.String() + " has no signing key yet"}
	}
	p := &publicPage{Federation: s.federation.String(), PublicKeyPEM: string(fed.Status.PublicKeyPEM),
		Fingerprint: string(fed.Status.PublicKeyFingerprint)}
	logKey, logKeyErr := s.logKey(ctx, fed)
	if logKeyErr == nil {
		p.Checkpoint = s.latestCheckpoint(ctx, fed, logKey)
	}
	var logSize uint64
	if p.Checkpoint != nil {
		logSize = p.Checkpoint.Size
	}
	link := func(e *fv1.LogEntry) *logLink { return s.logEntryLink(fed, e, logSize) }
	for i, k := range fed.Status.KeyHistory {
		row := keyRow{PEM: string(k.PublicKeyPEM), Fingerprint: string(k.Fingerprint),
			ValidFrom: formatTime(&k.ValidFrom), ValidUntil: formatTime(k.ValidUntil),
			Current: k.PublicKeyPEM == fed.Status.PublicKeyPEM && i == len(fed.Status.KeyHistory)-1, Log: link(k.LogEntry)}
		p.KeyHistory = append(p.KeyHistory, row)
	}
	p.Genesis = link(fed.Status.GenesisLogEntry)

	ops, err := s.operatorsPage(ctx, fed, opAfter)
	if err != nil {
		return nil, err
	}
	p.Operators, p.OperatorsTotal = ops.rows, ops.total
	if logKeyErr != nil {
		logKey = nil // no log index is shown: none can be verified
	}
	anchors, err := s.anchorsPage(ctx, fed, anchorAfter, logKey, link)
	if err != nil {
		return nil, err
	}
	p.Anchors = anchors.rows
	p.OperatorsNext, p.OperatorsFirst = pageLinks(q, "operators_page_token", ops.next)
	next := ""
	if anchors.next != nil {
		next = encodePageKey(anchors.next)
	}
	p.AnchorsNext, p.AnchorsFirst = pageLinks(q, "anchors_page_token", next)
	return p, nil
}

// pageLinks is the query of the next page of the table whose token is param (next, ""
// when there is none) and of its first page ("" when on it), the other table's token kept.
func pageLinks(q url.Values, param, next string) (nextQuery, firstQuery string) {
	with := func(v string) string {
		c := url.Values{}
		for _, k := range []string{"operators_page_token", "anchors_page_token"} {
			if k != param && q.Get(k) != "" {
				c.Set(k, q.Get(k))
			}
		}
		if v != "" {
			c.Set(param, v)
		}
		return "?" + c.Encode()
	}
	if next != "" {
		nextQuery = with(next)
	}
	if q.Get(param) != "" {
		firstQuery = with("")
	}
	return nextQuery, firstQuery
}

// logEntryLink is where the page links the log entry e (nil: none): for the embedded log
// the entry bundle that holds it as this server serves it (tile/entries/..., from the
// checkpoint's size), or the checkpoint when the checkpoint does not cover it yet; for a
// Rekor log the entry's URL.
func (s *Server) logEntryLink(fed *fv1.Federation, e *fv1.LogEntry, logSize uint64) *logLink {
	if e == nil {
		return nil
	}
	l := &logLink{Index: e.LogIndex}
	switch {
	case fed.Spec.TransparencyLog.IsRemote():
		if u, err := url.Parse(e.URL); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
			l.Href = e.URL
		}
	case s.logDir == "":
	case e.LogIndex >= 0 && uint64(e.LogIndex) < logSize:
		l.Href = logPrefix + "/" + layout.EntriesPathForLogIndex(uint64(e.LogIndex), logSize)
	default:
		l.Href = logPrefix + "/checkpoint"
	}
	return l
}

// latestCheckpoint is the log's latest checkpoint that verifies under key: the embedded
// log's, read from its directory, or for a Rekor log the newest weekly snapshot (the
// page asks no remote log anything). nil when there is none.
func (s *Server) latestCheckpoint(ctx context.Context, fed *fv1.Federation, key crypto.PublicKey) *checkpointView {
	if !fed.Spec.TransparencyLog.IsRemote() {
		if s.logDir == "" {
			return nil
		}
		policy, err := federation.WitnessPolicy(fed)
		if err != nil {
			policy = nil
		}
		cc := s.readCosignedCheckpoint(ctx, fed, key, policy)
		if cc == nil {
			return nil
		}
		v := &checkpointView{Origin: cc.cp.Origin, Size: cc.cp.Size, Root: base64.StdEncoding.EncodeToString(cc.cp.Root),
			Text: string(cc.text), Href: logPrefix + "/checkpoint", Source: "the embedded log, now"}
		if policy != nil {
			v.Witnesses = &witnessesView{Quorum: policy.Quorum(), Satisfied: cc.verdict.Satisfied}
			for _, w := range policy.Witnesses {
				if slices.ContainsFunc(cc.verdict.Cosignatures, func(c witness.Cosignature) bool { return c.Key.String() == w.Key.String() }) {
					v.Witnesses.Cosigned = append(v.Witnesses.Cosigned, w.Key.Name)
				} else {
					v.Witnesses.Missing = append(v.Witnesses.Missing, w.Key.Name)
				}
			}
		}
		return v
	}
	snaps, err := s.logSnapshots(ctx)
	if err != nil || len(snaps.Snapshots) == 0 {
		return nil
	}
	snap := snaps.Snapshots[0]
	return &checkpointView{Origin: snap.Origin, Size: snap.TreeSize, Root: snap.RootHash, Text: snap.Checkpoint,
		Href: logPrefix + "/snapshots/" + snap.Week, Source: "the weekly snapshot of " + snap.Week}
}

// formatTime is t in RFC 3339 UTC seconds, "" for none.
func formatTime(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// servePageAsset answers GET /assets/{name}: the page's stylesheet and script.
func servePageAsset(w http.ResponseWriter, r *http.Request) {
	types := map[string]string{"page.css": "text/css; charset=utf-8", "page.js": "text/javascript; charset=utf-8"}
	name := r.PathValue("name")
	typ, ok := types[name]
	if !ok {
		writeError(w, &apiError{status: http.StatusNotFound, code: "not_found", message: "no asset " + name})
		return
	}
	body, err := pageFS.ReadFile("page/" + name)
	if err != nil {
		writeError(w, &apiError{status: http.StatusNotFound, code: "not_found", message: "no asset " + name})
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(body)
}
