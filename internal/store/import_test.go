package store

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// legacyImport is a legacy chain ready to import: its rows and the bridge binding them.
type legacyImport struct {
	rows   []bijotel.Row
	bridge *protocol.Bridge
}

// newLegacyImport seals n legacy rows with secret and makes their bridge record, as the
// importer does (the export's hash here is only a stand-in value of the right shape).
func newLegacyImport(secret []byte, n int) *legacyImport {
	rows := bijoteltest.Chain(secret, 1, bijotel.GenesisHash, n)
	b := &protocol.Bridge{
		LegacyFirstSeq: 1, LegacyLastSeq: int64(n), LegacyRows: int64(n),
		LegacyFirstPrevHash: bijotel.GenesisHash, LegacyHeadHMACHash: rows[n-1].HMACHash,
		LegacyExportSHA256: bijotel.BodyHash([]byte("export")), LegacyExportCreatedAt: "2026-11-26T10:00:00.5+00:00",
		FirstSeq: 2, LastSeq: int64(n) + 1,
	}
	d := protocol.NewImportDigest()
	var e protocol.Entry
	for i := range rows {
		rows[i].CairnEntry(&e)
		d.Add(rows[i].Seq, &e)
	}
	b.LegacyRowsSHA256 = d.Sum()
	return &legacyImport{rows: rows, bridge: b}
}

// yield yields the rows, with edit applied to each entry before it is yielded.
func (l *legacyImport) yield(edit func(i int, e *protocol.Entry)) func(func(*protocol.Entry) error) error {
	return func(yield func(*protocol.Entry) error) error {
		var e protocol.Entry
		for i := range l.rows {
			l.rows[i].CairnEntry(&e)
			if edit != nil {
				edit(i, &e)
			}
			if err := yield(&e); err != nil {
				return err
			}
		}
		return nil
	}
}

func importInto(t *testing.T, s *Store, l *legacyImport) {
	t.Helper()
	if _, err := s.Import(t.Context(), l.bridge, testTime, l.yield(nil)); err != nil {
		t.Fatal(err)
	}
}

func TestImportThenVerifyThenSeal(t *testing.T) {
	for _, c := range []struct {
		name      string
		legacy    []byte
		rederived bool
	}{
		{"same secret", testSecret, true},
		{"another secret", bijoteltest.Secret(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newStore(t)
			l := newLegacyImport(c.legacy, 1000)
			importInto(t, s, l)
			seal(t, s, 10, 10)
			report, err := s.Verify(t.Context(), VerifyOptions{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			if report.Checked != 1011 || report.Import == nil || !report.Import.ColumnsChecked ||
				report.Import.LegacyHMACsRederived != c.rederived || report.Import.Bridge != *l.bridge {
				t.Fatalf("report %+v, import %+v", report, report.Import)
			}
			// Every legacy canonical_hash is an entry, its body byte for byte.
			e, err := s.Entry(t.Context(), 501)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(e.CanonicalBody, l.rows[499].CanonicalBody) || e.CanonicalHash != l.rows[499].CanonicalHash {
				t.Fatalf("entry 501 is not legacy row 500")
			}
			// An export of the imported chain verifies as any other.
			var out bytes.Buffer
			if _, err := s.Export(t.Context(), &out, ExportOptions{Key: testKey, ExportedAt: testTime}); err != nil {
				t.Fatal(err)
			}
			if _, err := protocol.VerifyExport(&out, protocol.VerifyOptions{Secret: testSecret, PublicKey: testKey.Public().(ed25519.PublicKey)}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestImportIsWholeOrNothing(t *testing.T) {
	l := newLegacyImport(testSecret, 250)
	for name, rows := range map[string]func(func(*protocol.Entry) error) error{
		"a column changed": l.yield(func(i int, e *protocol.Entry) {
			if i == 200 {
				e.SpanName = "renamed"
			}
		}),
		"a row short": func(yield func(*protocol.Entry) error) error {
			return l.yield(nil)(func(e *protocol.Entry) error {
				if e.CanonicalHash == l.rows[249].CanonicalHash {
					return nil
				}
				return yield(e)
			})
		},
		"a body changed": l.yield(func(i int, e *protocol.Entry) {
			if i == 7 {
				e.CanonicalBody = append(bytes.Clone(e.CanonicalBody[:len(e.CanonicalBody)-1]), ' ', '}')
			}
		}),
		"the source fails": func(yield func(*protocol.Entry) error) error {
			_ = l.yield(nil)(func(e *protocol.Entry) error { return yield(e) })
			return errors.New("legacy file unreadable")
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := newStore(t)
			if _, err := s.Import(t.Context(), l.bridge, testTime, rows); err == nil {
				t.Fatal("import succeeded")
			}
			if st, err := s.Stats(t.Context()); err != nil || st.Entries != 0 {
				t.Fatalf("after a failed import the chain has %d entries (%v)", st.Entries, err)
			}
		})
	}
	t.Run("into a chain with entries", func(t *testing.T) {
		s, _ := newStore(t)
		seal(t, s, 1, 1)
		if _, err := s.Import(t.Context(), l.bridge, testTime, l.yield(nil)); !errors.Is(err, ErrNotEmpty) {
			t.Fatalf("got %v, want ErrNotEmpty", err)
		}
	})
}

// An imported body carries no columns; the bridge's digest binds them, so editing one is
// found by a full verification that reads every imported entry.
func TestImportedColumnsAreBoundByTheBridge(t *testing.T) {
	for _, column := range []string{"trace_id", "span_id", "span_name", "timestamp_ns"} {
		t.Run(column, func(t *testing.T) {
			s, path := newStore(t)
			importInto(t, s, newLegacyImport(testSecret, 1000))
			flipText(t, rawDB(t, path), column, 501)
			_, err := s.Verify(t.Context(), VerifyOptions{Full: true})
			wantEntryError(t, err, 1, protocol.ReasonBridge)
			// A window that holds only some imported entries checks bodies and links, and
			// says it did not check their columns.
			report, err := s.Verify(t.Context(), VerifyOptions{Full: true, From: 400})
			if err != nil || report.Import == nil || report.Import.ColumnsChecked {
				t.Fatalf("window verify: %v, %+v", err, report.Import)
			}
			if _, err := s.Export(t.Context(), &bytes.Buffer{}, ExportOptions{Key: testKey}); err == nil {
				t.Fatal("exported a chain whose imported columns were changed")
			}
		})
	}
}

// A body without ids is accepted only where a bridge imports it: the secret's holder
// sealing one elsewhere, or a chain whose bridge was removed, fails.
func TestImportedBodyOutsideABridgeFails(t *testing.T) {
	s, path := newStore(t)
	entries := seal(t, s, 20, 20)
	legacy := newLegacyImport(testSecret, 1).rows[0]
	var e protocol.Entry
	legacy.CairnEntry(&e)
	e.Seq, e.PrevHash = 20, entries[18].HMACHash
	e.HMACHash = protocol.EntryHMAC(testSecret, e.PrevHash, e.CanonicalHash)
	writeEntry(t, rawDB(t, path), 20, &e)
	_, err := s.Verify(t.Context(), VerifyOptions{Full: true})
	wantEntryError(t, err, 20, protocol.ReasonBridge)
	_, err = s.Verify(t.Context(), VerifyOptions{})
	wantEntryError(t, err, 20, protocol.ReasonBridge)
	_, err = s.Export(t.Context(), &bytes.Buffer{}, ExportOptions{Key: testKey})
	wantEntryError(t, err, 20, protocol.ReasonBridge)
}

// A bridge record that was edited fails at seq 1, also for a window after it, so the rows
// it imports are never taken on a forged bridge's word.
func TestTamperedBridgeFailsEveryWindow(t *testing.T) {
	s, path := newStore(t)
	importInto(t, s, newLegacyImport(testSecret, 100))
	flipText(t, rawDB(t, path), "canonical_body", 1)
	for _, from := range []int64{0, 50} {
		_, err := s.Verify(t.Context(), VerifyOptions{Full: true, From: from})
		wantEntryError(t, err, 1, protocol.ReasonBodyHash)
	}
}

// An export carries imported entries only behind their bridge record: a window that starts
// inside the import is refused before anything is written (the export verifier would
// refuse its imported entries), while a window after the import, a header-only window and
// the whole chain export and verify.
func TestExportWindowKeepsImportsBehindTheirBridge(t *testing.T) {
	s, _ := newStore(t)
	importInto(t, s, newLegacyImport(testSecret, 10))
	seal(t, s, 5, 5)
	pub := testKey.Public().(ed25519.PublicKey)
	for _, c := range []struct {
		from, to   int64
		headerOnly bool
		refused    bool
	}{
		{1, 16, false, false}, {1, 4, false, false}, {3, 16, false, true}, {11, 16, false, true},
		{12, 16, false, false}, {3, 16, true, false},
	} {
		var out bytes.Buffer
		_, err := s.Export(t.Context(), &out, ExportOptions{From: c.from, To: c.to, Key: testKey, ExportedAt: testTime, HeaderOnly: c.headerOnly})
		if c.refused {
			if !errors.Is(err, ErrImportedWindow) || out.Len() != 0 {
				t.Errorf("window %d-%d: %v, %d bytes written; want ErrImportedWindow and nothing", c.from, c.to, err, out.Len())
			}
			continue
		}
		if err != nil {
			t.Fatalf("window %d-%d: %v", c.from, c.to, err)
		}
		if _, err := protocol.VerifyExport(&out, protocol.VerifyOptions{Secret: testSecret, PublicKey: pub}); err != nil {
			t.Errorf("window %d-%d (header only %t) does not verify: %v", c.from, c.to, c.headerOnly, err)
		}
	}
}

// An entry 1 named as a bridge but not one (here its trace_id is not taken from its
// legacy_rows_sha256), sealed by the secret's holder, fails bridge_mismatch at seq 1 in
// every window and in export: the verdict the export verifier reaches for the same entry,
// from the same code (protocol.ImportCheck). It was malformed_entry here, and the export
// verifier took it.
func TestForgedBridgeFailsAsTheExportVerifierSays(t *testing.T) {
	s, path := newStore(t)
	l := newLegacyImport(testSecret, 10)
	importInto(t, s, l)
	body := l.bridge.Body(testTime)
	body.TraceID = strings.Repeat("1", 32)
	forged, err := protocol.NewEntry(testSecret, 1, protocol.GenesisPrevHash, body)
	if err != nil {
		t.Fatal(err)
	}
	writeEntry(t, rawDB(t, path), 1, forged)
	for _, from := range []int64{0, 5} {
		_, err := s.Verify(t.Context(), VerifyOptions{Full: true, From: from})
		wantEntryError(t, err, 1, protocol.ReasonBridge)
	}
	_, err = s.Export(t.Context(), &bytes.Buffer{}, ExportOptions{Key: testKey})
	wantEntryError(t, err, 1, protocol.ReasonBridge)
}
