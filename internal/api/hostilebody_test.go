package api

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/consensus"
	"github.com/cairn-dev/cairn/internal/otlp"
)

// hostileLimit is over every body limit of the hostile fixture: OTLP's default 16 MiB,
// the policy and JSON routes' 4 MiB, consensus's 1 MiB and the upload's 1 MiB set here.
const hostileLimit = otlp.DefaultMaxBodyBytes + 1<<10

// hostileDepth is how deep the nested bodies are: ten times encoding/json's own limit.
const hostileDepth = 100_000

// hostileFixture is a fixture serving every route that takes a body: with a consensus
// provider (never reached) and the OTLP receiver, and a 1 MiB upload cap.
func hostileFixture(t *testing.T) *fixture {
	return newFixture(t, 3, func(o *Options) {
		o.MaxUploadBytes = 1 << 20
		p, err := consensus.NewOpenAIProvider(consensus.OpenAIConfig{BaseURL: "http://127.0.0.1:1/v1"})
		if err != nil {
			t.Fatal(err)
		}
		o.Consensus = consensus.NewEvaluator(nil, p)
		if o.Traces, err = otlp.NewHandler(o.Store, otlp.WithLogger(slog.New(slog.DiscardHandler))); err != nil {
			t.Fatal(err)
		}
	})
}

// bodyRoute is a route that takes a body, in one of its content types.
type bodyRoute struct{ method, path, contentType string }

// bodyRoutes lists, from the server's route table, every route that takes a body in
// each content type it accepts: a route added later is walked too.
func bodyRoutes(s *Server) []bodyRoute {
	var out []bodyRoute
	for _, rt := range s.routes {
		if rt.op.body == nil {
			continue
		}
		for _, ct := range append([]string{rt.op.body.contentType}, rt.op.body.alternativeContents...) {
			out = append(out, bodyRoute{rt.method, rt.path, ct})
		}
	}
	return out
}

// hostileRequest is a request to rt of contentType whose payload is payload, wrapped in a
// multipart form's file field when the route takes one.
func hostileRequest(rt bodyRoute, payload io.Reader) *http.Request {
	contentType := rt.contentType
	if contentType == "multipart/form-data" {
		const boundary = "hostile-boundary"
		contentType += "; boundary=" + boundary
		payload = io.MultiReader(strings.NewReader("--"+boundary+"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.json\"\r\n"+
			"Content-Type: application/json\r\n\r\n"), payload, strings.NewReader("\r\n--"+boundary+"--\r\n"))
	}
	req := httptest.NewRequest(rt.method, rt.path, payload)
	req.Host = "localhost"
	req.Header.Set("Content-Type", contentType)
	return req
}

// repeat is a reader of s repeated to n bytes in all, made as it is read.
func repeat(prefix, s string, n int) io.Reader {
	return io.MultiReader(strings.NewReader(prefix), io.LimitReader(&cycle{s: s}, int64(n-len(prefix))))
}

type cycle struct {
	s string
	i int
}

func (c *cycle) Read(p []byte) (int, error) {
	for k := range p {
		p[k] = c.s[c.i%len(c.s)]
		c.i++
	}
	return len(p), nil
}

// checkError fails unless the answer has the status and, for the /api routes, the
// documented error JSON with code; /v1/traces answers in OTLP's own shape, a Status.
func checkError(t *testing.T, rt bodyRoute, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	body := rec.Body.Bytes()
	if rec.Code != status {
		t.Fatalf("%s %s (%s): %d, want %d: %.300s", rt.method, rt.path, rt.contentType, rec.Code, status, body)
	}
	if !strings.HasPrefix(rt.path, "/api/") {
		if len(body) == 0 {
			t.Fatalf("%s %s: %d without a body", rt.method, rt.path, rec.Code)
		}
		return
	}
	var e errorBody
	if err := json.Unmarshal(body, &e); err != nil || e.Error != code || e.Code != code || e.Message == "" {
		t.Fatalf("%s %s (%s): %s, want the error JSON with code %q", rt.method, rt.path, rt.contentType, body, code)
	}
}

// checkMalformedExport fails unless the answer is POST /api/export/verify's documented
// answer to an upload that is not an export: 200, valid false, reason_code malformed.
func checkMalformedExport(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	var report struct {
		Valid      bool   `json:"valid"`
		ReasonCode string `json:"reason_code"`
		Reason     string `json:"reason"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &report); err != nil || rec.Code != http.StatusOK ||
		report.Valid || report.ReasonCode != "malformed" || report.Reason == "" {
		t.Fatalf("POST /api/export/verify of a nested upload: %d %.300s, want 200, valid false, reason_code malformed", rec.Code, rec.Body.Bytes())
	}
}

// TestEveryBodyRouteRefusesHostileBodies sends every route that takes a body (from the
// route table) a body over every limit, and JSON nested 100,000 deep: the first is
// answered 413 body_too_large, the second 400 with a clear error (not a crash, nor a
// stack overflow; /api/export/verify reports an upload that is not an export as
// malformed, with 200 as documented), and the server still serves after.
func TestEveryBodyRouteRefusesHostileBodies(t *testing.T) {
	f := hostileFixture(t)
	routes := bodyRoutes(f.srv)
	if len(routes) < 10 {
		t.Fatalf("only %d body routes in the table: %v", len(routes), routes)
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path+" "+rt.contentType, func(t *testing.T) {
			// A JSON object (or protobuf bytes) that does not end before the limit.
			rec := httptest.NewRecorder()
			f.srv.ServeHTTP(rec, hostileRequest(rt, repeat("{", " ", hostileLimit)))
			checkError(t, rt, rec, http.StatusRequestEntityTooLarge, codeBodyTooLarge)

			for _, nested := range []string{"[", `{"a":`} {
				rec = httptest.NewRecorder()
				f.srv.ServeHTTP(rec, hostileRequest(rt, repeat("", nested, hostileDepth*len(nested))))
				if rt.contentType == "multipart/form-data" {
					checkMalformedExport(t, rec)
					continue
				}
				checkError(t, rt, rec, http.StatusBadRequest, codeBadJSON)
			}

			if resp, body := f.do(http.MethodGet, "/api/chain/stats", "", nil); resp.StatusCode != http.StatusOK {
				t.Fatalf("after the hostile bodies: %d %s", resp.StatusCode, body)
			}
		})
	}
}
