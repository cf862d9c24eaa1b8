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
	Seq            int64   `json:"seq" doc:"the entry of the model call replayed, from 1" example:"3"`
	ReplayedOutput *string `json:"replayed_output" doc:"the replayed model output, exactly as the model returned it" example:"\"The capital of France is Paris.\""`
	Output         *string `json:"output,omitempty" doc:"deprecated: the earlier name of replayed_output, accepted in its place; a body giving both must give the same text"`
}

// replayed returns the replayed output the request gives, under either name.
func (req *replayRequest) replayed() (string, error) {
	switch {
	case req.ReplayedOutput == nil && req.Output == nil:
		return "", errors.New("replayed_output is missing: give the replayed model output as a string")
	case req.ReplayedOutput == nil:
		return *req.Output, nil
	case req.Output != nil && *req.Output != *req.ReplayedOutput:
		return "", errors.New("replayed_output and output (its earlier name) differ: give replayed_output only")
	}
	return *req.ReplayedOutput, nil
}

// exampleOutputHash is the hex SHA-256 of ReplayRequest's example output.
const exampleOutputHash = "a1b7eb2ee7a6aded8dda4e6cf30826f5afffb28a5597ee9389e91eb326d4e319"

// exampleMismatchReason is the reason of a deterministic mismatch, for the schema.
const exampleMismatchReason = "output hash mismatch — re-execute against the SAME model version that produced the original " +
	"('gpt-4o-2024-08-06') and verify the prompt hash before treating this as tampering"

func (s *Server) replayRoutes(c *components) group {
	req := c.Ref("ReplayRequest", "A replayed model output to check against an entry.", replayRequest{}, nil)
	res := c.Ref("ReplayResult", "The verdict on a replay (pkg/chain VerifyReplay): the documented members match, "+
		"original_hash, replay_hash, deterministic, model_version and reason, and Cairn's seq, reason_code and model.", chain.ReplayResult{}, fieldDocs{
		"match":         {Description: "true exactly when the replayed output hashes to the recorded output hash", Example: true},
		"original_hash": {Description: "the recorded output hash (cairn.replay.output_hash; cairn.replay.output_sha256 in entries sealed by earlier releases; bijotel.replay.output_hash in spans instrumented for the original product), as the entry's body holds it; null when the entry has no valid one or records two different ones", Example: exampleOutputHash, Nullable: true},
		"replay_hash":   {Description: "hex SHA-256 of the replayed output, as UTF-8", Example: exampleOutputHash},
		"deterministic": {Description: "whether the call was recorded as deterministic, with a seed (cairn.replay.deterministic or bijotel.replay.deterministic, else whether cairn.replay.seed or bijotel.replay.seed is present)", Example: true},
		"model_version": {Description: "the recorded model version (cairn.replay.model_version; cairn.replay.model in entries sealed by earlier releases; bijotel.replay.model_version); null when none is recorded", Example: "gpt-4o-2024-08-06", Nullable: true},
		"reason": {Description: "null on a match; otherwise why there is none, in words: on a deterministic mismatch, to re-execute against the same model version (named) and verify the prompt hash before treating it as tampering; " +
			"on a mismatch without a recorded seed, that replay drift is expected; without a recorded hash, that the entry has no cairn.replay.output_hash or bijotel.replay.output_hash; on a malformed entry, what is malformed; " +
			"on a conflict, which two names of one attribute hold different values",
			Example: exampleMismatchReason, Nullable: true},
		"seq": {Description: "Cairn: the entry's seq", Example: 3},
		"reason_code": {
			Description: "Cairn: the verdict for programs. match; output_mismatch: recorded with a seed, so the output should have been reproduced; " +
				"nondeterministic_mismatch: recorded without a seed, so a different output is no evidence of tampering; " +
				"no_replay_context: the entry was sealed without a recorded output hash; " +
				"malformed_entry: the body or a replay attribute is not of its form; " +
				"conflicting_replay_context: the entry holds one replay attribute under two names (Cairn's, its earlier one, the original product's bijotel.replay.*) with different values, so neither is used",
			Enum: []string{chain.ReasonMatch, chain.ReasonOutputMismatch, chain.ReasonNondeterministicMismatch,
				chain.ReasonNoReplayContext, chain.ReasonMalformedEntry, chain.ReasonConflictingReplayContext},
		},
		"model": {Description: "Cairn: the model the span names (gen_ai.request.model, else gen_ai.response.model); null when it names none", Example: "gpt-4o", Nullable: true},
	})
	op := func(id, note string) operation {
		return operation{id: id, summary: "Verify a replayed output",
			description: "Compares the SHA-256 of a replayed model output with the output hash recorded in the entry's attributes, and says why they match or not. " +
				"Each replay attribute is read under Cairn's name (cairn.replay.*) or the original product's (bijotel.replay.*); an entry holding one attribute under both with different values matches nothing (conflicting_replay_context). " +
				"A mismatch is a 200 answer too. The entry is read as stored: verify the chain to trust it. 404 only when the chain has no entry with that seq." + note,
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
	if req.Seq < 1 {
		writeError(w, http.StatusBadRequest, codeBadParameter, fmt.Sprintf("seq %d: give the entry's seq, from 1", req.Seq))
		return
	}
	output, err := req.replayed()
	if err != nil {
		writeError(w, http.StatusBadRequest, codeBadParameter, err.Error())
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
	writeJSON(w, http.StatusOK, chain.VerifyReplay(e, output))
}
