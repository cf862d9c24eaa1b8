package api

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/internal/policy"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The states of a layer.
const (
	// layerActive: the layer runs here and is in use: configured, with data where it
	// keeps any.
	layerActive = "active"
	// layerAvailable: the layer is built into this server but not in use yet: it lacks
	// its configuration, or has no data yet.
	layerAvailable = "available"
	// layerPlanned: the layer is not built yet.
	layerPlanned = "planned"
)

// layer is one layer of the service and its state.
type layer struct {
	Name   string `json:"name" doc:"the layer" example:"\"regression\""`
	State  string `json:"state" enum:"active,available,planned" doc:"active: it runs here and is in use; available: it is built in but not configured or without data yet; planned: not built yet"`
	Detail string `json:"detail" doc:"one line on its state, from the server's current state" example:"\"the chain is open with 1200 entries (seq 1 to 1200)\""`
	// ID, Status and Note are the documented API's names of Name, State and Detail;
	// listLayers sets them.
	ID     string `json:"id" doc:"name, as the documented API calls it" example:"\"regression\""`
	Status string `json:"status" enum:"active,available,planned" doc:"state, as the documented API calls it"`
	Note   string `json:"note" doc:"detail, as the documented API calls it"`
}

// layersResponse is the answer of GET /api/layers.
type layersResponse struct {
	Layers    []layer `json:"layers" doc:"every layer, in a fixed order: chain, verification, signed_export, otlp_ingestion, regression, energy, policy, containment, consensus, replay, federation_client, dashboard"`
	Total     int     `json:"total" doc:"how many layers there are" example:"12"`
	Active    int     `json:"active" doc:"how many are active" example:"8"`
	Available int     `json:"available" doc:"how many are available" example:"2"`
	Planned   int     `json:"planned" doc:"how many are planned" example:"2"`
}

// layerNames lists the layers in the order GET /api/layers reports them.
var layerNames = []string{"chain", "verification", "signed_export", "otlp_ingestion", "regression", "energy",
	"policy", "containment", "consensus", "replay", "federation_client", "dashboard"}

func (s *Server) layersRoutes(c *components) group {
	c.Ref("Layer", "A layer of the service and its state.", layer{}, fieldDocs{"name": {Enum: layerNames}, "id": {Enum: layerNames}})
	res := c.Ref("Layers", "The layers of the service.", layersResponse{}, nil)
	return group{name: "layers", description: "What this service runs, and what is configured and in use.", routes: []route{
		{method: http.MethodGet, path: "/api/layers", handler: http.HandlerFunc(s.listLayers), op: operation{
			id: "listLayers", summary: "The service's layers and their state",
			description: "Each layer of the service (chain, verification, signed export, OTLP ingestion, regression, energy, policy, containment, consensus, replay, " +
				"federation client, dashboard) as active, available or planned, derived from what the server holds now: its options, the chain and the reports saved beside it.",
			responses: []response{jsonOK("The layers.", res)}}},
	}}
}

func (s *Server) listLayers(w http.ResponseWriter, r *http.Request) {
	layers, err := s.layers(r.Context())
	if err != nil {
		s.internalError(w, r, "list layers", err)
		return
	}
	res := layersResponse{Layers: layers, Total: len(layers)}
	for i := range layers {
		l := &layers[i]
		l.ID, l.Status, l.Note = l.Name, l.State, l.Detail
		switch l.State {
		case layerActive:
			res.Active++
		case layerAvailable:
			res.Available++
		case layerPlanned:
			res.Planned++
		}
	}
	writeJSON(w, http.StatusOK, res)
}

// layers derives every layer's state from the server's options and the chain's database.
func (s *Server) layers(ctx context.Context) ([]layer, error) {
	last, err := s.store.LastSeq(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the chain's length: %w", err)
	}
	latest, err := s.store.LatestRegression(ctx)
	if err != nil && !errors.Is(err, store.ErrNoRegressionRun) {
		return nil, err
	}
	energy, err := s.store.EnergyLoggedThrough(ctx) // not the summary: that reads the whole log
	if err != nil {
		return nil, err
	}
	chain := layer{Name: "chain", State: layerActive, Detail: "the chain is open and empty: no entry sealed yet"}
	if last > 0 {
		chain.Detail = fmt.Sprintf("the chain is open with %d entries (seq 1 to %d)", last, last)
	}
	return []layer{
		chain,
		{Name: "verification", State: layerActive, Detail: "POST /api/chain/verify checks the first and last entries (smoke) or every entry (full)"},
		s.exportLayer(),
		s.ingestionLayer(),
		regressionLayer(latest),
		energyLayer(energy),
		s.policyLayer(),
		{Name: "containment", State: layerActive, Detail: fmt.Sprintf("POST /api/containment/evaluate runs the policy and %d code-safety rules", len(policy.CodeRules()))},
		s.consensusLayer(),
		{Name: "replay", State: layerActive, Detail: "POST /api/replay/verify checks replayed model outputs against the output hashes recorded in entries"},
		federationClientLayer,
		dashboardLayer,
	}, nil
}

// federationClientLayer is available: the client is the cairn federation commands, built
// into the same binary, which this server does not run by itself.
var federationClientLayer = layer{Name: "federation_client", State: layerAvailable,
	Detail: "the cairn federation commands join a federation (register), send it this chain's signed exports " +
		"(cairn federation submit --db) and fetch and verify its receipts; this server does not submit by itself"}

// dashboardLayer is active: the dashboard is built into every server, and holds no data
// of its own.
var dashboardLayer = layer{Name: "dashboard", State: layerActive,
	Detail: "GET / serves the dashboard, which reads these /api routes (with the API key, when one is set)"}

func (s *Server) exportLayer() layer {
	if s.signingKey == nil {
		return layer{Name: "signed_export", State: layerAvailable, Detail: "no signing key: start cairn serve with --sign-key to sign exports"}
	}
	id := protocol.OperatorID(s.signingKey.Public().(ed25519.PublicKey))
	return layer{Name: "signed_export", State: layerActive, Detail: "POST /api/export signs cairn-chain-v2 exports as operator " + id}
}

func (s *Server) ingestionLayer() layer {
	if s.traces == nil {
		return layer{Name: "otlp_ingestion", State: layerAvailable, Detail: "no OTLP receiver is mounted: spans arrive only through pkg/chain"}
	}
	return layer{Name: "otlp_ingestion", State: layerActive, Detail: "POST /v1/traces seals the gen_ai spans of OTLP/HTTP exports (protobuf or JSON)"}
}

func regressionLayer(latest *analysis.Run) layer {
	if latest == nil {
		return layer{Name: "regression", State: layerAvailable, Detail: "no regression run saved yet: POST /api/regression/run makes one"}
	}
	flagged := latest.FlaggedDimensions()
	verdict := "flagged nothing"
	if len(flagged) > 0 {
		verdict = "flagged " + strings.Join(flagged, ", ")
	}
	return layer{Name: "regression", State: layerActive, Detail: fmt.Sprintf("the latest run, %d of %s over seq %d to %d, %s",
		latest.ID, latest.RanAt.UTC().Format(time.RFC3339), latest.FirstSeq, latest.LastSeq, verdict)}
}

func energyLayer(loggedThrough int64) layer {
	if loggedThrough == 0 {
		return layer{Name: "energy", State: layerAvailable, Detail: "no entry with token counts logged yet"}
	}
	return layer{Name: "energy", State: layerActive, Detail: fmt.Sprintf(
		"energy and CO2 logged for the entries with token counts through seq %d; GET /api/energy/summary totals them", loggedThrough)}
}

func (s *Server) policyLayer() layer {
	var deny, warn int
	for _, r := range s.policy.Rules() {
		if r.Mode == policy.ModeDeny {
			deny++
		} else {
			warn++
		}
	}
	noun := "rules"
	if deny+warn == 1 {
		noun = "rule"
	}
	return layer{Name: "policy", State: layerActive, Detail: fmt.Sprintf("%d %s (%d deny, %d warn)", deny+warn, noun, deny, warn)}
}

func (s *Server) consensusLayer() layer {
	if s.consensus == nil {
		return layer{Name: "consensus", State: layerAvailable, Detail: "no model provider: start cairn serve with --consensus-url to ask models"}
	}
	detail := "a model provider is configured; requests name their models"
	if len(s.consensusModels) > 0 {
		detail = "a model provider is configured; default models " + strings.Join(s.consensusModels, ", ")
	}
	return layer{Name: "consensus", State: layerActive, Detail: detail}
}
