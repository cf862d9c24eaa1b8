package analysis

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/chain"
)

// replaySpans writes spans with replay contexts: span 1 recorded with a seed, span 2
// without, span 3 with none at all, span 4 with a seed under the attribute names earlier
// releases sealed. It returns the file and the outputs recorded.
func replaySpans(t *testing.T, dir string) (string, []string) {
	t.Helper()
	outputs := []string{"Paris.", "It depends.\n", "", "Lyon."}
	seed := int64(42)
	var b strings.Builder
	for i, out := range outputs {
		attrs := map[string]any{"gen_ai.request.model": "gpt-4o"}
		switch i {
		case 0, 1:
			s := &seed
			if i == 1 {
				s = nil
			}
			for k, v := range chain.RecordReplayContext("prompt", out, "gpt-4o", s, 0.7, 1, chain.WithModelVersion("gpt-4o-2024-08-06")) {
				attrs[k] = v
			}
		case 3:
			sum := sha256.Sum256([]byte(out))
			attrs["cairn.replay.output_sha256"] = hex.EncodeToString(sum[:])
			attrs["cairn.replay.model"] = "gpt-4o"
			attrs["cairn.replay.seed"] = seed
			attrs["cairn.replay.deterministic"] = true
		}
		raw, err := json.Marshal(attrs)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, `{"name":"chat","kind":"client","attributes":%s,"status_code":"OK","status_description":"",`+
			`"start_time_ns":"%d","end_time_ns":"%d","trace_id":"%032x","span_id":"%016x"}`+"\n",
			raw, 1795262400000000000+int64(i), 1795262401000000000+int64(i), i+1, i+1)
	}
	path := filepath.Join(dir, "replay.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, outputs
}

func TestReplayCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	spans, outputs := replaySpans(t, dir)
	if _, err := runCairn(t, "chain", "seal", "--file", spans, "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(dir, "output.txt")
	if err := os.WriteFile(outFile, []byte(outputs[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args   []string
		code   int
		reason string // the reason code printed, when there is a verdict
		mv     any    // its model_version
	}{
		"match":                       {args: []string{"--seq", "1", "--output", outputs[0]}, code: cmdutil.ExitOK, reason: chain.ReasonMatch, mv: "gpt-4o-2024-08-06"},
		"match from a file":           {args: []string{"--seq", "2", "--output-file", outFile}, code: cmdutil.ExitOK, reason: chain.ReasonMatch, mv: "gpt-4o-2024-08-06"},
		"seeded call, other output":   {args: []string{"--seq", "1", "--output", "Lyon."}, code: cmdutil.ExitMismatch, reason: chain.ReasonOutputMismatch, mv: "gpt-4o-2024-08-06"},
		"unseeded call, other output": {args: []string{"--seq", "2", "--output", "It depends."}, code: cmdutil.ExitMismatch, reason: chain.ReasonNondeterministicMismatch, mv: "gpt-4o-2024-08-06"},
		"an empty output is one":      {args: []string{"--seq", "1", "--output", ""}, code: cmdutil.ExitMismatch, reason: chain.ReasonOutputMismatch, mv: "gpt-4o-2024-08-06"},
		"no replay context":           {args: []string{"--seq", "3", "--output", ""}, code: cmdutil.ExitMismatch, reason: chain.ReasonNoReplayContext},
		"earlier names, match":        {args: []string{"--seq", "4", "--output", "Lyon."}, code: cmdutil.ExitOK, reason: chain.ReasonMatch, mv: "gpt-4o"},
		"earlier names, mismatch":     {args: []string{"--seq", "4", "--output", "Paris."}, code: cmdutil.ExitMismatch, reason: chain.ReasonOutputMismatch, mv: "gpt-4o"},
		"seq not in the chain":        {args: []string{"--seq", "5", "--output", "x"}, code: cmdutil.ExitError},
		"missing output file":         {args: []string{"--seq", "1", "--output-file", filepath.Join(dir, "nope.txt")}, code: cmdutil.ExitError},
		"missing chain":               {args: []string{"--seq", "1", "--output", "x", "--db", filepath.Join(dir, "nope.db")}, code: cmdutil.ExitError},
		"neither output option":       {args: []string{"--seq", "1"}, code: cmdutil.ExitUsage},
		"both output options":         {args: []string{"--seq", "1", "--output", "x", "--output-file", outFile}, code: cmdutil.ExitUsage},
		"no seq":                      {args: []string{"--output", "x"}, code: cmdutil.ExitUsage},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"replay", "--db", db}, tc.args...)
			out, err := runCairn(t, args...)
			if got := cmdutil.ExitCode(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", got, err, tc.code, out)
			}
			if tc.reason == "" {
				return
			}
			var r map[string]any
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, out)
			}
			match := tc.code == cmdutil.ExitOK
			if r["reason_code"] != tc.reason || r["match"] != match || r["model_version"] != tc.mv {
				t.Fatalf("verdict %v, want reason code %s, model version %v", r, tc.reason, tc.mv)
			}
			// The documented members, as POST /api/replay/verify names them.
			reason, isText := r["reason"].(string)
			_, original := r["original_hash"].(string)
			replayHash, _ := r["replay_hash"].(string)
			_, det := r["deterministic"].(bool)
			if (r["reason"] == nil) != match || (!match && (!isText || reason == "")) ||
				original != (tc.reason != chain.ReasonNoReplayContext) || len(replayHash) != 64 || !det {
				t.Errorf("documented members of %v", r)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.db")); !os.IsNotExist(err) {
		t.Errorf("replay created a chain file: %v", err)
	}
}
