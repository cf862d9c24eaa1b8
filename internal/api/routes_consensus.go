package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/internal/consensus"
)

// Enumerations of internal/consensus, for the document.
var (
	stakesLevels = []string{string(consensus.LevelLow), string(consensus.LevelMedium),
		string(consensus.LevelHigh), string(consensus.LevelCritical)}
	consensusVerdicts = []string{string(consensus.VerdictConsensus), string(consensus.VerdictNoConsensus),
		string(consensus.VerdictInsufficientAnswers)}
)

func (s *Server) consensusRoutes(c *components) group {
	modelsDoc := fmt.Sprintf("the models to ask, %d to %d distinct names", consensus.MinModels, consensus.MaxModels)
	if len(s.consensusModels) > 0 {
		modelsDoc += "; absent or empty: the server's default models, " + strings.Join(s.consensusModels, ", ")
	}
	req := c.Ref("ConsensusRequest", "A prompt to ask several models.", consensus.Request{}, fieldDocs{
		"prompt":     {Description: fmt.Sprintf("sent to every model as one user message, at most %d bytes", consensus.MaxPromptBytes), Example: "What is the boiling point of water at sea level, in Celsius?"},
		"models":     {Description: modelsDoc, Example: []string{"gpt-4o", "claude-3-5-sonnet"}},
		"threshold":  {Description: fmt.Sprintf("the agreement needed for consensus, 0 to 1; absent: %v", consensus.DefaultThreshold), Example: consensus.DefaultThreshold},
		"timeout_ms": {Description: fmt.Sprintf("bounds each model's call, milliseconds, at most %d; absent or 0: the provider's own timeout", consensus.MaxTimeout.Milliseconds()), Example: 30000},
	})
	if len(s.consensusModels) > 0 {
		c.Optional("ConsensusRequest", "models")
	}
	c.Ref("ModelUsage", "A server's token count for one call.", consensus.Usage{}, fieldDocs{
		"prompt_tokens":     {Description: "input tokens", Example: 21},
		"completion_tokens": {Description: "output tokens", Example: 9},
		"total_tokens":      {Description: "their sum", Example: 30},
	})
	c.Ref("ModelAnswer", "One model's part in a consensus run.", consensus.Answer{}, fieldDocs{
		"model":           {Description: "the model asked", Example: "gpt-4o"},
		"provider":        {Description: "the provider that served it", Example: consensus.DefaultProviderName},
		"text":            {Description: "the answer; empty when the call failed", Example: "Water boils at 100 degrees Celsius at sea level."},
		"latency_ms":      {Description: "how long the call took, milliseconds", Example: 812.5},
		"usage":           {Description: "the server's token count, when it gave one"},
		"error":           {Description: "why the call failed; absent when it answered"},
		"mean_similarity": {Description: "mean similarity to the other answers; absent for a failed call or a lone answer", Example: 0.82},
	})
	c.Ref("StakesRequirement", "What a stakes level asks of a consensus run.", consensus.Requirement{}, fieldDocs{
		"level":         {Description: "the stakes level", Enum: stakesLevels},
		"min_models":    {Description: "how many models should answer", Example: 3},
		"min_agreement": {Description: "the agreement they should reach", Example: 0.75},
		"human_review":  {Description: "whether a person should review", Enum: []string{"none", "on_disagreement", "always"}},
		"description":   {Description: "what the level means"},
	})
	c.Ref("StakesDomain", "What one domain's keywords found in a prompt.", consensus.DomainMatch{}, fieldDocs{
		"domain":   {Description: "the domain", Enum: []string{"medical", "legal", "financial", "safety", "security"}},
		"level":    {Description: "the highest level among its matched keywords", Enum: stakesLevels},
		"keywords": {Description: "the matched keywords, each once, in order of first appearance", Example: []string{"dosage"}},
		"matches":  {Description: "every occurrence", Example: 1},
	})
	c.Ref("StakesClassification", "How much is at stake in a prompt.", consensus.Classification{}, fieldDocs{
		"level":       {Description: "the highest level of any matched keyword; low when none matched", Enum: stakesLevels},
		"domains":     {Description: "the domains with matches, highest level first, then by name"},
		"requirement": {Description: "what the level asks of a consensus run"},
	})
	res := c.Ref("ConsensusResult", "How far the models' answers agree.", consensus.Result{}, fieldDocs{
		"verdict":       {Description: "consensus or no_consensus when at least two models answered, else insufficient_answers", Enum: consensusVerdicts},
		"consensus":     {Description: "verdict is consensus"},
		"agreement":     {Description: "mean pairwise similarity of the answers, 0 to 1; null with fewer than two answers", Nullable: true, Example: 0.82},
		"threshold":     {Description: "the agreement consensus needed", Example: consensus.DefaultThreshold},
		"method":        {Description: "the similarity measure: cosine similarity of word counts", Example: consensus.SimilarityMethod},
		"answers":       {Description: "every model's answer, in request order, failed calls included"},
		"answered":      {Description: "calls that answered", Example: 2},
		"failed":        {Description: "calls that failed", Example: 0},
		"matrix_models": {Description: "the models that answered: the rows and columns of matrix"},
		"matrix":        {Description: "pairwise similarity of the answers, symmetric, 1 on the diagonal"},
		"best":          {Description: "the answer that agrees most with the others; null with no answer", Nullable: true},
		"stakes":        {Description: "the prompt's stakes"},
		"stakes_met":    {Description: "the run meets the stakes' requirement: enough answers, enough agreement"},
		"evaluation_ms": {Description: "time the run took, milliseconds", Example: 845.1},
	})
	c.Ref("StakesKeywords", "One domain's keywords by level.", consensus.DomainKeywords{}, fieldDocs{
		"domain":   {Description: "the domain", Example: "medical"},
		"keywords": {Description: "words and phrases by level", Example: map[string][]string{"critical": {"overdose"}}},
	})
	stakes := c.Ref("StakesTable", "The stakes keyword table and what each level asks.", consensus.StakesTable{}, fieldDocs{
		"levels":   {Description: "the requirement of each level, lowest first"},
		"domains":  {Description: "the keyword lists, by domain name"},
		"matching": {Description: "how keywords are matched"},
	})
	return group{name: "consensus", description: "Ask several models one question and measure how far they agree; classify what is at stake.", routes: []route{
		{method: http.MethodPost, path: "/api/consensus/evaluate", handler: http.HandlerFunc(s.evaluateConsensus), op: operation{
			id: "evaluateConsensus", summary: "Ask several models and score their agreement",
			description: "Sends the prompt to every model at once through the server's OpenAI-compatible provider (--consensus-url), " +
				"compares each pair of answers by the cosine similarity of their word counts, and classifies the prompt's stakes. " +
				"A failed call is reported in its answer; the run still answers 200. 503 no_provider: the server was started without a model provider.",
			body:      jsonBody("The prompt and the models.", true, req),
			responses: []response{jsonOK("The agreement.", res)}}},
		{method: http.MethodGet, path: "/api/consensus/stakes", handler: http.HandlerFunc(s.consensusStakes), op: operation{
			id: "consensusStakes", summary: "The stakes table",
			description: "The keywords by domain and level that classify a prompt's stakes, and what each level asks of a consensus run.",
			responses:   []response{jsonOK("The table.", stakes)}}},
	}}
}

func (s *Server) evaluateConsensus(w http.ResponseWriter, r *http.Request) {
	if s.consensus == nil {
		writeError(w, http.StatusServiceUnavailable, codeNoProvider,
			"no model provider configured: start cairn serve with --consensus-url (an OpenAI-compatible API)")
		return
	}
	var req consensus.Request
	if err := decodeJSONLimit(w, r, &req, false, consensus.MaxRequestBytes); err != nil {
		s.writeRequestError(w, r, "consensus", err)
		return
	}
	if len(req.Models) == 0 {
		req.Models = slices.Clone(s.consensusModels)
	}
	res, err := s.consensus.Evaluate(r.Context(), req)
	if err != nil { // a request Validate refuses, or a model no provider serves
		writeError(w, http.StatusBadRequest, codeBadParameter, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) consensusStakes(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, consensus.Stakes())
}
