package webhook

import (
	"net/http"

	"k8s.io/apimachinery/pkg/api/equality"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// sameExport reports whether a and b record the same export, whatever their sidecars.
func sameExport(a, b *fv1.SubmissionSpec) bool {
	x, y := *a, *b
	x.Sidecars, y.Sidecars = nil, nil
	return equality.Semantic.DeepEqual(x, y)
}

// sidecarsImmutable is the answer to a re-sent export whose sidecars differ from those
// recorded: a submission's sidecars are fixed when it is first recorded.
func sidecarsImmutable(sub *fv1.Submission) error {
	return &apiError{status: http.StatusConflict, code: "sidecars_immutable",
		message: "the federation already recorded this export with other sidecars; a submission's sidecars cannot be added or changed",
		extra:   map[string]any{"submission_id": sub.Name}}
}
