package history

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// storedAnchor is ca as the store keeps it: without managedFields and resourceVersion.
func storedAnchor(ca *fv1.CrossAnchor) *fv1.CrossAnchor {
	ca = ca.DeepCopy()
	ca.ManagedFields, ca.ResourceVersion = nil, ""
	return ca
}

func TestStoreKeepsRecordsAsTheyWere(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		w := newWorld(t)
		s := b.open(t, Options{})
		var anchors []*fv1.CrossAnchor
		for n := 1; n <= 3; n++ {
			ca := w.anchor(t, n, int64(10*n))
			anchors = append(anchors, ca)
			if err := s.PutAnchor(ctx, w.fed, ca, w.key); err != nil {
				t.Fatal(err)
			}
			if err := s.PutSubmission(ctx, w.fed, w.submission(t, int64(10*n-9), int64(10*n), ca.Name), w.key); err != nil {
				t.Fatal(err)
			}
		}
		// Stored again (a retry after a lost delete), sealed by the later key: replaced.
		if err := s.PutAnchor(ctx, w.fed, anchors[0], w.later); err != nil {
			t.Fatal(err)
		}

		got, err := s.Anchor(ctx, w.fed, anchors[1].Name)
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(got, storedAnchor(anchors[1])) {
			t.Fatalf("stored anchor differs:\n got %+v\nwant %+v", got, storedAnchor(anchors[1]))
		}
		if anchors[1].ManagedFields == nil || anchors[1].ResourceVersion == "" {
			t.Fatal("PutAnchor changed its argument")
		}
		if _, err := s.Anchor(ctx, w.fed, "anchor-20261124-009"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing anchor: %v, want ErrNotFound", err)
		}
		other := newWorld(t)
		other.fed.Name = "fed-2"
		if _, err := s.Anchor(ctx, other.fed, anchors[1].Name); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another Federation's anchor: %v, want ErrNotFound", err)
		}
		restored := w.fed.DeepCopy()
		restored.UID, restored.Status.KeyHistory = "fed-uid-restored", restored.Status.KeyHistory[:1]
		if _, err := s.Anchor(ctx, restored, anchors[1].Name); err != nil {
			t.Fatalf("the Federation restored under its name with its key: %v", err)
		}
		remade := w.fed.DeepCopy()
		remade.UID, remade.Status.KeyHistory = "fed-uid-remade", []fv1.KeyRecord{keyRecord(t, seededKey(7))}
		if _, err := s.Anchor(ctx, remade, anchors[1].Name); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrTampered) {
			t.Fatalf("a Federation made again under the name with another key: %v, want ErrNotFound", err)
		}
		if page, err := s.Anchors(ctx, remade, "", 10); err != nil || len(page) != 0 {
			t.Fatalf("a Federation made again under the name lists %v (%v), want none", anchorNames(page), err)
		}

		page, err := s.Anchors(ctx, w.fed, "", 2)
		wantNames(t, "Anchors", err, anchorNames(page), "anchor-20261124-003", "anchor-20261124-002")
		page, err = s.Anchors(ctx, w.fed, "anchor-20261124-002", 5)
		wantNames(t, "Anchors before 002", err, anchorNames(page), "anchor-20261124-001")
		page, err = s.AnchorsBinding(ctx, w.fed, w.operator, "anchor-20261124-003", 5)
		wantNames(t, "AnchorsBinding", err, anchorNames(page), "anchor-20261124-002", "anchor-20261124-001")
		page, err = s.AnchorsBinding(ctx, w.fed, "op_0000000000000077", "", 5)
		wantNames(t, "AnchorsBinding of a stranger", err, anchorNames(page))
		var each []string
		err = s.EachAnchor(ctx, w.fed, func(ca *fv1.CrossAnchor) error { each = append(each, ca.Name); return nil })
		wantNames(t, "EachAnchor", err, each, "anchor-20261124-001", "anchor-20261124-002", "anchor-20261124-003")

		subs, err := s.SubmissionsOf(ctx, w.fed, w.operator, 0, 2)
		wantNames(t, "SubmissionsOf", err, submissionNames(subs), subName(w, 21), subName(w, 11))
		subs, err = s.SubmissionsOf(ctx, w.fed, w.operator, 21, 5)
		wantNames(t, "SubmissionsOf before 21", err, submissionNames(subs), subName(w, 11), subName(w, 1))
		subs, err = s.SubmissionsEnding(ctx, w.fed, w.operator, 20)
		wantNames(t, "SubmissionsEnding", err, submissionNames(subs), subName(w, 11))
		sub, err := s.Submission(ctx, w.fed, subName(w, 21))
		if err != nil || sub.Status.AnchorRef != "anchor-20261124-003" {
			t.Fatalf("Submission: %v, %v", sub, err)
		}

		withSidecar := w.submission(t, 31, 40, "anchor-20261124-003")
		digest := fv1.Hash(strings.Repeat("5a", 32))
		withSidecar.Spec.Sidecars = []fv1.SubmissionSidecar{{Digest: digest, MediaType: "application/json", Size: 2}}
		if err := s.PutSubmission(ctx, w.fed, withSidecar, w.key); err != nil {
			t.Fatal(err)
		}
		for d, want := range map[fv1.Hash]bool{digest: true, fv1.Hash(strings.Repeat("5b", 32)): false} {
			if got, err := s.NamesSidecar(ctx, w.fed, d); err != nil || got != want {
				t.Fatalf("NamesSidecar(%s) = %v, %v; want %v", d[:4], got, err, want)
			}
		}
	})
}

func TestStoreRefusesWhatTheFederationDidNotFinish(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		w := newWorld(t)
		s := b.open(t, Options{})
		forged := w.anchor(t, 1, 10)
		forged.Spec.Participants[0].ChainSignature = fv1.Hash(strings.Repeat("0", 64))
		pending := w.anchor(t, 2, 10)
		pending.Status.Phase = fv1.PhasePendingTLog
		badSub := w.submission(t, 1, 10, "anchor-20261124-001")
		badSub.Spec.LastSeq++
		unanchored := w.submission(t, 1, 10, "")
		unanchored.Status.Anchored = false
		stranger := seededKey(9)
		for name, put := range map[string]func() error{
			"an anchor whose hash does not recompute": func() error { return s.PutAnchor(ctx, w.fed, forged, w.key) },
			"an anchor not logged yet":                func() error { return s.PutAnchor(ctx, w.fed, pending, w.key) },
			"a submission its header does not sign":   func() error { return s.PutSubmission(ctx, w.fed, badSub, w.key) },
			"a submission no anchor covers":           func() error { return s.PutSubmission(ctx, w.fed, unanchored, w.key) },
			"a seal by a key not the federation's": func() error {
				return s.PutAnchor(ctx, w.fed, w.anchor(t, 3, 10), stranger)
			},
		} {
			if err := put(); err == nil {
				t.Errorf("%s: stored", name)
			}
		}
		if page, err := s.Anchors(ctx, w.fed, "", 10); err != nil || len(page) != 0 {
			t.Fatalf("after refusals the store lists %v (%v)", anchorNames(page), err)
		}
	})
}

func anchorNames(cas []*fv1.CrossAnchor) []string {
	var out []string
	for _, ca := range cas {
		out = append(out, ca.Name)
	}
	return out
}

func submissionNames(subs []*fv1.Submission) []string {
	var out []string
	for _, s := range subs {
		out = append(out, s.Name)
	}
	return out
}

func subName(w *world, first int64) string { return federation.SubmissionName(w.operator, first) }

func wantNames(t *testing.T, what string, err error, got []string, want ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
}
