package webhook

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// readsStore is the store the read benchmarks (reads_bench_test.go) run against: a real
// API server (envtest) and a manager that runs no controller, only its cache with the
// federation's indexes, so that what is measured is the API's reads from the cache as a
// replica serves them. The objects are written as the controllers would have written
// them (keys, verdicts, heads, signed anchors), with real Ed25519 keys and signatures,
// and the verify anchor is in a real embedded log.
type readsStore struct {
	c      client.Client // uncached, as the cluster administrator
	mgr    ctrl.Manager
	fed    types.NamespacedName
	logDir string
	sides  string // the sidecar store's directory
	fedKey ed25519.PrivateKey
	ops    []*readsOperator
	// anchors counts the small anchors made so far.
	anchors int
	// sidecarDigest is the digest of the sidecar operator 0's first submission carries.
	sidecarDigest string
}

// readsOperator is one registered operator and the submissions made for it so far.
type readsOperator struct {
	key  ed25519.PrivateKey
	id   fv1.OperatorID
	name string
	subs []*fv1.Submission
}

// Shape of the store.
const (
	readsOperators    = 1000 // registered operators, each in the verify anchor
	readsEntries      = 10   // entries per submission
	readsVerifyAnchor = "anchor-20261124-001"
	readsWorkers      = 16 // concurrent writers while the store is filled
)

var (
	readsOnce sync.Once
	readsEnv  *readsStore
	readsErr  error
)

// startReadsStore returns the process's read store with at least perOperator submissions
// for each operator and an anchor for every ten submissions, filled on first use and
// grown on later calls.
func startReadsStore(b *testing.B, perOperator int) *readsStore {
	b.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Skip("KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh)")
	}
	klog.SetLogger(logr.Discard())
	ctrl.SetLogger(logr.Discard())
	readsOnce.Do(func() { readsEnv, readsErr = newReadsStore() })
	if readsErr != nil {
		b.Fatal(readsErr)
	}
	if len(readsEnv.ops[0].subs) > perOperator {
		b.Skip("the store has grown past this size in this process: run with -count 1")
	}
	start := time.Now()
	if err := readsEnv.grow(perOperator); err != nil {
		b.Fatal(err)
	}
	b.Logf("store: %d operators, %d submissions, %d anchors (filled in %s)", len(readsEnv.ops),
		len(readsEnv.ops)*perOperator, readsEnv.anchors+1, time.Since(start).Round(time.Second))
	return readsEnv
}

// newReadsStore starts the API server and the manager, and writes the Federation, its
// Secrets, the operators with one submission each and the verify anchor, logged.
func newReadsStore() (*readsStore, error) {
	ctx := context.Background()
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = -1, 0 // the client's own limiter would be what is measured
	c, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: newScheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return nil, err
	}
	if err := registerReadsIndexes(ctx, mgr); err != nil {
		return nil, err
	}
	go func() { _ = mgr.Start(ctx) }()
	st := &readsStore{c: c, mgr: mgr}
	if st.logDir, err = os.MkdirTemp("", "cairn-reads-bench-"); err != nil {
		return nil, err
	}
	st.sides = filepath.Join(st.logDir, "_sidecars")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cairn-reads-"}}
	if err := c.Create(ctx, ns); err != nil {
		return nil, err
	}
	st.fed = types.NamespacedName{Namespace: ns.Name, Name: "cairn"}
	if err := st.writeFederation(ctx); err != nil {
		return nil, err
	}
	if err := st.writeOperators(ctx); err != nil {
		return nil, err
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.New("the manager's cache did not sync")
	}
	return st, nil
}

// server is an API server on the store, without rate limits.
func (st *readsStore) server() (*Server, error) {
	return New(readsServerOptions(st))
}

// writeFederation writes the Federation with its key history, the signing-key and log-key
// Secrets, and the embedded log's directory.
func (st *readsStore) writeFederation(ctx context.Context) error {
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	st.fedKey = key
	pub := key.Public().(ed25519.PublicKey)
	pemText, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		return err
	}
	priv, err := protocol.MarshalPrivateKeyPEM(key)
	if err != nil {
		return err
	}
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: st.fed.Namespace, Name: st.fed.Name},
		Spec: fv1.FederationSpec{TransparencyLog: fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}, MinParticipants: 10000}}
	if err := st.c.Create(ctx, fed); err != nil {
		return err
	}
	logKey, err := tlog.GenerateLogKey("cairn.bench/reads")
	if err != nil {
		return err
	}
	signing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: st.fed.Namespace, Name: "cairn-signing-key"},
		Data: map[string][]byte{federation.SigningKeySecretKey: priv}}
	logSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: st.fed.Namespace, Name: federation.LogKeySecretName(fed)},
		Data: map[string][]byte{federation.LogKeySecretKey: []byte(logKey)}}
	for _, s := range []*corev1.Secret{signing, logSecret} {
		if err := st.c.Create(ctx, s); err != nil {
			return err
		}
	}
	fed.Status.PublicKeyPEM = fv1.PublicKeyPEM(pemText)
	fed.Status.PublicKeyFingerprint = fv1.Hash(protocol.Fingerprint(pub))
	fed.Status.SigningKeySecret = signing.Name
	fed.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: fed.Status.PublicKeyPEM, Fingerprint: fed.Status.PublicKeyFingerprint,
		ValidFrom: metav1.NewTime(time.Now().Add(-48 * time.Hour))}}
	fed.Status.LastAnchor = &fv1.AnchorSummary{AnchorID: readsVerifyAnchor}
	if err := st.c.Status().Update(ctx, fed); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(st.logDir, st.fed.Namespace, st.fed.Name), 0o755)
}

// writeOperators registers readsOperators operators, each with one accepted submission,
// and the verify anchor over those submissions, logged in the embedded log.
func (st *readsStore) writeOperators(ctx context.Context) error {
	registered := metav1.NewTime(time.Now().Add(-24 * time.Hour).Truncate(time.Second))
	st.ops = make([]*readsOperator, readsOperators)
	for i := range st.ops {
		_, key, err := ed25519.GenerateKey(nil)
		if err != nil {
			return err
		}
		pub := key.Public().(ed25519.PublicKey)
		st.ops[i] = &readsOperator{key: key, id: fv1.OperatorID(protocol.OperatorID(pub)), name: fmt.Sprintf("org-%04d", i)}
	}
	content := []byte(`{"_type":"https://in-toto.io/Statement/v1"}`)
	var err error
	if st.sidecarDigest, err = sidecar.NewStore(st.sides).Put(content); err != nil {
		return err
	}
	err = parallel(len(st.ops), func(i int) error {
		op := st.ops[i]
		pemText, err := protocol.MarshalPublicKeyPEM(op.key.Public().(ed25519.PublicKey))
		if err != nil {
			return err
		}
		fo := &fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Namespace: st.fed.Namespace, Name: op.name},
			Spec: fv1.FederationOperatorSpec{OrgName: fmt.Sprintf("Org %d", i), PublicKeyPEM: fv1.PublicKeyPEM(pemText),
				ProofOfPossession: fv1.Signature(protocol.SignRegistration(op.key, fmt.Sprintf("Org %d", i)))}}
		if err := st.c.Create(ctx, fo); err != nil {
			return err
		}
		fo.Status = fv1.FederationOperatorStatus{OperatorID: op.id, Phase: fv1.PhaseActive, RegisteredAt: &registered,
			KeyHistory: []fv1.KeyRecord{{PublicKeyPEM: fo.Spec.PublicKeyPEM, Fingerprint: fv1.Hash(protocol.Fingerprint(op.key.Public().(ed25519.PublicKey))),
				ValidFrom: registered}}}
		if err := st.c.Status().Update(ctx, fo); err != nil {
			return err
		}
		var sidecars []fv1.SubmissionSidecar
		if i == 0 {
			sidecars = []fv1.SubmissionSidecar{{Digest: fv1.Hash(st.sidecarDigest), MediaType: "application/vnd.in-toto+json",
				Size: int64(len(content)), Name: "statement.json"}}
		}
		return st.submit(ctx, op, fo, sidecars)
	})
	if err != nil {
		return err
	}
	return st.verifyAnchor(ctx)
}

// grow adds submissions until every operator has perOperator of them, and a signed
// anchor of three participants for every ten submissions beyond the first thousand.
func (st *readsStore) grow(perOperator int) error {
	ctx := context.Background()
	if len(st.ops[0].subs) >= perOperator {
		return nil
	}
	err := parallel(len(st.ops), func(i int) error {
		op := st.ops[i]
		var fo fv1.FederationOperator
		if err := st.c.Get(ctx, client.ObjectKey{Namespace: st.fed.Namespace, Name: op.name}, &fo); err != nil {
			return err
		}
		for len(op.subs) < perOperator {
			if err := st.submit(ctx, op, &fo, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	want := len(st.ops)*perOperator/10 - 1 // the verify anchor is one
	first := st.anchors
	err = parallel(want-first, func(i int) error { return st.smallAnchor(ctx, first+i) })
	if err != nil {
		return err
	}
	st.anchors = want
	return st.waitCached(ctx, len(st.ops)*perOperator)
}

// waitCached waits until the manager's cache holds n Submissions.
func (st *readsStore) waitCached(ctx context.Context, n int) error {
	return waitFor(ctx, func() (bool, error) {
		var subs fv1.SubmissionList
		err := st.mgr.GetClient().List(ctx, &subs, client.InNamespace(st.fed.Namespace), client.UnsafeDisableDeepCopy)
		return len(subs.Items) >= n, err
	})
}

// submit writes op's next submission of readsEntries entries, accepted as the Submission
// controller accepts one (signature verified, continuity verified, previous submission
// named), and moves fo's head to it.
func (st *readsStore) submit(ctx context.Context, op *readsOperator, fo *fv1.FederationOperator, sidecars []fv1.SubmissionSidecar) error {
	after := int64(len(op.subs)) * readsEntries
	last := after + readsEntries
	hash := func(n int64) string {
		if n == 0 {
			return protocol.GenesisPrevHash
		}
		sum := sha256.Sum256(fmt.Appendf(nil, "%s %d", op.id, n))
		return hex.EncodeToString(sum[:])
	}
	h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion,
		ExportedAt: time.Now().UTC().Truncate(time.Second).Format(time.RFC3339), EntryCount: last,
		FirstSeq: after + 1, LastSeq: last, FirstPrevHash: hash(after), LastHMACHash: hash(last),
		ChainSignature: hash(-last), EntriesRoot: hash(-1 - last)}
	signed, err := h.SignedBytes()
	if err != nil {
		return err
	}
	sub := &fv1.Submission{ObjectMeta: metav1.ObjectMeta{Namespace: st.fed.Namespace, Name: federation.SubmissionName(op.id, h.FirstSeq)},
		Spec: fv1.SubmissionSpec{OperatorID: op.id, ChainSignature: fv1.Hash(h.ChainSignature), EntryCount: h.EntryCount,
			FirstSeq: h.FirstSeq, LastSeq: h.LastSeq, FirstPrevHash: fv1.Hash(h.FirstPrevHash), LastHMACHash: fv1.Hash(h.LastHMACHash),
			ExportedAt: fv1.Timestamp(h.ExportedAt), SignedHeader: string(signed),
			Signature:    fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(op.key, signed))),
			PublicKeyPEM: fo.Spec.PublicKeyPEM, Sidecars: sidecars}}
	if err := st.c.Create(ctx, sub); err != nil {
		return err
	}
	accepted := metav1.NewTime(time.Now().Truncate(time.Second))
	cond := func(t fv1.ConditionType, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: status, Reason: reason, Message: msg, LastTransitionTime: accepted, ObservedGeneration: 1}
	}
	sub.Status = fv1.SubmissionStatus{ObservedGeneration: 1, SubmissionID: sub.Name, Ed25519Verified: true, ContinuityVerified: true,
		Conditions: []metav1.Condition{
			cond(fv1.ConditionSignatureVerified, metav1.ConditionTrue, fv1.ReasonVerified, "the export header is signed by the operator's current key"),
			cond(fv1.ConditionContinuityVerified, metav1.ConditionTrue, fv1.ReasonVerified, "the operator's first submission"),
			cond(fv1.ConditionReady, metav1.ConditionTrue, fv1.ReasonVerified, "signed by the operator's current key and the operator's first submission"),
			cond(fv1.ConditionAnchored, metav1.ConditionFalse, fv1.ReasonPending, "waits for the next cross-anchor"),
		}}
	if n := len(op.subs); n > 0 {
		sub.Status.PreviousSubmission = op.subs[n-1].Name
	} else {
		sub.Status.Anchored, sub.Status.AnchorRef = true, readsVerifyAnchor
		sub.Status.Conditions[3] = cond(fv1.ConditionAnchored, metav1.ConditionTrue, fv1.ReasonAnchored, "bound into "+readsVerifyAnchor)
	}
	if err := st.c.Status().Update(ctx, sub); err != nil {
		return err
	}
	op.subs = append(op.subs, sub)
	fo.Status.Head = &fv1.SubmissionHead{Submission: sub.Name, LastSeq: last, LastHMACHash: sub.Spec.LastHMACHash,
		EntryCount: last, ChainSignature: sub.Spec.ChainSignature, UID: string(sub.UID), AcceptedAt: accepted}
	return st.c.Status().Update(ctx, fo)
}

// verifyAnchor writes the anchor of every operator's first submission, signed by the
// federation key, and records it in the embedded log.
func (st *readsStore) verifyAnchor(ctx context.Context) error {
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: st.fed.Namespace, Name: readsVerifyAnchor}}
	ca.Spec.AnchorID = readsVerifyAnchor
	ca.Spec.AnchoredAt = protocol.FormatAnchoredAt(time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC))
	for _, op := range st.ops {
		s := op.subs[0]
		ca.Spec.Participants = append(ca.Spec.Participants, fv1.Participant{OperatorID: op.id, ChainSignature: s.Spec.ChainSignature, LastSeq: s.Spec.LastSeq})
	}
	slices.SortFunc(ca.Spec.Participants, func(a, b fv1.Participant) int { return strings.Compare(string(a.OperatorID), string(b.OperatorID)) })
	if err := signedAnchorSpec(ca, st.fedKey); err != nil {
		return err
	}
	if err := st.c.Create(ctx, ca); err != nil {
		return err
	}
	var logKey corev1.Secret
	if err := st.c.Get(ctx, client.ObjectKey{Namespace: st.fed.Namespace, Name: st.fed.Name + "-log-key"}, &logKey); err != nil {
		return err
	}
	log, err := tlog.OpenEmbedded(ctx, tlog.EmbeddedOptions{Dir: filepath.Join(st.logDir, st.fed.Namespace, st.fed.Name),
		PrivateKey: string(logKey.Data[federation.LogKeySecretKey])})
	if err != nil {
		return err
	}
	defer func() { _ = log.Close(context.Background()) }()
	content, err := protocol.CrossAnchorLogContent(string(ca.Spec.CrossAnchorHash))
	if err != nil {
		return err
	}
	body, err := protocol.NewHashedRekord(content, st.fedKey)
	if err != nil {
		return err
	}
	e, err := log.Upload(ctx, body)
	if err != nil {
		return err
	}
	ca.Status.LogEntry = &fv1.LogEntry{LogIndex: e.Index}
	return st.c.Status().Update(ctx, ca)
}

// smallAnchor writes the i-th anchor of three participants (operators i, i+7 and i+13,
// modulo their number), four a day from 2026-01-01, signed by the federation key.
func (st *readsStore) smallAnchor(ctx context.Context, i int) error {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i/4) * 24 * time.Hour)
	id := fmt.Sprintf("anchor-%s-%03d", day.Format("20060102"), i%4+1)
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: st.fed.Namespace, Name: id}}
	ca.Spec.AnchorID = fv1.AnchorID(id)
	ca.Spec.AnchoredAt = protocol.FormatAnchoredAt(day.Add(time.Duration(i%4) * 6 * time.Hour))
	for _, j := range []int{i, i + 7, i + 13} {
		op := st.ops[j%len(st.ops)]
		s := op.subs[len(op.subs)-1]
		ca.Spec.Participants = append(ca.Spec.Participants, fv1.Participant{OperatorID: op.id, ChainSignature: s.Spec.ChainSignature, LastSeq: s.Spec.LastSeq})
	}
	slices.SortFunc(ca.Spec.Participants, func(a, b fv1.Participant) int { return strings.Compare(string(a.OperatorID), string(b.OperatorID)) })
	if err := signedAnchorSpec(ca, st.fedKey); err != nil {
		return err
	}
	return st.c.Create(ctx, ca)
}

// parallel runs f(0) … f(n-1) on readsWorkers goroutines and returns the first error.
func parallel(n int, f func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan int)
	)
	for range readsWorkers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("item %d: %w", i, err))
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}
