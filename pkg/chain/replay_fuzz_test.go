package chain_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// FuzzVerifyReplay checks that VerifyReplay never panics on any body and that its result
// is always coherent.
func FuzzVerifyReplay(f *testing.F) {
	seed := int64(1)
	for _, attrs := range []map[string]any{
		chain.RecordReplayContext("p", "o", "m", &seed, 0, 1),
		chain.RecordReplayContext("p", "o", "m", nil, 0.5, 1),
		{},
	} {
		body := validBody()
		body.Attributes = attrs
		raw, err := body.Canonical()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, "o")
	}
	for _, s := range []string{``, `null`, `[]`, `{"attributes":null}`, `{"attributes":{"cairn.replay.output_sha256":1}}`, `{"attributes":{"cairn.replay.deterministic":[]}}`,
		`{"attributes":{"bijotel.replay.output_hash":"` + emptySHA256 + `","cairn.replay.output_hash":"` + emptySHA256 + `"}}`,
		`{"attributes":{"bijotel.replay.output_hash":"` + emptySHA256 + `","cairn.replay.output_sha256":"` + abcSHA256 + `"}}`} {
		f.Add([]byte(s), "")
	}
	valid := map[string]bool{
		chain.ReasonMatch: true, chain.ReasonOutputMismatch: true, chain.ReasonNondeterministicMismatch: true,
		chain.ReasonNoReplayContext: true, chain.ReasonMalformedEntry: true, chain.ReasonConflictingReplayContext: true,
	}
	f.Fuzz(func(t *testing.T, body []byte, output string) {
		r := chain.VerifyReplay(&protocol.Entry{Seq: 1, CanonicalBody: body}, output)
		sum := sha256.Sum256([]byte(output))
		switch {
		case !valid[r.ReasonCode]:
			t.Fatalf("unknown reason code %q", r.ReasonCode)
		case r.Match != (r.ReasonCode == chain.ReasonMatch):
			t.Fatalf("match %v with reason code %s", r.Match, r.ReasonCode)
		case r.Match != (r.Reason == nil):
			t.Fatalf("match %v with reason %v", r.Match, r.Reason)
		case r.Reason != nil && *r.Reason == "":
			t.Fatalf("empty reason with reason code %s", r.ReasonCode)
		case r.ReplayHash != hex.EncodeToString(sum[:]):
			t.Fatalf("replay hash %s", r.ReplayHash)
		case r.Match && (r.OriginalHash == nil || *r.OriginalHash != r.ReplayHash):
			t.Fatalf("match with hashes %v and %s", r.OriginalHash, r.ReplayHash)
		case r.ReasonCode == chain.ReasonConflictingReplayContext && (r.OriginalHash != nil || r.ModelVersion != nil || r.Deterministic):
			t.Fatalf("a conflict reports %+v", r)
		case r.ReasonCode == chain.ReasonOutputMismatch && !r.Deterministic,
			r.ReasonCode == chain.ReasonNondeterministicMismatch && r.Deterministic:
			t.Fatalf("reason code %s with deterministic %v", r.ReasonCode, r.Deterministic)
		}
	})
}
