package client

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"testing"
)

// TestSubmitWithSidecarsSendsOneBoundMultipartBody: the export (streamed from a file)
// and the sidecars go as one multipart/form-data body, sent whole on each attempt, the
// token binding all of it (the fake checks it over the body it read).
func TestSubmitWithSidecarsSendsOneBoundMultipartBody(t *testing.T) {
	key, id := testKey(4), testID(4)
	export := bytes.Repeat([]byte(`{"format":"cairn-chain-v2"}`), 3000)
	sidecars := []Sidecar{
		{MediaType: "application/vnd.in-toto+json", Name: "statement.json", Content: []byte(`{"_type":"x"}`)},
		{Name: `odd "name".bin`, Content: []byte{0, 1, 2, 0xff}},
	}
	attempts := 0
	f := newFake(t, key, id, func(w http.ResponseWriter, r *http.Request, body []byte) {
		attempts++
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/form-data" || r.ContentLength != int64(len(body)) {
			t.Fatalf("attempt %d: Content-Type %q, Content-Length %d of %d bytes", attempts, r.Header.Get("Content-Type"), r.ContentLength, len(body))
		}
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		var got []Sidecar
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			content, _ := io.ReadAll(part)
			switch part.FormName() {
			case "export":
				if !bytes.Equal(content, export) {
					t.Errorf("export part of %d bytes, want %d", len(content), len(export))
				}
			case "sidecar":
				got = append(got, Sidecar{MediaType: part.Header.Get("Content-Type"), Name: part.FileName(), Content: content})
			}
		}
		if len(got) != 2 || got[0].MediaType != sidecars[0].MediaType || got[1].MediaType != "application/octet-stream" ||
			got[1].Name != sidecars[1].Name || !bytes.Equal(got[1].Content, sidecars[1].Content) {
			t.Errorf("sidecars received: %+v", got)
		}
		answerAfterOneRetry(w, attempts)
	})
	c := newTestClient(t, f, key, id, nil)
	fh := exportFile(t, export)
	res, err := c.SubmitWithSidecars(context.Background(), fh, int64(len(export)), sidecars)
	if err != nil || res.SubmissionID != "sub-1" || attempts != 2 {
		t.Fatalf("SubmitWithSidecars: %+v, %v after %d attempts", res, err, attempts)
	}
	if _, err := c.SubmitWithSidecars(context.Background(), fh, int64(len(export)), make([]Sidecar, 9)); err == nil {
		t.Error("nine sidecars: no error")
	}
	if _, err := c.SubmitWithSidecars(context.Background(), fh, int64(len(export)), []Sidecar{{Content: make([]byte, 1<<20+1)}}); err == nil {
		t.Error("a 1 MiB + 1 byte sidecar: no error")
	}
	if _, err := c.SubmitWithSidecars(context.Background(), fh, int64(len(export))+1, sidecars); err == nil {
		t.Error("a file shorter than its size: no error")
	}
}
