package store

import (
	"context"
	"crypto/hmac"
	"database/sql"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ImportReport says what Verify checked of the entries imported from BIJOTEL, in a chain
// that begins with a bridge record (protocol.Bridge).
type ImportReport struct {
	// Bridge is the bridge record, as its entry at seq 1 states it.
	Bridge protocol.Bridge
	// ColumnsChecked is true when the window held every imported entry and their columns
	// matched the bridge's legacy_rows_sha256. A window that holds only some of them
	// checks their bodies, links and HMACs, but not their columns.
	ColumnsChecked bool
	// LegacyHMACsRederived is true when, in addition, the store's secret re-derives the
	// legacy chain from the imported bodies: starting from legacy_first_prev_hash, the
	// legacy HMAC of every imported entry in turn ends at legacy_head_hmac_hash. The
	// legacy chain then verifies from this chain alone. It is false when the legacy chain
	// was sealed with another secret: its export (whose SHA-256 the bridge binds) proves it.
	LegacyHMACsRederived bool
}

// readBridge returns the chain's bridge record, or nil when entry 1 is not one (or the
// chain is empty). An entry 1 named as a bridge that fails its checks is an error, so a
// window after it cannot be verified as imported rows of a forged bridge.
func (s *Store) readBridge(ctx context.Context, tx *sql.Tx) (*protocol.Bridge, error) {
	rows, err := readRows(ctx, tx, 1, 1)
	if err != nil || len(rows) == 0 || rows[0].SpanName != protocol.BridgeSpanName {
		return nil, err
	}
	e := &rows[0]
	if err := protocol.CheckEntry(e, s.newMAC()); err != nil {
		return nil, err
	}
	b, err := protocol.ParseBridge(e)
	if err != nil {
		return nil, &protocol.EntryError{Seq: e.Seq, Reason: protocol.ReasonMalformed, Err: err}
	}
	return b, nil
}

// importCheck checks, in seq order after the linker, the rule of imported entries: a body
// of kind protocol.BodyImported only at the seqs a bridge record imports; and, when every
// imported entry is read, that their columns are the ones the bridge binds.
type importCheck struct {
	bridge    *protocol.Bridge // nil: the chain imports nothing
	digest    *protocol.ImportDigest
	whole     bool // the window starts at or before the first imported entry
	secret    []byte
	legacyMAC string // the legacy chain re-derived so far with secret
	report    *ImportReport
}

func newImportCheck(b *protocol.Bridge, from int64, secret []byte) *importCheck {
	c := &importCheck{bridge: b}
	if b != nil {
		c.report = &ImportReport{Bridge: *b}
		c.whole = from <= b.FirstSeq
		c.digest = protocol.NewImportDigest()
		c.secret, c.legacyMAC = secret, b.LegacyFirstPrevHash
	}
	return c
}

// place checks that r has an imported body only at a seq the bridge imports.
func (c *importCheck) place(r *row) error {
	if r.kind == protocol.BodyImported && (c.bridge == nil || !c.bridge.Holds(r.e.Seq)) {
		return &protocol.EntryError{Seq: r.e.Seq, Reason: protocol.ReasonBridge,
			Err: fmt.Errorf("%w: the body has no trace_id or span_id, and no bridge record imports this seq", protocol.ErrMismatch)}
	}
	return nil
}

// check takes the next row of the window, which passed the linker: place, and the
// columns of an imported entry into the digest.
func (c *importCheck) check(r *row) error {
	if err := c.place(r); err != nil {
		return err
	}
	e := &r.e
	if c.bridge == nil || !c.bridge.Holds(e.Seq) || !c.whole {
		return nil
	}
	c.digest.Add(c.bridge.LegacySeq(e.Seq), e)
	if c.secret != nil {
		c.legacyMAC = protocol.EntryHMAC(c.secret, c.legacyMAC, e.CanonicalHash)
	}
	if e.Seq != c.bridge.LastSeq {
		return nil
	}
	if c.digest.Sum() != c.bridge.LegacyRowsSHA256 {
		return &protocol.EntryError{Seq: 1, Reason: protocol.ReasonBridge, Err: fmt.Errorf(
			"%w: the columns of imported entries %d..%d are not those the bridge record binds (legacy_rows_sha256): one was changed",
			protocol.ErrMismatch, c.bridge.FirstSeq, c.bridge.LastSeq)}
	}
	c.report.ColumnsChecked = true
	c.report.LegacyHMACsRederived = c.secret != nil &&
		hmac.Equal([]byte(c.legacyMAC), []byte(c.bridge.LegacyHeadHMACHash))
	return nil
}
