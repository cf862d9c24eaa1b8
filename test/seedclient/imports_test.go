package seedclient

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyTheStandardLibrary holds the package to what it claims: a client of the
// seed's table needs nothing of Cairn, nor of anyone else.
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/cairn-dev/cairn/test/seedclient" {
			t.Errorf("the seed client imports %s", p)
		}
	}
}

// TestDecodeStrictRefusesAnotherType checks that the answer reader fails on the seed's
// members under other types, missing or null, and takes members the seed does not name.
func TestDecodeStrictRefusesAnotherType(t *testing.T) {
	var an anchorAnswer
	for _, body := range []string{
		`{"anchor_id":"a","cross_anchor_hash":"h","participating_operators":[{"operator_id":"op_1"}],"tlog_log_index":null,"tlog_url":null,"submissions_anchored":1}`,
		`{"anchor_id":"a","cross_anchor_hash":"h","tlog_log_index":null,"tlog_url":null,"submissions_anchored":1}`,
		`{"anchor_id":null,"cross_anchor_hash":"h","participating_operators":[],"tlog_log_index":null,"tlog_url":null,"submissions_anchored":1}`,
		`{"anchor_id":"a","cross_anchor_hash":"h","participating_operators":[],"tlog_log_index":"3","tlog_url":null,"submissions_anchored":1}`,
	} {
		if err := decodeStrict("anchor", []byte(body), anchorMembers, &an); err == nil {
			t.Errorf("decodeStrict took %s", body)
		}
	}
	ok := `{"anchor_id":"a","cross_anchor_hash":"h","participating_operators":["op_1"],"tlog_log_index":3,"tlog_url":null,"submissions_anchored":1,"cairn":{}}`
	if err := decodeStrict("anchor", []byte(ok), anchorMembers, &an); err != nil || an.ParticipatingOperators[0] != "op_1" {
		t.Errorf("decodeStrict(%s): %v", ok, err)
	}
}
