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
