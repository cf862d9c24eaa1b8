package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// Sidecar is an attestation sidecar sent with an export (docs/OPERATIONS.md, "POST
// /federation/submit"): an in-toto statement, a model card, an evaluation report. The
// federation stores and lists it; it does not verify it.
type Sidecar struct {
	// MediaType is the content's media type; empty means application/octet-stream.
	MediaType string
	// Name is a file name for display (the federation keeps its last element, cleaned).
	Name string
	// Content is at most sidecar.MaxBytes.
	Content []byte
}

// SubmitWithSidecars posts the export read from body (size bytes from its start, as
// SubmitStream: never held in memory) with up to sidecar.MaxCount sidecars, as one
// multipart/form-data request whose every byte the bearer token binds. Without sidecars
// it is SubmitStream.
func (c *Client) SubmitWithSidecars(ctx context.Context, body io.ReadSeeker, size int64, sidecars []Sidecar) (*SubmitResult, error) {
	if len(sidecars) == 0 {
		return c.SubmitStream(ctx, body, size)
	}
	if len(sidecars) > sidecar.MaxCount {
		return nil, fmt.Errorf("client: %d sidecars, at most %d", len(sidecars), sidecar.MaxCount)
	}
	head, tail, contentType, err := multipartFrame(sidecars)
	if err != nil {
		return nil, err
	}
	stream := &seqReadSeeker{parts: []io.ReadSeeker{bytes.NewReader(head), io.NewSectionReader(readerAt{body}, 0, size), bytes.NewReader(tail)}}
	total := int64(len(head)) + size + int64(len(tail))
	h := sha256.New()
	n, err := io.Copy(h, stream)
	if err != nil {
		return nil, fmt.Errorf("client: hash the submission: %w", err)
	}
	if n != total {
		return nil, fmt.Errorf("client: the export has %d bytes, want %d", n-int64(len(head))-int64(len(tail)), size)
	}
	req := request{method: http.MethodPost, path: "/federation/submit", stream: stream, size: total, auth: authOperator, contentType: contentType}
	h.Sum(req.digest[:0])
	var out SubmitResult
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// multipartFrame is what comes before the export (the first boundary and the export
// part's header) and after it (the sidecar parts and the closing boundary).
func multipartFrame(sidecars []Sidecar) (head, tail []byte, contentType string, err error) {
	var hb, tb bytes.Buffer
	sw := &switchWriter{w: &hb}
	mw := multipart.NewWriter(sw)
	if _, err := mw.CreateFormFile("export", "export.json"); err != nil {
		return nil, nil, "", err
	}
	sw.w = &tb
	for i, sc := range sidecars {
		if len(sc.Content) > sidecar.MaxBytes {
			return nil, nil, "", fmt.Errorf("client: sidecar %d (%s) has %d bytes, over %d", i, sc.Name, len(sc.Content), sidecar.MaxBytes)
		}
		mt, err := sidecar.CheckMediaType(sc.MediaType)
		if err != nil {
			return nil, nil, "", fmt.Errorf("client: sidecar %d (%s): %w", i, sc.Name, err)
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="sidecar"; filename="%s"`, quoteEscaper.Replace(sc.Name)))
		h.Set("Content-Type", mt)
		part, err := mw.CreatePart(h)
		if err != nil {
			return nil, nil, "", err
		}
		if _, err := part.Write(sc.Content); err != nil {
			return nil, nil, "", err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, nil, "", err
	}
	return hb.Bytes(), tb.Bytes(), mw.FormDataContentType(), nil
}

// quoteEscaper escapes a file name for a quoted Content-Disposition parameter, as
// mime/multipart does.
var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "")

// switchWriter writes to w, which can be changed between writes.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// readerAt reads a ReadSeeker at an offset, seeking it there (not for concurrent use).
type readerAt struct{ r io.ReadSeeker }

func (r readerAt) ReadAt(p []byte, off int64) (int, error) {
	if _, err := r.r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.ReadFull(r.r, p)
}

// seqReadSeeker reads its parts one after another; it seeks only back to its start.
type seqReadSeeker struct {
	parts []io.ReadSeeker
	i     int
}

func (s *seqReadSeeker) Read(p []byte) (int, error) {
	for s.i < len(s.parts) {
		n, err := s.parts[s.i].Read(p)
		if errors.Is(err, io.EOF) {
			s.i++
			err = nil
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.EOF
}

func (s *seqReadSeeker) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekStart {
		return 0, errors.New("client: the submission body seeks only to its start")
	}
	for _, p := range s.parts {
		if _, err := p.Seek(0, io.SeekStart); err != nil {
			return 0, err
		}
	}
	s.i = 0
	return 0, nil
}

// Sidecar fetches the sidecar of digest (GET /federation/sidecar/{sha256}) and checks
// its content against the digest: the federation is not trusted with it.
func (c *Client) Sidecar(ctx context.Context, digest string) ([]byte, error) {
	if !sidecar.ValidDigest(digest) {
		return nil, fmt.Errorf("client: sidecar digest %q: %w", digest, sidecar.ErrInvalidDigest)
	}
	content, err := c.send(ctx, request{method: http.MethodGet, path: "/federation/sidecar/" + digest, auth: authNone})
	if err != nil {
		return nil, err
	}
	if sidecar.Digest(content) != digest {
		return nil, fmt.Errorf("client: the federation's sidecar %s: %w", digest, sidecar.ErrCorrupt)
	}
	return content, nil
}
