package main

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// verdict is what the invariants found at the end.
type verdict struct {
	accepted, anchored, lost int
	anchors                  int
	receiptsVerified         int
	problems                 []string
	mu                       sync.Mutex
}

// problem records a broken invariant; the first 20 are kept word for word.
func (v *verdict) problem(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.problems) < 20 {
		v.problems = append(v.problems, fmt.Sprintf(format, args...))
	} else if len(v.problems) == 20 {
		v.problems = append(v.problems, "…")
	}
}

// check verifies the invariants through the federation API alone, as an operator or an
// auditor would, whether a record is still an object or moved to the history store:
// every submission the API accepted (2xx) is listed in its operator's summary (GET
// /federation/operator/{id}) marked anchored, by exactly the anchor whose range of the
// operator's chain holds it (an operator's anchors cut its chain into disjoint ranges:
// the anchor binds the chain signature of the last submission it covers); every anchor
// listed is in the log; and every receipt of every operator (GET /federation/receipts)
// verifies offline with pkg/protocol under the federation's and the log's published
// keys, one for each anchor its submissions name.
func check(ctx context.Context, f *federation, ops []*simOperator, workers int) (*verdict, error) {
	v := &verdict{}
	keys, err := publishedKeys(ctx, f)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	anchors := map[string]bool{}
	err = parallel(ctx, workers, ops, func(o *simOperator) error {
		seen, err := checkOperator(ctx, o, keys, v)
		mu.Lock()
		defer mu.Unlock()
		for id := range seen {
			anchors[id] = true
		}
		return err
	})
	v.anchors = len(anchors)
	return v, err
}

// keys are the federation's and its log's published keys.
type keys struct {
	federation ed25519.PublicKey
	log        crypto.PublicKey
}

// publishedKeys reads the keys /federation/status publishes.
func publishedKeys(ctx context.Context, f *federation) (keys, error) {
	anon, err := client.New(f.base)
	if err != nil {
		return keys{}, err
	}
	st, err := anon.Status(ctx)
	if err != nil {
		return keys{}, err
	}
	var k keys
	if k.federation, err = protocol.ParsePublicKeyPEM([]byte(st.FederationPublicKey)); err != nil {
		return k, fmt.Errorf("the federation's key: %w", err)
	}
	if k.log, err = protocol.ParseLogPublicKeyPEM([]byte(st.TLogPublicKey)); err != nil {
		return k, fmt.Errorf("the log's key: %w", err)
	}
	return k, nil
}

// checkOperator checks o's accepted submissions and receipts (see check) and returns
// the anchors that bind it.
func checkOperator(ctx context.Context, o *simOperator, k keys, v *verdict) (map[string]bool, error) {
	subs, anchors, err := summary(ctx, o)
	if err != nil {
		return nil, err
	}
	receipts, err := verifiedReceipts(ctx, o, k, v)
	if err != nil {
		return nil, err
	}
	for id, a := range anchors {
		if a.TLogLogIndex == nil {
			v.problem("anchor %s of %s has no log entry", id, o.id)
		}
	}
	// The last submission an anchor covers is the one whose chain signature it binds.
	last := map[string]client.OperatorSubmission{}
	for _, s := range subs {
		if s.AnchorID != nil && s.LastSeq > last[*s.AnchorID].LastSeq {
			last[*s.AnchorID] = s
		}
	}
	bySeq := make(map[int64]client.OperatorSubmission, len(subs))
	for _, s := range subs {
		bySeq[s.LastSeq] = s
	}
	prevAnchor, anchored, lost := "", 0, 0
	for _, seq := range o.accepted {
		s, ok := bySeq[seq]
		switch {
		case !ok:
			lost++
			v.problem("accepted submission of %s ending at seq %d: not in its summary", o.id, seq)
		case s.AnchorID == nil:
			lost++
			v.problem("accepted %s of %s: in no anchor", s.SubmissionID, o.id)
		case *s.AnchorID < prevAnchor:
			lost++
			v.problem("accepted %s of %s: in anchor %s, before the anchor %s of an earlier submission", s.SubmissionID, o.id, *s.AnchorID, prevAnchor)
		case anchors[*s.AnchorID].ChainSignature != last[*s.AnchorID].ChainSignature:
			lost++
			v.problem("anchor %s does not bind %s at the last submission it covers", *s.AnchorID, o.id)
		case !receipts[*s.AnchorID]:
			lost++
			v.problem("accepted %s of %s: no receipt of its anchor %s verifies", s.SubmissionID, o.id, *s.AnchorID)
		default:
			anchored++
			prevAnchor = *s.AnchorID
		}
	}
	v.mu.Lock()
	v.accepted, v.anchored, v.lost = v.accepted+len(o.accepted), v.anchored+anchored, v.lost+lost
	v.receiptsVerified += len(receipts)
	v.mu.Unlock()
	seen := map[string]bool{}
	for id := range anchors {
		seen[id] = true
	}
	return seen, nil
}

// summary reads every page of o's summary: its submissions, and its anchors by ID.
func summary(ctx context.Context, o *simOperator) ([]client.OperatorSubmission, map[string]client.OperatorAnchor, error) {
	var subs []client.OperatorSubmission
	anchors := map[string]client.OperatorAnchor{}
	page := client.PageOptions{Limit: 1000}
	for {
		sum, err := o.client.Operator(ctx, o.id, page)
		if err != nil {
			return nil, nil, fmt.Errorf("summary of %s: %w", o.id, err)
		}
		subs = append(subs, sum.Submissions...)
		for _, a := range sum.Anchors {
			anchors[a.AnchorID] = a
		}
		if sum.NextPageToken == nil {
			return subs, anchors, nil
		}
		page.PageToken = *sum.NextPageToken
	}
}

// verifiedReceipts fetches every receipt of o through the API and verifies each
// offline, its log entry included, under k; it returns the anchors whose receipt did.
func verifiedReceipts(ctx context.Context, o *simOperator, k keys, v *verdict) (map[string]bool, error) {
	ok := map[string]bool{}
	opts := client.ReceiptsOptions{Limit: 1000}
	for {
		page, err := o.client.Receipts(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("receipts of %s: %w", o.id, err)
		}
		for _, raw := range page.Receipts {
			rep, err := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: k.federation, LogKey: k.log})
			var r struct {
				TLogEntry json.RawMessage `json:"tlog_entry"`
			}
			switch {
			case err != nil:
				v.problem("receipt of %s: %v", o.id, err)
			case json.Unmarshal(raw, &r) != nil || len(r.TLogEntry) == 0:
				v.problem("receipt %s of %s has no log entry", rep.Receipt.AnchorID, o.id)
			default:
				ok[rep.Receipt.AnchorID] = true
			}
		}
		if page.NextPageToken == nil {
			return ok, nil
		}
		opts.PageToken = *page.NextPageToken
	}
}

// listAll lists every object of the federation's namespace, 500 a page.
func listAll[L ctrlclient.ObjectList, T any](ctx context.Context, c ctrlclient.Client, list L, items func(L) []T) ([]T, error) {
	var all []T
	opts := []ctrlclient.ListOption{ctrlclient.InNamespace(federationNS), ctrlclient.Limit(500)}
	for {
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, errors.Join(fmt.Errorf("list %T", list), err)
		}
		all = append(all, items(list)...)
		next := list.GetContinue()
		if next == "" {
			return all, nil
		}
		opts = []ctrlclient.ListOption{ctrlclient.InNamespace(federationNS), ctrlclient.Limit(500), ctrlclient.Continue(next)}
	}
}
