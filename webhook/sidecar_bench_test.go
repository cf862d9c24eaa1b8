package webhook

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// BenchmarkStalledSidecars measures what 30 submissions that send 8 sidecars of 1 MiB
// and then stall mid-export cost the server, over real connections: how many hold their
// sidecars and how many are refused (the replica's budget), and how far the resident set
// rose once garbage is collected (docs/BENCHMARKS.md; the bound is 128 MiB), and the
// sidecar bytes the server's budget counts held. The JSON form's sub-benchmark stalls
// in the middle of its last sidecar's base64, which the decoder holds in memory.
func BenchmarkStalledSidecars(b *testing.B) {
	f := startBenchFederation(b)
	s, err := New(Options{Client: f.mgr.GetClient(), APIReader: f.mgr.GetAPIReader(), Informers: f.mgr.GetCache(), Federation: f.fed,
		RatePerSecond: -1, OperatorRatePerSecond: -1, SidecarDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	const n = 30
	bodies := make([]stalledBody, n)
	for i := range bodies {
		key, err := f.register(fmt.Sprintf("Bench Stalling Org %d %d", i, time.Now().UnixNano()))
		if err != nil {
			b.Fatal(err)
		}
		c := &chain{key: key, secret: []byte(fmt.Sprintf("stalling chain %14d", i))}
		if err := c.grow(3, 32); err != nil {
			b.Fatal(err)
		}
		var export bytes.Buffer
		if err := c.writeExport(&export, 1, 3, time.Now().UTC().Truncate(time.Second), key); err != nil {
			b.Fatal(err)
		}
		bodies[i], err = newStalledBody(key, export.Bytes())
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, form := range []string{"multipart", "json"} {
		b.Run(form, func(b *testing.B) {
			var refused int
			var rise, held int64
			for b.Loop() {
				debug.FreeOSMemory()
				base := vmKB("VmRSS")
				stalls := make([]*stall, n)
				for i := range stalls {
					stalls[i] = startStall(ts.URL, bodies[i], form)
				}
				for _, st := range stalls {
					st.wait()
				}
				refused = settle(s, stalls)
				held = s.inFlight.held().bytes
				debug.FreeOSMemory() // what is live, not garbage a collection would free
				rise = vmKB("VmRSS") - base
				for _, st := range stalls {
					st.cut()
				}
			}
			b.ReportMetric(float64(held)/(1<<20), "held-MB")
			b.ReportMetric(float64(refused), "refused")
			b.ReportMetric(float64(rise)/1024, "extra-RSS-MB")
		})
	}
}

// stalledBody is one operator's submission in both forms, its tokens, and where to stall.
type stalledBody struct {
	multipart, json           []byte
	multipartType             string
	multipartAt, jsonAt       int
	multipartToken, jsonToken string
}

// newStalledBody is key's submission of export with 8 sidecars of 1 MiB, sidecars first.
func newStalledBody(key ed25519.PrivateKey, export []byte) (stalledBody, error) {
	var sb stalledBody
	sidecars := make([]testSidecar, 8)
	for i := range sidecars {
		sidecars[i] = testSidecar{"application/octet-stream", fmt.Sprintf("blob-%d.bin", i), bytes.Repeat([]byte{byte(i + 1)}, 1<<20)}
	}
	var err error
	if sb.multipart, sb.multipartAt, sb.multipartType, err = sidecarsFirst(export, sidecars...); err != nil {
		return sb, err
	}
	sb.multipartAt += 10 // the export's first bytes, then nothing
	sb.json = []byte(`{"sidecars":[`)
	for i, sc := range sidecars {
		if i > 0 {
			sb.json = append(sb.json, ',')
		}
		sb.json = fmt.Appendf(sb.json, `{"media_type":%q,"name":%q,"content_b64":%q}`, sc.mediaType, sc.name, base64.StdEncoding.EncodeToString(sc.content))
	}
	sb.jsonAt = len(sb.json) - 1000 // inside the last sidecar's base64
	sb.json = fmt.Appendf(sb.json, `],"export":%s}`, export)
	for _, t := range []struct {
		body []byte
		tok  *string
	}{{sb.multipart, &sb.multipartToken}, {sb.json, &sb.jsonToken}} {
		tok, err := protocol.SignToken(key, protocol.BodyNonce(time.Now(), t.body))
		if err != nil {
			return sb, err
		}
		*t.tok = "Bearer " + tok
	}
	return sb, nil
}

// stall is one stalled submission in flight.
type stall struct {
	pw       *io.PipeWriter
	sent     chan struct{}
	answered chan struct{}
}

// startStall sends sb in form up to its stalling point, and no further until cut.
func startStall(url string, sb stalledBody, form string) *stall {
	body, at, ct, tok := sb.multipart, sb.multipartAt, sb.multipartType, sb.multipartToken
	if form == "json" {
		body, at, ct, tok = sb.json, sb.jsonAt, "application/json", sb.jsonToken
	}
	pr, pw := io.Pipe()
	st := &stall{pw: pw, sent: make(chan struct{}), answered: make(chan struct{})}
	req, _ := http.NewRequest(http.MethodPost, url+"/federation/submit", pr)
	req.Header.Set("Authorization", tok)
	req.Header.Set("Content-Type", ct)
	req.ContentLength = int64(len(body))
	go func() {
		defer close(st.answered)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		_ = pr.CloseWithError(errors.New("answered"))
	}()
	go func() {
		if _, err := pw.Write(body[:at]); err == nil {
			close(st.sent)
		}
	}()
	return st
}

// wait returns once the prefix is sent or the server answered.
func (st *stall) wait() {
	select {
	case <-st.sent:
	case <-st.answered:
	}
}

// settle waits until what the server holds has stopped changing (it has read what the
// kernel buffered, and answered what it refused) and every stall is answered or held
// there, and returns how many were answered.
func settle(s *Server, stalls []*stall) int {
	var last usage
	for {
		time.Sleep(time.Second)
		refused := 0
		for _, st := range stalls {
			if st.refused() {
				refused++
			}
		}
		now := s.inFlight.held()
		if now == last && refused+now.requests == len(stalls) {
			return refused
		}
		last = now
	}
}

// refused reports whether the server has answered.
func (st *stall) refused() bool {
	select {
	case <-st.answered:
		return true
	default:
		return false
	}
}

// cut ends the body, as a client that goes away.
func (st *stall) cut() {
	_ = st.pw.CloseWithError(errors.New("client went away"))
	<-st.answered
}
