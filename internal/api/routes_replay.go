package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/chain"
)

// replayRequest is the body of POST /api/replay/verify.
type replayRequest struct {
	Seq    int64   `json:"seq" doc:"the entry of the model call replayed, from 1" example:"1"`
	Output *string `json:"output" doc:"the replayed model output, exactly as the model returned it" example:"\"The capital of France is Paris.\""`
}

// exampleOutputHash is the hex SHA-256 of ReplayRequest's example output.
const exampleOutputHash = "a1b7eb2ee7a6aded8dda4e6cf30826f5afffb28a5597ee9389e91eb326d4e319"

func (s *Server) replayRoutes(c *components) group {
	req := c.Ref("ReplayRequest", "A replayed model output to check against an entry.", replayRequest{}, nil)
	res := c.Ref("ReplayResult", "The verdict on a replay (pkg/chain VerifyReplay).", chain.ReplayResult{}, fieldDocs{
		"seq":                    {Description: "the entry's seq", Example: 1},
		"match":                  {Description: "true exactly when reason is match", Example: true},
		"deterministic":          {Description: "whether the call was recorded as deterministic (with a seed)", Example: true},
		"model":                  {Description: "the recorded model, when the entry names one", Example: "gpt-4o"},
		"expected_output_sha256": {Description: "the recorded output hash (cairn.replay.output_sha256), when valid", Example: exampleOutputHash},
		"replayed_output_sha256": {Description: "hex SHA-256 of the replayed output", Example: exampleOutputHash},
		"reason": {
			Description: "match; output_mismatch: recorded with a seed, so the output should have been reproduced; " +
				"nondeterministic_mismatch: recorded without a seed, so a different output is no evidence of tampering; " +
				"no_replay_context: the entry was sealed without a recorded output hash; " +
				"malformed_entry: the body or a replay attribute is not of its form",
			Enum: []string{chain.ReasonMatch, chain.ReasonOutputMismatch, chain.ReasonNondeterministicMismatch,
				chain.ReasonNoReplayContext, chain.ReasonMalformedEntry},
		},
	})
	op := func(id, note string) operation {
		return operation{id: id, summary: "Verify a replayed output",
			description: "Compares the SHA-256 of a replayed model output with the output hash recorded in the entry's attributes, and says why they match or not. " +
				"The entry is read as stored: verify the chain to trust it. 404 only when the chain has no entry with that seq." + note,
			body:      jsonBody("The entry and the replayed output.", true, req),
			responses: []response{jsonOK("The verdict, match or not.", res)}}
	}
	return group{name: "replay", description: "Check replayed model calls against the chain.", routes: []route{
		{method: http.MethodPost, path: "/api/replay/verify", handler: http.HandlerFunc(s.verifyReplay), op: op("verifyReplay", "")},
		{method: http.MethodPost, path: "/replay/verify", handler: http.HandlerFunc(s.verifyReplay),
			op: op("verifyReplayAlias", " The same operation as /api/replay/verify, under the path earlier clients use; it needs the API key too.")},
	}}
}

func (s *Server) verifyReplay(w http.ResponseWriter, r *http.Request) {
	var req replayRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		s.writeRequestError(w, r, "verify replay", err)
		return
	}
	switch {
	case req.Seq < 1:
		writeError(w, http.StatusBadRequest, codeBadParameter, fmt.Sprintf("seq %d: give the entry's seq, from 1", req.Seq))
		return
	case req.Output == nil:
		writeError(w, http.StatusBadRequest, codeBadParameter, "output is missing: give the replayed model output as a string")
		return
	}
	e, err := s.store.Entry(r.Context(), req.Seq)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("the chain has no entry with seq %d", req.Seq))
		return
	}
	if err != nil {
		s.internalError(w, r, "verify replay", err)
		return
	}
	writeJSON(w, http.StatusOK, chain.VerifyReplay(e, *req.Output))
}
