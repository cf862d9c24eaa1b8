package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestExportVerdictsDoNotDependOnTheBuffer verifies honest, pretty-printed and tampered
// exports reading 1 to 16 bytes at a time, so that a buffer refill falls inside every
// token, escape and UTF-8 sequence: the verdict must be the one a 64 KiB buffer gives.
func TestExportVerdictsDoNotDependOnTheBuffer(t *testing.T) {
	exports := map[string][]byte{}
	for _, name := range []string{"valid", "valid-header-only", "column-drift", "cut-off", "unknown-member"} {
		exports[name] = exportCases[name].export(t)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, exports["valid"], "", "\t"); err != nil {
		t.Fatal(err)
	}
	exports["pretty"] = pretty.Bytes()
	exports["escapes"] = exportOfName(t, strings.Repeat("é\t\"\\ ✓ \U0001F600 ", 7))
	for name, export := range exports {
		for mode, opts := range exportModes() {
			_, err := VerifyExport(bytes.NewReader(export), opts)
			want := verdict(err)
			for size := 1; size <= 16; size++ {
				_, err := verifyExport(bytes.NewReader(export), opts, size)
				if got := verdict(err); got != want {
					t.Errorf("%s [%s], %d-byte reads: verdict %q, want %q (%v)", name, mode, size, got, want, err)
				}
			}
		}
	}
}
