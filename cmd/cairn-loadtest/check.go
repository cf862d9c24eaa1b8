package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// verdict is what the invariants found at the end.
type verdict struct {
	accepted, anchored, lost int
	anchors                  int
	receiptsVerified         int
	problems                 []string
}

// problem records a broken invariant; the first 20 are kept word for word.
func (v *verdict) problem(format string, args ...any) {
	if len(v.problems) < 20 {
		v.problems = append(v.problems, fmt.Sprintf(format, args...))
	} else if len(v.problems) == 20 {
		v.problems = append(v.problems, "…")
	}
}

// check verifies the invariants: every submission the API accepted (2xx) is a Submission
// marked anchored by exactly the anchor whose range of the operator's chain holds it (the
// anchors' lastSeq of an operator cut its chain into disjoint ranges, so no other anchor
// covers it); every CrossAnchor is Anchored with a log entry; and the receipts of every
// sampled operator verify offline with pkg/protocol under the federation's and the log's
// published keys.
func check(ctx context.Context, f *federation, accepted []submission, sample []*simOperator) (*verdict, error) {
	v := &verdict{accepted: len(accepted)}
	subs, err := listAll(ctx, f.admin, &fv1.SubmissionList{}, func(l *fv1.SubmissionList) []fv1.Submission { return l.Items })
	if err != nil {
		return nil, err
	}
	cas, err := listAll(ctx, f.admin, &fv1.CrossAnchorList{}, func(l *fv1.CrossAnchorList) []fv1.CrossAnchor { return l.Items })
	if err != nil {
		return nil, err
	}
	v.anchors = len(cas)
	slices.SortFunc(cas, func(a, b fv1.CrossAnchor) int { return strings.Compare(a.Name, b.Name) })
	// ranges[op] are the anchors of op in order, each with the last seq it covers.
	type cover struct {
		anchor  string
		lastSeq int64
	}
	ranges := map[string][]cover{}
	for _, ca := range cas {
		if ca.Status.Phase != fv1.PhaseAnchored || ca.Status.LogEntry == nil {
			v.problem("anchor %s is %q without a log entry", ca.Name, ca.Status.Phase)
		}
		for _, p := range ca.Spec.Participants {
			rs := ranges[string(p.OperatorID)]
			if len(rs) > 0 && p.LastSeq <= rs[len(rs)-1].lastSeq {
				v.problem("anchor %s binds %s at seq %d, not past its previous anchor's %d", ca.Name, p.OperatorID, p.LastSeq, rs[len(rs)-1].lastSeq)
			}
			ranges[string(p.OperatorID)] = append(rs, cover{ca.Name, p.LastSeq})
		}
	}
	byID := make(map[string]*fv1.Submission, len(subs))
	for i := range subs {
		byID[subs[i].Name] = &subs[i]
	}
	for _, a := range accepted {
		s := byID[a.id]
		if s == nil {
			v.lost++
			v.problem("accepted %s of %s: no Submission", a.id, a.operator.id)
			continue
		}
		want := ""
		for _, c := range ranges[a.operator.id] {
			if c.lastSeq >= s.Spec.LastSeq {
				want = c.anchor
				break
			}
		}
		switch {
		case want == "":
			v.lost++
			v.problem("accepted %s of %s (seq %d..%d): in no anchor", a.id, a.operator.id, s.Spec.FirstSeq, s.Spec.LastSeq)
		case !s.Status.Anchored || string(s.Status.AnchorRef) != want:
			v.lost++
			v.problem("accepted %s of %s: marked %v by %q, want anchored by %s", a.id, a.operator.id, s.Status.Anchored, s.Status.AnchorRef, want)
		default:
			v.anchored++
		}
	}
	v.receiptsVerified, err = verifyReceipts(ctx, f, sample, v)
	return v, err
}

// verifyReceipts fetches every receipt of the sampled operators through the API and
// verifies each offline, including its log entry, under the keys /federation/status
// publishes.
func verifyReceipts(ctx context.Context, f *federation, sample []*simOperator, v *verdict) (int, error) {
	anon, err := client.New(f.base)
	if err != nil {
		return 0, err
	}
	st, err := anon.Status(ctx)
	if err != nil {
		return 0, err
	}
	fedKey, err := protocol.ParsePublicKeyPEM([]byte(st.FederationPublicKey))
	if err != nil {
		return 0, fmt.Errorf("the federation's key: %w", err)
	}
	logKey, err := protocol.ParseLogPublicKeyPEM([]byte(st.TLogPublicKey))
	if err != nil {
		return 0, fmt.Errorf("the log's key: %w", err)
	}
	n := 0
	for _, o := range sample {
		page, err := o.client.Receipts(ctx, client.ReceiptsOptions{Limit: 1000})
		if err != nil {
			return n, fmt.Errorf("receipts of %s: %w", o.id, err)
		}
		if len(page.Receipts) == 0 {
			v.problem("operator %s has no receipt", o.id)
		}
		for _, raw := range page.Receipts {
			rep, err := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: fedKey, LogKey: logKey})
			var r struct {
				TLogEntry json.RawMessage `json:"tlog_entry"`
			}
			switch {
			case err != nil:
				v.problem("receipt of %s: %v", o.id, err)
			case json.Unmarshal(raw, &r) != nil || len(r.TLogEntry) == 0:
				v.problem("receipt %s of %s has no log entry", rep.Receipt.AnchorID, o.id)
			default:
				n++
			}
		}
	}
	return n, nil
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
