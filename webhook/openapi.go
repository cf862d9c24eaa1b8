package webhook

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/internal/openapi"
)

// The OpenAPI 3.0 objects the document is made of, as far as it uses them.
type (
	document struct {
		OpenAPI    string                           `json:"openapi"`
		Info       map[string]string                `json:"info"`
		Paths      map[string]map[string]*operation `json:"paths"`
		Components map[string]any                   `json:"components"`
	}
	operation struct {
		OperationID string               `json:"operationId"`
		Summary     string               `json:"summary"`
		Description string               `json:"description,omitempty"`
		Parameters  []parameter          `json:"parameters,omitempty"`
		RequestBody *content             `json:"requestBody,omitempty"`
		Responses   map[string]*response `json:"responses"`
	}
	parameter struct {
		Name        string          `json:"name"`
		In          string          `json:"in"`
		Description string          `json:"description,omitempty"`
		Required    bool            `json:"required,omitempty"`
		Schema      *openapi.Schema `json:"schema"`
	}
	content struct {
		Required bool                 `json:"required,omitempty"`
		Content  map[string]mediaType `json:"content"`
	}
	response struct {
		Description string               `json:"description"`
		Headers     map[string]any       `json:"headers,omitempty"`
		Content     map[string]mediaType `json:"content,omitempty"`
	}
	mediaType struct {
		Schema *openapi.Schema `json:"schema"`
	}
)

// openAPI builds the document of routes, the schemas of their bodies by reflection.
func openAPI(routes []route, version string) ([]byte, error) {
	c := openapi.NewComponents()
	errRef := c.Ref("Error", "Every error answer: a code, a message, and for some codes more members.", errorBody{}, nil)
	doc := document{
		OpenAPI: "3.0.3",
		Info: map[string]string{"title": "Cairn federation API", "version": version,
			"description": "Register operators and read the federation's state. Errors are JSON: {\"error\", \"message\", ...}."},
		Paths: map[string]map[string]*operation{},
	}
	for _, rt := range routes {
		if rt.page {
			continue
		}
		op := &operation{OperationID: operationID(rt), Summary: rt.summary, Description: rt.description,
			Responses: map[string]*response{}}
		for _, p := range rt.params {
			typ := "string"
			if p.integer {
				typ = "integer"
			}
			op.Parameters = append(op.Parameters, parameter{Name: p.name, In: p.in, Description: p.description,
				Required: p.in == "path", Schema: &openapi.Schema{Type: typ}})
		}
		if rt.request != nil {
			op.RequestBody = &content{Required: true, Content: map[string]mediaType{
				"application/json": {Schema: c.Ref(typeName(rt.request), "", rt.request, nil)}}}
		}
		ok := &response{Description: "OK", Content: map[string]mediaType{"application/json": {Schema: &openapi.Schema{Type: "object"}}}}
		if rt.response != nil {
			ok.Content["application/json"] = mediaType{Schema: c.Ref(typeName(rt.response), "", rt.response, nil)}
		}
		op.Responses["200"] = ok
		if rt.accepted != nil {
			op.Responses["202"] = &response{Description: "Accepted", Content: map[string]mediaType{
				"application/json": {Schema: c.Ref(typeName(rt.accepted), "", rt.accepted, nil)}}}
		}
		for _, e := range append(append([]errorDoc{}, rt.errors...), commonErrors...) {
			key := strconv.Itoa(e.status)
			desc := strings.Join(e.codes, ", ") + ": " + e.description
			if prev := op.Responses[key]; prev != nil {
				desc = prev.Description + " " + desc
			}
			r := &response{Description: desc, Content: map[string]mediaType{"application/json": {Schema: errRef}}}
			if e.status == http.StatusTooManyRequests {
				r.Headers = map[string]any{"Retry-After": map[string]any{
					"description": "Seconds to wait.", "schema": map[string]string{"type": "integer"}}}
			}
			op.Responses[key] = r
		}
		if doc.Paths[rt.path] == nil {
			doc.Paths[rt.path] = map[string]*operation{}
		}
		doc.Paths[rt.path][strings.ToLower(rt.method)] = op
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	doc.Components = map[string]any{"schemas": c.Schemas()}
	return json.MarshalIndent(doc, "", "  ")
}

// operationID names rt from its method and path: get_federation_register_challenge.
func operationID(rt route) string {
	p := strings.NewReplacer("/", "_", "{", "", "}", "", ".", "_").Replace(strings.TrimPrefix(rt.path, "/"))
	return strings.ToLower(rt.method) + "_" + p
}

// typeName is the schema name of v's type: its Go name with the first letter upper-case.
func typeName(v any) string {
	n := reflect.TypeOf(v).Name()
	return strings.ToUpper(n[:1]) + n[1:]
}
