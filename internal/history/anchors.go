package history

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// anchorColumns are the columns an anchor is read from, in scanAnchor's order.
const anchorColumns = `a.namespace, a.anchor_id, a.anchored_at, a.object, a.sealed_by, a.seal`

// PutAnchor stores ca, a logged anchor the federation made, sealed with key (a key of
// fed's key history), with one participant row per operator it binds. Storing it again
// replaces the stored version. It refuses an anchor that federation.TrustAnchor does not
// pass or that is not logged yet: only records the federation made and finished leave etcd.
func (s *Store) PutAnchor(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor, key ed25519.PrivateKey) error {
	if err := federation.TrustAnchor(fed, ca); err != nil {
		return fmt.Errorf("store anchor %s: %w", ca.Name, err)
	}
	if ca.Status.Phase != fv1.PhaseAnchored {
		return fmt.Errorf("store anchor %s: it is %q, not %s yet", ca.Name, ca.Status.Phase, fv1.PhaseAnchored)
	}
	ca = ca.DeepCopy()
	rec, err := sealRecord(kindAnchor, fed, ca, key)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO cairn_history_anchors
			(federation, namespace, anchor_id, anchored_at, object, sealed_by, seal) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (federation, anchor_id) DO UPDATE SET namespace = excluded.namespace,
			anchored_at = excluded.anchored_at, object = excluded.object, sealed_by = excluded.sealed_by, seal = excluded.seal`),
			fedKey(fed), ca.Namespace, ca.Name, ca.Spec.AnchoredAt, string(rec.object), rec.sealedBy, rec.seal); err != nil {
			return fmt.Errorf("store anchor %s: %w", ca.Name, err)
		}
		ins, err := tx.PrepareContext(ctx, s.q(`INSERT INTO cairn_history_participants (federation, operator_id, anchor_id)
			VALUES (?, ?, ?) ON CONFLICT DO NOTHING`))
		if err != nil {
			return err
		}
		defer ins.Close() //nolint:errcheck // closing a statement of a transaction that ends anyway
		for _, p := range ca.Spec.Participants {
			if _, err := ins.ExecContext(ctx, fedKey(fed), string(p.OperatorID), ca.Name); err != nil {
				return fmt.Errorf("store anchor %s: %w", ca.Name, err)
			}
		}
		return nil
	})
}

// Anchor returns fed's stored anchor id, checked: ErrNotFound when the store has none,
// an error wrapping ErrTampered when its row does not verify.
func (s *Store) Anchor(ctx context.Context, fed *fv1.Federation, id string) (*fv1.CrossAnchor, error) {
	row := s.db.QueryRowContext(ctx, s.q(`SELECT `+anchorColumns+` FROM cairn_history_anchors a
		WHERE a.federation = ? AND a.anchor_id = ?`), fedKey(fed), id)
	ca, err := s.scanAnchor(fed, row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("anchor %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("anchor %s: %w", id, err)
	}
	return ca, nil
}

// Anchors returns up to limit of fed's stored anchors whose IDs sort before before (all
// when before is ""), newest first: IDs sort in the order anchors are made.
func (s *Store) Anchors(ctx context.Context, fed *fv1.Federation, before string, limit int) ([]*fv1.CrossAnchor, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+anchorColumns+` FROM cairn_history_anchors a
		WHERE a.federation = ? AND (? = '' OR a.anchor_id < ?) ORDER BY a.anchor_id DESC LIMIT ?`),
		fedKey(fed), before, before, limit)
	if err != nil {
		return nil, fmt.Errorf("list anchors: %w", err)
	}
	return s.collectAnchors(fed, rows, "")
}

// AnchorsBinding is Anchors restricted to those that bind operator: seed-form anchors
// that list it, and Merkle-form ones with a stored leaf of it, which the caller must find
// in the anchor's checked tree (a leaf row is not evidence).
func (s *Store) AnchorsBinding(ctx context.Context, fed *fv1.Federation, operator fv1.OperatorID, before string, limit int) ([]*fv1.CrossAnchor, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+anchorColumns+` FROM cairn_history_anchors a
		WHERE a.federation = ? AND (? = '' OR a.anchor_id < ?) AND a.anchor_id IN (
			SELECT anchor_id FROM cairn_history_participants WHERE federation = ? AND operator_id = ?
			UNION SELECT anchor_id FROM cairn_history_leaves WHERE federation = ? AND operator_id = ?)
		ORDER BY a.anchor_id DESC LIMIT ?`),
		fedKey(fed), before, before, fedKey(fed), string(operator), fedKey(fed), string(operator), limit)
	if err != nil {
		return nil, fmt.Errorf("list the anchors of %s: %w", operator, err)
	}
	return s.collectAnchors(fed, rows, operator)
}

// EachAnchor calls f with each of fed's stored anchors that verifies, oldest first.
func (s *Store) EachAnchor(ctx context.Context, fed *fv1.Federation, f func(*fv1.CrossAnchor) error) error {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+anchorColumns+` FROM cairn_history_anchors a
		WHERE a.federation = ? ORDER BY a.anchor_id`), fedKey(fed))
	if err != nil {
		return fmt.Errorf("read the anchors: %w", err)
	}
	defer rows.Close() //nolint:errcheck // rows.Err reports what matters
	for rows.Next() {
		ca, err := s.scanAnchor(fed, rows)
		if errors.Is(err, ErrTampered) || errors.Is(err, ErrNotFound) {
			continue // scanAnchor reported it
		}
		if err != nil {
			return err
		}
		if err := f(ca); err != nil {
			return err
		}
	}
	return rows.Err()
}

// collectAnchors reads rows into checked anchors. A row that fails its checks, or an
// anchor that does not bind operator (when operator is not ""), is left out and reported.
func (s *Store) collectAnchors(fed *fv1.Federation, rows *sql.Rows, operator fv1.OperatorID) ([]*fv1.CrossAnchor, error) {
	defer rows.Close() //nolint:errcheck // rows.Err reports what matters
	var out []*fv1.CrossAnchor
	for rows.Next() {
		ca, err := s.scanAnchor(fed, rows)
		if err == nil && operator != "" && !federation.IsMerkle(ca) && !binds(ca, operator) {
			err = fmt.Errorf("%w: indexed as binding %s, which it does not", ErrTampered, operator)
			s.reportTampered(kindAnchor, ca.Name, err)
		}
		if errors.Is(err, ErrTampered) || errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ca)
	}
	return out, rows.Err()
}

// binds reports whether ca lists operator among its participants.
func binds(ca *fv1.CrossAnchor, operator fv1.OperatorID) bool {
	for _, p := range ca.Spec.Participants {
		if p.OperatorID == operator {
			return true
		}
	}
	return false
}

// scanAnchor reads one anchor row and checks it (checkAnchor). A row that fails is
// reported to OnTampered; the error wraps ErrTampered.
func (s *Store) scanAnchor(fed *fv1.Federation, row interface{ Scan(...any) error }) (*fv1.CrossAnchor, error) {
	var (
		namespace, id, anchoredAt, object string
		rec                               sealed
	)
	if err := row.Scan(&namespace, &id, &anchoredAt, &object, &rec.sealedBy, &rec.seal); err != nil {
		return nil, err
	}
	rec.object = []byte(object)
	ca, err := checkAnchor(fed, &rec, namespace, id, anchoredAt)
	if err != nil {
		s.reportTampered(kindAnchor, id, err)
		return nil, err
	}
	return ca, nil
}

// checkAnchor returns the anchor rec holds when its seal verifies, its columns are its
// object's, the federation made it (federation.TrustAnchor) and it is logged.
func checkAnchor(fed *fv1.Federation, rec *sealed, namespace, id, anchoredAt string) (*fv1.CrossAnchor, error) {
	var ca fv1.CrossAnchor
	if err := unseal(kindAnchor, fed, rec, &ca); err != nil {
		return nil, err
	}
	switch {
	case ca.Namespace != namespace:
		return nil, columnDiffers("namespace")
	case ca.Name != id:
		return nil, columnDiffers("anchor_id")
	case ca.Spec.AnchoredAt != anchoredAt:
		return nil, columnDiffers("anchored_at")
	case ca.Status.Phase != fv1.PhaseAnchored:
		return nil, fmt.Errorf("%w: it is not logged, and only logged anchors are stored", ErrTampered)
	}
	if err := federation.TrustAnchor(fed, &ca); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTampered, err)
	}
	return &ca, nil
}

// reportTampered tells OnTampered of a row that failed its checks.
func (s *Store) reportTampered(kind, name string, err error) {
	if s.onTampered != nil && errors.Is(err, ErrTampered) {
		s.onTampered(kind, name, err)
	}
}
