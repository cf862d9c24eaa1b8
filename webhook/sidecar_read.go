package webhook

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// A submission's body takes one of three forms, all covered whole by the token's body
// hash (the bytes as sent, boundaries and all):
//
//   - a cairn-chain-v2 export alone (application/json or no type), as before;
//   - JSON {"export": <export>, "sidecars": [{"media_type", "name", "content_b64"}]},
//     the export streamed to the verifier as it is read;
//   - multipart/form-data: a part named "export" (the export) and up to
//     sidecar.MaxCount parts named "sidecar", each with its Content-Type and filename.
//
// The export is never held; sidecars stream to the store's temporary files
// (sidecar_intake.go), charged to the submission's budget (submit_budget.go). Limits on
// the sidecars (their number, size, the budgets, and the multipart framing) are refused
// as soon as they are crossed, without reading the rest of the body or finishing the
// token: the body is refused whatever the token says, and hashing up to the body limit
// first is the work an attacker wants the server to do.

// maxFraming bounds what a multipart body may carry besides its parts' content
// (boundaries, part headers), and the JSON form's bytes besides the export.
const maxFraming = 64 << 10

// maxSidecarJSON bounds the JSON form's bytes outside the export: every sidecar's
// base64 and its names, with room for framing.
var maxSidecarJSON = int64(sidecar.MaxCount*base64.StdEncoding.EncodedLen(sidecar.MaxBytes) + maxFraming)

// limitError marks an answer given at once, the body left unread.
type limitError struct{ *apiError }

func tooManySidecars() error {
	return limitError{&apiError{status: http.StatusBadRequest, code: "too_many_sidecars",
		message: fmt.Sprintf("a submission carries at most %d sidecars", sidecar.MaxCount),
		extra:   map[string]any{"max_sidecars": sidecar.MaxCount}}}
}

func sidecarTooLarge(index int) error {
	return limitError{&apiError{status: http.StatusRequestEntityTooLarge, code: "sidecar_too_large",
		message: fmt.Sprintf("sidecar %d is over %d bytes", index, sidecar.MaxBytes),
		extra:   map[string]any{"index": index, "max_bytes": sidecar.MaxBytes}}}
}

func invalidSidecar(index int, why string) error {
	return &apiError{status: http.StatusBadRequest, code: "invalid_sidecar",
		message: fmt.Sprintf("sidecar %d: %s", index, why), extra: map[string]any{"index": index}}
}

func malformedMultipart(why string) error {
	return &apiError{status: http.StatusBadRequest, code: "malformed_multipart", message: "the multipart body is malformed: " + why}
}

// bodyParser reads a submission's body from r (already tee'd into the token's hash),
// its sidecars into in.
type bodyParser func(r io.Reader, in *sidecarIntake) (*protocol.ExportReport, error)

// parserFor picks the body's form from its Content-Type; export-only JSON is read as it
// always was.
func parserFor(contentType string, auth *operatorAuth) (bodyParser, error) {
	opts := protocol.VerifyOptions{PublicKey: currentPub(auth.operator)}
	if mt, params, err := mime.ParseMediaType(contentType); err == nil && mt == "multipart/form-data" {
		if params["boundary"] == "" {
			return nil, malformedMultipart("no boundary in Content-Type")
		}
		return func(r io.Reader, in *sidecarIntake) (*protocol.ExportReport, error) {
			return readMultipart(r, params["boundary"], opts, in)
		}, nil
	}
	return func(r io.Reader, in *sidecarIntake) (*protocol.ExportReport, error) {
		br := bufio.NewReaderSize(r, 512)
		if wrapped(br) {
			return readWrapped(br, opts, in)
		}
		return protocol.VerifyExport(br, opts)
	}, nil
}

// wrapped reports whether the JSON body's first member is "export" or "sidecars" (an
// export has neither), peeking at most the reader's buffer.
func wrapped(br *bufio.Reader) bool {
	head, _ := br.Peek(br.Size())
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	head = bytes.TrimLeft(head[1:], " \t\r\n")
	return bytes.HasPrefix(head, []byte(`"export"`)) || bytes.HasPrefix(head, []byte(`"sidecars"`))
}

// countReader counts the bytes read through it and fails once budget refuses their
// count; the failure is sticky, as a reader that delivers data with an error (the JSON
// decoder, for one) may use the data and read again.
type countReader struct {
	r      io.Reader
	n      int64
	budget func(n int64) error
	err    error
}

func (c *countReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.err = c.budget(c.n); c.err != nil {
		return n, c.err
	}
	return n, err
}

// readMultipart reads a multipart/form-data body: one "export" part, streamed to the
// verifier, and sidecar parts, streamed into in. Framing (everything but the parts'
// content) over maxFraming, a part beyond the export and MaxCount sidecars, or a sidecar
// over MaxBytes is refused at once.
func readMultipart(r io.Reader, boundary string, opts protocol.VerifyOptions, in *sidecarIntake) (*protocol.ExportReport, error) {
	var content int64 // bytes of parts' content delivered
	framing := limitError{&apiError{status: http.StatusRequestEntityTooLarge, code: "multipart_framing_too_large",
		message: fmt.Sprintf("the multipart boundaries and part headers are over %d bytes", maxFraming)}}
	raw := &countReader{r: r, budget: func(n int64) error {
		if n-content > maxFraming+8<<10 { // the multipart reader reads up to 4 KiB ahead
			return framing
		}
		return nil
	}}
	mr := multipart.NewReader(raw, boundary)
	var (
		report *protocol.ExportReport
		sawExp bool
	)
	for parts := 0; ; parts++ {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, budgetOr(err, malformedMultipart(err.Error()))
		}
		if parts >= 1+sidecar.MaxCount {
			return nil, tooManySidecars()
		}
		switch part.FormName() {
		case "export":
			if sawExp {
				return nil, malformedMultipart(`more than one "export" part`)
			}
			sawExp = true
			report, err = protocol.VerifyExport(countInto(part, &content), opts)
			if err != nil {
				return report, budgetOr(err, err)
			}
		case "sidecar":
			if err := in.receive(part.Header.Get("Content-Type"), part.FileName(), countInto(part, &content), true); err != nil {
				return nil, budgetOr(err, err)
			}
		default:
			return nil, malformedMultipart(fmt.Sprintf(`part %d is named %s: want "export" or "sidecar"`, parts, protocol.Quote(part.FormName())))
		}
	}
	if !sawExp {
		return nil, malformedMultipart(`no "export" part`)
	}
	return report, nil
}

// countInto passes r's reads through, adding their length to *n.
func countInto(r io.Reader, n *int64) io.Reader {
	return readFunc(func(p []byte) (int, error) {
		k, err := r.Read(p)
		*n += int64(k)
		return k, err
	})
}

// readFunc is an io.Reader of a function.
type readFunc func(p []byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// wireSidecar is one sidecar of the JSON form.
type wireSidecar struct {
	MediaType  string `json:"media_type" doc:"The content's media type (RFC 2045 syntax); application/octet-stream when empty."`
	Name       string `json:"name" doc:"A file name for display, at most 128 bytes once cleaned; never used as a path."`
	ContentB64 string `json:"content_b64" doc:"The content, standard base64 with padding; at most 1 MiB decoded."`
}

// readWrapped reads the JSON form {"export": ..., "sidecars": [...]}: the export is
// handed to the verifier as a stream (valueEnd finds where its object ends), the rest is
// decoded under maxSidecarJSON bytes.
func readWrapped(br *bufio.Reader, opts protocol.VerifyOptions, in *sidecarIntake) (*protocol.ExportReport, error) {
	bad := func(why string) error {
		return &apiError{status: http.StatusBadRequest, code: "malformed_json", message: "the body is not {\"export\": ..., \"sidecars\": [...]}: " + why}
	}
	overBudget := limitError{&apiError{status: http.StatusRequestEntityTooLarge, code: "sidecar_too_large",
		message: fmt.Sprintf("the sidecars are over %d bytes of JSON in all", maxSidecarJSON), extra: map[string]any{"max_bytes": sidecar.MaxBytes}}}
	var charged int64
	rest := &countReader{r: br, budget: func(n int64) error {
		if n > maxSidecarJSON {
			return overBudget
		}
		// The bytes outside the export are the sidecars' base64, held in memory as the
		// decoder reads them: charged as they arrive.
		if err := in.charge(n - charged); err != nil {
			return err
		}
		charged = n
		return nil
	}}
	dec := json.NewDecoder(rest)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, bad("not an object")
	}
	var (
		report *protocol.ExportReport
		sawExp bool
		sawSc  bool
	)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, budgetOr(err, bad(err.Error()))
		}
		switch t {
		case "export":
			if sawExp {
				return nil, bad(`duplicate member "export"`)
			}
			sawExp = true
			src := bufio.NewReader(io.MultiReader(dec.Buffered(), br))
			if err := skipColon(src); err != nil {
				return nil, bad(err.Error())
			}
			end := &valueEnd{r: src}
			report, err = protocol.VerifyExport(end, opts)
			if err != nil {
				return report, err
			}
			if !end.done {
				return nil, bad("the export is not an object")
			}
			// Go on decoding after the export's object: a decoder of what is left, set
			// back inside the wrapper by a stand-in first member.
			rest.r = io.MultiReader(bytes.NewReader(end.rest), src)
			dec = json.NewDecoder(io.MultiReader(strings.NewReader(`{"export":null`), rest))
			for range 3 {
				if _, err := dec.Token(); err != nil {
					return nil, budgetOr(err, bad(err.Error()))
				}
			}
		case "sidecars":
			if sawSc {
				return nil, bad(`duplicate member "sidecars"`)
			}
			sawSc = true
			if err = decodeSidecars(dec, in); err != nil {
				return nil, budgetOr(err, err)
			}
		default:
			return nil, bad(fmt.Sprintf("unknown member %s", protocol.Quote(fmt.Sprint(t))))
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, budgetOr(err, bad(err.Error()))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("data after the object")
	}
	if !sawExp {
		return nil, bad(`no "export" member`)
	}
	return report, nil
}

// skipColon reads the whitespace and the ':' between a member's key (which the decoder
// returned) and its value.
func skipColon(r *bufio.Reader) error {
	for {
		c, err := r.ReadByte()
		switch {
		case err != nil:
			return err
		case c == ':':
			return nil
		case c != ' ' && c != '\t' && c != '\r' && c != '\n':
			return fmt.Errorf("want ':' after \"export\", got %q", c)
		}
	}
}

// budgetOr is err's limitError if it carries one, else other.
func budgetOr(err, other error) error {
	var le limitError
	if errors.As(err, &le) {
		return le
	}
	return other
}

// decodeSidecars decodes the sidecars array into in, refusing the ninth element and an
// oversized one as soon as it is read.
func decodeSidecars(dec *json.Decoder, in *sidecarIntake) error {
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return budgetOr(err, &apiError{status: http.StatusBadRequest, code: "malformed_json", message: `"sidecars" is not an array`})
	}
	for dec.More() {
		index := len(in.held)
		if index == sidecar.MaxCount {
			return tooManySidecars()
		}
		var w wireSidecar
		dec.DisallowUnknownFields()
		if err := dec.Decode(&w); err != nil {
			return budgetOr(err, invalidSidecar(index, err.Error()))
		}
		if len(w.ContentB64) > base64.StdEncoding.EncodedLen(sidecar.MaxBytes) {
			return sidecarTooLarge(index)
		}
		content, err := base64.StdEncoding.DecodeString(w.ContentB64)
		if err != nil {
			return invalidSidecar(index, "content_b64 is not standard base64")
		}
		if err := in.receive(w.MediaType, w.Name, bytes.NewReader(content), false); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return budgetOr(err, err)
	}
	return nil
}

// valueEnd passes through the bytes of one JSON object and then reports io.EOF, keeping
// what it read past the object's end in rest. It tracks only strings and nesting; the
// verifier reading through it checks the JSON itself.
type valueEnd struct {
	r                 io.Reader
	depth             int
	inString, escaped bool
	started, done     bool
	rest              []byte
}

func (v *valueEnd) Read(p []byte) (int, error) {
	if v.done {
		return 0, io.EOF
	}
	n, err := v.r.Read(p)
	for i := 0; i < n; i++ {
		c := p[i]
		switch {
		case v.inString:
			switch {
			case v.escaped:
				v.escaped = false
			case c == '\\':
				v.escaped = true
			case c == '"':
				v.inString = false
			}
		case c == '"':
			v.inString = true
		case c == '{' || c == '[':
			v.depth++
			v.started = true
		case c == '}' || c == ']':
			v.depth--
			if v.depth <= 0 {
				v.done = v.started && v.depth == 0
				v.rest = append([]byte(nil), p[i+1:n]...)
				if !v.done {
					return i + 1, errors.New("unbalanced JSON")
				}
				return i + 1, nil
			}
		}
	}
	return n, err
}
