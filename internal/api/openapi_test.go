package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// loadDocument fetches /openapi.json and validates it with kin-openapi.
func loadDocument(t *testing.T, f *fixture) *openapi3.T {
	t.Helper()
	resp, body := f.do(http.MethodGet, "/openapi.json", "", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/openapi.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(body)
	if err != nil {
		t.Fatalf("load the document: %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	return doc
}

func TestOpenAPIDocumentIsValidAndComplete(t *testing.T) {
	traces := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	chat := newChatServer(t, nil)
	for name, edit := range map[string]func(*Options){
		"open":                nil,
		"with an API key":     func(o *Options) { o.APIKey = testAPIKey },
		"with the OTLP route": func(o *Options) { o.APIKey = testAPIKey; o.Traces = traces },
		"with a model provider and default models": func(o *Options) {
			o.Consensus, o.ConsensusModels = evaluatorFor(t, chat), []string{"model-a", "model-b"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, 2, edit)
			doc := loadDocument(t, f)
			if doc.OpenAPI != "3.0.3" || doc.Info.Version != testVersion.Version {
				t.Errorf("openapi %q, info.version %q", doc.OpenAPI, doc.Info.Version)
			}
			keyed := f.srv.apiKey != ""

			// Every route the mux serves is documented, with its security...
			served := map[string]bool{}
			for _, rt := range f.srv.routes {
				key := rt.method + " " + rt.path
				served[key] = true
				item := doc.Paths.Find(rt.path)
				if item == nil || item.GetOperation(rt.method) == nil {
					t.Errorf("%s is served but not documented", key)
					continue
				}
				op := item.GetOperation(rt.method)
				secured := op.Security != nil && len(*op.Security) > 0
				if secured != (keyed && !rt.public) {
					t.Errorf("%s: security documented %t, want %t", key, secured, keyed && !rt.public)
				}
				if _, ok := op.Responses.Map()["default"]; !ok {
					t.Errorf("%s documents no error answer", key)
				}
				// ...and the mux really routes it to that pattern.
				req := httptest.NewRequest(rt.method, samplePath(rt.path), nil)
				want := key
				if rt.pattern != "" {
					want = rt.method + " " + rt.pattern
				}
				if _, pattern := f.srv.mux.Handler(req); pattern != want {
					t.Errorf("%s: the mux matches %q, want %q", key, pattern, want)
				}
			}
			// Every documented operation is served.
			for path, item := range doc.Paths.Map() {
				for method := range item.Operations() {
					if !served[method+" "+path] {
						t.Errorf("%s %s is documented but not served", method, path)
					}
				}
			}
			if _, ok := doc.Components.SecuritySchemes[bearerScheme]; !ok {
				t.Error("no bearer security scheme")
			}
			if keyed && doc.Paths.Find("/api/chain/{seq}").Get.Responses.Status(http.StatusUnauthorized) == nil {
				t.Error("GET /api/chain/{seq} does not document 401")
			}
			if f.srv.traces != nil && doc.Paths.Find("/v1/traces") == nil {
				t.Error("/v1/traces is not documented")
			}
		})
	}
}

func TestOpenAPISchemasMatchTheTypes(t *testing.T) {
	f := newFixture(t, 1, nil)
	doc := loadDocument(t, f)
	tests := map[string]struct {
		required []string
		optional []string
	}{
		"EntrySummary": {required: []string{"seq", "timestamp_ns", "timestamp_ns_str", "time", "trace_id", "span_id", "span_name", "span_kind",
			"body_bytes", "canonical_hash", "prev_hash", "hmac_hash"}},
		"EntryDetail": {required: []string{"seq", "timestamp_ns", "timestamp_ns_str", "time", "trace_id", "span_id", "span_name", "span_kind",
			"canonical_body_b64", "canonical_hash", "prev_hash", "hmac_hash", "body"}},
		"VerifyResult": {required: []string{"valid", "mode", "first_seq", "last_seq", "entries_verified", "checked", "hmacs_checked",
			"error_seq", "error", "elapsed_ms"},
			optional: []string{"first_bad_seq", "reason", "wrong_secret", "import"}},
		"ReplayResult": {required: []string{"match", "original_hash", "replay_hash", "deterministic", "model_version", "reason",
			"seq", "reason_code", "model"}},
		"ReplayRequest": {required: []string{"seq", "replayed_output"}, optional: []string{"output"}},
		"Error":         {required: []string{"error", "message", "code"}},
	}
	for name, tc := range tests {
		ref := doc.Components.Schemas[name]
		if ref == nil || ref.Value == nil {
			t.Errorf("no schema %s", name)
			continue
		}
		s := ref.Value
		var props []string
		for p := range s.Properties {
			props = append(props, p)
		}
		want := append(slices.Clone(tc.required), tc.optional...)
		slices.Sort(props)
		slices.Sort(want)
		required := slices.Clone(s.Required)
		slices.Sort(required)
		wantRequired := slices.Clone(tc.required)
		slices.Sort(wantRequired)
		if !slices.Equal(props, want) || !slices.Equal(required, wantRequired) {
			t.Errorf("%s: properties %v required %v; want %v required %v", name, props, required, want, wantRequired)
		}
		for p, ps := range s.Properties {
			if ps.Value == nil || (ps.Value.Description == "" && len(ps.Value.AllOf) == 0) {
				t.Errorf("%s.%s has no description", name, p)
			}
		}
	}
	replay := doc.Components.Schemas["ReplayResult"].Value
	reasons := replay.Properties["reason_code"].Value.Enum
	if len(reasons) != 6 || !strings.Contains(strings.Join(toStrings(reasons), " "), "nondeterministic_mismatch") ||
		!strings.Contains(strings.Join(toStrings(reasons), " "), "conflicting_replay_context") {
		t.Errorf("ReplayResult.reason_code enum %v", reasons)
	}
	for _, member := range []string{"original_hash", "model_version", "reason", "model"} {
		if p := replay.Properties[member]; p == nil || !p.Value.Nullable || !p.Value.Type.Is("string") {
			t.Errorf("ReplayResult.%s is not a nullable string: %+v", member, p)
		}
	}
}

// TestOpenAPIDescribesEveryMember checks that every member of every schema says what it
// is, and that the request schemas require what the server requires.
func TestOpenAPIDescribesEveryMember(t *testing.T) {
	for name, models := range map[string][]string{"without default models": nil, "with default models": {"m1", "m2"}} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, 1, func(o *Options) { o.ConsensusModels = models })
			doc := loadDocument(t, f)
			for schemaName, ref := range doc.Components.Schemas {
				for p, ps := range ref.Value.Properties {
					if ps.Value == nil || ps.Value.Description == "" {
						t.Errorf("%s.%s has no description", schemaName, p)
					}
				}
			}
			required := map[string][]string{
				"RegressionRunRequest": nil,
				"EnergyRequest":        nil,
				"PolicyRequest":        nil,
				"ConsensusRequest":     {"models", "prompt"},
				"Layer":                {"detail", "id", "name", "note", "state", "status"},
			}
			if models != nil {
				required["ConsensusRequest"] = []string{"prompt"}
			}
			for schemaName, want := range required {
				got := slices.Clone(doc.Components.Schemas[schemaName].Value.Required)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s requires %v, want %v", schemaName, got, want)
				}
			}
			// Every member of a regression dimension is present, and its anomalies refer to their schemas.
			dim := doc.Components.Schemas["RegressionDimension"].Value
			if !slices.Contains(dim.Required, "mean") || !slices.Contains(dim.Required, "anomalies_z") ||
				dim.Properties["anomalies_z"].Value.Items.Ref != "#/components/schemas/RegressionZAnomaly" {
				t.Errorf("RegressionDimension: anomalies_z %+v, required %v", dim.Properties["anomalies_z"], dim.Required)
			}
			if at := doc.Components.Schemas["RegressionRun"].Value.Properties["ran_at"].Value; at.Format != "date-time" {
				t.Errorf("RegressionRun.ran_at: format %q", at.Format)
			}
		})
	}
}

func toStrings(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i], _ = v.(string)
	}
	return out
}

func TestReplayExampleHashIsTheExampleOutputs(t *testing.T) {
	field, _ := reflect.TypeFor[replayRequest]().FieldByName("ReplayedOutput")
	var output string
	if err := json.Unmarshal([]byte(field.Tag.Get("example")), &output); err != nil || output == "" {
		t.Fatalf("ReplayRequest.replayed_output has no example: %v", err)
	}
	sum := sha256.Sum256([]byte(output))
	if got := hex.EncodeToString(sum[:]); got != exampleOutputHash {
		t.Fatalf("exampleOutputHash is %s, the example output hashes to %s", exampleOutputHash, got)
	}
}

func TestSchemaErrorsAreReported(t *testing.T) {
	type badExample struct {
		N int `json:"n" example:"{not json"`
	}
	type unsupported struct {
		C chan int `json:"c"`
	}
	for name, build := range map[string]func(c *components){
		"an example that is not JSON": func(c *components) { c.Ref("Bad", "", badExample{}, nil) },
		"a type without a schema":     func(c *components) { c.Ref("Chan", "", unsupported{}, nil) },
		"one type under two names":    func(c *components) { c.Ref("A", "", errorBody{}, nil); c.Ref("B", "", errorBody{}, nil) },
	} {
		c := newComponents()
		build(c)
		if c.Err() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
