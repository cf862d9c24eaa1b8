package webhook

import (
	"net/http"

	"k8s.io/apimachinery/pkg/api/equality"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// storeSidecars writes held into the sidecar store (before the Submission naming them
// is created, so that no accepted Submission names a file that is not there) and
// returns what the Submission records of them. A Submission the controller refuses
// leaves its sidecars' files behind, unserved: the route serves only the sidecars of
// accepted submissions.
func (s *Server) storeSidecars(held []heldSidecar) ([]fv1.SubmissionSidecar, error) {
	if len(held) == 0 {
		return nil, nil
	}
	if s.sidecars == nil {
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "sidecars_not_configured",
			message: "this federation has no sidecar directory: send the export without sidecars"}
	}
	out := make([]fv1.SubmissionSidecar, 0, len(held))
	for _, h := range held {
		digest, err := s.sidecars.Put(h.content)
		if err != nil {
			return nil, err
		}
		out = append(out, fv1.SubmissionSidecar{Digest: fv1.Hash(digest), MediaType: h.mediaType,
			Size: int64(len(h.content)), Name: h.name})
	}
	return out, nil
}

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
