package witnessd

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/cairn-dev/cairn/pkg/witness"
)

// maxInFlight bounds the add-checkpoint requests served at once: each holds a request
// body of up to witness.MaxRequestBytes and waits for the state's one writer.
const maxInFlight = 64

// Handler serves the witness:
//
//	POST /add-checkpoint          C2SP tlog-witness
//	GET  /checkpoint/{origin...}  the latest checkpoint cosigned for a log, with the cosignature
//	GET  /conflicts/{origin...}   the split views kept for a log, JSON
func (w *Witness) Handler() http.Handler {
	mux := http.NewServeMux()
	slots := make(chan struct{}, maxInFlight)
	mux.HandleFunc("POST /add-checkpoint", func(rw http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			rw.Header().Set("Retry-After", "1")
			http.Error(rw, "too many checkpoints in flight; retry", http.StatusServiceUnavailable)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, witness.MaxRequestBytes+1))
		if err != nil {
			http.Error(rw, "read the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if len(body) > witness.MaxRequestBytes {
			http.Error(rw, "the request is longer than an add-checkpoint request can be", http.StatusRequestEntityTooLarge)
			return
		}
		a, err := w.AddCheckpoint(r.Context(), body)
		if err != nil {
			w.opts.Logger.ErrorContext(r.Context(), "Failed to witness a checkpoint", "error", err)
			http.Error(rw, "the witness could not read or write its state", http.StatusInternalServerError)
			return
		}
		rw.Header().Set("Content-Type", a.ContentType)
		rw.WriteHeader(a.Status)
		_, _ = rw.Write(a.Body)
	})
	mux.HandleFunc("GET /checkpoint/{origin...}", func(rw http.ResponseWriter, r *http.Request) {
		note, ok, err := w.Latest(r.Context(), r.PathValue("origin"))
		switch {
		case err != nil:
			http.Error(rw, "the witness could not read its state", http.StatusInternalServerError)
		case !ok:
			http.Error(rw, "this witness has cosigned no checkpoint of that log", http.StatusNotFound)
		default:
			rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = rw.Write(note)
		}
	})
	mux.HandleFunc("GET /conflicts/{origin...}", func(rw http.ResponseWriter, r *http.Request) {
		cs, err := w.Conflicts(r.Context(), r.PathValue("origin"))
		if err != nil {
			http.Error(rw, "the witness could not read its state", http.StatusInternalServerError)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(map[string]any{"conflicts": cs})
	})
	return mux
}
