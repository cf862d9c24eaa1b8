package webhook

import (
	"cmp"
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// The public page's two tables, each paged on the server by keyset: operators by
// operator ID, anchors newest first by (anchoredAt, name) as the API's lists page. Both
// read the manager's cache without copying the objects (client.UnsafeDisableDeepCopy:
// nothing here writes to them), sort keys in memory (the cache keeps no order) and verify
// only the rows of the page: an operator's last submission is one cached Get of its head,
// an anchor is shown only when federation.TrustAnchor passes it, and its log index only
// when federation.VerifyLogLeg does, both verdicts remembered (s.verdicts). The lists
// are of every operator and every anchor: a page costs their number in pointers and keys
// (no copies, no signature checks past the rows shown); anchors grow only with the
// federation's schedule, operators with registrations.

// operatorRow is one operator of the public page.
type operatorRow struct {
	ID, Org, Phase, RegisteredAt, LastSubmission string
}

// operatorsPageResult is one page of operators.
type operatorsPageResult struct {
	rows  []operatorRow
	total int
	next  string // the last operator ID of the page when more follow
}

// operatorsPage is the page of registered operators whose ID sorts after after.
func (s *Server) operatorsPage(ctx context.Context, fed *fv1.Federation, after string) (*operatorsPageResult, error) {
	var list fv1.FederationOperatorList
	if err := s.client.List(ctx, &list, client.InNamespace(fed.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	res := &operatorsPageResult{rows: []operatorRow{}}
	var page []*fv1.FederationOperator
	for i := range list.Items {
		fo := &list.Items[i]
		if !federation.Registered(fo) || fo.Status.OperatorID == "" {
			continue
		}
		res.total++
		if string(fo.Status.OperatorID) > after {
			page = append(page, fo)
		}
	}
	slices.SortFunc(page, func(a, b *fv1.FederationOperator) int { return cmp.Compare(a.Status.OperatorID, b.Status.OperatorID) })
	if len(page) > s.pageRows {
		page = page[:s.pageRows]
		res.next = string(page[s.pageRows-1].Status.OperatorID)
	}
	for _, fo := range page {
		org, _, _ := federation.ShownOrganization(fo) // what the operator signed, never the spec's word
		row := operatorRow{ID: string(fo.Status.OperatorID), Org: org, Phase: shownPhase(fed, fo),
			RegisteredAt: formatTime(fo.Status.RegisteredAt)}
		last, err := s.lastSubmission(ctx, fo)
		if err != nil {
			return nil, err
		}
		row.LastSubmission = last
		res.rows = append(res.rows, row)
	}
	return res, nil
}

// lastSubmission is when the federation accepted fo's head submission (its last accepted
// one), RFC 3339 UTC seconds, read from the cache and shown only when that Submission is
// fo's and its signature and continuity were verified; "" otherwise.
func (s *Server) lastSubmission(ctx context.Context, fo *fv1.FederationOperator) (string, error) {
	head, err := federation.Head(ctx, s.client, fo)
	if err != nil || head == nil || head.Submission == "" {
		return "", err
	}
	var sub fv1.Submission
	err = s.client.Get(ctx, client.ObjectKey{Namespace: fo.Namespace, Name: head.Submission}, &sub, client.UnsafeDisableDeepCopy)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if sub.Spec.OperatorID != fo.Status.OperatorID || !sub.Status.Ed25519Verified || !sub.Status.ContinuityVerified {
		return "", nil
	}
	return sub.CreationTimestamp.UTC().Format(time.RFC3339), nil
}

// anchorRow is one anchor of the public page.
type anchorRow struct {
	ID, AnchoredAt string
	Participants   int
	// Log is the anchor's log entry, nil until the log recorded it and its proof verifies.
	Log *logLink
}

// anchorsPageResult is one page of anchors.
type anchorsPageResult struct {
	rows []anchorRow
	next *pageKey // the key of the page's last anchor when more follow
}

// anchorsPage is the page of the anchors the federation made, newest first, that sort
// after after (nil: from the newest). An anchor that is not the federation's is skipped;
// a log index is shown only when its entry verifies under logKey (nil: none is).
func (s *Server) anchorsPage(ctx context.Context, fed *fv1.Federation, after *pageKey, logKey crypto.PublicKey,
	link func(*fv1.LogEntry) *logLink,
) (*anchorsPageResult, error) {
	var list fv1.CrossAnchorList
	if err := s.client.List(ctx, &list, client.InNamespace(fed.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	candidates := make([]*fv1.CrossAnchor, 0, len(list.Items))
	for i := range list.Items {
		if ca := &list.Items[i]; after.older(ca.Spec.AnchoredAt, ca.Name) {
			candidates = append(candidates, ca)
		}
	}
	candidates, err := s.withStoredAnchors(ctx, fed, candidates, "", after, s.pageRows+1)
	if err != nil {
		return nil, err
	}
	res := &anchorsPageResult{rows: []anchorRow{}}
	var last *fv1.CrossAnchor
	for _, ca := range candidates {
		if s.verdicts.TrustAnchor(fed, ca) != nil {
			continue // not the federation's: never shown
		}
		if len(res.rows) == s.pageRows {
			res.next = &pageKey{At: last.Spec.AnchoredAt, Name: last.Name}
			break
		}
		row := anchorRow{ID: string(ca.Spec.AnchorID), AnchoredAt: ca.Spec.AnchoredAt, Participants: federation.ParticipantCount(ca)}
		if ca.Status.Phase == fv1.PhaseAnchored && logKey != nil {
			if s.verdicts.VerifyLogLeg(ca, logKey) {
				row.Log = link(ca.Status.LogEntry)
			} else {
				s.log.WarnContext(ctx, "Not showing an anchor's log entry that does not verify", "anchorID", ca.Name,
					"error", federation.VerifyLogLeg(ca, logKey))
			}
		}
		res.rows = append(res.rows, row)
		last = ca
	}
	return res, nil
}

// encodePageKey is k as a page token: the unpadded base64url of its JSON, as the API's.
func encodePageKey(k *pageKey) string {
	raw, _ := json.Marshal(k) // two strings: cannot fail
	return base64.RawURLEncoding.EncodeToString(raw)
}

// decodePageKey reads a token encodePageKey made.
func decodePageKey(tok string) (*pageKey, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return nil, err
	}
	var k pageKey
	if err := json.Unmarshal(raw, &k); err != nil {
		return nil, err
	}
	return &k, nil
}
