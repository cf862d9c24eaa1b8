package canonical

import (
	"bytes"
	"testing"
)

// checkAgrees requires Check(in) to accept exactly when Transform(in) returns in.
func checkAgrees(t *testing.T, in []byte) {
	out, err := Transform(in)
	canonical := err == nil && bytes.Equal(out, in)
	if got := Check(in); (got == nil) != canonical {
		t.Errorf("Check(%q) = %v, but Transform gives %q, %v", in, got, out, err)
	}
}

func TestCheckAgreesWithTransform(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":1}`, `{"a":1,"a":2}`, `{"b":1,"a":2}`, `{ "a":1}`, `{"a":1}` + "\n", `"\u0041"`, `"\/"`,
		`"\u001F"`, `"\u001f"`, `"\u000a"`, `"\n"`, `"\ud800"`, "\"\xff\"", `1e400`, `1.0`, `1E2`, `1e+21`, `1e21`, `-0`, `0`,
		`9007199254740991`, `9007199254740992`, `0.002`, `2e-3`, `1.5`, `-1.5`, `1e-7`, `true`, `nul`, `{"\u0001":1,"a":2}`,
		`{"a":2,"\u0001":1}`, `{"\n":1,"\u000b":2}`, `{"\u000b":1,"\n":2}`, "{\"\ue000\":1,\"\U0001F600\":2}",
		"{\"\U0001F600\":1,\"\ue000\":2}", `{"a":{"b":[1,2,{"c":null}]}}`, `[1,]`, `{"a"}`, `"\"\\"`, "\"\x7f\"",
	} {
		checkAgrees(t, []byte(s))
	}
}

func FuzzCheckAgreesWithTransform(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"b":[1.5,"\n"],"a":null}`, `1e+21`, "{\"\ue000\":1,\"\U0001F600\":2}", `"\u001f"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAgrees)
}

// fastAgrees requires the fast path to accept only what checkSlow accepts, with the
// same depth limit and the same collected members; and Check to agree with Transform.
func fastAgrees(t *testing.T, in []byte) {
	checkAgrees(t, in)
	names := []string{"name", "kind", "a", "b", ""}
	for _, depth := range []int{1, 2, 3, maxDepth} {
		fast, slow := make([][]byte, len(names)), make([][]byte, len(names))
		if !fastCheck(in, depth, names, fast) {
			continue
		}
		if err := checkSlow(in, depth, names, slow); err != nil {
			t.Fatalf("fast path accepts %q at depth %d, checkSlow refuses it: %v", in, depth, err)
		}
		for i := range names {
			if !bytes.Equal(fast[i], slow[i]) || (fast[i] == nil) != (slow[i] == nil) {
				t.Fatalf("%q: member %q is %q by the fast path, %q by checkSlow", in, names[i], fast[i], slow[i])
			}
		}
	}
}

// TestFastCheckAgrees holds the fast path to checkSlow on texts at the edges of what it
// accepts.
func TestFastCheckAgrees(t *testing.T) {
	accepted := 0
	for _, s := range []string{
		`{}`, `{"a":1}`, `{"a":1,"b":2}`, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"":1,"a":2}`, `{"a":2,"":1}`,
		`{"a":"x","b":"y","kind":"client","name":"n"}`, `{"name":1}`, `{"name":{"name":"inner"}}`, `{"name":"a\nb"}`,
		`{"name":"a\\b"}`, `{"name":"\u0041"}`, "{\"name\":\"a\x01b\"}", "{\"name\":\"na\u00efve \u2713 \U0001F600\"}",
		"{\"name\":\"\xff\"}", "{\"name\":\"\xed\xa0\x80\"}", "{\"name\":\"\xc0\xaf\"}", "{\"n\xc3\xa9\":1}", "{\"a\x7f\":1}",
		`{"a":0}`, `{"a":-0}`, `{"a":-1}`, `{"a":01}`, `{"a":-01}`, `{"a":123456789012345}`, `{"a":1234567890123456}`,
		`{"a":-12345678901234}`, `{"a":-123456789012345}`, `{"a":1.5}`, `{"a":1e2}`, `{"a":1E2}`, `{"a":+1}`, `{"a":-}`,
		`{"a":true,"b":false,"c":null}`, `{"a":tru}`, `{"a":truex}`, `{"a":nul}`, `{"a":[]}`, `{"a":[1,2,[3,{}]]}`,
		`{"a":[1,]}`, `{"a":[,1]}`, `{"a":{}}`, `{"a":{"b":{"c":{}}}}`, `{"a":1,}`, `{,"a":1}`, `{"a" :1}`, `{"a":1} `,
		`{"a":1}x`, `{"a":1}{}`, `{"a"}`, `{"a":}`, `{"a":1`, `{"a":"x`, `{"a`, `{`, `[]`, `"x"`, `1`, ``,
		`{"a":"q\"x"}`, `{"a":"\\"}`, `{"a":"\/"}`, `{"a":"\u001f"}`, `{"a":"\u001F"}`, `{"a":"\u000a"}`, `{"a":"\u0008"}`,
		`{"a":"\u000b"}`, `{"a":"\u0020"}`, `{"a":"\u0000"}`, `{"a":"\u007f"}`, `{"a":"\x"}`, `{"a":"\u00"}`, `{"a":"\u00e9"}`,
		`{"a":"\u0100"}`, `{"a":"\b\f\n\r\t"}`, `{"a":"\`, `{"a":"\"}`, `{"name":"q\"x"}`, `{"b":["\n",{"c":"\""}]}`,
		"\ufeff{}", `{"a":[[[[[]]]]]}`, `{"a":{"b":{"c":{"d":1}}}}`, `{"name":"x","name":"y"}`, `{"kind":"a","name":"b"}`,
	} {
		in := []byte(s)
		fastAgrees(t, in)
		if fastCheck(in, maxDepth, nil, nil) {
			accepted++
		}
	}
	if accepted < 20 {
		t.Errorf("the fast path accepted %d of the texts: it no longer serves", accepted)
	}
	// A span body as Cairn seals them takes the fast path, its members collected.
	body := []byte(`{"attributes":{"gen_ai.request.model":"gpt-4o","n":7,"note":"naïve \"quoted\" ✓"},` +
		`"end_time_ns":"1795262499000000000","kind":"client","name":"chat gpt-4o","span_id":"0000000000000007",` +
		`"start_time_ns":"1795262400000000000","status_code":"OK","status_description":"","trace_id":"00000000000000000000000000000007"}`)
	values := make([][]byte, 3)
	if !fastCheck(body, 513, []string{"name", "kind", "span_id"}, values) || string(values[0]) != "chat gpt-4o" ||
		string(values[1]) != "client" || string(values[2]) != "0000000000000007" {
		t.Errorf("the fast path stands aside for a span body, or collects %q", values)
	}
	fastAgrees(t, body)
}

func FuzzFastCheckAgrees(f *testing.F) {
	fuzzSeeds(f)
	for _, s := range []string{`{"a":[1,{"b":"x"}],"kind":"c","name":"é"}`, `{"a":-0}`, `{"a":123456789012345}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) <= maxFuzzInput {
			fastAgrees(t, in)
		}
	})
}
