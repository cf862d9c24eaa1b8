package webhook

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// testSidecar is a sidecar as a client sends it.
type testSidecar struct {
	mediaType, name string
	content         []byte
}

// multipartSubmission is export and sidecars as multipart/form-data, and its Content-Type.
func multipartSubmission(export []byte, sidecars ...testSidecar) ([]byte, string) {
	GinkgoHelper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	part, err := mw.CreateFormFile("export", "export.json")
	Expect(err).NotTo(HaveOccurred())
	_, _ = part.Write(export)
	for _, sc := range sidecars {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="sidecar"; filename="`+sc.name+`"`)
		if sc.mediaType != "" {
			h.Set("Content-Type", sc.mediaType)
		}
		part, err := mw.CreatePart(h)
		Expect(err).NotTo(HaveOccurred())
		_, _ = part.Write(sc.content)
	}
	Expect(mw.Close()).To(Succeed())
	return buf.Bytes(), mw.FormDataContentType()
}

// jsonSubmission is export and sidecars in the JSON form.
func jsonSubmission(export []byte, sidecars ...testSidecar) []byte {
	GinkgoHelper()
	type wire struct {
		MediaType  string `json:"media_type"`
		Name       string `json:"name"`
		ContentB64 string `json:"content_b64"`
	}
	ws := make([]wire, 0, len(sidecars))
	for _, sc := range sidecars {
		ws = append(ws, wire{sc.mediaType, sc.name, base64.StdEncoding.EncodeToString(sc.content)})
	}
	b, err := json.Marshal(map[string]any{"export": json.RawMessage(export), "sidecars": ws})
	Expect(err).NotTo(HaveOccurred())
	return b
}

// submitBody posts body with contentType and the Authorization header authz.
func submitBody(s http.Handler, authz, contentType string, body io.Reader) answer {
	GinkgoHelper()
	req := httptest.NewRequest(http.MethodPost, "/federation/submit", body).WithContext(ctx)
	req.Header.Set("Authorization", authz)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return record(s, req)
}

// sidecarFiles lists the files under dir, relative to it.
func sidecarFiles(dir string) []string {
	GinkgoHelper()
	var files []string
	Expect(filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, rel)
		}
		return err
	})).To(Succeed())
	return files
}
