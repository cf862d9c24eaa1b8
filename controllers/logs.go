package controllers

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
)

// Logs opens each Federation's transparency log once and keeps it while the Federation's
// spec.transparencyLog stays the same. Embedded logs live in Dir/<namespace>/<name>.
type Logs struct {
	// Dir holds the embedded logs (a PersistentVolume in a cluster).
	Dir string
	// Rekor holds the Rekor client settings other than the URL and the pinned key, which
	// come from each Federation's spec.
	Rekor tlog.RekorOptions
	// WitnessChanged, when set, is called with a Federation's name when its log's
	// witnessing changes; it must not block.
	WitnessChanged func(types.NamespacedName)

	mu   sync.Mutex
	open map[types.NamespacedName]*openLog

	booksMu sync.Mutex
	books   map[bookKey]*recordBook // recordbook.go
}

type openLog struct {
	spec fv1.TransparencyLog
	log  tlog.Log
}

// For returns fed's log, opening it on first use. An embedded log that exists but whose
// key Secret does not is federation.ErrNoLogKey; one whose key Secret holds another key is
// tlog.ErrKeyMismatch. Neither is cached: each call tries again, so a restored Secret
// takes effect at the next reconcile.
func (l *Logs) For(ctx context.Context, c client.Client, fed *fv1.Federation) (tlog.Log, error) {
	name := client.ObjectKeyFromObject(fed)
	l.mu.Lock()
	defer l.mu.Unlock()
	if o, ok := l.open[name]; ok {
		if equality.Semantic.DeepEqual(o.spec, fed.Spec.TransparencyLog) {
			return o.log, nil
		}
		if err := closeLog(ctx, o.log); err != nil {
			return nil, err
		}
		delete(l.open, name)
	}
	var log tlog.Log
	switch spec := fed.Spec.TransparencyLog; spec.Type {
	case fv1.TransparencyLogRekor:
		var pinned []byte
		if spec.PublicKeyPEM != "" {
			pinned = []byte(spec.PublicKeyPEM)
		}
		o := l.Rekor
		o.URL, o.PublicKeyPEM = spec.URL, pinned
		rekor, err := tlog.NewRekor(o)
		if err != nil {
			return nil, err
		}
		log = rekor
	case fv1.TransparencyLogRekorV2:
		o := federation.RekorV2Options(spec)
		o.Timeout, o.Attempts, o.Backoff, o.HTTPClient = l.Rekor.Timeout, l.Rekor.Attempts, l.Rekor.Backoff, l.Rekor.HTTPClient
		rekor, err := tlog.NewRekorV2(o)
		if err != nil {
			return nil, err
		}
		log = rekor
	default:
		dir := filepath.Join(l.Dir, fed.Namespace, fed.Name)
		key, err := logKey(ctx, c, fed, dir)
		if err != nil {
			return nil, err
		}
		url := ""
		if fed.Spec.PublicURL != "" { // where the federation API serves the tiles (webhook)
			url = strings.TrimSuffix(fed.Spec.PublicURL, "/") + "/federation/log"
		}
		policy, err := federation.WitnessPolicy(fed)
		if err != nil {
			return nil, err
		}
		embedded, err := tlog.OpenEmbedded(ctx, tlog.EmbeddedOptions{Dir: dir, PrivateKey: key, URL: url,
			Witnesses: policy, OnWitnessChange: func() {
				if l.WitnessChanged != nil {
					l.WitnessChanged(name)
				}
			}})
		if err != nil {
			return nil, err
		}
		log = embedded
	}
	if l.open == nil {
		l.open = map[types.NamespacedName]*openLog{}
	}
	l.open[name] = &openLog{spec: fed.Spec.TransparencyLog, log: log}
	return log, nil
}

// stop closes the embedded log of a Federation but keeps it as its log, so that uploads
// fail as unavailable until restart: a real outage of the embedded log, for tests.
func (l *Logs) stop(ctx context.Context, name types.NamespacedName) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o, ok := l.open[name]; ok {
		return closeLog(ctx, o.log)
	}
	return nil
}

// restart forgets a stopped log, so that the next For opens it again.
func (l *Logs) restart(name types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.open, name)
}

// Close closes every open log.
func (l *Logs) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for name, o := range l.open {
		errs = append(errs, closeLog(ctx, o.log))
		delete(l.open, name)
	}
	return errors.Join(errs...)
}

func closeLog(ctx context.Context, log tlog.Log) error {
	if e, ok := log.(*tlog.Embedded); ok {
		return e.Close(ctx)
	}
	return nil
}
