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
	for _, s := range []string{``, `null`, `[]`, `{"attributes":null}`, `{"attributes":{"cairn.replay.output_sha256":1}}`, `{"attributes":{"cairn.replay.deterministic":[]}}`} {
		f.Add([]byte(s), "")
	}
	valid := map[string]bool{
		chain.ReasonMatch: true, chain.ReasonOutputMismatch: true, chain.ReasonNondeterministicMismatch: true,
		chain.ReasonNoReplayContext: true, chain.ReasonMalformedEntry: true,
	}
	f.Fuzz(func(t *testing.T, body []byte, output string) {
		r := chain.VerifyReplay(&protocol.Entry{Seq: 1, CanonicalBody: body}, output)
		sum := sha256.Sum256([]byte(output))
		switch {
		case !valid[r.Reason]:
			t.Fatalf("unknown reason %q", r.Reason)
		case r.Match != (r.Reason == chain.ReasonMatch):
			t.Fatalf("match %v with reason %s", r.Match, r.Reason)
		case r.ReplayedOutputSHA256 != hex.EncodeToString(sum[:]):
			t.Fatalf("replayed hash %s", r.ReplayedOutputSHA256)
		case r.Match && r.ExpectedOutputSHA256 != r.ReplayedOutputSHA256:
			t.Fatalf("match with hashes %s and %s", r.ExpectedOutputSHA256, r.ReplayedOutputSHA256)
		case r.Reason == chain.ReasonOutputMismatch && !r.Deterministic,
			r.Reason == chain.ReasonNondeterministicMismatch && r.Deterministic:
			t.Fatalf("reason %s with deterministic %v", r.Reason, r.Deterministic)
		}
	})
}
