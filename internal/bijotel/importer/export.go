package importer

import (
	"fmt"
	"io"
	"time"

	"github.com/cairn-dev/cairn/internal/bijotel/legacydb"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// newExportWriter starts the legacy export of the rows sum describes, as the original
// writes it: bijotel-chain-v2 signed by o.SignKey when given, else v1. A chain whose start
// was archived (first seq above 1) is exported as the segment it is, as the original's
// export --range FIRST:LAST writes it, so that its first link can be checked.
func newExportWriter(w io.Writer, o Options, sum legacydb.Summary, createdAt string) (*bijotel.ExportWriter, error) {
	at, err := time.Parse(time.RFC3339Nano, createdAt)
	if err != nil {
		return nil, fmt.Errorf("legacy export time %q: %w", createdAt, err)
	}
	h := bijotel.ExportHeader{
		Format: bijotel.FormatV1, CreatedAt: at, EntriesCount: sum.Rows, HeadHash: sum.HeadHMACHash,
		ChainSignature: bijotel.ChainSignature(o.LegacySecret, sum.HeadHMACHash, sum.Rows),
	}
	if o.SignKey != nil {
		h.Format, h.SignKey = bijotel.FormatV2, o.SignKey
	}
	if sum.FirstSeq > 1 {
		h.Segment = &bijotel.Segment{
			FirstSeq: sum.FirstSeq, LastSeq: sum.LastSeq, TotalInSegment: sum.Rows, TotalInFullChain: sum.Rows,
			BoundaryPrevHash: sum.FirstPrevHash,
		}
	}
	return bijotel.NewExportWriter(w, h)
}
