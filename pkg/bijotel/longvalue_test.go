package bijotel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestBijotelExportQuotesLongValuesShort gives an export a 1.5 MB format, and an entry a
// member with a 1.5 MB name: each is refused as malformed in a message that quotes at
// most protocol.MaxQuoted bytes of it and says how long it was.
func TestBijotelExportQuotesLongValuesShort(t *testing.T) {
	s := string(bijoteltest.Export(bijoteltest.Secret(), bijoteltest.ExportSpec{Format: bijotel.FormatV2, Signed: true, FirstSeq: 1, N: 3}))
	long := strings.Repeat("x", 3<<19)
	for name, text := range map[string]string{
		"format":         strings.Replace(s, bijotel.FormatV2, long, 1),
		"unknown_member": strings.Replace(s, `"seq": 2,`, `"seq": 2, "`+long+`": 1,`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := bijotel.VerifyExport(strings.NewReader(text), bijotel.VerifyOptions{Secret: bijoteltest.Secret()})
			if !errors.Is(err, protocol.ErrMalformed) {
				t.Fatalf("error %.300v, want ErrMalformed", err)
			}
			if msg := err.Error(); len(msg) > 2*protocol.MaxQuoted+200 || !strings.Contains(msg, "… (1572864 bytes)") {
				t.Errorf("message of %d bytes: %.400s", len(msg), msg)
			}
		})
	}
}
