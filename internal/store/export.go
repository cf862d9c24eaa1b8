package store

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ExportOptions says what Export writes.
type ExportOptions struct {
	// From and To bound the exported window (inclusive); 0 means the chain's first (1) and
	// last seq.
	From, To int64
	// Key signs the envelope: the operator's key.
	Key ed25519.PrivateKey
	// ExportedAt is the export's time; the zero time means now.
	ExportedAt time.Time
	// HeaderOnly leaves the entries out of the export; they are still read, to compute
	// entries_root.
	HeaderOnly bool
	// Progress, if not nil, is called with the entries written so far and the window's
	// size, at most about ten times a second and once at the end.
	Progress func(done, total int64)
}

// Export writes a signed cairn-chain-v2 export of the window to w with
// protocol.NewExportWriter, streaming: it holds no more than the batches of rows in flight,
// however long the chain. It needs the secret (for chain_signature) and fails with
// ErrNoSecret without it.
//
// Every exported entry is checked as Verify's full check does (and its first link against
// the row before the window), so Export never signs a chain that would not verify; a
// failure is reported as Verify reports it. On any error, what was written to w is not an
// export and should be discarded.
func (s *Store) Export(ctx context.Context, w io.Writer, o ExportOptions) (*protocol.ExportHeader, error) {
	if s.secret == nil {
		return nil, ErrNoSecret
	}
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	from, to, err := window(ctx, tx, o.From, o.To)
	if err != nil {
		return nil, err
	}
	if to == 0 {
		return nil, errors.New("export: the chain is empty")
	}
	at := o.ExportedAt
	if at.IsZero() {
		at = time.Now()
	}
	x, err := protocol.NewExportWriter(w, protocol.ExportOptions{Secret: s.secret, Key: o.Key, ExportedAt: at, HeaderOnly: o.HeaderOnly})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	bridge, err := s.readBridge(ctx, tx)
	if err != nil {
		return nil, err
	}
	if bridge != nil && from > 1 && from <= bridge.LastSeq && !o.HeaderOnly {
		return nil, fmt.Errorf("export %d-%d: %w: entries %d-%d were imported from BIJOTEL; export from seq 1, or header-only",
			from, to, ErrImportedWindow, bridge.FirstSeq, bridge.LastSeq)
	}
	imports := newImportCheck(bridge, from, nil)
	progress := newProgress(o.Progress, to-from+1)
	var written int64
	l := newLinker(from)
	err = s.scan(ctx, tx, l.lo(), to, false, func(r *row) error {
		if err := l.check(r); err != nil || r.e.Seq < from {
			return err
		}
		if err := imports.check(r); err != nil {
			return err
		}
		if err := x.Write(&r.e); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		written++
		progress.set(written)
		return nil
	})
	if err == nil {
		err = l.finish(to)
	}
	if err != nil {
		return nil, s.explain(ctx, tx, from, err)
	}
	h, err := x.Close()
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	progress.done(written)
	return h, nil
}
