package store

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestRowsReadTheSlowWay seals rows that the packed read cannot split (columns containing
// its separator) and rows large enough to fill a batch on their own, and expects them to
// verify and export like any other.
func TestRowsReadTheSlowWay(t *testing.T) {
	s, _ := newStore(t)
	bodies := testBodies(1, 1200)
	for i := range bodies {
		switch {
		case i%97 == 5:
			bodies[i].Name = "a\x1fname"
		case i%89 == 7:
			bodies[i].Kind = "\x1f"
		case i%101 == 3:
			bodies[i].Attributes["gen_ai.prompt"] = strings.Repeat("q", 300_000) // a batch of its own
		}
	}
	if _, err := s.Seal(t.Context(), bodies); err != nil {
		t.Fatal(err)
	}
	// unpack refuses the rows with a separator in a column...
	e := protocol.Entry{}
	if _, ok := unpack(&e, "6\x1f1\x1ft\x1fs\x1fa\x1fname\x1fk\x1fc\x1fp\x1fh\x1f{}"); ok || e.Seq != 6 {
		t.Errorf("unpack split a text with ten separators: %+v", e)
	}
	if body, ok := unpack(&e, "7\x1f1\x1ft\x1fs\x1fname\x1fk\x1fc\x1fp\x1fh\x1f{}"); !ok || body != "{}" || e.SpanName != "name" || e.HMACHash != "h" {
		t.Errorf("unpack: %q, %v, %+v", body, ok, e)
	}
	// ...and they are read column by column.
	for _, from := range []int64{0, 6, 100} {
		r, err := s.Verify(t.Context(), VerifyOptions{Full: true, From: from})
		if err != nil || r.Checked != 1200-max(from, 1)+1 {
			t.Fatalf("verify from %d: %+v, %v", from, r, err)
		}
	}
	var buf bytes.Buffer
	if _, err := s.Export(t.Context(), &buf, ExportOptions{Key: testKey}); err != nil {
		t.Fatal(err)
	}
	r, err := protocol.VerifyExport(&buf, protocol.VerifyOptions{Secret: testSecret, PublicKey: testKey.Public().(ed25519.PublicKey)})
	if err != nil || r.Entries != 1200 {
		t.Fatalf("export: %+v, %v", r, err)
	}
}
