package webhook

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// keepSidecars keeps what intake received (its submission was accepted) and counts it
// as stored until the next sweep measures the store.
func (s *Server) keepSidecars(intake *sidecarIntake) error {
	if err := intake.keep(); err != nil {
		return err
	}
	for _, h := range intake.held {
		s.sidecarsStored.Add(h.file.Size())
	}
	return nil
}

// sweepLoop sweeps the sidecar store once the cache has synced and then every
// interval, until ctx ends.
func (s *Server) sweepLoop(ctx context.Context, interval time.Duration) {
	if s.sidecars == nil || !s.informers.WaitForCacheSync(ctx) {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.sweepSidecars(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepSidecars removes from the store what no request is receiving and no Submission
// names, then measures what it holds. A file is spared while a request may still be
// using it: for the longest a request may live (the server's write timeout, with a
// minute to spare) after it last changed.
func (s *Server) sweepSidecars(ctx context.Context) {
	cutoff := s.now().Add(-s.timeouts.write - time.Minute)
	res, err := s.sidecars.Sweep(func(digest string) (bool, error) {
		var subs fv1.SubmissionList
		err := s.client.List(ctx, &subs, client.InNamespace(s.federation.Namespace),
			client.MatchingFields{federation.SidecarIndex: digest}, client.Limit(1), client.UnsafeDisableDeepCopy)
		if err != nil || len(subs.Items) > 0 || s.history == nil {
			return len(subs.Items) > 0, err
		}
		return s.storedSidecar(ctx, digest) // named by a submission that moved to the history store
	}, cutoff)
	if err != nil && ctx.Err() == nil {
		s.log.WarnContext(ctx, "Failed to sweep the sidecar store", "error", err)
	}
	if res.Incoming+res.Unnamed > 0 {
		s.log.InfoContext(ctx, "Swept the sidecar store", "incoming", res.Incoming, "unnamed", res.Unnamed, "bytes", res.Bytes)
	}
	if used, err := s.sidecars.Usage(); err == nil {
		s.sidecarsStored.Store(used)
	} else if ctx.Err() == nil {
		s.log.WarnContext(ctx, "Failed to measure the sidecar store", "error", err)
	}
}
