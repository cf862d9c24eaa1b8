package history

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file keeps the leaves of Merkle-form anchors (docs/PROTOCOL.md §7): one row a
// participant, under the anchor's ID and tree root, so that the leaves of a run that
// stopped before it made its anchor never mix with those of the anchor a later run makes
// under the same ID. The rows prove nothing alone: a reader rebuilds the tree from all of
// an anchor's rows and uses them only when its root is the one the anchor's signed record
// states (internal/anchortree).

// leafBatch is how many leaves one INSERT writes: 7 parameters each, well under both
// databases' limits (SQLite 32,766, PostgreSQL 65,535).
const leafBatch = 1000

// PutLeaves stores leaves, the leaves in tree order of fed's Merkle-form anchor anchorID
// whose tree root is root, in one transaction. Storing them again is a no-op.
func (s *Store) PutLeaves(ctx context.Context, fed *fv1.Federation, anchorID string, root [32]byte, leaves []protocol.MerkleLeaf) error {
	rootHex := hex.EncodeToString(root[:])
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var stmt *sql.Stmt
		defer func() {
			if stmt != nil {
				stmt.Close() //nolint:errcheck // closing a statement of a transaction that ends anyway
			}
		}()
		args := make([]any, 0, 7*leafBatch)
		for lo := 0; lo < len(leaves); lo += leafBatch {
			batch := leaves[lo:min(lo+leafBatch, len(leaves))]
			args = args[:0]
			for i, l := range batch {
				args = append(args, fedKey(fed), anchorID, rootHex, int64(lo+i), l.OperatorID, l.ChainSignature, l.LastSeq)
			}
			if len(batch) != leafBatch || stmt == nil {
				if stmt != nil {
					stmt.Close() //nolint:errcheck // replaced by the last, shorter batch's
				}
				var err error
				if stmt, err = tx.PrepareContext(ctx, s.q(insertLeaves(len(batch)))); err != nil {
					return fmt.Errorf("store the leaves of %s: %w", anchorID, err)
				}
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("store the leaves of %s: %w", anchorID, err)
			}
		}
		return nil
	})
}

// insertLeaves is the statement that inserts n leaf rows.
func insertLeaves(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO cairn_history_leaves
		(federation, anchor_id, root_hash, leaf_index, operator_id, chain_signature, last_seq) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?)")
	}
	b.WriteString(" ON CONFLICT DO NOTHING")
	return b.String()
}

// Leaves returns the stored leaves of fed's anchor anchorID whose tree root is root, in
// tree order, unchecked: ErrNotFound when there are none, an error wrapping ErrTampered
// when their indexes are not 0 to n−1.
func (s *Store) Leaves(ctx context.Context, fed *fv1.Federation, anchorID string, root [32]byte) ([]protocol.MerkleLeaf, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT leaf_index, operator_id, chain_signature, last_seq FROM cairn_history_leaves
		WHERE federation = ? AND anchor_id = ? AND root_hash = ? ORDER BY leaf_index`), fedKey(fed), anchorID, hex.EncodeToString(root[:]))
	if err != nil {
		return nil, fmt.Errorf("read the leaves of %s: %w", anchorID, err)
	}
	defer rows.Close() //nolint:errcheck // rows.Err reports what matters
	var leaves []protocol.MerkleLeaf
	for rows.Next() {
		var (
			index int64
			l     protocol.MerkleLeaf
		)
		if err := rows.Scan(&index, &l.OperatorID, &l.ChainSignature, &l.LastSeq); err != nil {
			return nil, fmt.Errorf("read the leaves of %s: %w", anchorID, err)
		}
		if index != int64(len(leaves)) {
			return nil, fmt.Errorf("%w: the leaves of %s skip index %d", ErrTampered, anchorID, len(leaves))
		}
		leaves = append(leaves, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the leaves of %s: %w", anchorID, err)
	}
	if len(leaves) == 0 {
		return nil, fmt.Errorf("the leaves of %s: %w", anchorID, ErrNotFound)
	}
	return leaves, nil
}
