package cmdtest

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// OneJSONDocument decodes out as exactly one JSON object and fails otherwise.
func OneJSONDocument(t *testing.T, what, out string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s printed no JSON document: %v\n%s", what, err, out)
	}
	if dec.More() {
		t.Fatalf("%s printed more than one JSON document:\n%s", what, out)
	}
	return doc
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// SnakeKeys fails for every object member of v, at any depth, not in snake_case.
func SnakeKeys(t *testing.T, what string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			if !snakeCase.MatchString(k) {
				t.Errorf("%s: member %q is not snake_case", what, k)
			}
			SnakeKeys(t, what, m)
		}
	case []any:
		for _, m := range v {
			SnakeKeys(t, what, m)
		}
	}
}

// TestUnknownSubcommandIsAUsageError: a mistyped subcommand of any group is an error that
// suggests the nearest one and exits 2, not the group's help and 0.
