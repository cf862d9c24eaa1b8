package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
)

// This file keeps the energy log's totals by model and region, so the energy summary
// reads a handful of rows instead of the whole log (1.5 s at 1,000,000 entries).
//
// The writers here (Seal and BackfillEnergy) add what they insert to the totals in the
// same transaction, one upsert per (model, region) and batch, and record in
// energy_totals_state the log's highest seq the totals cover. Triggers take rows deleted
// or edited by any program off the totals. Rows another program inserts (an older cairn)
// leave the log's highest seq past the recorded one: the summary then sums the whole log,
// and the next write here rebuilds the totals.

const energyTotalsSchema = `CREATE TABLE IF NOT EXISTS energy_totals (
	model  TEXT NOT NULL,
	region TEXT NOT NULL,
	calls  INTEGER NOT NULL,
	tokens INTEGER NOT NULL,
	PRIMARY KEY (model, region)
) STRICT;
CREATE TABLE IF NOT EXISTS energy_totals_state (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	through INTEGER NOT NULL
) STRICT;
CREATE TRIGGER IF NOT EXISTS energy_totals_delete AFTER DELETE ON energy_log BEGIN
	UPDATE energy_totals SET calls = calls - 1, tokens = tokens - OLD.tokens WHERE model = OLD.model AND region = OLD.region;
END;
CREATE TRIGGER IF NOT EXISTS energy_totals_update AFTER UPDATE OF model, region, tokens ON energy_log BEGIN
	UPDATE energy_totals SET calls = calls - 1, tokens = tokens - OLD.tokens WHERE model = OLD.model AND region = OLD.region;
	INSERT INTO energy_totals (model, region, calls, tokens) VALUES (NEW.model, NEW.region, 1, NEW.tokens)
		ON CONFLICT (model, region) DO UPDATE SET calls = calls + 1, tokens = tokens + excluded.tokens;
END`

// prepareEnergyTotals creates the totals when missing and, when they do not cover the
// log as it is (a log from before them, rows another program added, or a log dropped
// and made again), rebuilds them from the log.
func prepareEnergyTotals(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, energyTotalsSchema); err != nil {
		return fmt.Errorf("create energy_totals: %w", err)
	}
	return syncEnergyTotals(ctx, tx)
}

// syncEnergyTotals rebuilds the totals when they do not cover the log as it is (a writer
// that does not keep them, an older cairn, wrote to it).
func syncEnergyTotals(ctx context.Context, tx *sql.Tx) error {
	whole, err := energyTotalsWhole(ctx, tx)
	if err != nil || whole {
		return err
	}
	return rebuildEnergyTotals(ctx, tx)
}

// energyTotalsWhole reports whether the totals cover the log as it is: they record the
// log's highest seq (0 for an empty log).
func energyTotalsWhole(ctx context.Context, tx *sql.Tx) (bool, error) {
	for _, table := range []string{"energy_log", "energy_totals_state"} {
		if ok, err := hasTable(ctx, tx, table); err != nil || !ok {
			return false, err
		}
	}
	var whole bool
	err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT through FROM energy_totals_state WHERE id = 1), -1) =
		coalesce((SELECT max(seq) FROM energy_log), 0)`).Scan(&whole)
	if err != nil {
		return false, fmt.Errorf("read energy_totals_state: %w", err)
	}
	return whole, nil
}

// rebuildEnergyTotals sums the whole log into the totals.
func rebuildEnergyTotals(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{`DELETE FROM energy_totals`,
		`INSERT INTO energy_totals (model, region, calls, tokens)
			SELECT model, region, count(*), sum(tokens) FROM energy_log GROUP BY model, region`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("rebuild energy_totals: %w", err)
		}
	}
	return markEnergyTotals(ctx, tx)
}

// markEnergyTotals records that the totals cover the log through its highest seq.
func markEnergyTotals(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO energy_totals_state (id, through) VALUES (1, coalesce((SELECT max(seq) FROM energy_log), 0))
		ON CONFLICT (id) DO UPDATE SET through = excluded.through`)
	if err != nil {
		return fmt.Errorf("write energy_totals_state: %w", err)
	}
	return nil
}

// energyKey is a (model, region) group of the totals.
type energyKey struct{ model, region string }

// totalsDelta is what a writer added to the log, by group, not yet in the totals.
type totalsDelta struct {
	groups map[energyKey][2]int64 // calls, tokens
	stale  bool                   // rows were ignored: rebuild instead
}

// add counts one row of model and region with tokens.
func (d *totalsDelta) add(model, region string, tokens int64) {
	if d.groups == nil {
		d.groups = map[energyKey][2]int64{}
	}
	k := energyKey{model, region}
	g := d.groups[k]
	d.groups[k] = [2]int64{g[0] + 1, g[1] + tokens}
}

// apply adds the delta to the totals (or rebuilds them when it is stale) and records
// the log's highest seq as covered.
func (d *totalsDelta) apply(ctx context.Context, tx *sql.Tx) error {
	if d.stale {
		d.groups, d.stale = nil, false
		return rebuildEnergyTotals(ctx, tx)
	}
	keys := make([]energyKey, 0, len(d.groups))
	for k := range d.groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].model < keys[j].model || keys[i].model == keys[j].model && keys[i].region < keys[j].region
	})
	for _, k := range keys {
		g := d.groups[k]
		_, err := tx.ExecContext(ctx, `INSERT INTO energy_totals (model, region, calls, tokens) VALUES (?, ?, ?, ?)
			ON CONFLICT (model, region) DO UPDATE SET calls = calls + excluded.calls, tokens = tokens + excluded.tokens`,
			k.model, k.region, g[0], g[1])
		if err != nil {
			return fmt.Errorf("add to energy_totals: %w", err)
		}
	}
	d.groups = nil
	return markEnergyTotals(ctx, tx)
}
