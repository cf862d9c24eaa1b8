package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestLongColumnIsQuotedShort changes the span_name column of entry 2 to 1.5 MB and
// expects a full and a smoke verification to report column_mismatch at seq 2 in a short
// message that says how long the value was.
func TestLongColumnIsQuotedShort(t *testing.T) {
	s, path := newStore(t)
	if _, err := s.Seal(t.Context(), testBodies(1, 3)); err != nil {
		t.Fatal(err)
	}
	execSQL(t, rawDB(t, path), `UPDATE chain SET span_name = ? WHERE seq = 2`, strings.Repeat("x", 3<<19))
	for _, o := range []VerifyOptions{{Full: true}, {From: 2}} {
		_, err := s.Verify(t.Context(), o)
		var ee *protocol.EntryError
		if !errors.As(err, &ee) || ee.Seq != 2 || ee.Reason != protocol.ReasonColumn {
			t.Fatalf("%+v: %.300v, want seq 2 %s", o, err, protocol.ReasonColumn)
		}
		if msg := err.Error(); len(msg) > 2*protocol.MaxQuoted+100 || !strings.Contains(msg, "… (1572864 bytes)") {
			t.Errorf("%+v: message of %d bytes: %.400s", o, len(msg), msg)
		}
	}
}
