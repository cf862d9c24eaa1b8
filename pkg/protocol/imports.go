package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
)

// ImportReport says what a verification checked of the entries a chain imported from the
// original product (BIJOTEL), behind the bridge record at seq 1 (docs/PROTOCOL.md §2).
type ImportReport struct {
	// Bridge is the bridge record, as entry 1 states it.
	Bridge Bridge
	// ColumnsChecked is true when every imported entry was read and their columns matched
	// the bridge's legacy_rows_sha256. A window that holds only some of them checks their
	// bodies, links and HMACs, but not their columns.
	ColumnsChecked bool
	// LegacyHMACsRederived is true when, in addition, the secret re-derives the legacy
	// chain from the imported bodies: from legacy_first_prev_hash, the legacy HMAC of
	// every imported entry in turn ends at legacy_head_hmac_hash. The legacy chain then
	// verifies from this chain alone. It is false without the secret, or when the legacy
	// chain was sealed with another secret: its export (whose SHA-256 the bridge binds)
	// proves it.
	LegacyHMACsRederived bool
}

// ImportCheck applies the rules of imported entries (docs/PROTOCOL.md §2, "Imported rows")
// to a chain's entries, given to Check in seq order, each after it passed CheckEntryBody
// and its link to the previous one:
//
//   - entry 1 whose span_name is BridgeSpanName is the bridge record, and must be one
//     (ParseBridge); another entry of that name is an ordinary span.
//   - an imported body (BodyImported) is allowed only at a seq the bridge imports; with
//     no bridge in view, nowhere.
//   - when every imported entry is read, from the first, their import digest must be the
//     bridge's legacy_rows_sha256; and with the secret the legacy chain is re-derived.
//
// Failures are an *EntryError with ReasonBridge, at the entry's seq, or at seq 1 for a
// bridge that is not one or a digest that differs (a column of an imported entry was
// changed). An ImportCheck is not safe for concurrent use.
type ImportCheck struct {
	bridge   *Bridge
	whole    bool      // the entries checked start at or before the first imported one
	secret   []byte    // re-derives the legacy chain; nil without the secret
	mac      hash.Hash // keyed with secret, once a bridge is known
	digest   *ImportDigest
	in       [2 * 64]byte      // the legacy chain re-derived so far (hex), then a canonical_hash: the next HMAC's input
	sum      [sha256.Size]byte // scratch for that HMAC
	imported int64             // imported entries checked
	report   *ImportReport
}

// NewImportCheck returns the check of a chain's entries from seq from on. bridge is the
// chain's bridge record when the caller has read entry 1 and from is after it (a store
// verifying a window), and nil otherwise: from seq 1, entry 1 is read as it comes; after
// seq 1 with no bridge (an export window, which cannot show entry 1, or a chain that
// imports nothing), an imported body fails wherever it is. secret, when not nil, is the
// chain's secret, with which the legacy chain is re-derived.
func NewImportCheck(bridge *Bridge, from int64, secret []byte) *ImportCheck {
	c := &ImportCheck{secret: secret}
	if bridge != nil {
		c.use(bridge, from <= bridge.FirstSeq)
	}
	return c
}

// use makes b the bridge the entries are checked against.
func (c *ImportCheck) use(b *Bridge, whole bool) {
	c.bridge, c.whole = b, whole
	c.report = &ImportReport{Bridge: *b}
	c.digest = NewImportDigest()
	copy(c.in[:64], b.LegacyFirstPrevHash)
	if c.secret != nil {
		c.mac = hmac.New(sha256.New, c.secret)
	}
}

// BridgeAt returns the bridge record entry 1 holds, of body kind kind (CheckEntryBody's,
// which e must have passed): nil when its span_name is not BridgeSpanName, and an
// *EntryError with ReasonBridge at seq 1 when it is so named but is not a bridge record
// (ParseBridge), or its body is not a span body.
func BridgeAt(e *Entry, kind BodyKind) (*Bridge, error) {
	if e.Seq != 1 || e.SpanName != BridgeSpanName {
		return nil, nil
	}
	b, err := parseBridge(e)
	if kind != BodySpan && err == nil {
		err = fmt.Errorf("its body is not a span body")
	}
	if err != nil {
		return nil, &EntryError{Seq: 1, Reason: ReasonBridge, Err: fmt.Errorf("%w: entry 1 is named %s but is not a bridge record: %w", ErrMismatch, BridgeSpanName, err)}
	}
	return b, nil
}

// Check takes the next entry, of body kind kind (CheckEntryBody's).
func (c *ImportCheck) Check(e *Entry, kind BodyKind) error {
	if e.Seq == 1 && c.bridge == nil {
		b, err := BridgeAt(e, kind)
		if err != nil {
			return err
		}
		if b != nil {
			c.use(b, true)
			return nil
		}
	}
	if err := c.Place(e, kind); err != nil || c.bridge == nil || !c.bridge.Holds(e.Seq) {
		return err
	}
	c.imported++
	if !c.whole {
		return nil
	}
	c.digest.Add(c.bridge.LegacySeq(e.Seq), e)
	if c.mac != nil { // legacy hmac = HMAC(secret, prev ‖ canonical_hash), kept as hex
		copy(c.in[64:], e.CanonicalHash)
		c.mac.Reset()
		c.mac.Write(c.in[:])
		hex.Encode(c.in[:64], c.mac.Sum(c.sum[:0]))
	}
	if e.Seq != c.bridge.LastSeq {
		return nil
	}
	if c.digest.Sum() != c.bridge.LegacyRowsSHA256 {
		return &EntryError{Seq: 1, Reason: ReasonBridge, Err: fmt.Errorf(
			"%w: the columns of imported entries %d..%d are not those the bridge record binds (legacy_rows_sha256): one was changed",
			ErrMismatch, c.bridge.FirstSeq, c.bridge.LastSeq)}
	}
	c.report.ColumnsChecked = true
	c.report.LegacyHMACsRederived = c.mac != nil && hmac.Equal(c.in[:64], []byte(c.bridge.LegacyHeadHMACHash))
	return nil
}

// Place checks only that e, of body kind kind, has an imported body at a seq the bridge
// imports, if at all: a verification that reads a few entries (a store's smoke check)
// calls it instead of Check.
func (c *ImportCheck) Place(e *Entry, kind BodyKind) error {
	if kind == BodyImported && (c.bridge == nil || !c.bridge.Holds(e.Seq)) {
		return &EntryError{Seq: e.Seq, Reason: ReasonBridge,
			Err: fmt.Errorf("%w: the body has no trace_id or span_id, and no bridge record imports this seq", ErrMismatch)}
	}
	return nil
}

// Report is what was checked of the imported entries: nil when no bridge is in view. It
// is the check's own report, which later calls to Check complete.
func (c *ImportCheck) Report() *ImportReport { return c.report }

// columnsUnbound reports whether an imported entry was checked whose columns nothing the
// secret covers binds: the entries stop before the last imported one, or start after the
// first.
func (c *ImportCheck) columnsUnbound() bool {
	return c.imported > 0 && !c.report.ColumnsChecked
}
