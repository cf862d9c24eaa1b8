package webhook

import (
	"context"
	"net/http"
	"time"

	"github.com/cairn-dev/cairn/internal/federation"
)

// serveSigstoreBundle answers GET /federation/anchor/{id}/sigstore-bundle: the log leg of
// an anchor the federation made, as a Sigstore bundle, once it verifies under one of the
// federation's log keys (receiptLogKeys).
func (s *Server) serveSigstoreBundle(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	fed, ca, ok := s.pathAnchor(w, r)
	if !ok {
		return
	}
	id := ca.Name
	if !federation.HasLogLeg(ca) {
		writeError(w, &apiError{status: http.StatusNotFound, code: "anchor_not_logged", message: "the log has not recorded anchor " + id + " yet"})
		return
	}
	b, err := federation.SigstoreBundle(fed, ca, s.receiptLogKeys(ctx, fed))
	if err != nil {
		s.log.WarnContext(ctx, "Not serving a Sigstore bundle of a log leg that does not verify", "anchorID", id, "error", err)
		writeError(w, &apiError{status: http.StatusNotFound, code: "anchor_not_logged", message: "no log proof of anchor " + id + " verifies"})
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// trustedRootTimeout bounds reading a Rekor v2 log's checkpoint for its origin.
const trustedRootTimeout = 10 * time.Second

// serveTrustedRoot answers GET /federation/log/trusted-root: the Sigstore trusted root of
// the federation's transparency log now and, for Rekor v2, its timestamp authority, for
// Sigstore's tools to verify the bundles of GET /federation/anchor/{id}/sigstore-bundle
// with. The log's origin, part of a Rekor v2 log's key ID, is read from its latest
// checkpoint, verified under the log's key.
func (s *Server) serveTrustedRoot(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	fed, err := s.loadFederation(ctx)
	if err != nil {
		s.fail(ctx, w, "read the federation", err)
		return
	}
	if !fed.Spec.TransparencyLog.IsRemote() {
		writeError(w, &apiError{status: http.StatusNotFound, code: "log_not_served",
			message: "the federation's log is its embedded log, whose checkpoints Sigstore's tools do not read: receipts are verified with cairn federation verify"})
		return
	}
	key, err := s.logKey(ctx, fed)
	if err != nil {
		writeError(w, &apiError{status: http.StatusServiceUnavailable, code: "log_key_unavailable", message: err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(ctx, trustedRootTimeout)
	defer cancel()
	root, err := federation.TrustedRoot(ctx, fed, key, &http.Client{Timeout: trustedRootTimeout})
	if err != nil {
		s.log.WarnContext(ctx, "Could not make the log's trusted root", "error", err)
		writeError(w, &apiError{status: http.StatusServiceUnavailable, code: "log_unreachable", message: "the log's checkpoint could not be read and verified"})
		return
	}
	writeJSON(w, http.StatusOK, root)
}
