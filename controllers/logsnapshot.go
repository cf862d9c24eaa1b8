package controllers

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file keeps each Federation's weekly log snapshots: once per ISO week, the log's
// latest checkpoint (a note the log signed), verified under the log's key and checked not
// to go back on the last snapshot, is stored in the ConfigMap federation.LogSnapshotsName names, one
// key a week. An auditor who saved last week's snapshot can ask the log to prove this
// week's extends it; the federation API serves them (GET /federation/log/snapshots).
//
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;create;update;delete

// ReasonLogInconsistent is the Warning Event of a log whose checkpoint goes back on the
// last snapshot: smaller, or as large with another root, or under another origin.
const ReasonLogInconsistent = "LogInconsistent"

// logSnapshotter takes the weekly snapshots on the leader.
type logSnapshotter struct {
	client    client.Client
	apiReader client.Reader
	logs      *Logs
	recorder  events.EventRecorder
	interval  time.Duration
	clock
}

// NeedLeaderElection returns true: one replica writes the snapshots.
func (s *logSnapshotter) NeedLeaderElection() bool { return true }

// Start snapshots every Federation's log now and then every interval until ctx ends.
func (s *logSnapshotter) Start(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		s.snapshotAll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// snapshotAll takes this week's snapshot of every Federation that lacks it. A failure is
// logged and tried again at the next tick.
func (s *logSnapshotter) snapshotAll(ctx context.Context) {
	var feds fv1.FederationList
	if err := s.client.List(ctx, &feds); err != nil {
		logf.FromContext(ctx).Error(err, "Failed to list Federations for their log snapshots")
		return
	}
	for i := range feds.Items {
		fed := &feds.Items[i]
		if len(fed.Status.KeyHistory) == 0 { // not set up yet: its log may not exist
			continue
		}
		if err := s.snapshot(ctx, fed); err != nil && ctx.Err() == nil {
			logf.FromContext(ctx).Error(err, "Failed to snapshot the transparency log", "federation", client.ObjectKeyFromObject(fed))
		}
	}
}

// snapshot stores this week's checkpoint of fed's log unless it is stored already.
func (s *logSnapshotter) snapshot(ctx context.Context, fed *fv1.Federation) error {
	week := federation.SnapshotWeek(s.now())
	var cm corev1.ConfigMap
	err := s.apiReader.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: federation.LogSnapshotsName(fed.Name)}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fed.Namespace, Name: federation.LogSnapshotsName(fed.Name),
			Labels: map[string]string{federation.FederationLabel: fed.Name}}}
	case err != nil:
		return err
	case cm.Data[week] != "":
		return nil
	}
	log, err := s.logs.For(ctx, s.client, fed)
	if err != nil {
		return err
	}
	cpr, ok := log.(tlog.Checkpointer)
	if !ok {
		return fmt.Errorf("the %T log has no checkpoint", log)
	}
	cp, raw, err := cpr.Checkpoint(ctx)
	if err != nil {
		return err
	}
	key, err := log.PublicKey(ctx)
	if err != nil {
		return err
	}
	if msg := goesBack(cm.Data, key, cp); msg != "" {
		s.recorder.Eventf(fed, nil, corev1.EventTypeWarning, ReasonLogInconsistent, "Snapshot", "%s", msg)
		return fmt.Errorf("log snapshot %s not taken: %s", week, msg)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[week] = string(raw)
	if cm.ResourceVersion == "" {
		err = s.client.Create(ctx, &cm)
	} else {
		err = s.client.Update(ctx, &cm) // at the version read: a concurrent writer conflicts
	}
	if err == nil {
		logf.FromContext(ctx).Info("Snapshotted the transparency log", "federation", client.ObjectKeyFromObject(fed),
			"week", week, "size", cp.Size)
	}
	return err
}

// goesBack returns why cp goes back on the newest stored snapshot that verifies under key,
// or "" when it does not (or there is none).
func goesBack(stored map[string]string, key any, cp *protocol.Checkpoint) string {
	weeks := slices.Sorted(maps.Keys(stored))
	for i := len(weeks) - 1; i >= 0; i-- {
		if !federation.IsSnapshotWeek(weeks[i]) {
			continue
		}
		last, err := protocol.OpenCheckpoint([]byte(stored[weeks[i]]), key)
		if err != nil {
			continue // signed by an earlier key, or not a checkpoint: not ours to compare
		}
		switch {
		case last.Origin != cp.Origin:
			return fmt.Sprintf("the log's origin is %q, the %s snapshot's %q", cp.Origin, weeks[i], last.Origin)
		case cp.Size < last.Size:
			return fmt.Sprintf("the log holds %d entries, fewer than the %d of the %s snapshot", cp.Size, last.Size, weeks[i])
		case cp.Size == last.Size && !bytes.Equal(cp.Root, last.Root):
			return fmt.Sprintf("the log's root at size %d differs from the %s snapshot's", cp.Size, weeks[i])
		}
		return ""
	}
	return ""
}
