package tlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/transparency-dev/tessera/client"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// This file has the embedded log's checkpoints cosigned by the witnesses of its policy
// (C2SP tlog-witness). It runs beside the log, never in its way: the log publishes its
// checkpoints as it always does, and a loop sends each new one to every witness, with a
// consistency proof from the size that witness last cosigned, and keeps the cosignatures
// that come back in WitnessedCheckpointFile. A witness that is down, slow or refuses costs
// its own cosignature only: it is retried with backoff, and the status says why.

// Files in the log's directory that hold checkpoints with the witnesses' cosignature lines
// appended after the log's own: the latest checkpoint whose cosignatures meet the policy
// (the one entries are proven against), and the latest checkpoint with whatever
// cosignatures it has so far.
const (
	WitnessedCheckpointFile = "checkpoint.witnessed"
	CosignedCheckpointFile  = "checkpoint.cosigned"
)

// Witnessing timings.
const (
	witnessRequestTimeout = 10 * time.Second
	witnessMinBackoff     = time.Second
	witnessMaxBackoff     = time.Minute
)

// WitnessStatus is what the log knows of one witness.
type WitnessStatus struct {
	// Name is the witness's key name; URL where it is asked.
	Name, URL string
	// CosignedSize is the size of the latest checkpoint it cosigned for this log, 0 if none.
	CosignedSize uint64
	// CosignedAt is when it cosigned it (its cosignature's time).
	CosignedAt time.Time
	// Error is why the last request failed, empty after a cosignature.
	Error string
	// SplitView is set when the witness refused a checkpoint as contradicting one it had
	// cosigned: its answer, which states both checkpoints.
	SplitView string
}

// WitnessingStatus is the state of a log's witnessing.
type WitnessingStatus struct {
	// Policy is the witness policy's quorum, in words.
	Policy string
	// Size is the log's latest checkpoint's size.
	Size uint64
	// WitnessedSize is the size of the latest checkpoint whose cosignatures meet the policy,
	// 0 if none.
	WitnessedSize uint64
	// Witnesses are the policy's witnesses, in its order.
	Witnesses []WitnessStatus
}

// Satisfied reports whether the latest checkpoint's cosignatures meet the policy.
func (s WitnessingStatus) Satisfied() bool { return s.Size > 0 && s.WitnessedSize == s.Size }

// witnessState is one witness as the loop tracks it.
type witnessState struct {
	client  witness.Client
	size    uint64 // the size it last cosigned, as far as known
	backoff time.Duration
	next    time.Time // no request before
	status  WitnessStatus
}

// witnessing feeds the log's checkpoints to its policy's witnesses.
type witnessing struct {
	log      *Embedded
	policy   *witness.Policy
	onChange func()
	wake     chan struct{} // an upload's checkpoint is out: go now

	mu        sync.Mutex // guards the fields below
	witnesses []*witnessState
	current   []byte            // the checkpoint the lines are for
	lines     map[string][]byte // cosignature lines of current, by witness name
	status    WitnessingStatus
}

func newWitnessing(l *Embedded, p *witness.Policy, hc *http.Client, onChange func()) *witnessing {
	w := &witnessing{log: l, policy: p, onChange: onChange, lines: map[string][]byte{}, wake: make(chan struct{}, 1)}
	for _, wit := range p.Witnesses {
		w.witnesses = append(w.witnesses, &witnessState{client: witness.Client{Witness: wit, HTTP: hc},
			status: WitnessStatus{Name: wit.Key.Name, URL: wit.URL}})
	}
	w.status.Policy = p.Quorum()
	return w
}

// run sends each new checkpoint to the witnesses, every interval and whenever an upload
// saw its checkpoint published, until ctx ends.
func (w *witnessing) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := w.round(ctx); err != nil && ctx.Err() == nil {
			w.log.opts.Logger.Warn("Witnessing the embedded log failed", "dir", w.log.opts.Dir, "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.wake:
		}
	}
}

// poke has the loop look at the checkpoint now; it never blocks.
func (w *witnessing) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// round asks each witness that has not cosigned the latest checkpoint and is due.
func (w *witnessing) round(ctx context.Context) error {
	raw, err := w.log.reader.ReadCheckpoint(ctx)
	if err != nil {
		return err
	}
	cp, err := protocol.OpenCheckpoint(raw, w.log.pub)
	if err != nil {
		return err
	}
	now := time.Now()
	w.mu.Lock()
	if !bytes.Equal(raw, w.current) {
		w.current, w.lines = raw, map[string][]byte{}
		w.status.Size = cp.Size
	}
	var due []*witnessState
	for _, ws := range w.witnesses {
		if _, done := w.lines[ws.status.Name]; !done && !now.Before(ws.next) {
			due = append(due, ws)
		}
	}
	w.mu.Unlock()
	if len(due) == 0 {
		return nil
	}
	proofs, err := client.NewProofBuilder(ctx, cp.Size, w.log.reader.ReadTile)
	if err != nil {
		return err
	}
	// The witnesses are asked at once, and tessera's ProofBuilder caches the nodes it reads
	// in a map of its own: one proof at a time.
	var proofMu sync.Mutex
	consistency := func(ctx context.Context, from, to uint64) ([][]byte, error) {
		proofMu.Lock()
		defer proofMu.Unlock()
		return proofs.ConsistencyProof(ctx, from, to)
	}
	var wg sync.WaitGroup
	for _, ws := range due {
		wg.Go(func() { w.ask(ctx, ws, raw, cp, consistency) })
	}
	wg.Wait()
	return w.publish(raw)
}

// ask sends cp to one witness, once more if it names another old size, and records the
// answer.
func (w *witnessing) ask(ctx context.Context, ws *witnessState, raw []byte, cp *protocol.Checkpoint,
	consistency func(ctx context.Context, from, to uint64) ([][]byte, error),
) {
	ctx, cancel := context.WithTimeout(ctx, witnessRequestTimeout)
	defer cancel()
	var line []byte
	var at time.Time
	var err error
	for range 2 {
		req := &witness.AddCheckpoint{OldSize: ws.size, Checkpoint: raw}
		if ws.size > cp.Size {
			err = fmt.Errorf("the witness cosigned a checkpoint of size %d, larger than the log's %d: the log went back on what it showed the witness", ws.size, cp.Size)
			break
		}
		if ws.size > 0 && ws.size < cp.Size {
			if req.Proof, err = consistency(ctx, ws.size, cp.Size); err != nil {
				break
			}
		}
		line, at, err = ws.client.AddCheckpoint(ctx, req)
		size, conflict := witness.IsConflict(err)
		if !conflict {
			break
		}
		ws.size = size
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var refused *witness.RefusedError
	switch {
	case err == nil:
		ws.size, ws.backoff, ws.next = cp.Size, 0, time.Time{}
		ws.status.CosignedSize, ws.status.CosignedAt, ws.status.Error, ws.status.SplitView = cp.Size, at, "", ""
		if bytes.Equal(raw, w.current) {
			w.lines[ws.status.Name] = line
		}
		return
	case errors.As(err, &refused) && (refused.Status == http.StatusConflict || refused.Status == http.StatusUnprocessableEntity):
		ws.status.SplitView = refused.Message
	case ws.size > cp.Size:
		ws.status.SplitView = err.Error()
	}
	ws.status.Error = err.Error()
	ws.backoff = min(max(ws.backoff*2, witnessMinBackoff), witnessMaxBackoff)
	ws.next = time.Now().Add(ws.backoff)
}

// publish writes the current checkpoint with the cosignatures gathered for it, then the
// status, so that a status that says witnessed finds the file written.
func (w *witnessing) publish(raw []byte) error {
	w.mu.Lock()
	if !bytes.Equal(raw, w.current) {
		w.mu.Unlock()
		return nil
	}
	note := slices.Clone(raw)
	for _, ws := range w.witnesses {
		note = append(note, w.lines[ws.status.Name]...)
	}
	w.mu.Unlock()
	verdict, err := w.policy.Check(note)
	if err != nil {
		return err // a line that passed the client's check fails the policy's: a bug
	}
	changed := false
	for _, f := range []struct {
		name  string
		write bool
	}{{CosignedCheckpointFile, len(verdict.Cosignatures) > 0}, {WitnessedCheckpointFile, verdict.Satisfied}} {
		if !f.write {
			continue
		}
		wrote, err := writeIfChanged(filepath.Join(w.log.opts.Dir, f.name), note)
		if err != nil {
			return err
		}
		changed = changed || wrote
	}
	w.mu.Lock()
	if verdict.Satisfied {
		w.status.WitnessedSize = w.status.Size
	}
	before := w.status.Witnesses
	w.status.Witnesses = make([]WitnessStatus, len(w.witnesses))
	for i, ws := range w.witnesses {
		w.status.Witnesses[i] = ws.status
	}
	changed = changed || !slices.Equal(before, w.status.Witnesses)
	w.mu.Unlock()
	if changed && w.onChange != nil {
		w.onChange()
	}
	return nil
}

func writeIfChanged(path string, b []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return false, nil
	}
	return true, atomicfile.Write(path, b, 0o644)
}

// snapshot returns the status.
func (w *witnessing) snapshot() WitnessingStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.status
	s.Witnesses = slices.Clone(s.Witnesses)
	return s
}

// Witnessing returns the state of the log's witnessing, and false without a policy.
func (l *Embedded) Witnessing() (WitnessingStatus, bool) {
	if l.witnessing == nil {
		return WitnessingStatus{}, false
	}
	return l.witnessing.snapshot(), true
}
