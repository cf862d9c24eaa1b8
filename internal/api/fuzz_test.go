package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/internal/consensus"
	"github.com/cairn-dev/cairn/internal/policy"
)

// fuzzBody is one route's request body: a new value to decode into, the body limit it is
// read with and the checks the route runs on it after decoding (nil: none).
type fuzzBody struct {
	route   string
	limit   int64
	emptyOK bool
	value   func() any
	check   func(any) error
}

// fuzzBodies are the JSON bodies of the chain service's routes, as each route decodes
// and checks them before it touches the chain.
var fuzzBodies = []fuzzBody{
	{"/api/chain/verify", maxJSONBodyBytes, true, func() any { return &verifyRequest{} }, func(v any) error { return v.(*verifyRequest).resolve() }},
	{"/api/export", maxJSONBodyBytes, true, func() any { return &exportRequest{} }, nil},
	{"/api/replay/verify", maxJSONBodyBytes, false, func() any { return &replayRequest{} }, func(v any) error { _, err := v.(*replayRequest).replayed(); return err }},
	{"/api/regression/run", maxJSONBodyBytes, true, func() any { return &regressionRunRequest{} }, nil},
	{"/api/energy/estimate", maxJSONBodyBytes, false, func() any { return &analysis.EnergyRequest{} }, func(v any) error { return v.(*analysis.EnergyRequest).Validate() }},
	{"/api/policy/evaluate", policy.MaxRequestBytes, false, func() any { return &policy.Request{} }, func(v any) error { return v.(*policy.Request).Validate() }},
	{"/api/consensus/evaluate", consensus.MaxRequestBytes, false, func() any { return &consensus.Request{} }, func(v any) error { return v.(*consensus.Request).Validate() }},
}

// FuzzRequestBodies decodes arbitrary bodies as the chain service decodes each /api
// route's (the first byte picks the route) and runs the route's checks on what it takes.
// Nothing panics; a refusal is the documented 400 bad_json or 413 body_too_large; what is
// taken re-encodes to JSON that decodes to the same value (the same JSON again).
func FuzzRequestBodies(f *testing.F) {
	f.Add([]byte("\x00"))
	f.Add([]byte("\x00{\"full\":true,\"first_seq\":2,\"seq_end\":9}"))
	f.Add([]byte("\x01{\"first_seq\":1,\"last_seq\":3}"))
	f.Add([]byte("\x02{\"seq\":4,\"replayed_output\":\"Paris\"}"))
	f.Add([]byte("\x03{\"window\":10,\"z_threshold\":3}"))
	f.Add([]byte("\x04{\"model\":\"gpt-4o\",\"input_tokens\":100,\"output_tokens\":20,\"region\":\"FR\"}"))
	f.Add([]byte("\x05{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"output\":\"ok\",\"model\":\"gpt-4o\"}"))
	f.Add([]byte("\x06{\"prompt\":\"2+2?\",\"models\":[\"a\",\"b\"]}"))
	f.Add([]byte("\x05[[[[[[[["))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		b, body := fuzzBodies[int(data[0])%len(fuzzBodies)], data[1:]
		decode := func(body []byte, v any) error {
			r := httptest.NewRequest(http.MethodPost, b.route, bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			return decodeJSONLimit(httptest.NewRecorder(), r, v, b.emptyOK, b.limit)
		}
		v := b.value()
		if err := decode(body, v); err != nil {
			var re *requestError
			if !errors.As(err, &re) || (re.code != codeBadJSON && re.code != codeBodyTooLarge && re.code != codeUnsupportedMedia) {
				t.Fatalf("%s: refused with %v, not a documented error", b.route, err)
			}
			return
		}
		if b.check != nil {
			_ = b.check(v)
		}
		enc, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %q decodes to %+v, which does not encode: %v", b.route, body, v, err)
		}
		again := b.value()
		if err := decode(enc, again); err != nil {
			t.Fatalf("%s: %q decodes to %+v, whose encoding %s is refused: %v", b.route, body, v, enc, err)
		}
		if enc2, err := json.Marshal(again); err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("%s: %q: the round trip changes %s into %s (%v)", b.route, body, enc, enc2, err)
		}
	})
}
