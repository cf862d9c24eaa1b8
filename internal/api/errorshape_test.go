package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestErrorsHaveTheFederationsShape checks the one error shape both APIs answer: error is
// the code, message the text for people, and code (the chain service's earlier member)
// the code again. The message is written as it is: "<" stays "<", not "\u003c".
func TestErrorsHaveTheFederationsShape(t *testing.T) {
	f := newFixture(t, 1, nil)
	resp, body := f.do(http.MethodPost, "/api/chain/verify", "text/<b>", strings.NewReader("{}"))
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var got map[string]any
	decode(t, body, &got)
	if got["error"] != codeUnsupportedMedia || got["code"] != codeUnsupportedMedia {
		t.Errorf("error %v and code %v, want both %q: %s", got["error"], got["code"], codeUnsupportedMedia, body)
	}
	msg, _ := got["message"].(string)
	if !strings.Contains(msg, "text/<b>") {
		t.Errorf("message %q does not name the content type", msg)
	}
	if len(got) != 3 {
		t.Errorf("members %v, want error, message and code", got)
	}
	if bytes.Contains(body, []byte(`\u003c`)) || !bytes.Contains(body, []byte("text/<b>")) {
		t.Errorf("the message is HTML-escaped: %s", body)
	}
	// Answers other than errors are not HTML-escaped either.
	var buf bytes.Buffer
	rec := &recordingWriter{header: http.Header{}, body: &buf}
	writeJSON(rec, http.StatusOK, map[string]string{"text": "a <b> & c"})
	var back map[string]string
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back["text"] != "a <b> & c" ||
		!strings.Contains(buf.String(), "a <b> & c") {
		t.Errorf("writeJSON wrote %s", buf.String())
	}
}

// recordingWriter is the least http.ResponseWriter that keeps the body.
type recordingWriter struct {
	header http.Header
	body   *bytes.Buffer
	status int
}

func (w *recordingWriter) Header() http.Header         { return w.header }
func (w *recordingWriter) Write(p []byte) (int, error) { return w.body.Write(p) }
func (w *recordingWriter) WriteHeader(status int)      { w.status = status }
