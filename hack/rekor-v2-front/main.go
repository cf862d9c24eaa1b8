// Command rekor-v2-front gives the local Rekor v2 that hack/rekor-v2-up.sh runs one base URL,
// the way a public Rekor v2 log has one (POST and the tiles under the same host):
//
//	POST /api/v2/log/entries, GET /healthz, everything else   proxied to rekor-server
//	GET  /checkpoint, /tile/<L>/<N>[.p/<W>], /tile/entries/<N>[.p/<W>]
//	                                                           read from the log's directory
//
// rekor-server with POSIX storage only writes the C2SP tlog-tiles files; it does not serve
// them (its /api/v2/checkpoint and /api/v2/tile routes answer 501), and upstream puts nginx
// in front of the directory instead. This is that nginx: it serves nothing but the
// checkpoint and the tile paths the spec allows, never the .state directory beside them.
//
//	go run ./hack/rekor-v2-front -listen 127.0.0.1:3120 -dir STORAGE -backend http://127.0.0.1:3123
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// tilePath matches the tlog-tiles paths of hash tiles and entry bundles, full or partial.
var tilePath = regexp.MustCompile(`^/tile/(entries|[0-9]{1,2})/(x[0-9]{3}/)*[0-9]{3}(\.p/[0-9]{1,3})?$`)

func main() {
	listen := flag.String("listen", "127.0.0.1:3120", "address to listen on")
	dir := flag.String("dir", "", "the log's storage directory (rekor-server --storage-dir)")
	backend := flag.String("backend", "http://127.0.0.1:3123", "rekor-server's HTTP address")
	flag.Parse()
	if err := run(*listen, *dir, *backend); err != nil {
		fmt.Fprintln(os.Stderr, "rekor-v2-front:", err)
		os.Exit(1)
	}
}

func run(listen, dir, backend string) error {
	if dir == "" {
		return errors.New("-dir is required")
	}
	target, err := url.Parse(backend)
	if err != nil || target.Scheme == "" || target.Host == "" {
		return fmt.Errorf("-backend %q is not an absolute URL", backend)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := &http.Server{
		Addr:              listen,
		Handler:           handler(dir, proxy),
		ReadHeaderTimeout: 10 * time.Second,
	}
	log.Printf("serving %s on http://%s, proxying the rest to %s", dir, listen, backend)
	return srv.ListenAndServe()
}

func handler(dir string, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p != "/checkpoint" && !tilePath.MatchString(p) {
			api.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(p[1:])))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				http.NotFound(w, r)
				return
			}
			http.Error(w, "cannot read "+p, http.StatusInternalServerError)
			return
		}
		defer func() { _ = f.Close() }()
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		modTime := st.ModTime()
		if p == "/checkpoint" {
			// The checkpoint is replaced several times a second: no Last-Modified, so no
			// conditional request can be answered 304 with a checkpoint it has not seen.
			modTime = time.Time{}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-cache")
		} else {
			w.Header().Set("Content-Type", "application/octet-stream")
		}
		http.ServeContent(w, r, "", modTime, f)
	})
}
