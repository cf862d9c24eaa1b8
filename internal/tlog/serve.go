package tlog

import (
	"net/http"
	"strings"
)

// Handler serves the log read-only as C2SP tlog-tiles: GET checkpoint and GET tile/...
// (hash tiles and tile/entries/... bundles), relative to where it is mounted; nothing else
// in the directory is reachable. Mount it with http.StripPrefix, e.g. at /federation/log/, so
// auditors and witnesses can follow the log.
func (l *Embedded) Handler() http.Handler {
	return DirHandler(l.opts.Dir)
}

// DirHandler serves the embedded log in dir as Handler does, without opening it: for a
// process that reads the files an Embedded in another process (or goroutine) writes. It
// writes nothing and takes no lock; a file being replaced is read whole or not at all
// (tessera writes by rename).
func DirHandler(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /checkpoint", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		files.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /tile/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		// A full tile never changes; a partial one (".p/") is replaced as the log grows.
		if strings.Contains(r.URL.Path, ".p/") {
			w.Header().Set("Cache-Control", "no-cache")
		} else {
			w.Header().Set("Cache-Control", "max-age=31536000, immutable")
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		files.ServeHTTP(w, r)
	})
	return mux
}
