package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// apiDocPath is the chain service's documented API: each route with a request and a
// response example, captured from `cairn serve` over apiDocChain.
const (
	apiDocPath  = "../../../docs/API.md"
	apiDocChain = "testdata/api-chain.jsonl"
	// apiDocSecretHex is the secret the documented chain is sealed with.
	apiDocSecretHex = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
)

// apiExample is one example of docs/API.md.
type apiExample struct {
	method, target string // target is the path with its query
	line           int    // of the heading
	request        []byte // nil: no body
	status         int
	response       []byte
}

func (e apiExample) String() string {
	return fmt.Sprintf("%s %s (API.md:%d)", e.method, e.target, e.line)
}

var (
	exampleHeading = regexp.MustCompile(`^### (GET|POST|PUT|PATCH|DELETE) (/\S*)$`)
	responseLabel  = regexp.MustCompile(`^Response \((\d{3})\):$`)
)

// parseAPIDoc reads the examples of docs/API.md: a heading "### METHOD /path?query", an
// optional "Request:" JSON block, then a "Response (NNN):" JSON block.
func parseAPIDoc(t *testing.T, path string) []apiExample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []apiExample
	var cur *apiExample
	var block *[]byte // the block being read, nil outside one
	want := ""        // "request" or "response" for the next block
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case block != nil && line == "```":
			block = nil
		case block != nil:
			*block = append(append(*block, line...), '\n')
		case exampleHeading.MatchString(line):
			m := exampleHeading.FindStringSubmatch(line)
			out = append(out, apiExample{method: m[1], target: m[2], line: n})
			cur, want = &out[len(out)-1], ""
		case cur == nil:
		case line == "Request:":
			want = "request"
		case responseLabel.MatchString(line):
			cur.status, _ = strconv.Atoi(responseLabel.FindStringSubmatch(line)[1])
			want = "response"
		case line == "```json" && want == "request":
			cur.request, block, want = []byte{}, &cur.request, ""
		case line == "```json" && want == "response":
			cur.response, block, want = []byte{}, &cur.response, ""
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, e := range out {
		if e.status == 0 || e.response == nil {
			t.Errorf("%s: no \"Response (NNN):\" JSON block", e)
		}
	}
	return out
}

// TestAPIDocExamples replays every example of docs/API.md against `cairn serve` over the
// chain the examples were captured from, and checks the status and that the answer has
// every documented member, recursively, with the documented JSON type. Then it checks
// that /openapi.json describes each of those members with a type that fits.
func TestAPIDocExamples(t *testing.T) {
	examples := parseAPIDoc(t, apiDocPath)
	if len(examples) == 0 {
		t.Fatal("docs/API.md has no examples")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	if out, err := runCairn(t, "chain", "seal", "--db", db, "--file", apiDocChain, "--secret-hex", apiDocSecretHex); err != nil {
		t.Fatalf("seal the documented chain: %v\n%s", err, out)
	}
	base, _ := startServe(t, t.Context(), "--db", db, "--secret-hex", apiDocSecretHex)
	openapi := fetchJSON(t, base+"/openapi.json")
	routes := map[string]bool{}
	for _, e := range examples {
		t.Run(fmt.Sprintf("%s %s", e.method, e.target), func(t *testing.T) {
			routes[e.method+" "+templateOf(openapi, strings.SplitN(e.target, "?", 2)[0])] = true
			var body io.Reader
			if e.request != nil {
				body = bytes.NewReader(e.request)
			}
			req, err := http.NewRequestWithContext(t.Context(), e.method, base+e.target, body)
			if err != nil {
				t.Fatal(err)
			}
			if e.request != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != e.status {
				t.Fatalf("%s: status %d, documented %d\n%s", e, resp.StatusCode, e.status, raw)
			}
			doc, got := decodeNumbers(t, e.String()+" documented response", e.response), decodeNumbers(t, e.String()+" answer", raw)
			for _, p := range sameShape("", doc, got) {
				t.Errorf("%s: %s", e, p)
			}
			schema := responseSchema(openapi, e.method, strings.SplitN(e.target, "?", 2)[0], e.status)
			if schema == nil {
				t.Fatalf("%s: /openapi.json describes no %d JSON answer for this route", e, e.status)
			}
			for _, p := range fitsSchema(openapi, "", doc, schema) {
				t.Errorf("%s: /openapi.json: %s", e, p)
			}
		})
	}
	t.Run("every route of the service is documented", func(t *testing.T) {
		paths, _ := openapi["paths"].(map[string]any)
		for path, ops := range paths {
			for method := range ops.(map[string]any) {
				route := strings.ToUpper(method) + " " + path
				if !routes[route] && !undocumentedRoute(route) {
					t.Errorf("docs/API.md has no example of %s", route)
				}
			}
		}
	})
}

// undocumentedRoute reports the routes docs/API.md need not show: pages, the OpenAPI
// document itself, OTLP ingestion (protobuf) and export verification (a multipart
// upload); docs/OPERATIONS.md describes them.
func undocumentedRoute(route string) bool {
	return slices.Contains([]string{"GET /docs", "GET /redoc", "GET /openapi.json", "POST /v1/traces", "POST /api/export/verify", "GET /docs/assets/{name}",
		"GET /", "GET /assets/{name}"}, route)
}

// decodeNumbers decodes raw, keeping numbers as json.Number.
func decodeNumbers(t *testing.T, what string, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, raw)
	}
	return v
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

// sameShape lists where got lacks a member of doc or holds it with another JSON type.
// An array's every element is held to doc's first element; a documented empty array
// says nothing of its elements.
func sameShape(at string, doc, got any) []string {
	if jsonType(doc) != jsonType(got) {
		return []string{fmt.Sprintf("%s is %s, documented %s", orRoot(at), jsonType(got), jsonType(doc))}
	}
	var problems []string
	switch d := doc.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for k, dv := range d {
			gv, ok := g[k]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s.%s is missing", orRoot(at), k))
				continue
			}
			problems = append(problems, sameShape(at+"."+k, dv, gv)...)
		}
	case []any:
		g := got.([]any)
		if len(d) > 0 && len(g) == 0 {
			problems = append(problems, fmt.Sprintf("%s is empty, documented with elements", orRoot(at)))
		}
		for i, gv := range g {
			if len(d) > 0 {
				problems = append(problems, sameShape(fmt.Sprintf("%s[%d]", at, i), d[0], gv)...)
			}
		}
	}
	return problems
}

// orRoot names the member at as a JSONPath: "$" and at.
func orRoot(at string) string { return "$" + at }

// fetchJSON gets url and decodes its JSON answer.
func fetchJSON(t *testing.T, url string) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// responseSchema returns the schema of the JSON answer status of method path in the
// OpenAPI document doc, or nil. path may fill a template's parameters (/api/chain/3 is
// /api/chain/{seq}).
func responseSchema(doc map[string]any, method, path string, status int) map[string]any {
	op := dig(doc, "paths", templateOf(doc, path), strings.ToLower(method))
	s := dig(op, "responses", strconv.Itoa(status), "content", "application/json", "schema")
	if s == nil {
		s = dig(op, "responses", "default", "content", "application/json", "schema")
	}
	return s
}

// templateOf returns the path of doc's paths that path is, itself or a template whose
// parameters path fills.
func templateOf(doc map[string]any, path string) string {
	paths, _ := doc["paths"].(map[string]any)
	if _, ok := paths[path]; ok {
		return path
	}
	segs := strings.Split(path, "/")
	for tmpl := range paths {
		t := strings.Split(tmpl, "/")
		if len(t) != len(segs) {
			continue
		}
		match := true
		for i := range t {
			if t[i] != segs[i] && !strings.HasPrefix(t[i], "{") {
				match = false
				break
			}
		}
		if match {
			return tmpl
		}
	}
	return path
}

// dig follows keys through nested objects; nil when one is missing.
func dig(v map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := v[k].(map[string]any)
		if !ok {
			return nil
		}
		v = next
	}
	return v
}

// resolve follows $ref and single-element allOf to the schema meant.
func resolve(doc, s map[string]any) map[string]any {
	for s != nil {
		if ref, ok := s["$ref"].(string); ok {
			s = dig(doc, "components", "schemas", strings.TrimPrefix(ref, "#/components/schemas/"))
			continue
		}
		if all, ok := s["allOf"].([]any); ok && len(all) == 1 {
			inner, _ := all[0].(map[string]any)
			if nullable, _ := s["nullable"].(bool); nullable && inner != nil {
				merged := map[string]any{"nullable": true}
				for k, v := range resolve(doc, inner) {
					merged[k] = v
				}
				return merged
			}
			s = inner
			continue
		}
		return s
	}
	return nil
}

// fitsSchema lists the documented members the schema s lacks or types otherwise.
func fitsSchema(doc map[string]any, at string, v any, s map[string]any) []string {
	s = resolve(doc, s)
	if s == nil {
		return []string{fmt.Sprintf("%s has no schema", orRoot(at))}
	}
	typ, _ := s["type"].(string)
	if typ == "" { // any JSON value
		return nil
	}
	if v == nil {
		if nullable, _ := s["nullable"].(bool); !nullable {
			return []string{fmt.Sprintf("%s is documented null, but its schema (%s) is not nullable", orRoot(at), typ)}
		}
		return nil
	}
	want := jsonType(v)
	if want == "number" && typ == "integer" {
		n := v.(json.Number).String()
		if strings.ContainsAny(n, ".eE") {
			return []string{fmt.Sprintf("%s is documented %s, its schema says integer", orRoot(at), n)}
		}
		return nil
	}
	if want != typ {
		return []string{fmt.Sprintf("%s is documented %s, its schema says %s", orRoot(at), want, typ)}
	}
	var problems []string
	switch d := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		extra, _ := s["additionalProperties"].(map[string]any)
		for k, dv := range d {
			p, _ := props[k].(map[string]any)
			if p == nil {
				p = extra
			}
			if p == nil {
				problems = append(problems, fmt.Sprintf("%s.%s is not in the schema", orRoot(at), k))
				continue
			}
			problems = append(problems, fitsSchema(doc, at+"."+k, dv, p)...)
		}
	case []any:
		items, _ := s["items"].(map[string]any)
		for i, dv := range d {
			problems = append(problems, fitsSchema(doc, fmt.Sprintf("%s[%d]", at, i), dv, items)...)
		}
	}
	return problems
}

// TestAPIDocCheckersFail: the checks TestAPIDocExamples relies on find a missing member,
// a changed type, a renamed member and a schema without a documented member.
func TestAPIDocCheckersFail(t *testing.T) {
	doc := decodeNumbers(t, "doc", []byte(`{"valid": true, "entries_verified": 3, "items": [{"seq": 1, "timestamp_ns": 5}], "reason": null}`))
	cases := map[string]string{
		"a member missing":            `{"valid": true, "items": [{"seq": 1, "timestamp_ns": 5}], "reason": null}`,
		"a member renamed":            `{"valid": true, "checked": 3, "items": [{"seq": 1, "timestamp_ns": 5}], "reason": null}`,
		"a number sent as a string":   `{"valid": true, "entries_verified": 3, "items": [{"seq": 1, "timestamp_ns": "5"}], "reason": null}`,
		"null sent as a string":       `{"valid": true, "entries_verified": 3, "items": [{"seq": 1, "timestamp_ns": 5}], "reason": "match"}`,
		"a second element unlike doc": `{"valid": true, "entries_verified": 3, "items": [{"seq": 1, "timestamp_ns": 5}, {"seq": 2}], "reason": null}`,
		"an empty list":               `{"valid": true, "entries_verified": 3, "items": [], "reason": null}`,
	}
	for name, got := range cases {
		if len(sameShape("", doc, decodeNumbers(t, name, []byte(got)))) == 0 {
			t.Errorf("%s: sameShape found nothing", name)
		}
	}
	if p := sameShape("", doc, decodeNumbers(t, "extra", []byte(`{"valid": false, "entries_verified": 0, "extra": 1, "items": [{"seq": 9, "timestamp_ns": 1}], "reason": null}`))); len(p) != 0 {
		t.Errorf("an answer with an extra member and other values: %v, want no problem", p)
	}

	openapi := map[string]any{"components": map[string]any{"schemas": map[string]any{"Item": map[string]any{
		"type": "object", "properties": map[string]any{"seq": map[string]any{"type": "integer"}, "timestamp_ns": map[string]any{"type": "string"}}}}}}
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"valid":  map[string]any{"type": "boolean"},
		"items":  map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/Item"}},
		"reason": map[string]any{"type": "string"}}}
	problems := fitsSchema(openapi, "", doc, schema)
	for _, want := range []string{"$.entries_verified is not in the schema", "$.items[0].timestamp_ns is documented number, its schema says string",
		"$.reason is documented null, but its schema (string) is not nullable"} {
		if !slices.Contains(problems, want) {
			t.Errorf("fitsSchema did not say %q: %v", want, problems)
		}
	}
}
