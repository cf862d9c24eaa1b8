package tlog

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Checkpointer is a log that can say what it holds now: its latest checkpoint, a signed
// note verified under the log's key before it is returned. Every backend is.
type Checkpointer interface {
	// Checkpoint returns the latest checkpoint, parsed, and its note text as the log
	// signed it.
	Checkpoint(ctx context.Context) (*protocol.Checkpoint, []byte, error)
}

var (
	_ Checkpointer = (*Embedded)(nil)
	_ Checkpointer = (*Rekor)(nil)
	_ Checkpointer = (*RekorV2)(nil)
)

// Checkpoint returns the embedded log's latest checkpoint.
func (l *Embedded) Checkpoint(ctx context.Context) (*protocol.Checkpoint, []byte, error) {
	v, err := l.latest(ctx)
	if err != nil {
		return nil, nil, err
	}
	return v.cp, v.raw, nil
}

// Checkpoint returns Rekor's signed tree head (GET /api/v1/log), verified under the log's
// key, pinned or fetched.
func (r *Rekor) Checkpoint(ctx context.Context) (*protocol.Checkpoint, []byte, error) {
	key, err := r.PublicKey(ctx)
	if err != nil {
		return nil, nil, err
	}
	resp, err := r.do(ctx, "read tree head", http.MethodGet, "/api/v1/log", nil)
	if err != nil {
		return nil, nil, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, nil, &UnavailableError{Op: "read tree head", Err: statusError(resp)}
	}
	var info struct {
		SignedTreeHead string `json:"signedTreeHead"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&info); err != nil {
		return nil, nil, fmt.Errorf("rekor: decode tree head: %w", err)
	}
	raw := []byte(info.SignedTreeHead)
	cp, err := protocol.OpenCheckpoint(raw, key)
	if err != nil {
		return nil, nil, fmt.Errorf("rekor tree head: %w", err)
	}
	return cp, raw, nil
}

// Checkpoint returns the Rekor v2 log's latest checkpoint, read from its tiles and
// verified under its pinned key.
func (r *RekorV2) Checkpoint(ctx context.Context) (*protocol.Checkpoint, []byte, error) {
	f, err := urlFetcher(r.read, r.http)
	if err != nil {
		return nil, nil, err
	}
	raw, cp, err := readCheckpoint(ctx, f, "rekor v2 log at "+r.read.String(), r.key)
	return cp, raw, err
}
