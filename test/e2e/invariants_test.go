package e2e

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file is the one invariant checker every federation fault test ends with. After a
// fault has come and gone:
//
//   - every accepted submission is in exactly one anchor: the first anchor whose entry
//     for its operator reaches its lastSeq, which its status names, and no two anchors
//     bind one operator's chain at the same lastSeq (no double anchor);
//   - every anchor is in the log, verifies live (GET /federation/verify/{id}: valid,
//     every check true) and through its receipt (pkg/protocol offline, with the log's
//     proof);
//   - no operator's head forks: its accepted submissions form one unbroken chain that
//     ends at the head its status names;
//   - no log entry is there twice: the embedded log holds each body once; on Rekor, no
//     two of the federation's records name one log index.

// federationState is what the invariants are checked on: one Federation's objects, and
// the entry bodies of its embedded log (none for Rekor).
type federationState struct {
	fed         fv1.Federation
	operators   []fv1.FederationOperator
	submissions []fv1.Submission
	anchors     []fv1.CrossAnchor
	logBodies   []string
}

// readState reads the Federation "fed" of ns and its objects, and, for the embedded
// log, every entry of its log under logDir.
func readState(ctx context.Context, t *testing.T, c client.Client, ns, logDir string) *federationState {
	t.Helper()
	s := &federationState{}
	var ops fv1.FederationOperatorList
	var subs fv1.SubmissionList
	var anchors fv1.CrossAnchorList
	for _, err := range []error{c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fed"}, &s.fed),
		c.List(ctx, &ops, client.InNamespace(ns)), c.List(ctx, &subs, client.InNamespace(ns)),
		c.List(ctx, &anchors, client.InNamespace(ns))} {
		if err != nil {
			t.Fatalf("read the federation's state: %v", err)
		}
	}
	s.operators, s.submissions, s.anchors = ops.Items, subs.Items, anchors.Items
	if s.fed.Spec.TransparencyLog.Type == fv1.TransparencyLogRekor {
		return s
	}
	keyPEM, err := federation.LogPublicKeyPEM(ctx, c, &s.fed)
	if err != nil {
		t.Fatal(err)
	}
	key, err := protocol.ParseLogPublicKeyPEM([]byte(keyPEM))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(logDir, ns, "fed")
	for i := int64(0); ; i++ {
		e, err := tlog.ReadDirEntry(ctx, dir, i, key)
		if errors.Is(err, tlog.ErrNotFound) {
			return s
		}
		if err != nil {
			t.Fatalf("read entry %d of the embedded log: %v", i, err)
		}
		s.logBodies = append(s.logBodies, e.Bundle.Body)
	}
}

// violations returns every invariant s breaks that needs no network: coverage, double
// anchors, forks and duplicated log entries.
func (s *federationState) violations() []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	// Per operator, the lastSeq each anchor binds, and the accepted submissions.
	bound := map[fv1.OperatorID]map[int64]string{}
	for _, ca := range s.anchors {
		if ca.Status.Phase != fv1.PhaseAnchored {
			bad("anchor %s is %q, want %s", ca.Name, ca.Status.Phase, fv1.PhaseAnchored)
		}
		for _, p := range ca.Spec.Participants {
			if bound[p.OperatorID] == nil {
				bound[p.OperatorID] = map[int64]string{}
			}
			if other, ok := bound[p.OperatorID][p.LastSeq]; ok {
				bad("double anchor: %s and %s both bind %s at lastSeq %d", other, ca.Name, p.OperatorID, p.LastSeq)
			}
			bound[p.OperatorID][p.LastSeq] = string(ca.Spec.AnchorID)
		}
	}
	accepted := map[fv1.OperatorID][]fv1.Submission{}
	for _, sub := range s.submissions {
		if sub.Status.Ed25519Verified && sub.Status.ContinuityVerified {
			accepted[sub.Spec.OperatorID] = append(accepted[sub.Spec.OperatorID], sub)
		}
	}
	for op, subs := range accepted {
		slices.SortFunc(subs, func(a, b fv1.Submission) int { return cmp.Compare(a.Spec.FirstSeq, b.Spec.FirstSeq) })
		for i, sub := range subs {
			if i > 0 && (sub.Spec.FirstSeq != subs[i-1].Spec.LastSeq+1 || sub.Spec.FirstPrevHash != subs[i-1].Spec.LastHMACHash) {
				bad("fork: %s's accepted submissions %s and %s do not link", op, subs[i-1].Name, sub.Name)
			}
			if want := coveringAnchor(bound[op], sub.Spec.LastSeq); want == "" {
				bad("submission %s (%s, lastSeq %d) is in no anchor", sub.Name, op, sub.Spec.LastSeq)
			} else if !sub.Status.Anchored || string(sub.Status.AnchorRef) != want {
				bad("submission %s: anchored %t by %q, want by %s", sub.Name, sub.Status.Anchored, sub.Status.AnchorRef, want)
			}
		}
	}
	for _, ca := range s.anchors {
		for _, p := range ca.Spec.Participants {
			if !slices.ContainsFunc(accepted[p.OperatorID], func(sub fv1.Submission) bool {
				return sub.Spec.LastSeq == p.LastSeq && sub.Spec.ChainSignature == p.ChainSignature
			}) {
				bad("anchor %s binds %s at lastSeq %d, which no accepted submission ends at", ca.Name, p.OperatorID, p.LastSeq)
			}
		}
	}
	for _, fo := range s.operators {
		subs := accepted[fo.Status.OperatorID]
		head := fo.Status.Head
		switch {
		case len(subs) == 0 && head != nil:
			bad("operator %s has head %s but no accepted submission", fo.Name, head.Submission)
		case len(subs) > 0 && (head == nil || head.LastSeq != subs[len(subs)-1].Spec.LastSeq ||
			head.LastHMACHash != subs[len(subs)-1].Spec.LastHMACHash):
			bad("fork: operator %s's head %+v is not its last accepted submission %s", fo.Name, head, subs[len(subs)-1].Name)
		}
	}
	return append(out, s.logDuplicates()...)
}

// coveringAnchor is the anchor of bound (lastSeq to anchor) with the least lastSeq at or
// past lastSeq: the one a submission ending at lastSeq is in; "" when none.
func coveringAnchor(bound map[int64]string, lastSeq int64) string {
	best, id := int64(-1), ""
	for seq, a := range bound {
		if seq >= lastSeq && (best < 0 || seq < best) {
			best, id = seq, a
		}
	}
	return id
}

// logDuplicates reports a body the embedded log holds twice, and a log index two of the
// federation's records name.
func (s *federationState) logDuplicates() []string {
	var out []string
	seen := map[string]int{}
	for i, b := range s.logBodies {
		if j, ok := seen[b]; ok {
			out = append(out, fmt.Sprintf("duplicated log entry: entries %d and %d hold one body", j, i))
		}
		seen[b] = i
	}
	named := map[int64]string{}
	name := func(who string, e *fv1.LogEntry) {
		if e == nil {
			return
		}
		if other, ok := named[e.LogIndex]; ok {
			out = append(out, fmt.Sprintf("duplicated log entry: %s and %s both name log index %d", other, who, e.LogIndex))
		}
		named[e.LogIndex] = who
	}
	name("the genesis record", s.fed.Status.GenesisLogEntry)
	for _, fo := range s.operators {
		name("registration of "+fo.Name, fo.Status.RegistrationLogEntry)
	}
	for _, ca := range s.anchors {
		name("anchor "+ca.Name, ca.Status.LogEntry)
	}
	return out
}

// checkInvariants fails t for every invariant the Federation "fed" of ns breaks: it reads
// its state (and the embedded log under logDir), checks it, verifies every anchor live
// through the federation API at api (host:port) and offline through its receipt.
func checkInvariants(ctx context.Context, t *testing.T, c client.Client, ns, logDir, api string) *federationState {
	t.Helper()
	s := readState(ctx, t, c, ns, logDir)
	for _, v := range s.violations() {
		t.Errorf("invariant broken: %s", v)
	}
	if len(s.anchors) == 0 {
		t.Error("invariant check: no anchor to check")
	}
	for i := range s.anchors {
		verifyLive(ctx, t, api, s.anchors[i].Name)
		verifyReceipt(ctx, t, c, &s.fed, &s.anchors[i])
	}
	return s
}

// verifyLive requires GET /federation/verify/{id} to call anchor id valid with every
// boolean check true and, in the seed's operator_signatures_verified, every participant.
func verifyLive(ctx context.Context, t *testing.T, api, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	code, body := get(ctx, t, http.DefaultClient, "http://"+api+"/federation/verify/"+id)
	var verdict struct {
		Valid        bool                       `json:"valid"`
		Participants int                        `json:"participants"`
		Checks       map[string]json.RawMessage `json:"checks"`
	}
	if err := json.Unmarshal([]byte(body), &verdict); code != http.StatusOK || err != nil || !verdict.Valid || len(verdict.Checks) == 0 {
		t.Errorf("invariant broken: GET /federation/verify/%s: %d %s", id, code, body)
		return
	}
	for name, raw := range verdict.Checks {
		if name == "operator_signatures_verified" {
			var ids []string
			if err := json.Unmarshal(raw, &ids); err != nil || len(ids) != verdict.Participants {
				t.Errorf("invariant broken: GET /federation/verify/%s: %s is %s, want all %d participants", id, name, raw, verdict.Participants)
			}
			continue
		}
		var ok bool
		if err := json.Unmarshal(raw, &ok); err != nil || !ok {
			t.Errorf("invariant broken: GET /federation/verify/%s: check %s is %s", id, name, raw)
		}
	}
}

// verifyReceipt makes ca's receipt with the federation's key and verifies it offline
// with pkg/protocol: the signature, the hash, and the log's proof under the log's key.
func verifyReceipt(ctx context.Context, t *testing.T, c client.Client, fed *fv1.Federation, ca *fv1.CrossAnchor) {
	t.Helper()
	key, err := protocol.ParsePrivateKeyPEM([]byte(secretValue(ctx, t, c, fed.Namespace, fed.Name+"-signing-key", federation.SigningKeySecretKey)))
	if err != nil {
		t.Fatal(err)
	}
	logPEM, err := federation.LogPublicKeyPEM(ctx, c, fed)
	if err != nil {
		t.Fatal(err)
	}
	logKey, err := protocol.ParseLogPublicKeyPEM([]byte(logPEM))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := federation.Receipt(fed, ca, key, logKey, nil)
	if err != nil {
		t.Errorf("invariant broken: the receipt of %s: %v", ca.Name, err)
		return
	}
	report, err := protocol.VerifyReceipt(raw, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Errorf("invariant broken: the receipt of %s does not verify: %v", ca.Name, err)
		return
	}
	if len(report.Receipt.TLogEntry) == 0 {
		t.Errorf("invariant broken: the receipt of %s has no log proof", ca.Name)
		return
	}
	if err := protocol.VerifyReceiptLog(report.Receipt, protocol.LogVerifyOptions{Key: logKey}); err != nil {
		t.Errorf("invariant broken: the log proof in the receipt of %s: %v", ca.Name, err)
	}
}

// requireCaught fails t unless the checker reports each of the breakages applied to a
// copy of s, a state that passed: proof that the check would fail a test.
func requireCaught(t *testing.T, s *federationState) {
	t.Helper()
	breakages := map[string]func(s *federationState){
		"a duplicated log entry": func(s *federationState) {
			if len(s.logBodies) > 0 {
				s.logBodies = append(s.logBodies, s.logBodies[len(s.logBodies)-1])
			} else {
				s.anchors = append(s.anchors, *s.anchors[0].DeepCopy())
			}
		},
		"a double anchor": func(s *federationState) {
			twin := s.anchors[0].DeepCopy()
			twin.Name, twin.Spec.AnchorID, twin.Status.LogEntry = "twin", "twin", nil
			s.anchors = append(s.anchors, *twin)
		},
		"a submission in no anchor": func(s *federationState) { s.anchors = nil },
		"a forked head": func(s *federationState) {
			twin := s.submissions[0].DeepCopy()
			twin.Spec.FirstPrevHash = fv1.Hash(fmt.Sprintf("%064x", 1))
			s.submissions = append(s.submissions, *twin)
		},
	}
	for name, breakIt := range breakages {
		broken := &federationState{fed: s.fed, logBodies: slices.Clone(s.logBodies),
			operators: slices.Clone(s.operators), submissions: slices.Clone(s.submissions), anchors: slices.Clone(s.anchors)}
		breakIt(broken)
		if len(broken.violations()) == 0 {
			t.Errorf("the invariant checker missed %s", name)
		}
	}
}
