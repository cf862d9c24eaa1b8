package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ImportReport says what Verify checked of the entries imported from BIJOTEL, in a chain
// that begins with a bridge record (protocol.Bridge). It is the export verifier's report
// of the same rules: both run protocol.ImportCheck.
type ImportReport = protocol.ImportReport

// ErrImportedWindow is returned by Export for a window that starts after seq 1 and holds
// entries imported behind the chain's bridge record: such an export could not show the
// bridge, and no verifier would take its imported entries (docs/PROTOCOL.md §2).
var ErrImportedWindow = errors.New("the window holds imported entries but not their bridge record (entry 1)")

// readBridge returns the chain's bridge record, or nil when entry 1 is not one (or the
// chain is empty). An entry 1 named as a bridge that fails its checks is an error, so a
// window after it cannot be verified as imported rows of a forged bridge.
func (s *Store) readBridge(ctx context.Context, tx *sql.Tx) (*protocol.Bridge, error) {
	rows, err := readRows(ctx, tx, 1, 1)
	if err != nil || len(rows) == 0 || rows[0].SpanName != protocol.BridgeSpanName {
		return nil, err
	}
	e := &rows[0]
	kind, err := protocol.CheckEntryBody(e, s.newMAC())
	if err != nil {
		return nil, err
	}
	return protocol.BridgeAt(e, kind)
}

// importCheck is protocol.ImportCheck on the store's rows.
type importCheck struct{ *protocol.ImportCheck }

// newImportCheck checks the imported entries of the window that starts at from, in a chain
// whose bridge record is b (nil when it has none), re-deriving the legacy chain with
// secret when it is not nil.
func newImportCheck(b *protocol.Bridge, from int64, secret []byte) importCheck {
	return importCheck{protocol.NewImportCheck(b, from, secret)}
}

// place checks that r has an imported body only at a seq the bridge imports.
func (c importCheck) place(r *row) error { return c.Place(&r.e, r.kind) }

// check takes the next row of the window, which passed the linker.
func (c importCheck) check(r *row) error { return c.Check(&r.e, r.kind) }
