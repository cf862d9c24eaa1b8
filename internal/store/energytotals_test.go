package store

import (
	"database/sql"
	"reflect"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
)

// summedLog sums the energy log at path by model and region, the way the summary did
// before the totals: what energyGroups must agree with.
func summedLog(t *testing.T, db *sql.DB) []analysis.EnergyGroup {
	t.Helper()
	rows, err := db.Query(`SELECT model, region, count(*), sum(tokens) FROM energy_log GROUP BY model, region ORDER BY model, region`)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var out []analysis.EnergyGroup
	for rows.Next() {
		var g analysis.EnergyGroup
		if err := rows.Scan(&g.Model, &g.Region, &g.Calls, &g.Tokens); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// TestEnergyTotalsFollowTheLog: the summary reads the totals whenever they cover the log,
// and what it reads agrees with a sum over the whole log after seals, after rows edited, deleted or left past the chain's end by hand
// (another program writing the file), after a backfill, for a log from before the totals
// (filled on the next write, summed until then) and after the log was dropped.
func TestEnergyTotalsFollowTheLog(t *testing.T) {
	s, path := newStore(t)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	check := func(when string, wantWhole bool) {
		t.Helper()
		if whole := totalsWhole(t, s); whole != wantWhole {
			t.Fatalf("%s: the totals cover the log: %t, want %t", when, whole, wantWhole)
		}
		got, err := s.energyGroups(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if want := summedLog(t, db); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the summary's groups are %+v, the log sums to %+v", when, got, want)
		}
	}
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := db.Exec(query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	seal := func(first, n int64) {
		t.Helper()
		if _, err := s.Seal(t.Context(), testBodies(first, n)); err != nil {
			t.Fatal(err)
		}
	}

	seal(1, 40)
	check("after sealing", true)
	exec(`UPDATE energy_log SET tokens = tokens + 1000, model = 'other-model' WHERE seq = 7`)
	check("after a row was edited", true)
	exec(`DELETE FROM energy_log WHERE seq IN (3, 4)`)
	check("after rows were deleted", true)
	exec(`INSERT INTO energy_log (seq, model, region, tokens, wh, co2_g) VALUES (41, 'stale', '', 999, 0, 0), (60, 'stale', '', 5, 0, 0)`)
	seal(41, 10) // replaces 41 and drops 60, which the chain does not hold
	check("after a seal over rows past the chain", true)
	if n, err := s.BackfillEnergy(t.Context()); err != nil || n != 2 {
		t.Fatalf("backfill: %d, %v; want the 2 deleted rows back", n, err)
	}
	check("after a backfill", true)

	// A log from before the totals: summed until the next write fills them.
	for _, q := range []string{`DROP TABLE energy_totals`, `DROP TABLE energy_totals_state`,
		`DROP TRIGGER energy_totals_delete`, `DROP TRIGGER energy_totals_update`} {
		exec(q)
	}
	check("with no totals", false)
	seal(51, 3)
	check("after the totals were filled", true)

	// Another program (an older cairn) adds rows without the totals: the log is summed
	// until the next write here rebuilds them.
	exec(`INSERT INTO energy_log (seq, model, region, tokens, wh, co2_g) VALUES (54, 'old-binary', 'eu-west', 77, 0, 0)`)
	check("after a row another program added", false)
	seal(54, 3) // replaces 54, which the chain did not hold
	check("after the next seal", true)

	// The log dropped: its totals go with it on the next write.
	exec(`DROP TABLE energy_log`)
	if got, err := s.energyGroups(t.Context()); err != nil || len(got) != 0 {
		t.Fatalf("no log: %+v, %v", got, err)
	}
	seal(57, 3)
	check("after the log was made again", true)
}

// totalsWhole reports whether the totals cover the log, read as the summary reads it.
func totalsWhole(t *testing.T, s *Store) bool {
	t.Helper()
	tx, err := s.readTx(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	whole, err := energyTotalsWhole(t.Context(), tx)
	if err != nil {
		t.Fatal(err)
	}
	return whole
}
