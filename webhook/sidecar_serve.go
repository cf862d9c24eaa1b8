package webhook

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// GET /federation/sidecar/{sha256}: one stored attestation sidecar, as an attachment
// that no browser renders: nosniff, a Content-Security-Policy that allows nothing and
// sandboxes, and a media type a browser could render as a document (HTML, XML, SVG,
// script) replaced by application/octet-stream. Only a sidecar an accepted Submission
// of this federation names is served, checked against its digest as it is read.

// operatorSidecar is one sidecar in an operator summary.
type operatorSidecar struct {
	Digest    string `json:"sha256" doc:"The content's SHA-256, lowercase hex: GET /federation/sidecar/{sha256} serves it."`
	MediaType string `json:"media_type"`
	Size      int64  `json:"size" doc:"Bytes."`
	Name      string `json:"name" doc:"The file name the operator gave, cleaned for display."`
}

// sidecarItems is the summary's list of sidecars (an empty list for none).
func sidecarItems(in []fv1.SubmissionSidecar) []operatorSidecar {
	out := make([]operatorSidecar, 0, len(in))
	for _, sc := range in {
		out = append(out, operatorSidecar{Digest: string(sc.Digest), MediaType: sc.MediaType, Size: sc.Size, Name: sc.Name})
	}
	return out
}

// sidecarCSP forbids everything a document could load or run, should a browser render one.
const sidecarCSP = "default-src 'none'; sandbox"

// serveSidecar answers GET /federation/sidecar/{sha256}.
func (s *Server) serveSidecar(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	digest := r.PathValue("sha256")
	if !sidecar.ValidDigest(digest) {
		writeError(w, &apiError{status: http.StatusBadRequest, code: "invalid_digest",
			message: "the sidecar's digest is 64 lowercase hex digits"})
		return
	}
	rec, err := s.acceptedSidecar(ctx, digest)
	if err == nil && rec == nil {
		err = sidecarNotFound(digest)
	}
	var content []byte
	if err == nil {
		if s.sidecars == nil {
			err = sidecarNotFound(digest)
		} else if content, err = s.sidecars.Get(digest); errors.Is(err, sidecar.ErrNotFound) {
			err = sidecarNotFound(digest)
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
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": rec.Name}))
	if h.Get("Content-Disposition") == "" {
		h.Set("Content-Disposition", "attachment")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(content)
}

// acceptedSidecar is the record of digest on an accepted Submission of the federation
// (the first found), or nil: only the Submissions that carry it, through
// federation.SidecarIndex, uncopied.
func (s *Server) acceptedSidecar(ctx context.Context, digest string) (*fv1.SubmissionSidecar, error) {
	var subs fv1.SubmissionList
	if err := s.client.List(ctx, &subs, client.InNamespace(s.federation.Namespace),
		client.MatchingFields{federation.SidecarIndex: digest}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range subs.Items {
		sub := &subs.Items[i]
		if !sub.Status.Ed25519Verified || !sub.Status.ContinuityVerified {
			continue
		}
		for _, sc := range sub.Spec.Sidecars {
			if string(sc.Digest) == digest {
				found := sc
				return &found, nil
			}
		}
	}
	return nil, nil
}

// sidecarNotFound is the 404 of a digest no accepted submission names.
func sidecarNotFound(digest string) error {
	return &apiError{status: http.StatusNotFound, code: "sidecar_not_found",
		message: "no accepted submission of this federation carries a sidecar of this digest", extra: map[string]any{"sha256": digest}}
}
