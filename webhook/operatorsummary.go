package webhook

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// operatorIDPattern is an operator ID's grammar, as the CRDs validate it.
var operatorIDPattern = regexp.MustCompile(`^op_[0-9a-f]{16}$`)

// Paging of GET /federation/operator/{id}.
const (
	defaultPageLimit = 100
	maxPageLimit     = 1000
)

// operatorSummary is the answer of GET /federation/operator/{id}: the seed's operator
// record (LEGACY-BIJOTEL §3.1, §3.2) under the seed's names, plus Cairn's, and one page of
// the operator's submissions and anchors.
type operatorSummary struct {
	OperatorID       string  `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	OrgName          string  `json:"org_name" doc:"The organization's name as the operator signed it: its registration's proof of possession, or its last rename (POST /federation/rename); never a spec field nobody signed."`
	PublicKeyPEM     string  `json:"public_key_pem" doc:"The key the operator holds now, PEM: the last key the controller accepted (status.keyHistory)."`
	ContactEmail     string  `json:"contact_email" doc:"The contact the operator signed with a rename (sent with the registration or later); empty when nothing signed one."`
	RegisteredAt     string  `json:"registered_at" doc:"RFC 3339 UTC, seconds." example:"\"2026-11-24T06:00:00Z\""`
	RekorLogIndex    *int64  `json:"rekor_log_index" doc:"The seed's name for the registration record's log index: equal to tlog_log_index."`
	LastSubmissionAt *string `json:"last_submission_at" doc:"When the federation accepted the operator's last submission, RFC 3339 UTC seconds; null before the first."`
	Status           string  `json:"status" doc:"The seed's: active, suspended or withdrawn (phase in lower case)." example:"\"active\""`
	// Cairn's members.
	TLogLogIndex *int64  `json:"tlog_log_index" doc:"The registration record's index in the federation's transparency log."`
	TLogURL      *string `json:"tlog_url" doc:"Where the log serves the registration record, when it names one."`
	Phase        string  `json:"phase" doc:"Active, Suspended or Withdrawn; Active and Suspended as the Federation's suspension lists decide."`
	// Suspension says why the operator is suspended; null when it is not.
	Suspension *operatorSuspension `json:"suspension" doc:"Why and by which list the operator is suspended; null when it is not."`
	// Suspensions are its logged suspensions and resumptions, oldest first.
	Suspensions []suspensionEntry `json:"suspensions" doc:"The operator's suspensions and resumptions, oldest first (the last 64), each with its log record."`
	// Submissions are the operator's accepted submissions, newest first, one page.
	Submissions []operatorSubmission `json:"submissions" doc:"Accepted submissions (signature and continuity verified), newest first: one page."`
	// Anchors are the anchors the federation made that bind the operator, newest first.
	Anchors []operatorAnchor `json:"anchors" doc:"Anchors the federation made (trusted) that bind the operator, newest first: one page."`
	// NextPageToken continues both lists; null when both ended on this page.
	NextPageToken *string `json:"next_page_token" doc:"Pass as page_token for the next page of both lists; null when both lists ended."`
}

// operatorSubmission is one accepted submission in an operator summary.
type operatorSubmission struct {
	SubmissionID   string            `json:"submission_id"`
	EntryCount     int64             `json:"entry_count"`
	FirstSeq       int64             `json:"first_seq"`
	LastSeq        int64             `json:"last_seq"`
	ChainSignature string            `json:"chain_signature"`
	SubmittedAt    string            `json:"submitted_at" doc:"RFC 3339 UTC, seconds."`
	AnchorID       *string           `json:"anchor_id" doc:"The anchor that covers it; null while pending."`
	Sidecars       []operatorSidecar `json:"sidecars" doc:"The attestation sidecars sent with the export, in the order sent (none: an empty list); not verified by the federation."`
}

// operatorAnchor is one anchor in an operator summary.
type operatorAnchor struct {
	AnchorID        string `json:"anchor_id"`
	AnchoredAt      string `json:"anchored_at"`
	CrossAnchorHash string `json:"cross_anchor_hash"`
	ChainSignature  string `json:"chain_signature" doc:"The operator's chain signature the anchor binds."`
	Participants    int    `json:"participants"`
	TLogLogIndex    *int64 `json:"tlog_log_index" doc:"The seed's: the anchor's log index once the log recorded it and its proof verifies under the log's key; null before."`
}

// pageToken is the cursor of both lists: the key of the last item each returned. Keyset
// paging, so items added later never shift a later page: the next page of anchors holds
// those sorting after the key, that of submissions starts at the one the named
// submission continues (operatorsummary_lists.go).
type pageToken struct {
	Submission *pageKey `json:"s,omitempty"`
	Anchor     *pageKey `json:"a,omitempty"`
	// SubmissionsDone and AnchorsDone mark a list that ended on an earlier page.
	SubmissionsDone bool `json:"sd,omitempty"`
	AnchorsDone     bool `json:"ad,omitempty"`
}

type pageKey struct {
	At   string `json:"t"` // the time, in a form whose string order is time order
	Name string `json:"n"`
}

// older reports whether the item keyed (at, name) sorts after k, newest first.
func (k *pageKey) older(at, name string) bool {
	if k == nil {
		return true
	}
	return at < k.At || at == k.At && name < k.Name
}

// serveOperator answers GET /federation/operator/{id}.
func (s *Server) serveOperator(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	if !operatorIDPattern.MatchString(id) {
		writeError(w, &apiError{status: http.StatusBadRequest, code: "invalid_operator_id",
			message: "an operator ID is op_ and 16 lowercase hex characters"})
		return
	}
	limit, token, fed, ok := s.pagedFederation(w, r)
	if !ok {
		return
	}
	sum, err := s.operatorSummary(ctx, fed, id, limit, token)
	if err != nil {
		s.fail(ctx, w, "read the operator", err)
		return
	}
	writeJSON(w, http.StatusOK, sum)
}

// pagedFederation reads a paged route's page parameters and the Federation. When either
// fails it answers (400 with the parameter's code, or the Federation's failure) and ok is
// false.
func (s *Server) pagedFederation(w http.ResponseWriter, r *http.Request) (limit int, tok *pageToken, fed *fv1.Federation, ok bool) {
	limit, tok, err := pageParams(r)
	if err != nil {
		s.fail(r.Context(), w, "read the page parameters", err)
		return 0, nil, nil, false
	}
	if fed, err = s.loadFederation(r.Context()); err != nil {
		s.fail(r.Context(), w, "read the federation", err)
		return 0, nil, nil, false
	}
	return limit, tok, fed, true
}

// pageParams reads ?limit= and ?page_token= (or its alias ?after=).
func pageParams(r *http.Request) (int, *pageToken, error) {
	q := r.URL.Query()
	limit := defaultPageLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageLimit {
			return 0, nil, &apiError{status: http.StatusBadRequest, code: "invalid_limit",
				message: "limit must be an integer from 1 to " + strconv.Itoa(maxPageLimit)}
		}
		limit = n
	}
	raw := q.Get("page_token")
	if raw == "" {
		raw = q.Get("after")
	}
	tok := &pageToken{}
	if raw != "" {
		b, err := base64.RawURLEncoding.DecodeString(raw)
		if err != nil || json.Unmarshal(b, tok) != nil {
			return 0, nil, &apiError{status: http.StatusBadRequest, code: "invalid_page_token",
				message: "page_token is not a next_page_token this API gave"}
		}
	}
	return limit, tok, nil
}

// shownOperator is what the federation shows of registered fo: the organization name
// and contact it signed (federation.ShownOrganization) and the key the controller
// accepted last (status.keyHistory), never the spec's word.
func shownOperator(fo *fv1.FederationOperator) (orgName, contact, publicKeyPEM string) {
	orgName, contact, _ = federation.ShownOrganization(fo)
	if len(fo.Status.KeyHistory) > 0 {
		publicKeyPEM = string(federation.CurrentKey(fo).PublicKeyPEM)
	}
	return orgName, contact, publicKeyPEM
}

// operatorSummary builds the summary of operator id of fed, one page of each list.
func (s *Server) operatorSummary(ctx context.Context, fed *fv1.Federation, id string, limit int, tok *pageToken) (*operatorSummary, error) {
	fo, err := s.cachedRegistered(ctx, fed.Namespace, id)
	if err != nil {
		return nil, err
	}
	org, contact, key := shownOperator(fo)
	sum := &operatorSummary{OperatorID: id, OrgName: org, PublicKeyPEM: key, ContactEmail: contact, Phase: string(fo.Status.Phase),
		Submissions: []operatorSubmission{}, Anchors: []operatorAnchor{}}
	summarizeSuspension(sum, fed, fo)
	sum.Status = strings.ToLower(sum.Phase)
	if fo.Status.RegisteredAt != nil {
		sum.RegisteredAt = fo.Status.RegisteredAt.UTC().Format(time.RFC3339)
	}
	if e := fo.Status.RegistrationLogEntry; e != nil {
		index := e.LogIndex
		sum.TLogLogIndex, sum.RekorLogIndex = &index, &index
		if e.URL != "" {
			url := e.URL
			sum.TLogURL = &url
		}
	}

	next := pageToken{Submission: tok.Submission, Anchor: tok.Anchor, SubmissionsDone: tok.SubmissionsDone, AnchorsDone: tok.AnchorsDone}
	if sum.LastSubmissionAt, err = s.lastSubmissionAt(ctx, fo); err != nil {
		return nil, err
	}
	if !tok.SubmissionsDone {
		if sum.Submissions, next.Submission, next.SubmissionsDone, err = s.operatorSubmissions(ctx, fo, limit, tok.Submission); err != nil {
			return nil, err
		}
	}
	if !tok.AnchorsDone {
		if sum.Anchors, next.Anchor, next.AnchorsDone, err = s.operatorAnchors(ctx, fed, fo.Status.OperatorID, limit, tok.Anchor); err != nil {
			return nil, err
		}
	}
	if !next.SubmissionsDone || !next.AnchorsDone {
		raw, err := json.Marshal(next)
		if err != nil {
			return nil, err
		}
		t := base64.RawURLEncoding.EncodeToString(raw)
		sum.NextPageToken = &t
	}
	return sum, nil
}
