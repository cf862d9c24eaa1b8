package analysis

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// tokenSpans writes a JSON Lines file of spans with these output tokens (as strings
// every other span, as pkg/chain writes big integers), 100 input tokens and 800 ms each.
func tokenSpans(t *testing.T, dir, name string, first int, outputs ...int) string {
	t.Helper()
	var b strings.Builder
	for i, out := range outputs {
		n := first + i
		tokens := fmt.Sprint(out)
		if n%2 == 0 {
			tokens = `"` + tokens + `"`
		}
		start := int64(1795262400000000000) + int64(n)*1e9
		fmt.Fprintf(&b, `{"name":"chat gpt-4o","kind":"client","attributes":{"gen_ai.request.model":"gpt-4o","cloud.region":"eu-west-1",`+
			`"gen_ai.usage.input_tokens":100,"gen_ai.usage.output_tokens":%s},"status_code":"OK","status_description":"",`+
			`"start_time_ns":"%d","end_time_ns":"%d","trace_id":"%032x","span_id":"%016x"}`+"\n", tokens, start, start+800_000_000, n, n)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRegressionCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	withSecret := []string{"--db", db, "--secret-hex", testSecretHex}
	ordinary := make([]int, 20)
	for i := range ordinary {
		ordinary[i] = 200 + i%5
	}
	if _, err := runCairn(t, append([]string{"chain", "seal", "--file", tokenSpans(t, dir, "a.jsonl", 1, ordinary...)}, withSecret...)...); err != nil {
		t.Fatal(err)
	}
	// regression runs the command and decodes its one line of output.
	regression := func(args ...string) (RegressionSummary, int, error) {
		t.Helper()
		out, err := runCairn(t, append([]string{"regression"}, args...)...)
		var sum RegressionSummary
		if out == "" && err != nil {
			return sum, cmdutil.ExitCode(err), err
		}
		if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(lines) != 1 {
			t.Fatalf("%d lines of output, want one:\n%s", len(lines), out)
		}
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if jerr := dec.Decode(&sum); jerr != nil {
			t.Fatalf("output is not a summary: %v\n%s", jerr, out)
		}
		return sum, cmdutil.ExitCode(err), err
	}

	sum, code, err := regression(append(withSecret, "--window", "20")...)
	want := RegressionSummary{RanAt: sum.RanAt, RunID: 1, Saved: true, Window: 20, ZThreshold: 3, EntriesConsidered: 20, FirstSeq: 1, LastSeq: 20,
		DimensionsChecked:      []string{analysis.DimInputTokens, analysis.DimOutputTokens, analysis.DimLatencyMS},
		DimensionsInsufficient: []string{analysis.DimCostUSD}, // gpt-4o has no price and the spans record no cost
		Anomalies:              map[string]int{analysis.DimInputTokens: 0, analysis.DimOutputTokens: 0, analysis.DimCostUSD: 0, analysis.DimLatencyMS: 0},
		SampleSeqs:             map[string][]int64{}}
	if code != cmdutil.ExitOK || sum.RanAt.IsZero() || !reflect.DeepEqual(sum, want) {
		t.Fatalf("ordinary chain: exit %d (%v)\n got %+v\nwant %+v", code, err, sum, want)
	}

	// An outlier at seq 21, in the middle of a window of 10 (seq 17 to 26).
	if _, err := runCairn(t, append([]string{"chain", "seal", "--file", tokenSpans(t, dir, "b.jsonl", 21, 9000, 201, 202, 203, 204, 200)}, withSecret...)...); err != nil {
		t.Fatal(err)
	}
	sum, code, err = regression(append(withSecret, "--window", "10", "--z-threshold", "2.5")...)
	if code != ExitDrift || sum.RunID != 2 || sum.TotalAnomalies != 1 || sum.Anomalies[analysis.DimOutputTokens] != 1 ||
		!reflect.DeepEqual(sum.SampleSeqs, map[string][]int64{analysis.DimOutputTokens: {21}}) || sum.FirstSeq != 17 || sum.LastSeq != 26 ||
		!strings.Contains(err.Error(), "output_tokens 1 (seq 21)") {
		t.Fatalf("drift: exit %d (%v), %+v", code, err, sum)
	}

	// --no-save needs no secret and writes nothing.
	sum, code, _ = regression("--db", db, "--no-save", "--window", "10")
	if code != ExitDrift || sum.RunID != 0 || sum.Saved || sum.RanAt.IsZero() || sum.TotalAnomalies != 1 {
		t.Fatalf("--no-save: exit %d, %+v", code, sum)
	}
	if sum, _, _ = regression(withSecret...); sum.RunID != 3 {
		t.Fatalf("the run after --no-save has id %d, want 3", sum.RunID)
	}

	for name, c := range map[string]struct {
		args []string
		want int
	}{
		"window too small":  {append(withSecret, "--window", "4"), cmdutil.ExitUsage},
		"negative z":        {append(withSecret, "--z-threshold", "-1"), cmdutil.ExitUsage},
		"no secret to save": {[]string{"--db", db}, cmdutil.ExitUsage},
		"not a number":      {append(withSecret, "--window", "many"), cmdutil.ExitUsage},
		"no chain":          {[]string{"--db", filepath.Join(dir, "none.db"), "--no-save"}, cmdutil.ExitError},
	} {
		t.Run(name, func(t *testing.T) {
			if _, code, err := regression(c.args...); code != c.want {
				t.Errorf("exit %d, want %d (%v)", code, c.want, err)
			}
		})
	}
}
