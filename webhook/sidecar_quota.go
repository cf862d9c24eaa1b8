package webhook

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// What the stored sidecars may take of the volume: each operator's submissions name at
// most Options.OperatorSidecarQuotaBytes of distinct content, and the store holds at
// most Options.SidecarStorageBytes. Stored sidecars no submission names are removed by
// the sweep (sidecar_sweep.go), as is anything a crash left half-received.

// Defaults of the sidecar quotas and sweep.
const (
	// DefaultOperatorSidecarQuotaBytes is how many bytes of distinct sidecars one
	// operator's submissions may name: 256 MiB.
	DefaultOperatorSidecarQuotaBytes = 256 << 20
	// DefaultSidecarStorageBytes is how many bytes of sidecars the store may hold: 8 GiB.
	DefaultSidecarStorageBytes = 8 << 30
	// DefaultSidecarSweepInterval is how often a replica sweeps the store.
	DefaultSidecarSweepInterval = 10 * time.Minute
)

// checkSidecarQuota refuses sidecars that would take operator fo's past its quota (413
// sidecar_quota_exceeded) or the store past its size (507 sidecar_storage_full); content
// the operator's submissions already name costs nothing.
func (s *Server) checkSidecarQuota(ctx context.Context, fo *fv1.FederationOperator, sidecars []fv1.SubmissionSidecar) error {
	if len(sidecars) == 0 {
		return nil
	}
	var subs fv1.SubmissionList
	if err := s.client.List(ctx, &subs, client.InNamespace(s.federation.Namespace),
		client.MatchingFields{federation.OperatorIDIndex: string(fo.Status.OperatorID)}, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	named := map[fv1.Hash]bool{}
	var used, adding int64
	for i := range subs.Items {
		for _, sc := range subs.Items[i].Spec.Sidecars {
			if !named[sc.Digest] {
				named[sc.Digest] = true
				used += sc.Size
			}
		}
	}
	for _, sc := range sidecars {
		if !named[sc.Digest] {
			named[sc.Digest] = true
			adding += sc.Size
		}
	}
	switch {
	case adding == 0:
		return nil
	case used+adding > s.sidecarQuota:
		return &apiError{status: http.StatusRequestEntityTooLarge, code: "sidecar_quota_exceeded",
			message: fmt.Sprintf("this operator's submissions name %d bytes of sidecars; %d more would pass its quota of %d", used, adding, s.sidecarQuota),
			extra:   map[string]any{"quota_bytes": s.sidecarQuota, "used_bytes": used}}
	case s.sidecarsStored.Load()+adding > s.sidecarStorage:
		return &apiError{status: http.StatusInsufficientStorage, code: "sidecar_storage_full",
			message: "the federation's sidecar store is full: send the export without sidecars"}
	}
	return nil
}
