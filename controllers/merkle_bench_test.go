package controllers

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/benchheap"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/history"
)

// BenchmarkMerkleAnchorRun1M times the part of an anchor run that binds what it found
// pending, for a million operators on a real API server: the leaves hashed into their
// tree, stored in a SQLite history store, the anchor signed (and its first receipt
// checked in full), the CrossAnchor created and the million leaves folded into the
// ledger. How the run finds what is pending is not included: a million pending
// Submission objects do not fit etcd (BenchmarkAnchorRun15k times that part).
// MiB-peak-heap includes the million participants the run is given; KB-object is the
// CrossAnchor's size in the API server.
func BenchmarkMerkleAnchorRun1M(b *testing.B) {
	const n = 1_000_000
	c, _ := benchNamespace(b)
	_, key, _ := ed25519.GenerateKey(nil)
	ctx := context.Background()
	store, err := history.Open(ctx, history.Options{Driver: history.SQLite, DSN: filepath.Join(b.TempDir(), "history.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() }) //nolint:errcheck // a benchmark's temporary store
	bound := make([]fv1.Participant, n)
	covered := make(map[fv1.OperatorID]int, n)
	for i := range bound {
		sum := sha256.Sum256(fmt.Appendf(nil, "chain %d", i))
		bound[i] = fv1.Participant{OperatorID: fv1.OperatorID(fmt.Sprintf("op_%016x", i)), ChainSignature: fv1.Hash(hex.EncodeToString(sum[:])), LastSeq: int64(i + 1)}
		covered[bound[i].OperatorID] = 1
	}
	for range b.N {
		b.StopTimer()
		_, ns := benchNamespace(b)
		fed := benchFederation(b, c, ns, key)
		trust := &federation.Trust{}
		r := &FederationReconciler{Client: c, APIReader: c, Trust: trust, Ledger: &federation.Ledger{Trust: trust},
			Merkle: federation.NewMerkleAnchors(store)}
		peak := benchheap.Sample(b)
		b.StartTimer()
		anchors, err := r.createAnchors(ctx, fed, key, bound, covered, "")
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		peak()
		ca := anchors[0]
		if len(anchors) != 1 || !federation.IsMerkle(ca) || ca.Spec.Tree.Size != n || r.Ledger.Through(fed, bound[n-1].OperatorID) != n {
			b.Fatalf("%d anchors, the first %+v", len(anchors), ca.Spec)
		}
		if err := federation.TrustAnchor(fed, ca); err != nil {
			b.Fatal(err)
		}
		var stored fv1.CrossAnchor
		if err := c.Get(ctx, client.ObjectKeyFromObject(ca), &stored); err != nil {
			b.Fatal(err)
		}
		raw, err := json.Marshal(&stored)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(raw))/1e3, "KB-object")
	}
}
