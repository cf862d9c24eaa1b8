package api

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/policy"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// getLayers fetches /api/layers and returns them by name, checking their order.
func getLayers(t *testing.T, f *fixture, headers ...string) map[string]layer {
	t.Helper()
	resp, body := f.do(http.MethodGet, "/api/layers", "", nil, headers...)
	var got layersResponse
	decode(t, body, &got)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	byName := map[string]layer{}
	var names []string
	for _, l := range got.Layers {
		byName[l.Name] = l
		names = append(names, l.Name)
		if l.Detail == "" || !slices.Contains([]string{layerActive, layerAvailable, layerPlanned}, l.State) {
			t.Errorf("layer %+v", l)
		}
	}
	if !slices.Equal(names, layerNames) {
		t.Fatalf("layers %v, want %v", names, layerNames)
	}
	return byName
}

// wantStates fails unless each named layer has its state and its detail contains the text.
func wantStates(t *testing.T, layers map[string]layer, want map[string][2]string) {
	t.Helper()
	for name, w := range want {
		l := layers[name]
		if l.State != w[0] || !strings.Contains(l.Detail, w[1]) {
			t.Errorf("layer %s: %s %q, want %s and %q", name, l.State, l.Detail, w[0], w[1])
		}
	}
}

func TestLayersFollowTheServersState(t *testing.T) {
	var deny int
	rules := policy.DefaultRules()
	for _, r := range rules {
		if r.Mode == policy.ModeDeny {
			deny++
		}
	}
	// A bare server over an empty chain: what needs configuration or data is available.
	f := newFixture(t, 0, func(o *Options) { o.APIKey = testAPIKey; o.SigningKey = nil; o.DefaultRegion = "eu-west" })
	resp, body := f.do(http.MethodGet, "/api/layers", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	wantStates(t, getLayers(t, f, auth...), map[string][2]string{
		"chain":             {layerActive, "empty"},
		"verification":      {layerActive, "/api/chain/verify"},
		"signed_export":     {layerAvailable, "--sign-key"},
		"otlp_ingestion":    {layerAvailable, "no OTLP receiver"},
		"regression":        {layerAvailable, "no regression run"},
		"energy":            {layerAvailable, "no entry"},
		"policy":            {layerActive, fmt.Sprintf("%d rules (%d deny, %d warn)", len(rules), deny, len(rules)-deny)},
		"containment":       {layerActive, "code-safety rules"},
		"consensus":         {layerAvailable, "--consensus-url"},
		"replay":            {layerActive, "/api/replay/verify"},
		"federation_client": {layerAvailable, "cairn federation submit"},
		"dashboard":         {layerActive, "GET / serves the dashboard"},
	})

	// The federation client exists (the cairn federation commands): nothing may call it
	// planned or unbuilt, as an earlier text did.
	if l := getLayers(t, f, auth...)["federation_client"]; strings.Contains(l.Detail, "not built") || l.State == layerPlanned {
		t.Errorf("federation_client: %s %q describes the client as not built", l.State, l.Detail)
	}

	// Entries with token counts make energy active; a saved run makes regression active.
	f.seal(12)
	wantStates(t, getLayers(t, f, auth...), map[string][2]string{
		"chain":      {layerActive, "12 entries"},
		"energy":     {layerActive, "through seq 12"},
		"regression": {layerAvailable, "no regression run"},
	})
	if resp, body := f.postJSON("/api/regression/run", "", auth...); resp.StatusCode != http.StatusOK {
		t.Fatalf("regression run: %d %s", resp.StatusCode, body)
	}
	f.sealOutlier(9000)
	if resp, body := f.postJSON("/api/regression/run", `{"window":8}`, auth...); resp.StatusCode != http.StatusOK {
		t.Fatalf("regression run: %d %s", resp.StatusCode, body)
	}
	wantStates(t, getLayers(t, f, auth...), map[string][2]string{
		"chain":      {layerActive, "13 entries"},
		"regression": {layerActive, "the latest run, 2 of "},
		"energy":     {layerActive, "through seq 13"},
	})
	if l := getLayers(t, f, auth...)["regression"]; !strings.Contains(l.Detail, "flagged input_tokens") {
		t.Errorf("regression: %q", l.Detail)
	}

	// A signing key, an OTLP receiver and a model provider make their layers active.
	chat := newChatServer(t, map[string]string{"a": "yes", "b": "yes"})
	configured := newFixture(t, 0, func(o *Options) {
		o.Traces = http.NotFoundHandler()
		o.Consensus = evaluatorFor(t, chat)
		o.ConsensusModels = []string{"a", "b"}
	})
	wantStates(t, getLayers(t, configured), map[string][2]string{
		"signed_export":  {layerActive, protocol.OperatorID(testKey.Public().(ed25519.PublicKey))},
		"otlp_ingestion": {layerActive, "/v1/traces"},
		"consensus":      {layerActive, "default models a, b"},
	})
}
