package history

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"math"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// submissionColumns are the columns a submission is read from, in scanSubmission's order.
const submissionColumns = `namespace, name, operator_id, first_seq, last_seq, anchor_id, object, sealed_by, seal`

// PutSubmission stores sub, an accepted submission an anchor covers, sealed with key (a
// key of fed's key history). Storing it again replaces the stored version. It refuses
// one whose export header does not verify, or that no anchor is marked on.
func (s *Store) PutSubmission(ctx context.Context, fed *fv1.Federation, sub *fv1.Submission, key ed25519.PrivateKey) error {
	return s.PutSubmissions(ctx, fed, []*fv1.Submission{sub}, key)
}

// PutSubmissions stores subs as PutSubmission does, in one transaction: all or none.
func (s *Store) PutSubmissions(ctx context.Context, fed *fv1.Federation, subs []*fv1.Submission, key ed25519.PrivateKey) error {
	recs := make([]*sealed, len(subs))
	copies := make([]*fv1.Submission, len(subs))
	for i, sub := range subs {
		if err := checkSubmission(sub); err != nil {
			return fmt.Errorf("store submission %s: %w", sub.Name, err)
		}
		copies[i] = sub.DeepCopy()
		var err error
		if recs[i], err = sealRecord(kindSubmission, fed, copies[i], key); err != nil {
			return err
		}
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for i := range copies {
			if err := s.putSubmission(ctx, tx, fed, copies[i], recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// putSubmission writes sub's row, sealed as rec, and its sidecar rows.
func (s *Store) putSubmission(ctx context.Context, tx *sql.Tx, fed *fv1.Federation, sub *fv1.Submission, rec *sealed) error {
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO cairn_history_submissions
		(federation, namespace, name, operator_id, first_seq, last_seq, anchor_id, object, sealed_by, seal)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (federation, name) DO UPDATE SET namespace = excluded.namespace, operator_id = excluded.operator_id,
		first_seq = excluded.first_seq, last_seq = excluded.last_seq, anchor_id = excluded.anchor_id,
		object = excluded.object, sealed_by = excluded.sealed_by, seal = excluded.seal`),
		fedKey(fed), sub.Namespace, sub.Name, string(sub.Spec.OperatorID), sub.Spec.FirstSeq, sub.Spec.LastSeq,
		string(sub.Status.AnchorRef), string(rec.object), rec.sealedBy, rec.seal)
	if err != nil {
		return fmt.Errorf("store submission %s: %w", sub.Name, err)
	}
	for _, sc := range sub.Spec.Sidecars {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO cairn_history_sidecars (federation, digest, name) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`), fedKey(fed), string(sc.Digest), sub.Name); err != nil {
			return fmt.Errorf("store submission %s: %w", sub.Name, err)
		}
	}
	return nil
}

// NamesSidecar reports whether a stored submission of fed names the sidecar digest.
func (s *Store) NamesSidecar(ctx context.Context, fed *fv1.Federation, digest fv1.Hash) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM cairn_history_sidecars WHERE federation = ? AND digest = ?`),
		fedKey(fed), string(digest)).Scan(&n)
	return n > 0, err
}

// Submission returns fed's stored submission name, checked: ErrNotFound when the store
// has none, an error wrapping ErrTampered when its row does not verify.
func (s *Store) Submission(ctx context.Context, fed *fv1.Federation, name string) (*fv1.Submission, error) {
	row := s.db.QueryRowContext(ctx, s.q(`SELECT `+submissionColumns+` FROM cairn_history_submissions
		WHERE federation = ? AND name = ?`), fedKey(fed), name)
	sub, err := s.scanSubmission(fed, row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("submission %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("submission %s: %w", name, err)
	}
	return sub, nil
}

// SubmissionsOf returns up to limit of operator's stored submissions whose lastSeq is
// below before (all when before is 0), newest first.
func (s *Store) SubmissionsOf(ctx context.Context, fed *fv1.Federation, operator fv1.OperatorID, before int64, limit int) ([]*fv1.Submission, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	return s.submissions(ctx, fed, operator, `last_seq < ? ORDER BY last_seq DESC LIMIT ?`, before, limit)
}

// SubmissionsEnding returns operator's stored submissions that end at lastSeq: the one
// an anchor binding operator at lastSeq covered last.
func (s *Store) SubmissionsEnding(ctx context.Context, fed *fv1.Federation, operator fv1.OperatorID, lastSeq int64) ([]*fv1.Submission, error) {
	return s.submissions(ctx, fed, operator, `last_seq = ?`, lastSeq)
}

// submissions reads operator's submissions that where selects, checked; a row that
// fails its checks, or that is not operator's, is left out and reported.
func (s *Store) submissions(ctx context.Context, fed *fv1.Federation, operator fv1.OperatorID, where string, args ...any) ([]*fv1.Submission, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+submissionColumns+` FROM cairn_history_submissions
		WHERE federation = ? AND operator_id = ? AND `+where), append([]any{fedKey(fed), string(operator)}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("list the submissions of %s: %w", operator, err)
	}
	defer rows.Close() //nolint:errcheck // rows.Err reports what matters
	var out []*fv1.Submission
	for rows.Next() {
		sub, err := s.scanSubmission(fed, rows)
		if errors.Is(err, ErrTampered) || errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}

// scanSubmission reads one submission row and checks it: its seal, its columns against
// its object, and the submission itself (checkSubmission). A row that fails is reported
// to OnTampered; the error wraps ErrTampered.
func (s *Store) scanSubmission(fed *fv1.Federation, row interface{ Scan(...any) error }) (*fv1.Submission, error) {
	var (
		namespace, name, operator, anchor, object string
		first, last                               int64
		rec                                       sealed
	)
	if err := row.Scan(&namespace, &name, &operator, &first, &last, &anchor, &object, &rec.sealedBy, &rec.seal); err != nil {
		return nil, err
	}
	rec.object = []byte(object)
	sub, err := func() (*fv1.Submission, error) {
		var sub fv1.Submission
		if err := unseal(kindSubmission, fed, &rec, &sub); err != nil {
			return nil, err
		}
		switch {
		case sub.Namespace != namespace:
			return nil, columnDiffers("namespace")
		case sub.Name != name:
			return nil, columnDiffers("name")
		case string(sub.Spec.OperatorID) != operator:
			return nil, columnDiffers("operator_id")
		case sub.Spec.FirstSeq != first:
			return nil, columnDiffers("first_seq")
		case sub.Spec.LastSeq != last:
			return nil, columnDiffers("last_seq")
		case string(sub.Status.AnchorRef) != anchor:
			return nil, columnDiffers("anchor_id")
		}
		if err := checkSubmission(&sub); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTampered, err)
		}
		return &sub, nil
	}()
	if err != nil {
		s.reportTampered(kindSubmission, name, err)
		return nil, err
	}
	return sub, nil
}

// checkSubmission returns nil when sub is named after its operator and first seq
// (federation.SubmissionName), its export header verifies under the key it carries and
// says what its spec says (federation.VerifySubmissionHeader), and an anchor is marked on
// it. That the key was the operator's when it was accepted is the seal's word.
func checkSubmission(sub *fv1.Submission) error {
	if sub.Name != federation.SubmissionName(sub.Spec.OperatorID, sub.Spec.FirstSeq) {
		return errors.New("its name is not the one its operator and first seq give")
	}
	pub, err := protocol.ParsePublicKeyPEM([]byte(sub.Spec.PublicKeyPEM))
	if err != nil {
		return fmt.Errorf("publicKeyPEM: %w", err)
	}
	if reason, _, msg := federation.VerifySubmissionHeader(&sub.Spec, pub); reason != "" {
		return errors.New(msg)
	}
	if !sub.Status.Anchored || sub.Status.AnchorRef == "" {
		return errors.New("no anchor is marked on it")
	}
	return nil
}
