package bijoteltest

import (
	"errors"
	"fmt"
)

// ExecDB runs one SQL statement on the chain file at path, in place, and fails unless it
// changed at least one row: tests use it to tamper with a file as an attacker with write
// access to it would.
func ExecDB(path, query string, args ...any) (err error) {
	db, err := OpenDB(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	res, err := db.Exec(query, args...)
	if err != nil {
		return fmt.Errorf("bijoteltest: tamper with %s: %w", path, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("bijoteltest: tamper with %s: no row changed by %q %v", path, query, args)
	}
	return nil
}

// FlipBodyByte flips the lowest bit of the middle byte of row seq's canonical_body, which
// stays a BLOB.
func FlipBodyByte(path string, seq int64) (err error) {
	db, err := OpenDB(path)
	if err != nil {
		return err
	}
	var body []byte
	err = db.QueryRow(`SELECT canonical_body FROM chain WHERE seq = ?`, seq).Scan(&body)
	if err = errors.Join(err, db.Close()); err != nil {
		return fmt.Errorf("bijoteltest: read seq %d of %s: %w", seq, path, err)
	}
	if len(body) == 0 {
		return fmt.Errorf("bijoteltest: seq %d of %s has an empty body", seq, path)
	}
	body[len(body)/2] ^= 1
	return ExecDB(path, `UPDATE chain SET canonical_body = ? WHERE seq = ?`, body, seq)
}

// flipFirstDigit is SQL that changes the first hex digit of column (0 → 1, else → 0).
func flipFirstDigit(column string) string {
	return fmt.Sprintf(`UPDATE chain SET %[1]s = CASE substr(%[1]s, 1, 1) WHEN '0' THEN '1' ELSE '0' END || substr(%[1]s, 2) WHERE seq = ?`, column)
}

// FlipHMAC changes the first hex digit of row seq's hmac_hash.
func FlipHMAC(path string, seq int64) error { return ExecDB(path, flipFirstDigit("hmac_hash"), seq) }

// FlipPrevHash changes the first hex digit of row seq's prev_hash.
func FlipPrevHash(path string, seq int64) error {
	return ExecDB(path, flipFirstDigit("prev_hash"), seq)
}

// DeleteRow deletes row seq, leaving a gap.
func DeleteRow(path string, seq int64) error {
	return ExecDB(path, `DELETE FROM chain WHERE seq = ?`, seq)
}

// DeleteTail deletes the chain's last n rows, as an attacker hiding recent spans would.
func DeleteTail(path string, n int) error {
	return ExecDB(path, `DELETE FROM chain WHERE seq IN (SELECT seq FROM chain ORDER BY seq DESC LIMIT ?)`, n)
}
