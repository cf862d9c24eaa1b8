package serve

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/store"
)

// chatAPI is a model API speaking the OpenAI chat-completions protocol that answers
// every model the same, and records the Authorization headers it gets.
func chatAPI(t *testing.T, auths chan<- string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		auths <- r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model,
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "Paris is the capital of France."}}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestServeSealsSpansFromTheOTelSDK runs `cairn serve`, configured through flags and
// environment variables, and sends it gen_ai spans with the OpenTelemetry Go SDK's
// OTLP/HTTP exporter: they are sealed into a chain that verifies in full, and the
// analysis, policy, consensus and layers routes see them and the configuration.
func TestServeSealsSpansFromTheOTelSDK(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rules, []byte("rules:\n  - id: only-gpt\n    kind: model_allowlist\n    mode: deny\n    parameters:\n      models: [\"gpt-*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auths := make(chan string, 16)
	models := chatAPI(t, auths)
	t.Setenv("CAIRN_HMAC_SECRET", testSecretHex)
	t.Setenv("CAIRN_API_KEY", "serve-key")
	t.Setenv("CAIRN_REGION", "eu-west")
	t.Setenv("CAIRN_CONSENSUS_API_KEY", "model-key")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	base, done := startServe(t, ctx, "--db", db, "--policy-rules", rules,
		"--consensus-url", models.URL+"/v1", "--consensus-models", "model-a,model-b")

	// Without the API key the exporter is refused, and nothing is sealed.
	refused, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(base+"/v1/traces"),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(refused, sdktrace.WithBatchTimeout(time.Hour)))
	_, span := tp.Tracer("cairn/serve/test").Start(ctx, "chat gpt-4o")
	span.SetAttributes(attribute.String("gen_ai.request.model", "gpt-4o"))
	span.End()
	if err := tp.ForceFlush(ctx); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("export without the API key: %v", err)
	}
	_ = tp.Shutdown(ctx)

	// With it, ten calls are sealed; half name their region.
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(base+"/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"Authorization": "Bearer serve-key"}),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter, sdktrace.WithBatchTimeout(time.Hour)))
	tracer := tp.Tracer("cairn/serve/test")
	const calls = 10
	for i := range calls {
		_, span := tracer.Start(ctx, "chat gpt-4o", trace.WithSpanKind(trace.SpanKindClient))
		span.SetAttributes(attribute.String("gen_ai.request.model", "gpt-4o"),
			attribute.Int("gen_ai.usage.input_tokens", 100+i), attribute.Int("gen_ai.usage.output_tokens", 20))
		if i%2 == 0 {
			span.SetAttributes(attribute.String("cloud.region", "eu-north"))
		}
		span.End()
	}
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatalf("export: %v", err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	var verdict struct {
		Valid        bool  `json:"valid"`
		Checked      int64 `json:"checked"`
		HMACsChecked bool  `json:"hmacs_checked"`
	}
	if status := cmdtest.PostJSON(t, base+"/api/chain/verify", "serve-key", `{"full":true}`, &verdict); status != http.StatusOK ||
		!verdict.Valid || verdict.Checked != calls || !verdict.HMACsChecked {
		t.Fatalf("full verify over the API: %d %+v", status, verdict)
	}

	// Energy: 1245 tokens of gpt-4o (0.005 Wh per 1000), half in eu-north (30 g/kWh),
	// half in the default region from CAIRN_REGION, eu-west (300 g/kWh).
	status, body := cmdtest.GetURL(t, base+"/api/energy/summary", "serve-key")
	var sum struct {
		TotalCalls    int64   `json:"total_calls"`
		TotalTokens   int64   `json:"total_tokens"`
		TotalWh       float64 `json:"total_wh"`
		TotalCO2Grams float64 `json:"total_co2_grams"`
		DefaultRegion string  `json:"default_region"`
	}
	if err := json.Unmarshal([]byte(body), &sum); err != nil || status != http.StatusOK || sum.TotalCalls != calls || sum.TotalTokens != 1245 ||
		!cmdtest.CloseTo(sum.TotalWh, 0.006225) || sum.DefaultRegion != "eu-west" {
		t.Fatalf("energy summary: %d %s", status, body)
	}
	whNorth := float64(100+102+104+106+108+5*20) / 1000 * 0.005
	if want := whNorth/1000*30 + (0.006225-whNorth)/1000*300; !cmdtest.CloseTo(sum.TotalCO2Grams, want) {
		t.Errorf("CO2 %v g, want %v", sum.TotalCO2Grams, want)
	}

	// The rule file replaced the default rules.
	var decision struct{ Decision string }
	if status := cmdtest.PostJSON(t, base+"/api/policy/evaluate", "serve-key", `{"model":"claude-3-opus","prompt":"hi"}`, &decision); status != http.StatusOK || decision.Decision != "deny" {
		t.Errorf("policy: %d %+v", status, decision)
	}

	// Consensus asks the default models with the key from CAIRN_CONSENSUS_API_KEY.
	var agreement struct {
		Verdict  string
		Answered int
	}
	if status := cmdtest.PostJSON(t, base+"/api/consensus/evaluate", "serve-key", `{"prompt":"What is the capital of France?"}`, &agreement); status != http.StatusOK ||
		agreement.Verdict != "consensus" || agreement.Answered != 2 {
		t.Errorf("consensus: %d %+v", status, agreement)
	}
	for range 2 {
		if got := <-auths; got != "Bearer model-key" {
			t.Errorf("the model API got Authorization %q", got)
		}
	}

	status, body = cmdtest.GetURL(t, base+"/api/layers", "serve-key")
	for _, want := range []string{`{"name":"otlp_ingestion","state":"active"`, `{"name":"energy","state":"active"`,
		`{"name":"consensus","state":"active"`, `{"name":"policy","state":"active","detail":"1 rule (1 deny, 0 warn)"`,
		`{"name":"signed_export","state":"available"`} {
		if status != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("layers: %d %s\nlacks %s", status, body, want)
		}
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("cairn serve after cancel: %v", err)
	}
	// The chain the server wrote verifies in full, by itself.
	secret, err := hex.DecodeString(testSecretHex)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(db, secret)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	report, err := s.Verify(t.Context(), store.VerifyOptions{Full: true})
	if err != nil || report.Checked != calls || !report.HMACsChecked {
		t.Fatalf("full verify of the file: %+v, %v", report, err)
	}
	e, err := s.Entry(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(e.CanonicalBody, []byte(`"gen_ai.usage.input_tokens":100`)) {
		t.Fatalf("entry 1: %s", e.CanonicalBody)
	}
}
