package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestReceiptLegs counts the legs of committed receipt vectors: a logged receipt has
// both, a pending one its signature only, one whose log proof does not verify or is bound
// to no log its signature only, and a forged one none.
func TestReceiptLegs(t *testing.T) {
	for name, want := range map[string]int{
		"receipt-logged":                        LegsLogged,
		"receipt-logged-resigned":               LegsLogged,
		"receipt-valid":                         LegsSigned,
		"receipt-logged-entry-of-another-log":   LegsSigned,
		"receipt-logged-integrated-time-edited": LegsSigned,
		"receipt-with-tlog-entry":               LegsSigned, // legacy, no log key given
		"receipt-flipped-signature":             LegsNone,
		"receipt-truncated":                     LegsNone,
	} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(vectorDir, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var v vector
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			if got := ReceiptLegs([]byte(v.Inputs["receipt"]), nil); got != want {
				t.Errorf("%s (%s): %d legs, want %d", name, v.Desc, got, want)
			}
		})
	}
}
