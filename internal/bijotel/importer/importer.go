// Package importer carries a BIJOTEL chain file into a new Cairn chain, so that one
// unbroken proof runs from the first legacy row to the newest Cairn entry.
//
// Import verifies the legacy chain with its secret (every row, by the original's rules),
// writes an export of it in the original's format, and seals a Cairn chain that begins
// with a bridge record (protocol.Bridge) binding the legacy chain, followed by the legacy
// rows with their canonical bodies byte for byte. A second import of the same file
// changes nothing; a changed file is refused with the first legacy seq that differs.
package importer

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cairn-dev/cairn/internal/bijotel/legacydb"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ErrChanged means the legacy file is not what an earlier import of it into the same
// chain read; ChangedError says where.
var ErrChanged = errors.New("the legacy chain changed since it was imported")

// ChangedError is a legacy file that differs from an earlier import of it: Seq is the
// first legacy seq whose row differs, is missing, or was added.
type ChangedError struct {
	Seq    int64
	Detail string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%v: first differing legacy seq %d: %s", ErrChanged, e.Seq, e.Detail)
}

func (e *ChangedError) Unwrap() error { return ErrChanged }

// Is makes a ChangedError match protocol.ErrMismatch: the file was compared and differs.
func (e *ChangedError) Is(target error) bool { return target == protocol.ErrMismatch }

// Options says what Import imports, and where.
type Options struct {
	// Legacy is the BIJOTEL chain file, opened with legacydb.Open.
	Legacy *legacydb.DB
	// LegacySecret is its HMAC secret.
	LegacySecret []byte
	// Into is the Cairn chain, opened with its secret. It must be empty, or hold an
	// earlier import of the same legacy chain.
	Into *store.Store
	// ExportPath is where the legacy export is written (its SHA-256 is in the bridge).
	ExportPath string
	// SignKey, if set, is the operator's legacy Ed25519 key: the export is then a signed
	// bijotel-chain-v2, else a bijotel-chain-v1.
	SignKey ed25519.PrivateKey
	// Now is the import's time; the zero time means time.Now.
	Now time.Time
}

// Result is what Import did.
type Result struct {
	// Bridge is the bridge record of the chain: new, or the earlier import's.
	Bridge protocol.Bridge
	// BridgeHMAC is the bridge entry's hmac_hash.
	BridgeHMAC string
	// AlreadyImported is true when the chain already held this import and nothing changed
	// (but a missing legacy export, which was written again byte for byte).
	AlreadyImported bool
	// ExportWritten is true when the legacy export was written to ExportPath.
	ExportWritten bool
	// Summary is the legacy chain as read.
	Summary legacydb.Summary
	// EnergyRows is how many imported entries the energy log gained (those whose spans
	// carry token counts), as cairn energy backfill would add them.
	EnergyRows int64
}

// Import imports o.Legacy into o.Into; see the package documentation.
func Import(ctx context.Context, o Options) (*Result, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Now = o.Now.UTC().Truncate(time.Microsecond) // the export's created_at holds microseconds
	sum, err := o.Legacy.Summary(ctx)
	if err != nil {
		return nil, err
	}
	if sum.Rows == 0 {
		return nil, errors.New("the legacy chain is empty: nothing to import")
	}
	if sum.LastSeq-sum.FirstSeq+1 != sum.Rows {
		return nil, fmt.Errorf("the legacy chain's seqs %d..%d hold %d rows: a row is missing, and Cairn imports chains without gaps", sum.FirstSeq, sum.LastSeq, sum.Rows)
	}
	earlier, err := earlierImport(ctx, o.Into)
	if err != nil {
		return nil, err
	}
	createdAt := bijotel.PythonISOTime(o.Now)
	if earlier != nil {
		createdAt = earlier.LegacyExportCreatedAt
	}
	read, err := readLegacy(ctx, o, sum, createdAt)
	if err != nil {
		return nil, err
	}
	defer read.discard()
	res := &Result{Summary: sum, Bridge: read.bridge}
	if earlier != nil {
		if err := compare(ctx, o, earlier, &read.bridge); err != nil {
			return nil, err
		}
		res.AlreadyImported = true
		bridge, err := o.Into.Entry(ctx, 1)
		if err != nil {
			return nil, err
		}
		res.BridgeHMAC = bridge.HMACHash
		res.ExportWritten, err = read.keepIfMissing(o.ExportPath)
		return res, err
	}
	entry, err := o.Into.Import(ctx, &read.bridge, o.Now, func(yield func(*protocol.Entry) error) error {
		var e protocol.Entry
		return o.Legacy.Scan(ctx, sum.FirstSeq, sum.LastSeq, func(r *bijotel.Row) error {
			r.CairnEntry(&e)
			return yield(&e)
		})
	})
	if err != nil {
		return nil, err
	}
	res.BridgeHMAC = entry.HMACHash
	if err := read.keep(o.ExportPath); err != nil {
		return res, fmt.Errorf("imported, but the legacy export was not written (import again to write it): %w", err)
	}
	res.ExportWritten = true
	if res.EnergyRows, err = o.Into.BackfillEnergy(ctx); err != nil {
		return res, fmt.Errorf("imported, but the energy log was not filled (run cairn energy backfill): %w", err)
	}
	return res, nil
}

// earlierImport returns the bridge record of into, nil when into is empty, and an error
// when into holds a chain that is not an import.
func earlierImport(ctx context.Context, into *store.Store) (*protocol.Bridge, error) {
	last, err := into.LastSeq(ctx)
	if err != nil || last == 0 {
		return nil, err
	}
	e, err := into.Entry(ctx, 1)
	if err != nil {
		return nil, err
	}
	b, err := protocol.ParseBridge(e)
	if err == nil && b == nil {
		err = fmt.Errorf("%w: it holds a Cairn chain of %d entries that is not an import; import into a new chain file", store.ErrNotEmpty, last)
	}
	if err == nil {
		err = protocol.CheckEntry(e, nil)
	}
	return b, err
}

// legacyRead is the legacy chain as verified, its bridge record, and its export, written
// to a temporary file until keep moves it into place.
type legacyRead struct {
	bridge protocol.Bridge
	tmp    string // the export; "" once kept or discarded
}

// readLegacy reads the legacy chain once: it verifies every row, computes the import
// digest, and writes the export (with createdAt) to a temporary file beside
// o.ExportPath, hashing it.
func readLegacy(ctx context.Context, o Options, sum legacydb.Summary, createdAt string) (*legacyRead, error) {
	tmp, err := os.CreateTemp(filepath.Dir(o.ExportPath), ".cairn-import-*")
	if err != nil {
		return nil, fmt.Errorf("legacy export: %w", err)
	}
	read := &legacyRead{tmp: tmp.Name()}
	h := sha256.New()
	err = writeLegacy(ctx, o, sum, createdAt, io.MultiWriter(tmp, h), &read.bridge)
	if err == nil {
		err = tmp.Sync()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		read.discard()
		return nil, err
	}
	read.bridge.LegacyExportSHA256 = hex.EncodeToString(h.Sum(nil))
	read.bridge.LegacyExportCreatedAt = createdAt
	return read, nil
}

// writeLegacy verifies the legacy rows sum describes, writes their export to w and fills
// b but for the export's hash and time.
func writeLegacy(ctx context.Context, o Options, sum legacydb.Summary, createdAt string, w io.Writer, b *protocol.Bridge) error {
	first := bijotel.GenesisHash
	if sum.FirstSeq > 1 {
		first = sum.FirstPrevHash // archived start: the first link is the file's word, as in the original
	}
	v, err := bijotel.NewChainVerifier(o.LegacySecret, first)
	if err != nil {
		return err
	}
	x, err := newExportWriter(w, o, sum, createdAt)
	if err != nil {
		return err
	}
	digest := protocol.NewImportDigest()
	var e protocol.Entry
	next := sum.FirstSeq
	err = o.Legacy.Scan(ctx, sum.FirstSeq, sum.LastSeq, func(r *bijotel.Row) error {
		if r.Seq != next {
			return fmt.Errorf("legacy seq %d is missing: Cairn imports chains without gaps", next)
		}
		next++
		if err := v.Check(r); err != nil {
			return err
		}
		r.CairnEntry(&e)
		digest.Add(r.Seq, &e)
		return x.WriteRow(r)
	})
	if err != nil {
		return err
	}
	if n, _ := v.Checked(); n != sum.Rows || v.Head() != sum.HeadHMACHash {
		return fmt.Errorf("the legacy chain changed while it was read (%d rows verified of %d): stop the original's writers and import again", n, sum.Rows)
	}
	if err := x.Close(); err != nil {
		return fmt.Errorf("legacy export: %w", err)
	}
	*b = protocol.Bridge{
		LegacyFirstSeq: sum.FirstSeq, LegacyLastSeq: sum.LastSeq, LegacyRows: sum.Rows,
		LegacyFirstPrevHash: first, LegacyHeadHMACHash: sum.HeadHMACHash,
		LegacyRowsSHA256: digest.Sum(), FirstSeq: 2, LastSeq: sum.Rows + 1,
	}
	return nil
}

// keep moves the export into place at path.
func (r *legacyRead) keep(path string) error {
	if err := os.Rename(r.tmp, path); err != nil {
		return err
	}
	r.tmp = ""
	return nil
}

// keepIfMissing keeps the export at path only when no file is there, and reports whether
// it did. A file already there must be the export the bridge binds.
func (r *legacyRead) keepIfMissing(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return true, r.keep(path)
	}
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	if hex.EncodeToString(h.Sum(nil)) != r.bridge.LegacyExportSHA256 {
		return false, fmt.Errorf("%s is not the legacy export the bridge record binds (its SHA-256 differs): move it away and import again to write the export", path)
	}
	return false, nil
}

// discard removes the temporary export, if any.
func (r *legacyRead) discard() {
	if r.tmp != "" {
		_ = os.Remove(r.tmp)
		r.tmp = ""
	}
}
