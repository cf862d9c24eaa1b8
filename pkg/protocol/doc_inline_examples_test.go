package protocol

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// TestProtocolDocInlineExamples checks the examples docs/PROTOCOL.md gives in its prose,
// outside the worked examples: the number rule and reading rules of §1, the bodies §2
// calls non-canonical, the integers §3 calls malformed, §4's table of small-order keys,
// and §7's times. Each input is
// copied from the page.
func TestProtocolDocInlineExamples(t *testing.T) {
	// §1, the number rule and RFC 8785's numbers.
	for in, want := range map[string]string{
		"4.50": "4.5", "1E30": "1e+30", "-0": "0", "1e21": "1e+21", "1E21": "1e+21",
		"9007199254740991": "9007199254740991",
	} {
		if got, err := canonical.Transform([]byte(in)); err != nil || string(got) != want {
			t.Errorf("§1: %s canonicalizes to %q (%v), the page says %s", in, got, err, want)
		}
	}
	for _, in := range []string{"9007199254740992", "100000000000000000000000", "1.5e20", "1e400"} {
		if got, err := canonical.Transform([]byte(in)); err == nil {
			t.Errorf("§1: %s canonicalizes to %s; the page says it is an error", in, got)
		}
	}
	// §1, reading JSON.
	for name, in := range map[string]string{
		"byte order mark": "\ufeff{}", "lone surrogate": `"\ud800"`, "low surrogate alone": `"\udc00"`,
		"member twice": `{"a":1,"a":1}`, "member twice after unescaping": `{"a":1,"\u0061":1}`,
		"data after the value": `{} {}`, "1001 levels": strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
	} {
		if _, err := canonical.Transform([]byte(in)); err == nil {
			t.Errorf("§1: %s is read; the page says it is an error", name)
		}
	}
	if _, err := canonical.Transform([]byte(strings.Repeat("[", 1000) + strings.Repeat("]", 1000))); err != nil {
		t.Errorf("§1: 1000 levels: %v", err)
	}

	// §2, bodies that are not canonical: each spelling inside an otherwise canonical body.
	body := testChain(t, 1, 8)[0].CanonicalBody
	if err := canonical.CheckObject(body, MaxBodyNesting+1, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, spelling := range []string{`"\/"`, `"\u0041"`, `"\u000a"`, `"\u001F"`, `1.0`, `1E2`, `-0`, `1e400`, `9007199254740992`} {
		bad := bytes.Replace(body, []byte(`"attributes":{`), []byte(`"attributes":{"0":`+spelling+`,`), 1)
		if err := canonical.CheckObject(bad, MaxBodyNesting+1, nil, nil); err == nil {
			t.Errorf("§2: a body with %s passes; the page says non_canonical_body", spelling)
		}
	}
	for _, notObject := range []string{`[]`, `"x"`, `1`, `null`} {
		if err := canonical.Check([]byte(notObject)); err != nil {
			t.Errorf("§2: %s is its own RFC 8785 form, as the page says: %v", notObject, err)
		}
		if err := canonical.CheckObject([]byte(notObject), MaxBodyNesting+1, nil, nil); err == nil {
			t.Errorf("§2: %s passes as a body; the page says a body is an object", notObject)
		}
	}

	// §3, integers and escapes of an export.
	honest := writeExport(t, testChain(t, 3, 8), testKey, false)
	for _, c := range [][2]string{
		{`"last_seq":3`, `"last_seq":3e0`}, {`"last_seq":3`, `"last_seq":3.0`}, {`"first_seq":1`, `"first_seq":-0`},
		{`"first_seq":1`, `"first_seq":01`}, {`"timestamp_ns":"1`, `"timestamp_ns":"\u0031`},
	} {
		bad := bytes.Replace(honest, []byte(c[0]), []byte(c[1]), 1)
		if bytes.Equal(bad, honest) {
			t.Fatalf("§3: %s is not in the export", c[0])
		}
		if _, err := VerifyExport(bytes.NewReader(bad), VerifyOptions{Secret: testSecret}); verdict(err) != "malformed" {
			t.Errorf("§3: %s gives %s; the page says malformed", c[1], verdict(err))
		}
	}

	// §4, the small-order keys: each encoding of the table, with the sign bit either way.
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| [^|]+ \\| [0-9]+ \\| `([0-9a-f]{64})` \\|$").FindAllSubmatch(doc, -1)
	if len(rows) != 7 {
		t.Fatalf("§4: %d rows of small-order keys on the page, want 7", len(rows))
	}
	for _, r := range rows {
		for _, sign := range []byte{0, 0x80} {
			raw, _ := hex.DecodeString(string(r[1]))
			raw[31] |= sign
			if _, err := ParsePublicKeyPEM(spkiPEM(t, raw)); !errors.Is(err, ErrMalformed) {
				t.Errorf("§4: key %x is read: %v", raw, err)
			}
		}
	}

	// §7, times and IDs.
	if _, err := ParseAnchoredAt("2026-11-21T18:00:00.120000000Z"); err != nil {
		t.Errorf("§7: anchored_at: %v", err)
	}
	if !wellFormedAnchorID("anchor-20261121-001") || wellFormedAnchorID("anchor_20260910T034501Z_9224cd") {
		t.Error("§7: anchor_id is anchor-YYYYMMDD-NNN, and the original's form is not")
	}
}
