package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/devenv"
	fedpkg "github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/manager"
	"github.com/cairn-dev/cairn/pkg/client"
)

// federationNS and federationName name the simulated Federation.
const (
	federationNS   = "cairn-system"
	federationName = "cairn"
	// tickAnnotation is written on the Federation to have it reconciled at once after the
	// simulated clock passed its next anchor time (the controller's own requeue waits in
	// real time).
	tickAnnotation = "loadtest.cairn.dev/tick"
)

// federation is the control plane (etcd and kube-apiserver of `cairn dev`), the manager
// with its controllers and the federation API, all on one simulated clock.
type federation struct {
	env    *devenv.Env
	admin  ctrlclient.Client // uncached, as the administrator
	base   string            // the federation API's URL
	key    types.NamespacedName
	etcd   string // etcd's data directory
	logDir string // the embedded logs', and the SQLite history store's, directory
	stopFn context.CancelFunc
	done   chan error
}

// startFederation starts the control plane in dir, the Federation (anchoring every
// cfg.AnchorEvery on clock, no rate limits, cfg.History's retention) and the manager
// (cfg.History's store), and waits until the API answers.
func startFederation(ctx context.Context, dir string, cfg config, now func() time.Time) (*federation, error) {
	env, err := devenv.Start(ctx, devenv.Options{Dir: dir, AssetsDir: cfg.Assets, Fresh: true})
	if err != nil {
		return nil, err
	}
	f := &federation{env: env, key: types.NamespacedName{Namespace: federationNS, Name: federationName}, etcd: filepath.Join(dir, "etcd"),
		logDir: filepath.Join(dir, "tlog")}
	if err := f.start(ctx, f.logDir, cfg, now); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return f, nil
}

func (f *federation) start(ctx context.Context, logDir string, cfg config, now func() time.Time) error {
	var err error
	if f.admin, err = ctrlclient.New(f.env.Config, ctrlclient.Options{Scheme: manager.NewScheme()}); err != nil {
		return err
	}
	addr, err := freeAddress()
	if err != nil {
		return err
	}
	f.base = "http://" + addr
	if err := f.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: federationNS}}); err != nil {
		return err
	}
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: federationNS, Name: federationName},
		Spec: fv1.FederationSpec{AnchorInterval: metav1.Duration{Duration: cfg.AnchorEvery}, MinParticipants: 1,
			MaxPendingPerOperator: 1000, PublicURL: f.base, History: fv1.FederationHistory{Retention: metav1.Duration{Duration: cfg.History.Retention}}}}
	if err := f.admin.Create(ctx, fed); err != nil {
		return err
	}
	o := manager.NewOptions()
	o.MetricsBindAddress, o.HealthProbeBindAddress, o.LogDir = "0", "127.0.0.1:0", logDir
	o.FederationBindAddress, o.Federation = addr, federationNS+"/"+federationName
	// The load comes from one address and each operator sends a few requests a day of
	// simulated time, seconds apart in real time: the limits are off, the registration
	// limit too (every operator registers from this one address).
	o.FederationRateLimit, o.FederationOperatorRateLimit, o.FederationRegistrationLimit = -1, -1, -1
	o.Now = now
	o.SkipControllerNameValidation = true // a test process runs one load after another
	o.History = manager.HistoryOptions{Store: cfg.History.Store, DSN: cfg.History.DSN, Interval: cfg.History.Interval}
	if err := o.Validate(); err != nil {
		return err
	}
	mgrCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	mgr, err := manager.New(mgrCtx, f.env.ManagerConfig, o)
	if err != nil {
		stop()
		return err
	}
	f.stopFn, f.done = stop, make(chan error, 1)
	go func() { f.done <- mgr.Start(mgrCtx) }()
	return f.waitReady(ctx)
}

// waitReady waits until the API's status answers with the Federation's key.
func (f *federation) waitReady(ctx context.Context) error {
	c, err := client.New(f.base)
	if err != nil {
		return err
	}
	for {
		st, err := c.Status(ctx)
		if err == nil && st.FederationPublicKey != "" && st.TLogPublicKey != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the federation API did not get ready: %w (last: %w)", ctx.Err(), err)
		case err := <-f.done:
			return fmt.Errorf("the manager stopped: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop stops the manager, then the control plane.
func (f *federation) stop() error {
	var err error
	if f.stopFn != nil {
		f.stopFn()
		err = <-f.done
	}
	return errors.Join(err, f.env.Stop())
}

// get reads the Federation from the API server.
func (f *federation) get(ctx context.Context) (*fv1.Federation, error) {
	var fed fv1.Federation
	return &fed, f.admin.Get(ctx, f.key, &fed)
}

// anchorRun is one scheduled anchor, as the harness saw it.
type anchorRun struct {
	id           string
	participants int
	run          time.Duration // tick to the Federation's status naming the anchor
	logged       time.Duration // tick to the CrossAnchor Anchored with its log entry
}

// anchorIfDue makes the Federation reconcile when the simulated time now is at or past
// its next anchor time, waits for the run (status.nextAnchorTime moves past now) and for
// its CrossAnchor's log entry. It returns nil when no run was due or it made no anchor.
func (f *federation) anchorIfDue(ctx context.Context, now time.Time, tick int) (*anchorRun, error) {
	fed, err := f.get(ctx)
	if err != nil {
		return nil, err
	}
	if next := fed.Status.NextAnchorTime; next == nil || now.Before(next.Time) {
		return nil, nil
	}
	before := ""
	if fed.Status.LastAnchor != nil {
		before = string(fed.Status.LastAnchor.AnchorID)
	}
	began := time.Now()
	patch := ctrlclient.MergeFrom(fed.DeepCopy())
	if fed.Annotations == nil {
		fed.Annotations = map[string]string{}
	}
	fed.Annotations[tickAnnotation] = strconv.Itoa(tick)
	if err := f.admin.Patch(ctx, fed, patch); err != nil {
		return nil, err
	}
	if err := poll(ctx, func() (bool, error) {
		fed, err = f.get(ctx)
		return err == nil && fed.Status.NextAnchorTime != nil && fed.Status.NextAnchorTime.After(now), err
	}); err != nil {
		return nil, fmt.Errorf("the anchor run due at %s: %w", now.Format(time.RFC3339), err)
	}
	if fed.Status.LastAnchor == nil || string(fed.Status.LastAnchor.AnchorID) == before {
		return nil, nil
	}
	run := &anchorRun{id: string(fed.Status.LastAnchor.AnchorID), run: time.Since(began)}
	var ca fv1.CrossAnchor
	if err := poll(ctx, func() (bool, error) {
		err := f.admin.Get(ctx, types.NamespacedName{Namespace: federationNS, Name: run.id}, &ca)
		return err == nil && ca.Status.Phase == fv1.PhaseAnchored && ca.Status.LogEntry != nil, ctrlclient.IgnoreNotFound(err)
	}); err != nil {
		return nil, fmt.Errorf("anchor %s was not logged: %w", run.id, err)
	}
	run.logged, run.participants = time.Since(began), fedpkg.ParticipantCount(&ca)
	return run, nil
}

// poll calls done every 20 ms until it says true, fails, or ctx ends.
func poll(ctx context.Context, done func() (bool, error)) error {
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// historyBytes is the size of the SQLite history store the manager keeps by default,
// its write-ahead log included; 0 when there is none.
func (f *federation) historyBytes() int64 {
	var n int64
	for _, name := range []string{"_history.db", "_history.db-wal"} {
		if st, err := os.Stat(filepath.Join(f.logDir, name)); err == nil {
			n += st.Size()
		}
	}
	return n
}

// count is how many objects of the list kind etcd holds in the Federation's namespace:
// one item listed, and the API server's count of the rest.
func (f *federation) count(ctx context.Context, kind string) (int, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(fv1.GroupVersion.WithKind(kind))
	if err := f.admin.List(ctx, list, ctrlclient.InNamespace(federationNS), ctrlclient.Limit(1)); err != nil {
		return 0, fmt.Errorf("count %s: %w", kind, err)
	}
	n := len(list.Items)
	if rest := list.RemainingItemCount; rest != nil {
		n += int(*rest)
	}
	return n, nil
}

// freeAddress returns a loopback address with a port nobody listens on.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// httpClient is the operators' shared HTTP client: keep-alive connections to the API.
func httpClient(conns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = conns
	return &http.Client{Transport: t, Timeout: 2 * time.Minute}
}
