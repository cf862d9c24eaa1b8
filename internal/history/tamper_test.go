package history

import (
	"context"
	"crypto/ed25519"
	"errors"
	"slices"
	"strings"
	"testing"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// tamperCase is one change a database administrator makes to one column, and the read
// that must report it.
type tamperCase struct {
	column string
	update string // the UPDATE statement, ? placeholders
	args   []any
	read   func(ctx context.Context, s *Store, w *world) error
}

// TestTamperingWithAnyColumnIsDetected plays the database administrator: each column of
// each table is changed in turn, with a value of the right shape, and the read of the
// record must fail with ErrTampered and say so to OnTampered, never serve the changed
// record. Deleting rows is the one thing the administrator can do unseen.
func TestTamperingWithAnyColumnIsDetected(t *testing.T) {
	const (
		a1 = "anchor-20261124-001"
		a2 = "anchor-20261124-002"
		a3 = "anchor-20261124-003" // binds another operator, not w's
	)
	later := func(w *world) string { return protocol.Fingerprint(w.later.Public().(ed25519.PublicKey)) }
	anchor := func(id string) func(context.Context, *Store, *world) error {
		return func(ctx context.Context, s *Store, w *world) error { _, err := s.Anchor(ctx, w.fed, id); return err }
	}
	otherFed := func(ctx context.Context, s *Store, w *world) error {
		fed := w.fed.DeepCopy()
		fed.Name = "fed-2" // another Federation holding the same keys
		_, err := s.Anchor(ctx, fed, a1)
		return err
	}
	// binding lists op's anchors, which must not include forged.
	binding := func(op fv1.OperatorID, forged string) func(context.Context, *Store, *world) error {
		return func(ctx context.Context, s *Store, w *world) error {
			cas, err := s.AnchorsBinding(ctx, w.fed, op, "", 10)
			if err == nil && slices.Contains(anchorNames(cas), forged) {
				return errors.New("served " + forged)
			}
			return err
		}
	}
	submission := func(ctx context.Context, s *Store, w *world) error {
		_, err := s.Submission(ctx, w.fed, subName(w, 1))
		return err
	}
	listedSubmission := func(ctx context.Context, s *Store, w *world) error {
		subs, err := s.SubmissionsOf(ctx, w.fed, w.operator, 0, 10)
		if err == nil && len(subs) > 0 {
			return errors.New("served " + subs[0].Name)
		}
		return err
	}
	const anchors, subs = "UPDATE cairn_history_anchors SET ", "UPDATE cairn_history_submissions SET "
	cases := []tamperCase{
		{"anchors.federation", anchors + "federation = 'fed-ns/fed-2' WHERE anchor_id = ?", []any{a1}, otherFed},
		{"anchors.namespace", anchors + "namespace = 'other-ns' WHERE anchor_id = ?", []any{a1}, anchor(a1)},
		{"anchors.anchor_id", anchors + "anchor_id = 'anchor-20261124-009' WHERE anchor_id = ?", []any{a1}, anchor("anchor-20261124-009")},
		{"anchors.anchored_at", anchors + "anchored_at = '2026-11-24T03:09:00.000000007Z' WHERE anchor_id = ?", []any{a1}, anchor(a1)},
		{"anchors.object", anchors + "object = replace(object, '\"logged\"', '\"forged\"') WHERE anchor_id = ?", []any{a1}, anchor(a1)},
		{"anchors.object (lastSeq, which the anchor's signature leaves out)",
			anchors + "object = replace(object, '\"lastSeq\":10', '\"lastSeq\":99') WHERE anchor_id = ?", []any{a1}, anchor(a1)},
		{"anchors.sealed_by", anchors + "sealed_by = ? WHERE anchor_id = ?", nil, anchor(a1)},
		{"anchors.seal", anchors + "seal = (SELECT seal FROM cairn_history_anchors WHERE anchor_id = ?) WHERE anchor_id = ?", []any{a2, a1}, anchor(a1)},
		{"participants.operator_id", "UPDATE cairn_history_participants SET operator_id = 'op_0000000000000077' WHERE anchor_id = ? AND operator_id = ?",
			nil, binding("op_0000000000000077", a1)},
		{"participants.anchor_id", "UPDATE cairn_history_participants SET anchor_id = ? WHERE anchor_id = ? AND operator_id = ?",
			nil, nil},
		{"submissions.federation", subs + "federation = 'fed-ns/fed-2'", nil, func(ctx context.Context, s *Store, w *world) error {
			fed := w.fed.DeepCopy()
			fed.Name = "fed-2"
			_, err := s.Submission(ctx, fed, subName(w, 1))
			return err
		}},
		{"submissions.namespace", subs + "namespace = 'other-ns'", nil, submission},
		{"submissions.name", subs + "name = ?", nil, func(ctx context.Context, s *Store, w *world) error {
			_, err := s.Submission(ctx, w.fed, subName(w, 5))
			return err
		}},
		{"submissions.operator_id", subs + "operator_id = 'op_0000000000000077'", nil, func(ctx context.Context, s *Store, w *world) error {
			subs, err := s.SubmissionsOf(ctx, w.fed, "op_0000000000000077", 0, 10)
			if err == nil && len(subs) > 0 {
				return errors.New("served " + subs[0].Name)
			}
			return err
		}},
		{"submissions.first_seq", subs + "first_seq = 2", nil, submission},
		{"submissions.last_seq", subs + "last_seq = 9", nil, listedSubmission},
		{"submissions.anchor_id", subs + "anchor_id = ?", []any{a2}, submission},
		{"submissions.object", subs + "object = replace(object, '\"accepted\"', '\"forged\"')", nil, submission},
		{"submissions.sealed_by", subs + "sealed_by = ?", nil, submission},
		{"submissions.seal", subs + "seal = (SELECT seal FROM cairn_history_anchors WHERE anchor_id = ?)", []any{a1}, submission},
	}
	eachBackend(t, func(t *testing.T, b backend) {
		for _, c := range cases {
			t.Run(c.column, func(t *testing.T) {
				ctx := context.Background()
				var reported []string
				s := b.open(t, Options{OnTampered: func(kind, name string, _ error) { reported = append(reported, kind+" "+name) }})
				w := newWorld(t)
				for _, ca := range []*fv1.CrossAnchor{w.anchor(t, 1, 10), w.anchor(t, 2, 20), w.anchorOf(t, 3, "op_0000000000000077", 5)} {
					if err := s.PutAnchor(ctx, w.fed, ca, w.key); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.PutSubmission(ctx, w.fed, w.submission(t, 1, 10, a1), w.key); err != nil {
					t.Fatal(err)
				}
				args, read := c.args, c.read
				switch c.column {
				case "anchors.sealed_by", "submissions.sealed_by":
					args = append([]any{later(w)}, args...)
					if c.column == "anchors.sealed_by" {
						args = append(args, a1)
					}
				case "participants.operator_id":
					args = []any{a1, string(w.operator)}
				case "submissions.name":
					args = []any{subName(w, 5)}
				case "participants.anchor_id": // index w's operator under the anchor that binds another
					args, read = []any{a3, a1, string(w.operator)}, binding(w.operator, a3)
				}
				res, err := s.db.ExecContext(ctx, s.q(c.update), args...)
				if err != nil {
					t.Fatal(err)
				}
				if n, _ := res.RowsAffected(); n != 1 {
					t.Fatalf("the UPDATE changed %d rows, want 1", n)
				}
				err = read(ctx, s, w)
				if !errors.Is(err, ErrTampered) && (err != nil || len(reported) == 0) {
					t.Fatalf("read after tampering: %v, want ErrTampered", err)
				}
				if len(reported) == 0 {
					t.Fatal("OnTampered was not told")
				}
				if err != nil && strings.Contains(err.Error(), "fed-ns/") {
					t.Fatalf("the error names a value: %v", err)
				}
			})
		}
	})
}
