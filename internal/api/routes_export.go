package api

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// maxPublicKeyBytes caps the public_key field of an export verification: a PEM key is
// about 120 bytes.
const maxPublicKeyBytes = 16 << 10

// exportRequest is the body of POST /api/export.
type exportRequest struct {
	FirstSeq   int64 `json:"first_seq,omitempty" doc:"first seq to export; absent or 0: 1"`
	LastSeq    int64 `json:"last_seq,omitempty" doc:"last seq to export; absent or 0: the chain's last"`
	HeaderOnly bool  `json:"header_only,omitempty" doc:"leave the entries out: what the federation needs"`
}

// exportVerifyResult is the answer of POST /api/export/verify.
type exportVerifyResult struct {
	Valid           bool                   `json:"valid" doc:"every check that could run passed; unauthenticated lists the header members no check covered"`
	Reason          *string                `json:"reason" doc:"why the export fails, for people, as documented (the same text as error); null when valid"`
	ReasonCode      string                 `json:"reason_code,omitempty" doc:"why the export fails, for programs: an entry reason, or header_mismatch, signature, key_not_trusted, no_trusted_key, malformed"`
	Error           string                 `json:"error,omitempty" doc:"the failure, for people"`
	EntriesCount    *int64                 `json:"entries_count" doc:"entries the export carried, as documented; null when it carried none (a header-only export) or was not read"`
	HeadHash        *string                `json:"head_hash" doc:"the export's last_hmac_hash, the chain's head it was taken at, as documented; null when the header was not read"`
	Format          *string                `json:"format" doc:"the export's format, as documented; null when the header was not read"`
	Seq             int64                  `json:"seq,omitempty" doc:"seq of the entry that failed"`
	Field           string                 `json:"field,omitempty" doc:"the header member that does not match"`
	Entries         int64                  `json:"entries" doc:"entries the export carried; 0 for a header-only export"`
	HMACsChecked    bool                   `json:"hmacs_checked" doc:"whether the export carried entries and every hmac_hash and chain_signature were recomputed; false for a header-only export, which has no hmac_hash"`
	ChainSigChecked bool                   `json:"chain_signature_checked" doc:"whether chain_signature (over last_hmac_hash and entry_count) was recomputed with the secret"`
	KeyTrusted      bool                   `json:"key_trusted" doc:"whether the export was signed by the public_key sent with it"`
	Checks          []protocol.Check       `json:"checks,omitempty" doc:"the checks run, in order: entries, hmacs, header_vs_entries, chain_signature, envelope_signature, trusted_key; a skipped one says why"`
	Authenticated   []string               `json:"authenticated,omitempty" doc:"header members a trusted key or the secret vouches for, when valid"`
	Unauthenticated []string               `json:"unauthenticated,omitempty" doc:"header members nothing the caller trusts vouches for, when valid (with the secret alone: exported_at; for a header-only export also first_seq, first_prev_hash and entries_root)"`
	SecretFrom      string                 `json:"secret_from" enum:"header,server,none" doc:"where the HMAC secret came from: the X-Secret-Hex header, the server's own (use_server_secret=true), or none"`
	Note            string                 `json:"note,omitempty" doc:"what was not checked and why, when HMACs were not"`
	Header          *protocol.ExportHeader `json:"header,omitempty" doc:"the export's header, once read"`
}

// Reasons an export fails that are not an entry's (see protocol's errors).
const (
	reasonHeaderMismatch = "header_mismatch"
	reasonSignature      = "signature"
	reasonKeyNotTrusted  = "key_not_trusted"
	reasonNoTrustedKey   = "no_trusted_key"
	reasonMalformed      = "malformed"
)

func (s *Server) exportRoutes(c *components) group {
	// Registered first: ExportVerifyResult refers to it.
	c.Ref("ExportHeader", "The members of a cairn-chain-v2 export that its signature covers.", protocol.ExportHeader{}, fieldDocs{
		"format":          {Description: "the export format", Example: protocol.ExportFormat},
		"version":         {Description: "the format's version", Example: protocol.ExportVersion},
		"exported_at":     {Description: "RFC 3339 UTC, whole seconds", Example: "2026-11-21T12:30:00Z"},
		"entry_count":     {Description: "entries in the chain through last_seq", Example: 100},
		"first_seq":       {Description: "seq of the first exported entry", Example: 1},
		"last_seq":        {Description: "seq of the last exported entry", Example: 100},
		"first_prev_hash": {Description: "prev_hash of the first exported entry", Example: protocol.GenesisPrevHash},
		"last_hmac_hash":  {Description: "hmac_hash of the last exported entry", Example: "7e1d3c5b9a2f4e6d8c0b1a3f5e7d9c2b4a6f8e0d1c3b5a7f9e2d4c6b8a0f1e3d"},
		"chain_signature": {Description: `hex HMAC-SHA256(secret, "chain:" ‖ last_hmac_hash ‖ ":" ‖ entry_count)`, Example: "d41c7f0a9e3b5c2d8f6a1e4b7c0d3f9a2e5b8c1d4f7a0e3b6c9d2f5a8e1b4c7d"},
		"entries_root":    {Description: "RFC 6962 Merkle root over the exported entries", Example: "5a8e1b4c7dd41c7f0a9e3b5c2d8f6a1e4b7c0d3f9a2e5b8c1d4f7a0e3b6c9d2f"},
	})
	req := c.Ref("ExportRequest", "What to export. Every member is optional.", exportRequest{}, nil)
	res := c.Ref("ExportVerifyResult", "The verdict on an export.", exportVerifyResult{}, fieldDocs{
		"entries_count": {Nullable: true, Example: 12}, "head_hash": {Nullable: true}, "format": {Nullable: true, Example: protocol.ExportFormat},
		"reason":      {Nullable: true, Example: nil},
		"reason_code": {Enum: append(append([]string{}, entryReasons...), reasonHeaderMismatch, reasonSignature, reasonKeyNotTrusted, reasonNoTrustedKey, reasonMalformed)},
	})
	upload := &schema{Type: "object", Required: []string{"file"}, Properties: map[string]*schema{
		"public_key": {Type: "string", Description: "optional: the operator's public key (PEM) the export must be signed by; send it before file"},
		"file":       {Type: "string", Format: "binary", Description: "the export"},
	}}
	return group{name: "export", description: "Signed cairn-chain-v2 exports of the chain, and their verification.", routes: []route{
		{method: http.MethodPost, path: "/api/export", handler: http.HandlerFunc(s.export), op: operation{
			id: "exportChain", summary: "Export the chain",
			description: "Streams a signed cairn-chain-v2 export of the chain or a window of it, as a file download, signed with the server's key. " +
				"Every entry is verified on the way; a chain that does not verify is refused with 409 chain_invalid. 409 no_signing_key: the server was started without a signing key. " +
				"400 bad_parameter: the window starts after seq 1 but holds entries imported from BIJOTEL, whose bridge record (entry 1) it could not show; export from seq 1, or header-only.",
			body: jsonBody("What to export; an empty body exports the whole chain.", false, req),
			responses: []response{{status: http.StatusOK, description: "The export, as an attachment.", contentType: "application/json",
				schema:  &schema{Type: "object", Description: "a cairn-chain-v2 export (docs/PROTOCOL.md)"},
				headers: map[string]string{"Content-Disposition": `attachment; filename="cairn-chain-<first>-<last>.json"`}}}}},
		{method: http.MethodPost, path: "/api/export/verify", handler: http.HandlerFunc(s.verifyExport), op: operation{
			id: "verifyExport", summary: "Verify an export",
			description: "Reads an uploaded export as a stream and checks every body hash, link, the Merkle root and the signature; with an HMAC secret also every HMAC and chain_signature. " +
				"The secret is the X-Secret-Hex header's, or the server's own when the request asks for it with use_server_secret=true; without either only the public-key checks run, hmacs_checked is false and note says so. " +
				"No answer carries a value the server recomputed: a failure names the check and the seq, never the HMAC, hash or signature that would have passed. " +
				"An export that fails is still a 200 answer, with valid false and the reason. 409 no_secret: use_server_secret=true, and the server has no secret.",
			params: []param{
				{name: "X-Secret-Hex", in: "header", description: "the chain's HMAC secret in hex (at least 16 bytes), to check HMACs with", schema: &schema{Type: "string"}},
				{name: useServerSecretParam, in: "query", description: "true: check HMACs and chain_signature with the server's own secret; absent or false: not (send X-Secret-Hex or nothing)", schema: &schema{Type: "boolean", Default: false}},
			},
			body: &requestBody{contentType: "multipart/form-data", description: "The export in the field file.", required: true, schema: upload},
			responses: []response{
				jsonOK("The verdict.", res),
			}}},
	}}
}

// export answers POST /api/export with a streamed export.
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	var req exportRequest
	if err := decodeJSON(w, r, &req, true); err != nil {
		s.writeRequestError(w, r, "export", err)
		return
	}
	if s.signingKey == nil {
		writeError(w, http.StatusConflict, codeNoSigningKey, "the server has no signing key: start cairn serve with --sign-key")
		return
	}
	from, to, err := s.checkWindow(r, req.FirstSeq, req.LastSeq)
	if err != nil {
		s.writeRequestError(w, r, "export", err)
		return
	}
	if to == 0 {
		writeError(w, http.StatusConflict, codeEmptyChain, "the chain is empty: there is nothing to export")
		return
	}
	out := &deferredWriter{w: w, start: func(h http.Header) {
		h.Set("Content-Type", "application/json")
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="cairn-chain-%d-%d.json"`, from, to))
	}}
	// To is fixed now, so the export and its file name agree while the chain grows.
	h, err := s.store.Export(r.Context(), out, store.ExportOptions{From: from, To: to, Key: s.signingKey, HeaderOnly: req.HeaderOnly})
	var ee *protocol.EntryError
	switch {
	case err == nil:
		s.log.InfoContext(r.Context(), "Exported chain", "firstSeq", h.FirstSeq, "lastSeq", h.LastSeq, "entryCount", h.EntryCount)
	case out.started:
		// The status and part of the export are sent: cut the connection, so the client
		// sees a broken transfer rather than a file that merely ends early.
		s.log.ErrorContext(r.Context(), "Export failed after it started", "firstSeq", from, "lastSeq", to, "err", err)
		panic(http.ErrAbortHandler)
	case errors.Is(err, store.ErrImportedWindow):
		writeError(w, http.StatusBadRequest, codeBadParameter, err.Error())
	case errors.As(err, &ee):
		writeError(w, http.StatusConflict, codeChainInvalid, "the chain does not verify, so it is not exported: "+err.Error())
	case errors.Is(err, store.ErrNoSecret):
		writeError(w, http.StatusConflict, codeNoSecret, "the server was started without the chain's HMAC secret, which signs exports")
	default:
		s.internalError(w, r, "export", err)
	}
}

// deferredWriter sends the status and headers only with the first byte of the body, so
// that an export that fails before writing anything is still answered with an error.
type deferredWriter struct {
	w       http.ResponseWriter
	start   func(http.Header)
	started bool
}

func (d *deferredWriter) Write(p []byte) (int, error) {
	if !d.started {
		d.started = true
		d.start(d.w.Header())
		d.w.WriteHeader(http.StatusOK)
	}
	return d.w.Write(p)
}

// verifyExport answers POST /api/export/verify.
func (s *Server) verifyExport(w http.ResponseWriter, r *http.Request) {
	res := exportVerifyResult{SecretFrom: "none"}
	opts, err := s.exportSecret(r, &res)
	if err != nil {
		s.writeRequestError(w, r, "verify export", err)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		writeError(w, http.StatusUnsupportedMediaType, codeUnsupportedMedia, "send the export as multipart/form-data, in the field file")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxUpload)
	parts, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, codeBadRequest, "read the form: "+err.Error())
		return
	}
	for {
		part, err := parts.NextPart()
		if err != nil {
			s.writeRequestError(w, r, "verify export", formError(err))
			return
		}
		switch part.FormName() {
		case "public_key":
			if opts.PublicKey, err = readPublicKey(part); err != nil {
				s.writeRequestError(w, r, "verify export", err)
				return
			}
		case "file":
			report, err := protocol.VerifyExport(part, opts)
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeError(w, http.StatusRequestEntityTooLarge, codeBodyTooLarge, fmt.Sprintf("the upload is over %d bytes", tooLarge.Limit))
				return
			}
			res.fill(report, err)
			writeJSON(w, http.StatusOK, res)
			return
		default:
			writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("unknown form field %s: send file, and optionally public_key before it", protocol.Quote(part.FormName())))
			return
		}
	}
}

// useServerSecretParam is the query parameter by which a request to POST
// /api/export/verify asks for the server's own secret.
const useServerSecretParam = "use_server_secret"

// noHMACsNote is the note of a verification that checked no HMAC.
const noHMACsNote = "HMACs and chain_signature were not checked: send the secret in X-Secret-Hex, or ask for the server's with " + useServerSecretParam + "=true"

// headerOnlyNote is the note of a header-only export checked with the secret alone.
const headerOnlyNote = "header-only export: no entries, so no hmac_hash to check; chain_signature was checked and covers last_hmac_hash and entry_count; exported_at, first_seq, first_prev_hash and entries_root are not authenticated: send public_key to check the signature over them"

// headerOnlyTrustedNote is the note of a header-only export checked with the secret and
// a trusted key.
const headerOnlyTrustedNote = "header-only export: no entries, so no hmac_hash to check; chain_signature was checked, and the trusted key's signature covers every header member"

// exportSecret reads the secret to check HMACs with: X-Secret-Hex's, or the server's
// when the request asks for it with use_server_secret=true, else none. The server's
// secret is never used unasked: a caller who can upload exports must not have the
// server vouch for HMACs it did not mean to check.
func (s *Server) exportSecret(r *http.Request, res *exportVerifyResult) (protocol.VerifyOptions, error) {
	var opts protocol.VerifyOptions
	useServer := false
	if text := r.URL.Query().Get(useServerSecretParam); text != "" {
		var err error
		if useServer, err = strconv.ParseBool(text); err != nil {
			return opts, badRequest(codeBadParameter, "%s %s is not true or false", useServerSecretParam, protocol.Quote(text))
		}
	}
	text := strings.TrimSpace(r.Header.Get("X-Secret-Hex"))
	switch {
	case text != "" && useServer:
		return opts, badRequest(codeBadParameter, "send X-Secret-Hex or %s=true, not both", useServerSecretParam)
	case text != "":
		secret, err := hex.DecodeString(text)
		if err != nil { // hex's error would quote a character of the secret
			return opts, badRequest(codeBadParameter, "X-Secret-Hex is not hex (0-9, a-f, an even number of digits)")
		}
		if len(secret) < protocol.MinSecretBytes {
			return opts, badRequest(codeBadParameter, "X-Secret-Hex is %d bytes, want at least %d (%d hex digits)", len(secret), protocol.MinSecretBytes, 2*protocol.MinSecretBytes)
		}
		opts.Secret, res.SecretFrom = secret, "header"
	case useServer && s.secret == nil:
		return opts, &requestError{status: http.StatusConflict, code: codeNoSecret,
			err: fmt.Errorf("%s=true, but the server was started without the chain's HMAC secret", useServerSecretParam)}
	case useServer:
		opts.Secret, res.SecretFrom = s.secret, "server"
	}
	return opts, nil
}

// readPublicKey reads the public_key form field.
func readPublicKey(part io.Reader) (ed25519.PublicKey, error) {
	text, err := io.ReadAll(io.LimitReader(part, maxPublicKeyBytes+1))
	if err != nil {
		return nil, formError(err)
	}
	if len(text) > maxPublicKeyBytes {
		return nil, badRequest(codeBadParameter, "public_key is over %d bytes", maxPublicKeyBytes)
	}
	key, err := protocol.ParsePublicKeyPEM(text)
	if err != nil {
		return nil, badRequest(codeBadParameter, "public_key: %v", err)
	}
	return key, nil
}

// formError explains an error reading the multipart form.
func formError(err error) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return &requestError{status: http.StatusRequestEntityTooLarge, code: codeBodyTooLarge, err: fmt.Errorf("the upload is over %d bytes", tooLarge.Limit)}
	case errors.Is(err, io.EOF):
		return badRequest(codeBadRequest, "the form has no field file: send the export in it")
	}
	return badRequest(codeBadRequest, "read the form: %v", err)
}

// fill records VerifyExport's verdict.
func (res *exportVerifyResult) fill(report *protocol.ExportReport, err error) {
	if report != nil {
		res.Entries, res.HMACsChecked, res.KeyTrusted, res.Header = report.Entries, report.HMACsChecked, report.KeyTrusted, report.Header
		res.ChainSigChecked, res.Checks = report.ChainSignatureChecked, report.Checks
		res.Authenticated, res.Unauthenticated = report.Authenticated, report.Unauthenticated
		if report.Entries > 0 {
			res.EntriesCount = &report.Entries
		}
		if h := report.Header; h != nil {
			res.HeadHash, res.Format = &h.LastHMACHash, &h.Format
		}
	}
	switch {
	case res.HMACsChecked:
	case res.SecretFrom != "none" && report != nil && report.Entries == 0:
		res.Note = headerOnlyNote
		if res.KeyTrusted {
			res.Note = headerOnlyTrustedNote
		}
	default:
		res.Note = noHMACsNote
	}
	res.Valid = err == nil
	if err == nil {
		return
	}
	res.Error = err.Error()
	res.Reason = &res.Error
	var ee *protocol.EntryError
	var me *protocol.MismatchError
	switch {
	case errors.As(err, &ee):
		res.ReasonCode, res.Seq = ee.Reason, ee.Seq
	case errors.As(err, &me):
		res.ReasonCode, res.Field = reasonHeaderMismatch, me.Field
	case errors.Is(err, protocol.ErrSignature):
		res.ReasonCode = reasonSignature
	case errors.Is(err, protocol.ErrKeyNotTrusted):
		res.ReasonCode = reasonKeyNotTrusted
	case errors.Is(err, protocol.ErrNoTrustedKey):
		res.ReasonCode = reasonNoTrustedKey
	default:
		res.ReasonCode = reasonMalformed
	}
}
