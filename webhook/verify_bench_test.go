package webhook

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// BenchmarkVerifyAnchor1000 times the live check of GET /federation/verify/{id} for an
// anchor of 1,000 participants, on evidence held in memory (the handler reads it from the
// manager's cache first, which is not timed): the anchor's hash and signature, its key
// against the key history, its entry read again from a real embedded log's files with a
// proof against the checkpoint read then, and 1,000 signed headers re-verified under the
// keys their operators held when they were accepted. Nothing is faked: the keys, headers,
// signatures and log are real. The evidence has no verdict cache (and its objects no
// UIDs), so every check runs, as on a request for an anchor not verified before;
// BenchmarkReads times requests with the cache.
func BenchmarkVerifyAnchor1000(b *testing.B) {
	const n = 1000
	klog.SetLogger(logr.Discard()) // tessera's lines would split the results'
	ev := benchEvidence(b, n)
	ctx := context.Background()
	if res := verifyAnchor(ctx, ev, time.Now()); !res.Valid {
		b.Fatalf("the benchmark's anchor does not verify: %s", *res.Reason)
	}
	b.ResetTimer()
	for range b.N {
		if res := verifyAnchor(ctx, ev, time.Now()); !res.Valid {
			b.Fatal("no longer valid")
		}
	}
}

// benchEvidence builds the evidence of an anchor of n participants, each an operator with
// its own key and one accepted submission, signed by a federation key and logged in an
// embedded log in a temporary directory.
func benchEvidence(b *testing.B, n int) *anchorEvidence {
	b.Helper()
	_, fedKey, _ := ed25519.GenerateKey(nil)
	fedPEM, err := protocol.MarshalPublicKeyPEM(fedKey.Public().(ed25519.PublicKey))
	if err != nil {
		b.Fatal(err)
	}
	fed := &fv1.Federation{}
	fed.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: fv1.PublicKeyPEM(fedPEM)}}
	accepted := metav1.NewTime(time.Now().Add(-time.Hour))
	ev := &anchorEvidence{fed: fed}
	operators := map[fv1.OperatorID]*fv1.FederationOperator{}
	submissions := map[fv1.OperatorID]fv1.Submission{}
	ca := &fv1.CrossAnchor{}
	ca.Name, ca.Spec.AnchorID = "anchor-20261124-001", "anchor-20261124-001"
	ca.Spec.AnchoredAt = protocol.FormatAnchoredAt(time.Now())
	for i := range n {
		_, key, _ := ed25519.GenerateKey(nil)
		pub := key.Public().(ed25519.PublicKey)
		pemText, err := protocol.MarshalPublicKeyPEM(pub)
		if err != nil {
			b.Fatal(err)
		}
		id := fv1.OperatorID(protocol.OperatorID(pub))
		fo := &fv1.FederationOperator{}
		fo.Status.Phase, fo.Status.OperatorID = fv1.PhaseActive, id
		fo.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: fv1.PublicKeyPEM(pemText), ValidFrom: metav1.NewTime(accepted.Add(-time.Hour))}}
		operators[id] = fo
		sum := sha256.Sum256(fmt.Appendf(nil, "chain %d", i))
		h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion, ExportedAt: "2026-11-24T06:00:00Z",
			EntryCount: 100, FirstSeq: 1, LastSeq: 100, FirstPrevHash: protocol.GenesisPrevHash, LastHMACHash: hex.EncodeToString(sum[:]),
			ChainSignature: hex.EncodeToString(sum[:]), EntriesRoot: hex.EncodeToString(sum[:])}
		signed, err := h.SignedBytes()
		if err != nil {
			b.Fatal(err)
		}
		sub := &fv1.Submission{Spec: fv1.SubmissionSpec{OperatorID: id, ChainSignature: fv1.Hash(h.ChainSignature), EntryCount: 100,
			FirstSeq: 1, LastSeq: 100, FirstPrevHash: fv1.Hash(h.FirstPrevHash), LastHMACHash: fv1.Hash(h.LastHMACHash),
			ExportedAt: fv1.Timestamp(h.ExportedAt), SignedHeader: string(signed),
			Signature: fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed))), PublicKeyPEM: fv1.PublicKeyPEM(pemText)}}
		sub.Status.Ed25519Verified, sub.Status.ContinuityVerified = true, true
		sub.Status.Conditions = []metav1.Condition{{Type: string(fv1.ConditionSignatureVerified), Status: metav1.ConditionTrue, LastTransitionTime: accepted}}
		submissions[id] = *sub
		ca.Spec.Participants = append(ca.Spec.Participants, fv1.Participant{OperatorID: id, ChainSignature: sub.Spec.ChainSignature, LastSeq: 100})
	}
	sort.Slice(ca.Spec.Participants, func(i, j int) bool { return ca.Spec.Participants[i].OperatorID < ca.Spec.Participants[j].OperatorID })
	for _, p := range ca.Spec.Participants {
		ev.covered = append(ev.covered, participantEvidence{operator: operators[p.OperatorID],
			submissions: []fv1.Submission{submissions[p.OperatorID]}})
	}
	if err := signedAnchorSpec(ca, fedKey); err != nil {
		b.Fatal(err)
	}
	ev.ca = ca

	dir := b.TempDir()
	skey, err := tlog.GenerateLogKey("cairn.bench/verify")
	if err != nil {
		b.Fatal(err)
	}
	log, err := tlog.OpenEmbedded(b.Context(), tlog.EmbeddedOptions{Dir: dir, PrivateKey: skey})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = log.Close(context.Background()) }()
	content, err := protocol.CrossAnchorLogContent(string(ca.Spec.CrossAnchorHash))
	if err != nil {
		b.Fatal(err)
	}
	body, err := protocol.NewHashedRekord(content, fedKey)
	if err != nil {
		b.Fatal(err)
	}
	e, err := log.Upload(b.Context(), body)
	if err != nil {
		b.Fatal(err)
	}
	ca.Status.LogEntry = &fv1.LogEntry{LogIndex: e.Index}
	if ev.logKey, err = log.PublicKey(b.Context()); err != nil {
		b.Fatal(err)
	}
	ev.readEntry = func(ctx context.Context, index int64) (*tlog.Entry, error) {
		return tlog.ReadDirEntry(ctx, dir, index, ev.logKey)
	}
	return ev
}
