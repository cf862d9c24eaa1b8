package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// operation describes a route in the OpenAPI document.
type operation struct {
	id, summary, description string
	params                   []param
	body                     *requestBody
	responses                []response
}

// param is a path or query parameter.
type param struct {
	name, in, description string
	required              bool
	schema                *schema
}

// requestBody is what an operation accepts: a content type (or several) and its schema.
type requestBody struct {
	contentType, description string
	required                 bool
	schema                   *schema
	alternativeContents      []string // more content types with the same schema
}

// response is one documented answer. A nil schema documents an answer without a body
// described here; headers maps header names to their descriptions.
type response struct {
	status              int
	description         string
	contentType         string
	schema              *schema
	headers             map[string]string
	alternativeContents []string // more content types with the same schema
}

// jsonOK documents a JSON answer with status 200.
func jsonOK(description string, s *schema) response {
	return response{status: http.StatusOK, description: description, contentType: "application/json", schema: s}
}

// jsonBody documents a JSON request body.
func jsonBody(description string, required bool, s *schema) *requestBody {
	return &requestBody{contentType: "application/json", description: description, required: required, schema: s}
}

// The OpenAPI 3.0 objects the document is made of, as far as it uses them.
type (
	openAPIDocument struct {
		OpenAPI    string                        `json:"openapi"`
		Info       openAPIInfo                   `json:"info"`
		Servers    []map[string]string           `json:"servers"`
		Tags       []openAPITag                  `json:"tags"`
		Paths      map[string]map[string]*opJSON `json:"paths"`
		Components map[string]map[string]any     `json:"components"`
	}
	openAPIInfo struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	}
	openAPITag struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	opJSON struct {
		OperationID string                  `json:"operationId"`
		Summary     string                  `json:"summary"`
		Description string                  `json:"description,omitempty"`
		Tags        []string                `json:"tags"`
		Parameters  []paramJSON             `json:"parameters,omitempty"`
		RequestBody *bodyJSON               `json:"requestBody,omitempty"`
		Responses   map[string]responseJSON `json:"responses"`
		Security    []map[string][]string   `json:"security,omitempty"`
	}
	paramJSON struct {
		Name        string  `json:"name"`
		In          string  `json:"in"`
		Description string  `json:"description"`
		Required    bool    `json:"required"`
		Schema      *schema `json:"schema"`
	}
	bodyJSON struct {
		Description string               `json:"description,omitempty"`
		Required    bool                 `json:"required"`
		Content     map[string]mediaJSON `json:"content"`
	}
	mediaJSON struct {
		Schema *schema `json:"schema"`
	}
	responseJSON struct {
		Description string                `json:"description"`
		Headers     map[string]headerJSON `json:"headers,omitempty"`
		Content     map[string]mediaJSON  `json:"content,omitempty"`
	}
	headerJSON struct {
		Description string  `json:"description"`
		Schema      *schema `json:"schema"`
	}
)

// bearerScheme names the API key's security scheme in the document.
const bearerScheme = "bearerAuth"

// openAPI builds the document from the route groups; c holds the schemas the groups
// referred to. Operations that need the API key say so only when a key is configured,
// so the document describes this server as it runs.
func (s *Server) openAPI(groups []group, c *components) ([]byte, error) {
	errRef := c.Ref("Error", "An error: every answer other than 2xx has this body.", errorBody{}, nil)
	doc := openAPIDocument{
		OpenAPI: "3.0.3",
		Info: openAPIInfo{
			Title:   "Cairn chain service",
			Version: s.version.Version,
			Description: "The local chain service of Cairn: an operator's tamper-evident HMAC chain of LLM calls, " +
				"kept in SQLite. Read and verify the chain, export signed cairn-chain-v2 segments and verify exports, " +
				"check replayed model outputs against the recorded ones, test the calls for drift, estimate their energy and CO2, " +
				"check calls against policy rules and contain dangerous code, ask several models for consensus, and see which layers run. " +
				"Errors are JSON: {\"error\", \"code\"}.",
		},
		Servers: []map[string]string{{"url": "/"}},
		Paths:   map[string]map[string]*opJSON{},
		Components: map[string]map[string]any{
			"schemas": {},
			"securitySchemes": {bearerScheme: map[string]string{
				"type": "http", "scheme": "bearer",
				"description": "The API key the server was started with (CAIRN_API_KEY), as a bearer token.",
			}},
		},
	}
	for _, g := range groups {
		doc.Tags = append(doc.Tags, openAPITag{Name: g.name, Description: g.description})
		for _, rt := range g.routes {
			op := rt.op.toJSON(g.name, errRef)
			if !rt.public && s.apiKey != "" {
				op.Security = []map[string][]string{{bearerScheme: {}}}
				op.Responses["401"] = responseJSON{
					Description: "The API key is missing or wrong.",
					Headers:     map[string]headerJSON{"WWW-Authenticate": {Description: `Bearer realm="cairn"`, Schema: &schema{Type: "string"}}},
					Content:     map[string]mediaJSON{"application/json": {Schema: errRef}},
				}
			}
			if doc.Paths[rt.path] == nil {
				doc.Paths[rt.path] = map[string]*opJSON{}
			}
			doc.Paths[rt.path][strings.ToLower(rt.method)] = op
		}
	}
	for name, sc := range c.Schemas() {
		doc.Components["schemas"][name] = sc
	}
	return json.MarshalIndent(doc, "", "  ")
}

// toJSON renders o as an Operation Object under tag; every operation also documents its
// error answers as the default response.
func (o *operation) toJSON(tag string, errRef *schema) *opJSON {
	op := &opJSON{OperationID: o.id, Summary: o.summary, Description: o.description, Tags: []string{tag},
		Responses: map[string]responseJSON{"default": {
			Description: "An error (400 malformed input, 403 cross_origin_refused for a browser's request from another origin, 404, 405, 413 body too large, 415, 500, ...).",
			Content:     map[string]mediaJSON{"application/json": {Schema: errRef}},
		}}}
	for _, p := range o.params {
		op.Parameters = append(op.Parameters, paramJSON{Name: p.name, In: p.in, Description: p.description, Required: p.required || p.in == "path", Schema: p.schema})
	}
	if b := o.body; b != nil {
		op.RequestBody = &bodyJSON{Description: b.description, Required: b.required,
			Content: map[string]mediaJSON{b.contentType: {Schema: b.schema}}}
		for _, ct := range b.alternativeContents {
			op.RequestBody.Content[ct] = mediaJSON{Schema: b.schema}
		}
	}
	for _, r := range o.responses {
		rj := responseJSON{Description: r.description}
		if r.contentType != "" {
			rj.Content = map[string]mediaJSON{r.contentType: {Schema: r.schema}}
			for _, ct := range r.alternativeContents {
				rj.Content[ct] = mediaJSON{Schema: r.schema}
			}
		}
		for name, desc := range r.headers {
			if rj.Headers == nil {
				rj.Headers = map[string]headerJSON{}
			}
			rj.Headers[name] = headerJSON{Description: desc, Schema: &schema{Type: "string"}}
		}
		op.Responses[strconv.Itoa(r.status)] = rj
	}
	return op
}

// serveOpenAPI answers GET /openapi.json.
func (s *Server) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(s.openAPIJSON)
}
