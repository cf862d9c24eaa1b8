package controllers

import (
	"context"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// TestIndexNamesAreTheRegisteredOnes checks that the index names the controllers select
// on are those federation.RegisterIndexes registers: a List on a name the cache lacks
// fails at run time, not at build time.
func TestIndexNamesAreTheRegisteredOnes(t *testing.T) {
	for _, c := range []struct{ name, ours, registered string }{
		{"participantIndex", participantIndex, federation.ParticipantIndex},
		{"pendingIndex", pendingIndex, federation.PendingIndex},
		{"allPending", allPending, federation.AllPending},
	} {
		if c.ours != c.registered {
			t.Errorf("%s is %q, but the registered index is %q", c.name, c.ours, c.registered)
		}
	}
}

// capturedIndexer keeps the index functions RegisterIndexes adds, by kind and name.
type capturedIndexer map[string]client.IndexerFunc

func (c capturedIndexer) IndexField(_ context.Context, obj client.Object, field string, f client.IndexerFunc) error {
	c[fmt.Sprintf("%T/%s", obj, field)] = f
	return nil
}

// TestPendingKeysAreTheRegisteredOnes checks pendingKeys, the controllers' rule of which
// submissions are pending, against the pending index the manager registers.
func TestPendingKeysAreTheRegisteredOnes(t *testing.T) {
	idx := capturedIndexer{}
	if err := federation.RegisterIndexes(context.Background(), idx); err != nil {
		t.Fatal(err)
	}
	registered := idx[fmt.Sprintf("%T/%s", &fv1.Submission{}, federation.PendingIndex)]
	if registered == nil {
		t.Fatal("RegisterIndexes registers no pending index of Submissions")
	}
	accepted := []metav1.Condition{{Type: string(fv1.ConditionContinuityVerified), Status: metav1.ConditionTrue}}
	for name, sub := range map[string]*fv1.Submission{
		"accepted":          {Spec: fv1.SubmissionSpec{OperatorID: "op_0123456789abcdef"}, Status: fv1.SubmissionStatus{Conditions: accepted}},
		"accepted anchored": {Spec: fv1.SubmissionSpec{OperatorID: "op_0123456789abcdef"}, Status: fv1.SubmissionStatus{Conditions: accepted, Anchored: true}},
		"not judged":        {Spec: fv1.SubmissionSpec{OperatorID: "op_0123456789abcdef"}},
	} {
		if got, want := registered(sub), pendingKeys(sub); !slices.Equal(got, want) {
			t.Errorf("%s: the registered index gives %q, pendingKeys %q", name, got, want)
		}
	}
}
