package legacydb

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// chainFile writes rows to a new chain file and returns its path.
func chainFile(t testing.TB, rows []bijotel.Row, o bijoteltest.DBOptions) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chain.db")
	if err := bijoteltest.WriteDB(path, rows, o); err != nil {
		t.Fatal(err)
	}
	return path
}

// ts is the timestamp_ns SpanBody gives row seq.
func ts(seq int64) int64 {
	_, meta := bijoteltest.SpanBody(int(seq - 1))
	return meta.TimestampNS
}

// want is the outcome a verification case expects.
type want struct {
	first, last, checked int64
	link                 Link
	rowErr               *bijotel.RowError // the failing row
	column               string            // a *ColumnError on this column
	columnSeq            int64
	outsideTime          int64
}

func TestVerify(t *testing.T) {
	secret := bijoteltest.Secret()
	full := func() []bijotel.Row { return bijoteltest.Chain(secret, 1, bijotel.GenesisHash, 20) }
	// trimmed is rows 6..20 of the same chain, as the original leaves it after archiving 1..5.
	trimmed := func() []bijotel.Row { return full()[5:] }
	tamper := func(f func(path string) error) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			t.Helper()
			if err := f(path); err != nil {
				t.Fatal(err)
			}
		}
	}
	set := func(q string, args ...any) func(t *testing.T, path string) {
		return tamper(func(path string) error { return bijoteltest.ExecDB(path, q, args...) })
	}
	cases := map[string]struct {
		rows   func() []bijotel.Row
		opts   bijoteltest.DBOptions
		lax    bool // create the table without NOT NULL first, so NULLs can be written
		tamper func(t *testing.T, path string)
		secret []byte
		window Window
		want   want
	}{
		"whole chain":        {rows: full, want: want{first: 1, last: 20, checked: 20, link: LinkGenesis}},
		"table of old":       {rows: full, opts: bijoteltest.DBOptions{NoSemanticColumn: true}, want: want{first: 1, last: 20, checked: 20, link: LinkGenesis}},
		"seq range":          {rows: full, window: Window{SeqStart: 5, SeqEnd: 9}, want: want{first: 5, last: 9, checked: 5, link: LinkPredecessor}},
		"seq range open end": {rows: full, window: Window{SeqStart: 15}, want: want{first: 15, last: 20, checked: 6, link: LinkPredecessor}},
		"last 3":             {rows: full, window: Window{LastN: 3}, want: want{first: 18, last: 20, checked: 3, link: LinkPredecessor}},
		"last more than all": {rows: full, window: Window{LastN: 50}, want: want{first: 1, last: 20, checked: 20, link: LinkGenesis}},
		"trimmed chain":      {rows: trimmed, want: want{first: 6, last: 20, checked: 15, link: LinkTrusted}},
		"trimmed, last 30":   {rows: trimmed, window: Window{LastN: 30}, want: want{first: 6, last: 20, checked: 15, link: LinkTrusted}},
		"trimmed, from 1": {rows: trimmed, window: Window{SeqStart: 1},
			want: want{first: 6, last: 20, link: LinkGenesis, rowErr: &bijotel.RowError{Seq: 6, Reason: bijotel.ReasonPrevHash}}},
		"time window": {rows: full, window: Window{SinceNS: ts(5), UntilNS: ts(9)},
			want: want{first: 5, last: 9, checked: 5, link: LinkPredecessor}},
		"time window, one day": {rows: full, window: Window{SinceNS: ts(12)},
			want: want{first: 12, last: 20, checked: 9, link: LinkPredecessor}},
		"time window, a row's time out of order": {rows: full, window: Window{SinceNS: ts(5), UntilNS: ts(9)},
			tamper: set(`UPDATE chain SET timestamp_ns = ? WHERE seq = 7`, ts(40)),
			want:   want{first: 5, last: 9, checked: 5, link: LinkPredecessor, outsideTime: 1}},
		"time window, nothing in it": {rows: full, window: Window{SinceNS: ts(30)}, want: want{}},
		"seq range, nothing in it":   {rows: full, window: Window{SeqStart: 30}, want: want{}},
		"empty table":                {rows: func() []bijotel.Row { return nil }, want: want{}},
		"body flipped": {rows: full, tamper: tamper(func(p string) error { return bijoteltest.FlipBodyByte(p, 7) }),
			want: want{first: 1, last: 20, checked: 6, link: LinkGenesis, rowErr: &bijotel.RowError{Seq: 7, Reason: bijotel.ReasonBodyHash}}},
		"hmac flipped": {rows: full, tamper: tamper(func(p string) error { return bijoteltest.FlipHMAC(p, 7) }),
			want: want{first: 1, last: 20, checked: 6, link: LinkGenesis, rowErr: &bijotel.RowError{Seq: 7, Reason: bijotel.ReasonHMAC}}},
		"prev_hash flipped": {rows: full, tamper: tamper(func(p string) error { return bijoteltest.FlipPrevHash(p, 7) }),
			want: want{first: 1, last: 20, checked: 6, link: LinkGenesis, rowErr: &bijotel.RowError{Seq: 7, Reason: bijotel.ReasonPrevHash}}},
		"middle row deleted": {rows: full, tamper: tamper(func(p string) error { return bijoteltest.DeleteRow(p, 7) }),
			want: want{first: 1, last: 20, checked: 6, link: LinkGenesis, rowErr: &bijotel.RowError{Seq: 8, Reason: bijotel.ReasonPrevHash}}},
		"row before the window deleted": {rows: full, window: Window{SeqStart: 8},
			tamper: tamper(func(p string) error { return bijoteltest.DeleteRow(p, 7) }),
			want:   want{first: 8, last: 20, link: LinkPredecessor, rowErr: &bijotel.RowError{Seq: 8, Reason: bijotel.ReasonPrevHash}}},
		// Not detectable from the file alone: the report says so (TailNote).
		"tail deleted": {rows: full, tamper: tamper(func(p string) error { return bijoteltest.DeleteTail(p, 3) }),
			want: want{first: 1, last: 17, checked: 17, link: LinkGenesis}},
		"seq renumbered, links intact": {rows: func() []bijotel.Row {
			rows := full()
			for i := 9; i < len(rows); i++ {
				rows[i].Seq++ // seq is not under the HMAC: 10..20 become 11..21
			}
			return rows
		}, want: want{first: 1, last: 21, checked: 9, link: LinkGenesis, rowErr: &bijotel.RowError{Seq: 11, Reason: ReasonSeqGap}}},
		"wrong secret": {rows: full, secret: []byte("another secret of 32 bytes......"),
			want: want{first: 1, last: 20, link: LinkGenesis, rowErr: &bijotel.RowError{Seq: 1, Reason: bijotel.ReasonHMAC}}},
		"hmac_hash in upper case": {rows: full, tamper: set(`UPDATE chain SET hmac_hash = upper(hmac_hash) WHERE seq = 20`),
			want: want{first: 1, last: 20, checked: 19, link: LinkGenesis, rowErr: &bijotel.RowError{Seq: 20, Reason: bijotel.ReasonHMAC}}},
		"hmac_hash not hex": {rows: full, tamper: set(`UPDATE chain SET hmac_hash = 'zz' WHERE seq = 20`),
			want: want{first: 1, last: 20, checked: 19, link: LinkGenesis, rowErr: &bijotel.RowError{Seq: 20, Reason: bijotel.ReasonHMAC}}},
		"trusted prev_hash not hex": {rows: trimmed, tamper: set(`UPDATE chain SET prev_hash = 'GENESIS' WHERE seq = 6`),
			want: want{column: "prev_hash", columnSeq: 6}},
		"timestamp_ns REAL": {rows: full, tamper: set(`UPDATE chain SET timestamp_ns = 1781492405.5 WHERE seq = 5`),
			want: want{first: 1, last: 20, checked: 4, link: LinkGenesis, column: "timestamp_ns", columnSeq: 5}},
		"timestamp_ns REAL, outside the window": {rows: full, window: Window{SeqEnd: 5},
			tamper: set(`UPDATE chain SET timestamp_ns = 1781492405.5 WHERE seq = 20`),
			want:   want{first: 1, last: 5, checked: 5, link: LinkGenesis}},
		"timestamp_ns TEXT": {rows: full, tamper: set(`UPDATE chain SET timestamp_ns = 'yesterday' WHERE seq = 5`),
			want: want{first: 1, last: 20, checked: 4, link: LinkGenesis, column: "timestamp_ns", columnSeq: 5}},
		"canonical_body TEXT": {rows: full, tamper: set(`UPDATE chain SET canonical_body = CAST(canonical_body AS TEXT) WHERE seq = 5`),
			want: want{first: 1, last: 20, checked: 4, link: LinkGenesis, column: "canonical_body", columnSeq: 5}},
		"span_name NULL": {rows: full, lax: true, tamper: set(`UPDATE chain SET span_name = NULL WHERE seq = 5`),
			want: want{first: 1, last: 20, checked: 4, link: LinkGenesis, column: "span_name", columnSeq: 5}},
		"hmac_hash BLOB": {rows: full, tamper: set(`UPDATE chain SET hmac_hash = CAST(hmac_hash AS BLOB) WHERE seq = 5`),
			want: want{first: 1, last: 20, checked: 4, link: LinkGenesis, column: "hmac_hash", columnSeq: 5}},
		"seq 0": {rows: func() []bijotel.Row {
			rows := full()
			extra := rows[0]
			extra.Seq = 0
			return append([]bijotel.Row{extra}, rows...)
		}, want: want{column: "seq", columnSeq: 0}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "chain.db")
			if tc.lax {
				if err := bijoteltest.CreateTable(path, strings.ReplaceAll(bijoteltest.Schema, " NOT NULL", "")); err != nil {
					t.Fatal(err)
				}
			}
			if err := bijoteltest.WriteDB(path, tc.rows(), tc.opts); err != nil {
				t.Fatal(err)
			}
			if tc.tamper != nil {
				tc.tamper(t, path)
			}
			s := secret
			if tc.secret != nil {
				s = tc.secret
			}
			db, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = db.Close() }()
			rep, err := db.Verify(context.Background(), s, tc.window)
			checkVerdict(t, rep, err, tc.want)
		})
	}
}

func checkVerdict(t *testing.T, rep *Report, err error, w want) {
	t.Helper()
	var rowErr *bijotel.RowError
	var colErr *ColumnError
	switch {
	case w.rowErr != nil:
		if !errors.As(err, &rowErr) || *rowErr != *w.rowErr {
			t.Fatalf("error %v, want %v", err, w.rowErr)
		}
		if !errors.Is(err, protocol.ErrMismatch) {
			t.Errorf("%v does not match protocol.ErrMismatch", err)
		}
	case w.column != "":
		if !errors.As(err, &colErr) || colErr.Column != w.column || colErr.Seq != w.columnSeq {
			t.Fatalf("error %v, want a ColumnError on %s at seq %d", err, w.column, w.columnSeq)
		}
		if !errors.Is(err, protocol.ErrMalformed) {
			t.Errorf("%v does not match protocol.ErrMalformed", err)
		}
	case err != nil:
		t.Fatalf("error %v, want none", err)
	}
	if rep == nil {
		if w.first != 0 || w.checked != 0 {
			t.Fatalf("no report, want %+v", w)
		}
		return
	}
	if rep.FirstSeq != w.first || rep.Checked != w.checked || rep.FirstLink != w.link || rep.OutsideTime != w.outsideTime {
		t.Errorf("report %+v, want %+v", *rep, w)
	}
	if w.first != 0 && rep.LastSeq != w.last {
		t.Errorf("last seq %d, want %d", rep.LastSeq, w.last)
	}
	if rep.Checked > 0 && rep.HeadSeq != rep.FirstSeq+rep.Checked-1 {
		t.Errorf("head seq %d after %d rows from %d", rep.HeadSeq, rep.Checked, rep.FirstSeq)
	}
}

func TestVerifyRefusesBadWindowsAndSecrets(t *testing.T) {
	secret := bijoteltest.Secret()
	db, err := Open(chainFile(t, bijoteltest.Chain(secret, 1, bijotel.GenesisHash, 3), bijoteltest.DBOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for _, w := range []Window{{SeqStart: -1}, {SeqStart: 5, SeqEnd: 4}, {SinceNS: 10, UntilNS: 9}, {LastN: 2, SeqStart: 1}, {LastN: 2, SinceNS: 1}, {LastN: -3}} {
		if _, err := db.Verify(context.Background(), secret, w); !errors.Is(err, ErrWindow) {
			t.Errorf("window %+v: %v, want ErrWindow", w, err)
		}
	}
	if _, err := db.Verify(context.Background(), secret[:15], Window{}); !errors.Is(err, bijotel.ErrSecret) {
		t.Errorf("15-byte secret: %v, want ErrSecret", err)
	}
}
