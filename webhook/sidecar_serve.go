package webhook

import (
	"cmp"
	"context"
	"errors"
	"mime"
	"net/http"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// GET /federation/submission/{id}/sidecar/{sha256} and GET /federation/sidecar/{sha256}:
// one stored attestation sidecar, as an attachment that no browser renders: nosniff, a
// Content-Security-Policy that allows nothing and sandboxes, and a media type a browser
// could render as a document (HTML, XML, SVG, script) replaced by
// application/octet-stream. Only a sidecar an accepted Submission of this federation
// names is served, checked against its digest as it is read.
//
// The same bytes may be named by several submissions, each with its own name and media
// type (another operator may send a copy of someone's sidecar under a label of its own).
// A sidecar is therefore served under a submission: the first route answers the label of
// submission {id}, which never changes once it is accepted, so it is cached as immutable.
// The second, kept for the clients that use it, answers the label of the oldest accepted
// submission naming the digest (creation time, then name), so a later submission cannot
// re-label the original's sidecar; an older submission accepted later would change it,
// so it is cached for sidecarDigestMaxAge only.

// operatorSidecar is one sidecar in an operator summary.
type operatorSidecar struct {
	Digest    string `json:"sha256" doc:"The content's SHA-256, lowercase hex."`
	MediaType string `json:"media_type"`
	Size      int64  `json:"size" doc:"Bytes."`
	Name      string `json:"name" doc:"The file name the operator gave, cleaned for display."`
	URL       string `json:"url" doc:"The path that serves the sidecar under this submission's name and media type: GET /federation/submission/{id}/sidecar/{sha256}." example:"\"/federation/submission/sub-34750f98bd59fcfc-1/sidecar/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\""`
}

// sidecarItems is the summary's list of the sidecars submission names (an empty list
// for none).
func sidecarItems(submission string, in []fv1.SubmissionSidecar) []operatorSidecar {
	out := make([]operatorSidecar, 0, len(in))
	for _, sc := range in {
		out = append(out, operatorSidecar{Digest: string(sc.Digest), MediaType: sc.MediaType, Size: sc.Size, Name: sc.Name,
			URL: submissionSidecarPath(submission, string(sc.Digest))})
	}
	return out
}

// submissionSidecarPath is the path of the sidecar of digest under submission.
func submissionSidecarPath(submission, digest string) string {
	return "/federation/submission/" + submission + "/sidecar/" + digest
}

// sidecarCSP forbids everything a document could load or run, should a browser render one.
const sidecarCSP = "default-src 'none'; sandbox"

// Cache-Control of the two sidecar routes: a submission's label never changes, the
// oldest accepted submission's may while an older one is still being verified.
const (
	sidecarCacheImmutable = "public, max-age=31536000, immutable"
	sidecarCacheByDigest  = "public, max-age=300"
)

// serveSubmissionSidecar answers GET /federation/submission/{id}/sidecar/{sha256}.
func (s *Server) serveSubmissionSidecar(w http.ResponseWriter, r *http.Request) {
	digest, ok := sidecarDigest(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	rec, err := s.submissionSidecar(r.Context(), id, digest)
	s.writeSidecar(w, r, digest, id, rec, err, sidecarCacheImmutable)
}

// serveSidecar answers GET /federation/sidecar/{sha256}.
func (s *Server) serveSidecar(w http.ResponseWriter, r *http.Request) {
	digest, ok := sidecarDigest(w, r)
	if !ok {
		return
	}
	rec, err := s.oldestAcceptedSidecar(r.Context(), digest)
	s.writeSidecar(w, r, digest, "", rec, err, sidecarCacheByDigest)
}

// sidecarDigest is the request's {sha256}; an invalid one is answered 400.
func sidecarDigest(w http.ResponseWriter, r *http.Request) (string, bool) {
	digest := r.PathValue("sha256")
	if !sidecar.ValidDigest(digest) {
		writeError(w, &apiError{status: http.StatusBadRequest, code: "invalid_digest",
			message: "the sidecar's digest is 64 lowercase hex digits"})
		return "", false
	}
	return digest, true
}

// writeSidecar answers the content of digest under rec's label, read from the store and
// checked against the digest, or the failure: err, or 404 when rec is nil. submission
// is the submission the request named ("" for none), for the 404's body.
func (s *Server) writeSidecar(w http.ResponseWriter, r *http.Request, digest, submission string,
	rec *fv1.SubmissionSidecar, err error, cacheControl string) {
	ctx := r.Context()
	if err == nil && (rec == nil || s.sidecars == nil) {
		err = sidecarNotFound(digest, submission)
	}
	var content []byte
	if err == nil {
		if content, err = s.sidecars.Get(digest); errors.Is(err, sidecar.ErrNotFound) {
			err = sidecarNotFound(digest, submission)
		}
	}
	if err != nil {
		s.fail(ctx, w, "serve a sidecar", err)
		return
	}
	mt := rec.MediaType
	if sidecar.Renderable(mt) {
		mt = sidecar.DefaultMediaType
	}
	h := w.Header()
	h.Set("Content-Type", mt)
	h.Set("Content-Length", strconv.Itoa(len(content)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", sidecarCSP)
	h.Set("Cache-Control", cacheControl)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": rec.Name}))
	if h.Get("Content-Disposition") == "" {
		h.Set("Content-Disposition", "attachment")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(content)
}

// submissionSidecar is the record of digest on Submission id of the federation, or nil
// when that submission does not exist, is not accepted or does not name digest.
func (s *Server) submissionSidecar(ctx context.Context, id, digest string) (*fv1.SubmissionSidecar, error) {
	if len(validation.IsDNS1123Subdomain(id)) > 0 {
		return nil, nil // no object has this name
	}
	sub, err := s.submissionNamed(ctx, s.federation.Namespace, id)
	if err != nil || sub == nil {
		return nil, err
	}
	return acceptedRecord(sub, digest), nil
}

// oldestAcceptedSidecar is the record of digest on the oldest accepted Submission of
// the federation that names it (by creation time, then name), or nil: only the
// Submissions that carry it, through federation.SidecarIndex, uncopied.
func (s *Server) oldestAcceptedSidecar(ctx context.Context, digest string) (*fv1.SubmissionSidecar, error) {
	var subs fv1.SubmissionList
	if err := s.client.List(ctx, &subs, client.InNamespace(s.federation.Namespace),
		client.MatchingFields{federation.SidecarIndex: digest}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	var oldest *fv1.Submission
	var found *fv1.SubmissionSidecar
	for i := range subs.Items {
		sub := &subs.Items[i]
		if oldest != nil && olderSubmission(oldest, sub) {
			continue
		}
		if rec := acceptedRecord(sub, digest); rec != nil {
			oldest, found = sub, rec
		}
	}
	return found, nil
}

// olderSubmission reports whether a was created before b, or in the same second with a
// name that sorts first.
func olderSubmission(a, b *fv1.Submission) bool {
	return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name)) < 0
}

// acceptedRecord is a copy of sub's record of digest when sub is accepted (signature and
// continuity verified) and names digest, else nil.
func acceptedRecord(sub *fv1.Submission, digest string) *fv1.SubmissionSidecar {
	if !sub.Status.Ed25519Verified || !sub.Status.ContinuityVerified {
		return nil
	}
	i := slices.IndexFunc(sub.Spec.Sidecars, func(sc fv1.SubmissionSidecar) bool { return string(sc.Digest) == digest })
	if i < 0 {
		return nil
	}
	found := sub.Spec.Sidecars[i]
	return &found
}

// sidecarNotFound is the 404 of a digest no accepted submission names, or, when
// submission is not "", that submission does not name while accepted.
func sidecarNotFound(digest, submission string) error {
	if submission == "" {
		return &apiError{status: http.StatusNotFound, code: "sidecar_not_found",
			message: "no accepted submission of this federation carries a sidecar of this digest", extra: map[string]any{"sha256": digest}}
	}
	return &apiError{status: http.StatusNotFound, code: "sidecar_not_found",
		message: "this federation has no accepted submission of this ID carrying a sidecar of this digest",
		extra:   map[string]any{"sha256": digest, "submission_id": submission}}
}
