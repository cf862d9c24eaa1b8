package store

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// readAll reads rows lo..hi from src.
func readAll(t *testing.T, src rowSource) []protocol.Entry {
	t.Helper()
	defer src.close()
	var out []protocol.Entry
	for {
		var e protocol.Entry
		_, ok, err := src.next(&e, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

// sourcesAgree reads lo..hi from the file's pages and through SQL, in one read
// transaction, checks that the pages were read, and that both read the same entries.
func sourcesAgree(t *testing.T, s *Store, lo, hi int64) []protocol.Entry {
	t.Helper()
	tx, err := s.readTx(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	pages, err := s.openRows(t.Context(), tx, lo, hi, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pages.(*fileRows); !ok {
		t.Fatalf("the chain was read through %T, not from its pages", pages)
	}
	viaSQL, err := s.openRows(t.Context(), tx, lo, hi, true)
	if err != nil {
		t.Fatal(err)
	}
	got, want := readAll(t, pages), readAll(t, viaSQL)
	if len(got) != len(want) {
		t.Fatalf("%d rows from the pages, %d through SQL", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("row %d from the pages:\n%+v\nthrough SQL:\n%+v", want[i].Seq, got[i], want[i])
		}
	}
	return got
}

// The pages reader reads what SQLite reads: bodies that fit their page and bodies that
// spill into overflow pages, from the database file and from the log.
func TestPagesReadWhatSQLReads(t *testing.T) {
	s, path := newStore(t)
	bodies := testBodies(1, 900)
	for i := range bodies {
		if i%50 == 0 { // past a 4 KB page: the rest in overflow pages
			bodies[i].Attributes["gen_ai.prompt"] = strings.Repeat(fmt.Sprintf("%d ", i), 3000)
		}
	}
	if _, err := s.Seal(t.Context(), bodies[:600]); err != nil {
		t.Fatal(err)
	}
	if _, err := rawDB(t, path).Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Seal(t.Context(), bodies[600:]); err != nil { // these in the log only
		t.Fatal(err)
	}
	if n := len(sourcesAgree(t, s, 1, 900)); n != 900 {
		t.Fatalf("%d rows", n)
	}
	sourcesAgree(t, s, 599, 650)
	sourcesAgree(t, s, 850, 2000)
}

// The property the pages reader must keep: a row changed through SQL whose change is
// still only in the write-ahead log is read as changed, never as the database file's
// older copy of its page says, and verification finds it.
func TestPagesReaderSeesATamperStillInTheLog(t *testing.T) {
	s, path := newStore(t)
	seal(t, s, tamperChain, 1000)
	db := rawDB(t, path)
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	flipText(t, db, "trace_id", tampered)
	rows := sourcesAgree(t, s, 1, tamperChain)
	if rows[tampered-1].TraceID == testBody(tampered).TraceID {
		t.Fatalf("row %d read as it was before the change", tampered)
	}
	_, err := s.Verify(t.Context(), VerifyOptions{Full: true})
	wantEntryError(t, err, tampered, protocol.ReasonColumn)
}

// Verifications from the pages while another connection seals and checkpoints (the log
// filled, backfilled and restarted under them) each see one committed state: every one
// passes, and checks at least the entries committed before it began.
func TestPagesReadWhileSealing(t *testing.T) {
	s, path := newStore(t)
	seal(t, s, 1000, 1000)
	db := rawDB(t, path)
	done := make(chan error, 1)
	go func() {
		for i := range int64(16) {
			if _, err := s.Seal(t.Context(), testBodies(1001+i*500, 500)); err != nil {
				done <- err
				return
			}
			if i%4 == 0 {
				if _, err := db.Exec(`PRAGMA wal_checkpoint(RESTART)`); err != nil {
					done <- err
					return
				}
			}
		}
		done <- nil
	}()
	for verified := 0; ; verified++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d verifications while sealing", verified)
			verifyFull(t, s, 9000)
			return
		default:
		}
		st, err := s.Stats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Verify(t.Context(), VerifyOptions{Full: true})
		if err != nil {
			t.Fatalf("verification %d: %v", verified, err)
		}
		if r.Checked < st.Entries {
			t.Fatalf("verification %d checked %d entries, %d were committed before it", verified, r.Checked, st.Entries)
		}
	}
}

// A record the pages reader does not know (a column added to the table by a later
// schema) is read through SQL, row by row, and verified as before.
func TestPagesReaderHandsUnknownRecordsToSQL(t *testing.T) {
	s, path := newStore(t)
	seal(t, s, 300, 100)
	if _, err := rawDB(t, path).Exec(`ALTER TABLE chain ADD COLUMN note TEXT`); err != nil {
		t.Fatal(err)
	}
	seal(t, s, 300, 100) // these rows' records hold eleven columns
	if n := len(sourcesAgree(t, s, 1, 600)); n != 600 {
		t.Fatalf("%d rows", n)
	}
	verifyFull(t, s, 600)
}
