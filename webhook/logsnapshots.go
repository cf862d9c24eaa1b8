package webhook

import (
	"context"
	"crypto"
	"encoding/base64"
	"maps"
	"net/http"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The weekly log snapshots the controllers keep (controllers/logsnapshot.go), served for
// auditors: each is the log's checkpoint of that week, a note the log signed. They are
// re-verified under the log key the federation names before they are served, so an edit
// of the ConfigMap that holds them shows as a missing week, not as a forged root.

// logSnapshot is one week's snapshot.
type logSnapshot struct {
	Week       string `json:"week" doc:"The ISO week the snapshot was taken in." example:"\"2026-W48\""`
	Origin     string `json:"origin" doc:"The log's origin line."`
	TreeSize   uint64 `json:"tree_size" doc:"How many entries the log held."`
	RootHash   string `json:"root_hash" doc:"The RFC 6962 root hash at that size, base64 as in the checkpoint."`
	Checkpoint string `json:"checkpoint" doc:"The checkpoint, a signed note, exactly as the log signed it; it verifies under tlog_public_key."`
}

// logSnapshotsResponse answers GET /federation/log/snapshots.
type logSnapshotsResponse struct {
	TLogPublicKey string        `json:"tlog_public_key" doc:"The key the snapshots verify under, PKIX PEM; empty for a Rekor log whose key the Federation does not pin, whose snapshots are not served."`
	Snapshots     []logSnapshot `json:"snapshots" doc:"Newest first; only those that verify under tlog_public_key."`
}

// serveLogSnapshots answers GET /federation/log/snapshots.
func (s *Server) serveLogSnapshots(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	resp, err := s.logSnapshots(ctx)
	if err != nil {
		s.fail(ctx, w, "read the log snapshots", err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// serveLogSnapshot answers GET /federation/log/snapshots/{week}: the note, text/plain.
func (s *Server) serveLogSnapshot(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	week := r.PathValue("week")
	if !federation.IsSnapshotWeek(week) {
		writeError(w, &apiError{status: http.StatusBadRequest, code: "invalid_week", message: "the week is not of the form 2026-W48"})
		return
	}
	resp, err := s.logSnapshots(ctx)
	if err != nil {
		s.fail(ctx, w, "read the log snapshots", err)
		return
	}
	for _, snap := range resp.Snapshots {
		if snap.Week == week {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-cache")
			_, _ = w.Write([]byte(snap.Checkpoint))
			return
		}
	}
	writeError(w, &apiError{status: http.StatusNotFound, code: "snapshot_not_found", message: "no snapshot of the log was taken in " + week})
}

// logSnapshots reads the stored snapshots and keeps those that verify.
func (s *Server) logSnapshots(ctx context.Context) (*logSnapshotsResponse, error) {
	fed, err := s.loadFederation(ctx)
	if err != nil {
		return nil, err
	}
	keyPEM, err := federation.LogPublicKeyPEM(ctx, s.client, fed)
	if err != nil {
		return nil, err
	}
	resp := &logSnapshotsResponse{TLogPublicKey: keyPEM, Snapshots: []logSnapshot{}}
	if keyPEM == "" { // an unpinned Rekor log: nothing here could check a snapshot
		return resp, nil
	}
	key, err := protocol.ParseLogPublicKeyPEM([]byte(keyPEM))
	if err != nil {
		return nil, err
	}
	var cm corev1.ConfigMap
	err = s.apiReader.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: federation.LogSnapshotsName(fed.Name)}, &cm)
	if client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	if apierrors.IsNotFound(err) {
		return resp, nil
	}
	weeks := slices.Sorted(maps.Keys(cm.Data))
	slices.Reverse(weeks)
	for _, week := range weeks {
		if snap, ok := s.openSnapshot(ctx, fed, week, cm.Data[week], key); ok {
			resp.Snapshots = append(resp.Snapshots, snap)
		}
	}
	return resp, nil
}

// openSnapshot verifies one stored snapshot under key.
func (s *Server) openSnapshot(ctx context.Context, fed *fv1.Federation, week, text string, key crypto.PublicKey) (logSnapshot, bool) {
	if !federation.IsSnapshotWeek(week) {
		return logSnapshot{}, false
	}
	cp, err := protocol.OpenCheckpoint([]byte(text), key)
	if err != nil {
		s.log.WarnContext(ctx, "A stored log snapshot does not verify; it is not served", "federation", fed.Name, "week", week, "error", err)
		return logSnapshot{}, false
	}
	return logSnapshot{Week: week, Origin: cp.Origin, TreeSize: cp.Size, RootHash: base64.StdEncoding.EncodeToString(cp.Root), Checkpoint: text}, true
}
