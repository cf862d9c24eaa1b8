package webhook

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/tlog"
)

// logPrefix is where the embedded log's C2SP tlog-tiles are served.
const logPrefix = "/federation/log"

// servedLogFederation returns the Federation whose embedded log this server serves from
// its log directory; otherwise it answers the request (404 log_not_served, or the failure
// to read the Federation) and returns false.
func (s *Server) servedLogFederation(w http.ResponseWriter, r *http.Request) (*fv1.Federation, bool) {
	ctx := r.Context()
	fed, err := s.loadFederation(ctx)
	if err != nil {
		s.fail(ctx, w, "read the federation", err)
		return nil, false
	}
	if fed.Spec.TransparencyLog.IsRemote() || s.logDir == "" {
		writeError(w, &apiError{status: http.StatusNotFound, code: "log_not_served",
			message: "this server does not serve the federation's transparency log: it is a Rekor log, or this replica has no log directory"})
		return nil, false
	}
	return fed, true
}

// serveLog answers GET /federation/log/checkpoint and GET /federation/log/tile/...: the
// Federation's embedded log, read-only, from the directory the controllers write it in
// (Options.LogDir/<namespace>/<name>). It reads the files without opening the log, so
// it takes no lock and writes nothing; the log writes each file by rename, so a reader
// sees a whole file. A Rekor log is not served here: its entries are Rekor's.
func (s *Server) serveLog(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	fed, ok := s.servedLogFederation(w, r)
	if !ok {
		return
	}
	dir := filepath.Join(s.logDir, fed.Namespace, fed.Name)
	rel := path.Clean("/" + strings.TrimPrefix(r.URL.Path, logPrefix)) // no .. past the root
	if rel == "/checkpoint" {
		s.serveCheckpoint(w, r, fed)
		return
	}
	info, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil || info.IsDir() || !strings.HasPrefix(rel, "/tile/") {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.WarnContext(ctx, "Failed to read the embedded log", "path", rel, "error", err)
		}
		writeError(w, &apiError{status: http.StatusNotFound, code: "not_found", message: "the log has no " + strings.TrimPrefix(rel, "/")})
		return
	}
	http.StripPrefix(logPrefix, tlog.DirHandler(dir)).ServeHTTP(w, r)
}
