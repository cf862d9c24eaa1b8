package webhook

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// memoryClient answers Get and List from objects held in memory as the manager's cache
// answers a List with client.UnsafeDisableDeepCopy: each item a shallow copy of the
// stored object. Everything else is unimplemented (a nil embedded client.Client).
type memoryClient struct {
	client.Client
	fed       *fv1.Federation
	operators []fv1.FederationOperator
	anchors   []fv1.CrossAnchor
	subs      map[string]*fv1.Submission
}

func (m *memoryClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch o := obj.(type) {
	case *fv1.Federation:
		*o = *m.fed
		return nil
	case *fv1.CrossAnchor:
		for i := range m.anchors {
			if m.anchors[i].Name == key.Name {
				*o = m.anchors[i]
				return nil
			}
		}
	case *fv1.Submission:
		if sub, ok := m.subs[key.Name]; ok {
			*o = *sub
			return nil
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{Resource: reflect.TypeOf(obj).String()}, key.Name)
}

func (m *memoryClient) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	switch l := list.(type) {
	case *fv1.FederationOperatorList:
		l.Items = append(l.Items[:0], m.operators...)
	case *fv1.CrossAnchorList:
		l.Items = append(l.Items[:0], m.anchors...)
	case *fv1.SubmissionList:
		for _, sub := range m.subs {
			l.Items = append(l.Items, *sub)
		}
	default:
		return fmt.Errorf("memoryClient lists no %T", list)
	}
	return nil
}

// noInformers is a cache whose informers never see an object, for Servers on a
// memoryClient: their status counts stay 0.
func noInformers() cache.Informers { return &informertest.FakeInformers{Scheme: newScheme()} }

// pageFixture builds a federation of operators (each with an accepted head submission)
// and anchors the federation signed, three participants each (fewer when there are
// fewer operators), held in a memoryClient, and returns it with the federation's key.
// Its log is a Rekor log at a closed loopback port, with a pinned key: nothing is logged.
func pageFixture(b testing.TB, operators, anchors int) (*memoryClient, ed25519.PrivateKey) {
	b.Helper()
	_, key, _ := ed25519.GenerateKey(nil)
	pub := key.Public().(ed25519.PublicKey)
	pemText, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		b.Fatal(err)
	}
	skey, err := tlog.GenerateLogKey("bench.example/log")
	if err != nil {
		b.Fatal(err)
	}
	logPEM, err := tlog.LogKeyPEM(skey)
	if err != nil {
		b.Fatal(err)
	}
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "cairn"}}
	fed.Spec.TransparencyLog = fv1.TransparencyLog{Type: fv1.TransparencyLogRekor, URL: "http://127.0.0.1:9", PublicKeyPEM: string(logPEM)}
	fed.Status.PublicKeyPEM = fv1.PublicKeyPEM(pemText)
	fed.Status.PublicKeyFingerprint = fv1.Hash(protocol.Fingerprint(pub))
	fed.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: fed.Status.PublicKeyPEM, Fingerprint: fed.Status.PublicKeyFingerprint}}
	m := &memoryClient{fed: fed, subs: map[string]*fv1.Submission{}}
	registered := metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	ids := make([]fv1.OperatorID, operators)
	for i := range operators {
		id := fv1.OperatorID(fmt.Sprintf("op_%016x", i))
		ids[i] = id
		name := fmt.Sprintf("sub-%d", i)
		sub := &fv1.Submission{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, CreationTimestamp: registered}}
		sub.Spec.OperatorID = id
		sub.Status.Ed25519Verified, sub.Status.ContinuityVerified = true, true
		m.subs[name] = sub
		fo := fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: string(id)}}
		fo.Spec.OrgName = fmt.Sprintf("Org %d", i)
		fo.Status = fv1.FederationOperatorStatus{OperatorID: id, Phase: fv1.PhaseActive, RegisteredAt: &registered,
			Head:         &fv1.SubmissionHead{Submission: name, LastSeq: 1},
			Organization: []fv1.OrganizationRecord{{OrgName: fo.Spec.OrgName}}}
		m.operators = append(m.operators, fo)
	}
	for i := range anchors {
		day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i/4) * 24 * time.Hour)
		id := fmt.Sprintf("anchor-%s-%03d", day.Format("20060102"), i%4+1)
		ca := fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: id}}
		ca.Spec.AnchorID = fv1.AnchorID(id)
		ca.Spec.AnchoredAt = day.Add(time.Duration(i%4) * 6 * time.Hour).Format("2006-01-02T15:04:05.000000000Z")
		for j := range min(3, operators) {
			op := ids[(i+j*7)%operators]
			ca.Spec.Participants = append(ca.Spec.Participants, fv1.Participant{OperatorID: op, ChainSignature: fv1.Hash(fmt.Sprintf("%064x", i*3+j)), LastSeq: 1})
		}
		slices.SortFunc(ca.Spec.Participants, func(a, b fv1.Participant) int { return cmp.Compare(a.OperatorID, b.OperatorID) })
		if err := signedAnchorSpec(&ca, key); err != nil {
			b.Fatal(err)
		}
		m.anchors = append(m.anchors, ca)
	}
	return m, key
}
