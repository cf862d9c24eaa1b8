package dev

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	federationv1alpha1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/witnessd"
	"github.com/cairn-dev/cairn/manager"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// The dev system's witnesses: two of cairn witness, run in this process on --witness-addrs
// with keys and state in <dir>/witnesses, standing for two members' witnesses. The
// Federation's witness policy is set to both of them when it has none, so that the
// embedded log's checkpoints are cosigned from the start and receipts carry the
// cosignatures.

// devWitnessesDir holds the witnesses' keys and state, under the state directory.
const devWitnessesDir = "witnesses"

// devWitness is one running dev witness.
type devWitness struct {
	name, vkey, url string
	srv             *http.Server
	w               *witnessd.Witness
}

// startDevWitnesses starts the dev witnesses of the Federation's log once its key exists,
// and gives the Federation them as its policy when it has none. It returns a function that
// stops them; a witness that cannot start (its port taken) is said, and then no policy is
// set.
func (o *devOptions) startDevWitnesses(ctx context.Context, cfg *rest.Config, say func(string, ...any)) (func() error, error) {
	none := func() error { return nil }
	if len(o.witnessAddrs) == 0 || !o.createFederation {
		return none, nil
	}
	c, err := client.New(cfg, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		return none, err
	}
	logKey, err := waitLogVerifierKey(ctx, c)
	if err != nil {
		return none, err
	}
	lk, err := witness.ParseLogKey(logKey)
	if err != nil {
		return none, err
	}
	var started []*devWitness
	stop := func() error {
		var errs []error
		for _, w := range started {
			errs = append(errs, w.srv.Close(), w.w.Close())
		}
		return errors.Join(errs...)
	}
	for i, addr := range o.witnessAddrs {
		w, err := startDevWitness(filepath.Join(o.env.Dir, devWitnessesDir), fmt.Sprintf("witness-%d.cairn-dev.local", i+1), addr, lk)
		if err != nil {
			say("witness        not started on %s: %v; the Federation's witness policy is left as it is", addr, err)
			return stop, nil
		}
		started = append(started, w)
		say("witness        %s (%s), state in %s", w.url, w.name, filepath.Join(o.env.Dir, devWitnessesDir))
	}
	set, err := setDevWitnessPolicy(ctx, c, started)
	if err != nil {
		return stop, errors.Join(err, stop())
	}
	if set {
		say("witnesses      the Federation's policy: %d of these %d cosign each checkpoint (spec.transparencyLog.witnesses)", len(started), len(started))
	}
	return stop, nil
}

// waitLogVerifierKey waits until the controllers generated the dev Federation's log key.
func waitLogVerifierKey(ctx context.Context, c client.Client) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		var fed federationv1alpha1.Federation
		err := c.Get(ctx, devFederation, &fed)
		if err == nil {
			var vkey string
			if vkey, err = federation.LogVerifierKey(ctx, c, &fed); err == nil && vkey != "" {
				return vkey, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the Federation's log key: %w", errors.Join(ctx.Err(), err))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startDevWitness starts the witness name on addr, its key and state in dir.
func startDevWitness(dir, name, addr string, lk witness.LogKey) (*devWitness, error) {
	keyFile := filepath.Join(dir, name+".key")
	raw, err := os.ReadFile(keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		skey, _, gerr := witness.GenerateSignerKey(name, rand.Reader)
		if gerr != nil {
			return nil, gerr
		}
		raw, err = []byte(skey+"\n"), atomicfile.Write(keyFile, []byte(skey+"\n"), 0o600)
	}
	if err != nil {
		return nil, err
	}
	cosigner, err := witness.ParseSignerKey(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	w, err := witnessd.Open(witnessd.Options{Cosigner: cosigner, Logs: []witness.LogKey{lk}, StatePath: filepath.Join(dir, name+".db"),
		Logger: slog.Default()})
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return &devWitness{name: name, vkey: cosigner.Key().String(), url: "http://" + l.Addr().String(), srv: srv, w: w}, nil
}

// setDevWitnessPolicy gives the dev Federation the witnesses as its policy, all of them
// required, unless it has a policy; a policy an earlier cairn dev set (these witnesses,
// these keys) follows them to their addresses now. It reports whether it set one.
func setDevWitnessPolicy(ctx context.Context, c client.Client, ws []*devWitness) (bool, error) {
	set := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var fed federationv1alpha1.Federation
		if err := c.Get(ctx, devFederation, &fed); err != nil {
			return err
		}
		p := &federationv1alpha1.WitnessPolicy{Quorum: int32(len(ws))}
		for i, w := range ws {
			p.Witnesses = append(p.Witnesses, federationv1alpha1.WitnessRef{Name: fmt.Sprintf("witness-%d", i+1), Key: w.vkey, URL: w.url})
		}
		old := fed.Spec.TransparencyLog.Witnesses
		switch {
		case old == nil:
		case sameWitnesses(old, p) && old.Quorum == p.Quorum:
			if equality.Semantic.DeepEqual(old, p) {
				return nil
			}
		default:
			return nil // the administrator's own policy
		}
		fed.Spec.TransparencyLog.Witnesses = p
		set = true
		return c.Update(ctx, &fed)
	})
	return set, err
}

// sameWitnesses reports whether a and b name the same witnesses by name and key.
func sameWitnesses(a, b *federationv1alpha1.WitnessPolicy) bool {
	return slices.EqualFunc(a.Witnesses, b.Witnesses, func(x, y federationv1alpha1.WitnessRef) bool {
		return x.Name == y.Name && x.Key == y.Key
	})
}
