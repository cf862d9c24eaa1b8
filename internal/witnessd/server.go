// Package witnessd is Cairn's transparency-log witness: an HTTP service a federation
// member runs with its own key. It speaks C2SP tlog-witness (POST /add-checkpoint): for
// each log it trusts, it keeps the latest checkpoint it cosigned, cosigns a new one only
// when a consistency proof shows that it extends that one, and answers with a C2SP
// tlog-cosignature. What it cosigned survives restarts, so a log restored from an old copy
// of its directory is refused, and every checkpoint the log signed that contradicts one
// the witness cosigned is kept, with the one it contradicts, as evidence of a split view.
package witnessd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// Options configures a witness.
type Options struct {
	// Cosigner signs the cosignatures.
	Cosigner *witness.Cosigner
	// Logs are the logs the witness cosigns for, by origin.
	Logs []witness.LogKey
	// StatePath is the SQLite file of the witness's state.
	StatePath string
	// MaxConflicts is how many conflicting checkpoints are kept per log; default 100.
	MaxConflicts int
	// Now is the clock of the cosignatures; default time.Now.
	Now func() time.Time
	// Logger logs refusals that matter (conflicts); default slog.Default().
	Logger *slog.Logger
}

// Witness is a running witness.
type Witness struct {
	opts  Options
	logs  map[string]witness.LogKey
	state *state
}

// Open opens (or creates) the witness's state.
func Open(opts Options) (*Witness, error) {
	if opts.Cosigner == nil {
		return nil, errors.New("witness: no key")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxConflicts <= 0 {
		opts.MaxConflicts = 100
	}
	logs := map[string]witness.LogKey{}
	for _, l := range opts.Logs {
		if _, dup := logs[l.Origin]; dup {
			return nil, fmt.Errorf("witness: the log %q is named twice", l.Origin)
		}
		logs[l.Origin] = l
	}
	st, err := openState(opts.StatePath, opts.MaxConflicts)
	if err != nil {
		return nil, err
	}
	return &Witness{opts: opts, logs: logs, state: st}, nil
}

// Close closes the state.
func (w *Witness) Close() error { return w.state.close() }

// Answer is the witness's answer to an add-checkpoint request.
type Answer struct {
	Status      int
	ContentType string
	Body        []byte
}

func refuse(status int, format string, a ...any) Answer {
	return Answer{Status: status, ContentType: "text/plain; charset=utf-8", Body: fmt.Appendf(nil, format+"\n", a...)}
}

// AddCheckpoint answers one add-checkpoint request body, as C2SP tlog-witness says:
// 400 for a malformed request or an old size past the checkpoint's, 404 for a log it does
// not know, 403 when the log's key did not sign the checkpoint, 409 (with the size media
// type) when the old size is not the one it last cosigned, 409 for a checkpoint of the same
// size with another root, 422 when the consistency proof fails; else 200 and its
// cosignature line, after the new checkpoint is recorded. The two contradictions (409 of
// another root, 422) are split views: their answers and the witness's log state both
// checkpoints, and they are kept as evidence (Conflicts).
func (w *Witness) AddCheckpoint(ctx context.Context, body []byte) (Answer, error) {
	req, err := witness.ParseAddCheckpoint(body)
	if err != nil {
		return refuse(http.StatusBadRequest, "%v", err), nil
	}
	text, _, err := protocol.ParseNote(req.Checkpoint)
	if err != nil {
		return refuse(http.StatusBadRequest, "%v", err), nil
	}
	origin, _, _ := bytes.Cut(text, []byte{'\n'})
	log, ok := w.logs[string(origin)]
	if !ok {
		return refuse(http.StatusNotFound, "this witness does not witness the log %s", protocol.Quote(string(origin))), nil
	}
	cp, err := protocol.OpenCheckpoint(req.Checkpoint, log.Public)
	if errors.Is(err, protocol.ErrMalformed) {
		return refuse(http.StatusBadRequest, "%v", err), nil
	}
	if err != nil { // a refusal to answer, not the witness's failure
		return refuse(http.StatusForbidden, "the checkpoint is not signed by the key this witness trusts for %s", protocol.Quote(string(origin))), nil //nolint:nilerr
	}
	if req.OldSize > cp.Size {
		return refuse(http.StatusBadRequest, "the old size %d is past the checkpoint's size %d", req.OldSize, cp.Size), nil
	}
	var answer Answer
	var conflict *Conflict
	now := w.opts.Now()
	err = w.state.update(ctx, log.Origin, func(prev *cosigned) (*cosigned, error) {
		var size uint64
		if prev != nil {
			size = prev.Size
		}
		switch {
		case req.OldSize != size:
			answer = Answer{Status: http.StatusConflict, ContentType: witness.ContentTypeSize, Body: fmt.Appendf(nil, "%d\n", size)}
			return nil, nil
		case prev != nil && cp.Size == prev.Size && !bytes.Equal(cp.Root, prev.Root):
			conflict = &Conflict{Kind: "split view: another root for the same size"}
		case prev != nil && cp.Size == prev.Size && len(req.Proof) > 0:
			answer = refuse(http.StatusUnprocessableEntity, "a consistency proof between equal sizes must be empty")
			return nil, nil
		case prev != nil && cp.Size > prev.Size:
			if err := proof.VerifyConsistency(rfc6962.DefaultHasher, prev.Size, cp.Size, req.Proof, prev.Root, cp.Root); err != nil {
				conflict = &Conflict{Kind: "split view: not consistent with the cosigned checkpoint"}
			}
		}
		if conflict != nil {
			conflict.Origin, conflict.SeenAt, conflict.Cosigned, conflict.Offered = log.Origin, now, string(prev.Checkpoint), string(req.Checkpoint)
			return nil, nil
		}
		line, err := w.opts.Cosigner.Cosign(text, now)
		if err != nil {
			return nil, err
		}
		answer = Answer{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8", Body: line}
		return &cosigned{Size: cp.Size, Root: cp.Root, Checkpoint: req.Checkpoint, Cosignature: line, At: now}, nil
	})
	if err != nil {
		return Answer{}, err
	}
	if conflict != nil {
		return w.reportConflict(ctx, *conflict), nil
	}
	return answer, nil
}

// reportConflict keeps and logs a split view, and answers it with both checkpoints.
func (w *Witness) reportConflict(ctx context.Context, c Conflict) Answer {
	if err := w.state.recordConflict(ctx, c); err != nil {
		w.opts.Logger.ErrorContext(ctx, "Failed to keep the evidence of a split view", "origin", c.Origin, "error", err)
	}
	w.opts.Logger.WarnContext(ctx, "Refused a checkpoint that contradicts one this witness cosigned",
		"origin", c.Origin, "kind", c.Kind, "cosigned", c.Cosigned, "offered", c.Offered)
	status := http.StatusUnprocessableEntity
	if c.Kind == "split view: another root for the same size" {
		status = http.StatusConflict
	}
	return refuse(status, "%s.\n\nThe checkpoint this witness cosigned:\n\n%s\nThe checkpoint offered:\n\n%s", c.Kind, c.Cosigned, c.Offered)
}

// Latest returns the latest checkpoint the witness cosigned for origin, with its
// cosignature line appended, and false if it cosigned none.
func (w *Witness) Latest(ctx context.Context, origin string) ([]byte, bool, error) {
	c, err := w.state.latest(ctx, origin)
	if err != nil || c == nil {
		return nil, false, err
	}
	return append(append([]byte(nil), c.Checkpoint...), c.Cosignature...), true, nil
}

// Conflicts returns the evidence kept for origin, oldest first.
func (w *Witness) Conflicts(ctx context.Context, origin string) ([]Conflict, error) {
	return w.state.conflicts(ctx, origin)
}
