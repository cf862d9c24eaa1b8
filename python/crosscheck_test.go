package python_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// recordCase is one call of both record helpers. Temperature and TopP are number texts:
// Go parses them as float64; Python passes an integer's text as an int, anything else as
// a float.
type recordCase struct {
	Prompt       string `json:"prompt"`
	Output       string `json:"output"`
	Model        string `json:"model"`
	Seed         *int64 `json:"seed"`
	Temperature  string `json:"temperature"`
	TopP         string `json:"top_p"`
	ModelVersion string `json:"model_version"`
}

// verifyCase is one call of both verify helpers: entry seq with body Body (no entry at
// all when NoEntry), and a replayed output.
type verifyCase struct {
	name    string
	seq     int64
	body    []byte
	noEntry bool
	output  string
}

func seed(n int64) *int64 { return &n }

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func recordCases() []recordCase {
	large := strings.Repeat("λόγος — the word, 言葉 🪨 ", 50000) // about 1.6 MB
	return []recordCase{
		{Prompt: "What is the capital of France?", Output: "The capital of France is Paris.", Model: "gpt-4o",
			Seed: seed(42), Temperature: "0", TopP: "1", ModelVersion: "gpt-4o-2024-08-06"},
		{Prompt: "p", Output: "o", Model: "m", Temperature: "0.1", TopP: "0.9"},
		{Prompt: "p", Output: "o", Model: "m", Seed: seed(0), Temperature: "1e-7", TopP: "1e-07"},
		{Prompt: "café — 日本語 👩‍👩‍👧 \u202eRTL\u202c \x00nul \u2028 <b>&amp;</b> \"q\" \\", Output: "é\u0301 ☃ 😀",
			Model: "modèle", Seed: seed(-1), Temperature: "2", TopP: "1"},
		{Prompt: "", Output: "", Model: "", Temperature: "0", TopP: "0", ModelVersion: ""},
		{Prompt: large, Output: large[:len(large)/2], Model: "m", Seed: seed(7), Temperature: "0.7", TopP: "0.95"},
		{Prompt: "p", Output: "o", Model: "m", Seed: seed(math.MaxInt64), Temperature: "NaN", TopP: "+Inf"},
		{Prompt: "p", Output: "o", Model: "m", Seed: seed(math.MinInt64), Temperature: "-Inf", TopP: "1e20"},
		{Prompt: "p", Output: "o", Model: "m", Seed: seed(1<<53 - 1), Temperature: "-9007199254740993", TopP: "1.2345678901234567e19"},
		{Prompt: "p", Output: "o", Model: "m", Seed: seed(1 << 53), Temperature: "5e-324", TopP: "1e21"},
		{Prompt: "p", Output: "o", Model: "m", Seed: seed(-(1 << 53)), Temperature: "-0.0", TopP: "0.30000000000000004"},
		{Prompt: "p", Output: "o", Model: "m", Temperature: "9007199254740993", TopP: "123456789012345678901234"},
		{Prompt: "p", Output: "o", Model: "gpt-4o", Temperature: "1", TopP: "1", ModelVersion: "gpt-4o-2024-08-06"},
	}
}

// goRecord is RecordReplayContext on c.
func goRecord(t *testing.T, c recordCase) map[string]any {
	t.Helper()
	temp, err1 := strconv.ParseFloat(c.Temperature, 64)
	topP, err2 := strconv.ParseFloat(c.TopP, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("case numbers %q %q: %v %v", c.Temperature, c.TopP, err1, err2)
	}
	return chain.RecordReplayContext(c.Prompt, c.Output, c.Model, c.Seed, temp, topP, chain.WithModelVersion(c.ModelVersion))
}

// canonicalAttrs is the canonical form of a span body holding only attrs: what sealing
// them binds.
func canonicalAttrs(t *testing.T, attrs map[string]any) []byte {
	t.Helper()
	b, err := protocol.SpanBody{Attributes: attrs}.Canonical()
	if err != nil {
		t.Fatalf("canonical %v: %v", attrs, err)
	}
	return b
}

// verifyCases builds bodies from the record cases and the hand-written odd ones.
func verifyCases(t *testing.T) []verifyCase {
	t.Helper()
	var cases []verifyCase
	for i, rc := range recordCases() {
		attrs := goRecord(t, rc)
		attrs["gen_ai.request.model"] = rc.Model
		body, err := protocol.SpanBody{Name: "chat", Kind: "client", Attributes: attrs, StatusCode: "OK",
			StartTimeNS: 1, EndTimeNS: 2, TraceID: strings.Repeat("ab", 16), SpanID: strings.Repeat("cd", 8)}.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases,
			verifyCase{name: fmt.Sprintf("record case %d, same output", i), seq: int64(i + 1), body: body, output: rc.Output},
			verifyCase{name: fmt.Sprintf("record case %d, another output", i), seq: int64(i + 1), body: body, output: rc.Output + "!"})
	}
	h, o := sha("out"), "out"
	odd := map[string]struct {
		body   string
		output string
	}{
		"not JSON":                        {`not json`, o},
		"empty body":                      {``, o},
		"null":                            {`null`, o},
		"an array":                        {`[]`, o},
		"a string":                        {`"x"`, o},
		"a number":                        {`1`, o},
		"no attributes":                   {`{}`, o},
		"attributes null":                 {`{"attributes":null}`, o},
		"attributes an array":             {`{"attributes":[]}`, o},
		"attributes a string":             {`{"attributes":"x"}`, o},
		"attributes empty":                {`{"attributes":{}}`, o},
		"trailing data":                   {`{"attributes":{}} x`, o},
		"a byte order mark":               {"\ufeff{\"attributes\":{}}", o},
		"NaN":                             {`{"attributes":{"x":NaN}}`, o},
		"uppercase hash":                  {`{"attributes":{"cairn.replay.output_hash":"` + strings.ToUpper(h) + `"}}`, o},
		"short hash":                      {`{"attributes":{"cairn.replay.output_hash":"` + h[1:] + `"}}`, o},
		"hash a number":                   {`{"attributes":{"cairn.replay.output_hash":1}}`, o},
		"hash null":                       {`{"attributes":{"cairn.replay.output_hash":null}}`, o},
		"hash an object":                  {`{"attributes":{"cairn.replay.output_hash":{}}}`, o},
		"deterministic a string":          {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.deterministic":"true"}}`, "x"},
		"deterministic a number":          {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.deterministic":1}}`, "x"},
		"deterministic null":              {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.deterministic":null}}`, "x"},
		"deterministic false, a seed":     {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.deterministic":false,"cairn.replay.seed":1}}`, "x"},
		"no flag, a seed":                 {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.seed":null}}`, "x"},
		"no flag, no seed":                {`{"attributes":{"cairn.replay.output_hash":"` + h + `"}}`, "x"},
		"original names":                  {`{"attributes":{"bijotel.replay.output_hash":"` + h + `","bijotel.replay.seed":3,"bijotel.replay.model_version":"v"}}`, "x"},
		"original names, match":           {`{"attributes":{"bijotel.replay.output_hash":"` + h + `","bijotel.replay.deterministic":true}}`, o},
		"earlier names":                   {`{"attributes":{"cairn.replay.output_sha256":"` + h + `","cairn.replay.model":"old","cairn.replay.deterministic":true}}`, "x"},
		"two hashes":                      {`{"attributes":{"cairn.replay.output_hash":"` + h + `","bijotel.replay.output_hash":"` + sha("x") + `"}}`, o},
		"one hash twice":                  {`{"attributes":{"cairn.replay.output_hash":"` + h + `","bijotel.replay.output_hash":"` + h + `"}}`, o},
		"1 and 1.0":                       {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.temperature":1,"bijotel.replay.temperature":1.0}}`, o},
		"true and 1":                      {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.deterministic":true,"bijotel.replay.deterministic":1}}`, o},
		"1 and \"1\"":                     {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.seed":1,"bijotel.replay.seed":"1"}}`, o},
		"1e400 twice":                     {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.top_p":1e400,"bijotel.replay.top_p":1e400}}`, o},
		"1e400 and its text":              {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.top_p":1e400,"bijotel.replay.top_p":"1e400"}}`, o},
		"1e400 and 1E400":                 {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.top_p":1e400,"bijotel.replay.top_p":1E400}}`, o},
		"equal objects":                   {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.seed":{"a":[1,"x",null]},"bijotel.replay.seed":{"a":[1.0,"x",null]}}}`, o},
		"different objects":               {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.seed":{"a":[1]},"bijotel.replay.seed":{"a":[2]}}}`, o},
		"model version null":              {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.model_version":null,"cairn.replay.deterministic":true}}`, "x"},
		"model version a number":          {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.model_version":4,"cairn.replay.deterministic":true}}`, "x"},
		"model null":                      {`{"attributes":{"gen_ai.request.model":null,"cairn.replay.output_hash":"` + h + `"}}`, o},
		"response model":                  {`{"attributes":{"gen_ai.response.model":"r","cairn.replay.output_hash":"` + h + `"}}`, o},
		"request model a number":          {`{"attributes":{"gen_ai.request.model":1,"gen_ai.response.model":"r"}}`, o},
		"attributes twice":                {`{"attributes":{"cairn.replay.output_hash":"` + h + `"},"attributes":{"cairn.replay.deterministic":true}}`, "x"},
		"attributes, then null":           {`{"attributes":{"cairn.replay.output_hash":"` + h + `"},"attributes":null}`, o},
		"attributes, then a string":       {`{"attributes":{"cairn.replay.output_hash":"` + h + `"},"attributes":"x"}`, o},
		"Attributes":                      {`{"Attributes":{"cairn.replay.output_hash":"` + h + `"}}`, o},
		"attributeſ":                      {`{"attributeſ":{"cairn.replay.output_hash":"` + h + `"}}`, o},
		"a key twice":                     {`{"attributes":{"cairn.replay.output_hash":"` + sha("x") + `","cairn.replay.output_hash":"` + h + `"}}`, o},
		"an escaped key":                  {`{"attributes":{"cairn.replay.output\u005fhash":"` + h + `"}}`, o},
		"whitespace":                      {" \t\r\n{ \"attributes\" : { \"cairn.replay.output_hash\" : \"" + h + "\" } } \n", o},
		"invalid UTF-8 in a version":      {"{\"attributes\":{\"cairn.replay.output_hash\":\"" + h + "\",\"cairn.replay.deterministic\":true,\"cairn.replay.model_version\":\"a\xff\xe2\x82b\xed\xa0\x80c\xc0\x80\"}}", "x"},
		"invalid UTF-8 outside a string":  {"{\"attributes\":{}}\xff", o},
		"lone surrogate escapes":          {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.deterministic":true,"cairn.replay.model_version":"\ud800x\udc00\ud83d\ude00\ud83dA"}}`, "x"},
		"surrogates alike after decoding": {`{"attributes":{"cairn.replay.output_hash":"` + h + `","cairn.replay.model_version":"\ud800","cairn.replay.model":"\udfff"}}`, o},
		"a control character":             {"{\"attributes\":{\"cairn.replay.model_version\":\"a\x01\"}}", o},
		"deep nesting elsewhere":          {`{"attributes":{"cairn.replay.output_hash":"` + h + `","deep":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}}`, o},
		"unicode output":                  {`{"attributes":{"cairn.replay.output_hash":"` + sha("日本語 😀") + `"}}`, "日本語 😀"},
		"empty output":                    {`{"attributes":{"cairn.replay.output_hash":"` + sha("") + `"}}`, ""},
	}
	for name, c := range odd {
		cases = append(cases, verifyCase{name: name, seq: 3, body: []byte(c.body), output: c.output})
	}
	cases = append(cases,
		verifyCase{name: "no entry", noEntry: true, output: "x"},
		verifyCase{name: "seq 0", seq: 0, body: []byte(`{"attributes":{}}`), output: "x"},
		verifyCase{name: "a large seq", seq: math.MaxInt64, body: []byte(`{"attributes":{}}`), output: "x"},
		verifyCase{name: "a negative seq", seq: -5, body: []byte(`{"attributes":{}}`), output: "x"},
		verifyCase{name: "invalid UTF-8 output", seq: 1, body: []byte(`{"attributes":{"cairn.replay.output_hash":"` + sha("\xff") + `"}}`), output: "\xff"},
	)
	return cases
}

// TestPythonHelpersMatchGo runs record_replay_context and verify_replay on the inputs
// RecordReplayContext and VerifyReplay get, and requires the same answers: the same
// attributes with the same JSON values (compared in canonical form, which is what a seal
// binds), and the same verdict member for member.
func TestPythonHelpersMatchGo(t *testing.T) {
	records := recordCases()
	verifies := verifyCases(t)
	type wireVerify struct {
		Seq       int64   `json:"seq"`
		BodyB64   *string `json:"body_b64"`
		OutputB64 string  `json:"output_b64"`
	}
	in := struct {
		Record []recordCase `json:"record"`
		Verify []wireVerify `json:"verify"`
	}{Record: records}
	for _, c := range verifies {
		w := wireVerify{Seq: c.seq, OutputB64: base64.StdEncoding.EncodeToString([]byte(c.output))}
		if !c.noEntry {
			b := base64.StdEncoding.EncodeToString(c.body)
			w.BodyB64 = &b
		}
		in.Verify = append(in.Verify, w)
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Record []json.RawMessage `json:"record"`
		Verify []json.RawMessage `json:"verify"`
	}
	if err := json.Unmarshal(runPython(t, stdin, "testdata/crosscheck.py"), &out); err != nil {
		t.Fatalf("python's answer: %v", err)
	}
	if len(out.Record) != len(records) || len(out.Verify) != len(verifies) {
		t.Fatalf("python answered %d and %d results, want %d and %d", len(out.Record), len(out.Verify), len(records), len(verifies))
	}

	for i, c := range records {
		goAttrs := goRecord(t, c)
		var pyAttrs map[string]any
		if err := json.Unmarshal(out.Record[i], &pyAttrs); err != nil {
			t.Fatalf("record case %d: %v", i, err)
		}
		want, got := canonicalAttrs(t, goAttrs), canonicalAttrs(t, pyAttrs)
		if !bytes.Equal(got, want) {
			t.Errorf("record case %d (seed %v, temperature %s, top_p %s):\npython %.600s\ngo     %.600s",
				i, c.Seed, c.Temperature, c.TopP, got, want)
		}
	}

	for i, c := range verifies {
		var entry *protocol.Entry
		if !c.noEntry {
			entry = &protocol.Entry{Seq: c.seq, CanonicalBody: c.body}
		}
		goJSON, err := json.Marshal(chain.VerifyReplay(entry, c.output))
		if err != nil {
			t.Fatal(err)
		}
		want, got := decodeNumbers(t, goJSON), decodeNumbers(t, out.Verify[i])
		if !reflect.DeepEqual(got, want) {
			t.Errorf("verify %q:\npython %s\ngo     %s", c.name, out.Verify[i], goJSON)
		}
	}
}

// decodeNumbers decodes a JSON object keeping numbers as their text.
func decodeNumbers(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}
