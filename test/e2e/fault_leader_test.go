package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/manager"
)

// TestLeaderKilledDuringAnAnchorRun runs two `cairn manager --leader-elect` replicas on
// one API server and one log directory (a volume both mount), holds the leader's anchor
// run at a step with a failpoint, SIGKILLs it there, and requires the second replica to
// take the Lease and finish that run: one CrossAnchor, in the log once, every invariant
// holding. The steps: right after the CrossAnchor is created, and right after the log
// took its record (before status says so).
func TestLeaderKilledDuringAnAnchorRun(t *testing.T) {
	skipShort(t)
	c, kubeconfig := startAPIServer(t)
	for _, step := range []string{failAfterAnchorCreated, failAfterLogUpload} {
		t.Run(step, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			ns, logDir := "leader-"+step, t.TempDir()
			faultFederation(ctx, t, c, ns, fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}, 3)
			pauseFile := filepath.Join(t.TempDir(), "paused")
			leader := runFaultManager(ctx, t, kubeconfig, logDir, ns, true, failpointEnv+"="+step, failpointPauseEnv+"="+pauseFile)
			first := waitLeader(ctx, t, c, ns)
			follower := runFaultManager(ctx, t, kubeconfig, logDir, ns, true)
			keys := addOperators(ctx, t, c, ns, 0, 3)
			waitRegistered(ctx, t, c, ns, 3)
			addSubmissions(ctx, t, c, ns, 0, keys)

			waitFile(ctx, t, pauseFile)
			if err := leader.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = leader.cmd.Wait()
			lease := &coordinationv1.Lease{}
			waitUntil(ctx, t, "the second replica to take the Lease", func() bool {
				if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: manager.LeaderElectionID}, lease); err != nil {
					t.Fatal(err)
				}
				h := lease.Spec.HolderIdentity
				return h != nil && *h != "" && *h != first
			})
			waitAnchors(ctx, t, c, ns, 1)
			waitAPIReady(ctx, t, follower.api)
			checkInvariants(ctx, t, c, ns, logDir, follower.api)
		})
	}
}
