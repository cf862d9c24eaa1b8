package chain

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// legacyChain writes a BIJOTEL chain file of 20 rows: seq 1..5 end on 2026-06-14, 6..12
// on 2026-06-15 (12 at its last nanosecond), 13..20 on 2026-06-16 (13 at its first), but
// row 9, whose end time is on 2026-06-17: timestamps are not ordered by seq. first is the
// first seq kept (above 1 for a trimmed chain).
func legacyChain(t *testing.T, first int64) string {
	t.Helper()
	rows := bijoteltest.Chain(bijoteltest.Secret(), 1, bijotel.GenesisHash, 20)
	day := func(d int) int64 { return time.Date(2026, 6, d, 12, 0, 0, 0, time.UTC).UnixNano() }
	for i := range rows {
		switch seq := rows[i].Seq; {
		case seq <= 5:
			rows[i].TimestampNS = day(14) + seq
		case seq == 9:
			rows[i].TimestampNS = day(17)
		case seq == 12:
			rows[i].TimestampNS = time.Date(2026, 6, 15, 23, 59, 59, 999_999_999, time.UTC).UnixNano()
		case seq == 13:
			rows[i].TimestampNS = time.Date(2026, 6, 16, 0, 0, 0, 0, time.UTC).UnixNano()
		case seq < 13:
			rows[i].TimestampNS = day(15) + seq
		default:
			rows[i].TimestampNS = day(16) + seq
		}
	}
	path := filepath.Join(t.TempDir(), "legacy.db")
	if err := bijoteltest.WriteDB(path, rows[first-1:], bijoteltest.DBOptions{}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLegacyChainVerify(t *testing.T) {
	t.Setenv("CAIRN_HMAC_SECRET", "")
	secret := []string{"--secret-hex", bijoteltest.SecretHex}
	mustTamper := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		first  int64             // first seq kept; 0: 1
		tamper func(path string) // nil: none
		args   []string          // after chain verify --db PATH
		want   int               // exit code
		out    []string          // in the output or the error
		not    []string          // in neither
	}{
		"whole chain": {args: secret, want: cmdutil.ExitOK, out: []string{
			"valid: BIJOTEL chain seq 1..20, 20 rows checked of 20 in the file, HMACs checked, first link GENESIS\n",
			"head: seq 20 hmac_hash ", "note: rows deleted from the end of the chain cannot be detected from the file alone"}},
		"full flag too": {args: append([]string{"--full"}, secret...), want: cmdutil.ExitOK, out: []string{"valid: BIJOTEL chain seq 1..20"}},
		"range": {args: append([]string{"--range", "5:9"}, secret...), want: cmdutil.ExitOK,
			out: []string{"valid: BIJOTEL chain seq 5..9, 5 rows checked of 20 in the file, HMACs checked, first link checked against seq 4 in this file"}},
		"last": {args: append([]string{"--last", "3"}, secret...), want: cmdutil.ExitOK, out: []string{"valid: BIJOTEL chain seq 18..20, 3 rows checked of 20"}},
		"one day": {args: append([]string{"--since", "2026-06-15", "--until", "2026-06-15"}, secret...), want: cmdutil.ExitOK, out: []string{
			"valid: BIJOTEL chain seq 6..12, 7 rows checked of 20 in the file, HMACs checked, first link checked against seq 5",
			"every row from seq 6 to 12 was verified, 1 of them outside the days asked"}},
		"until the last nanosecond": {args: append([]string{"--until", "2026-06-15"}, secret...), want: cmdutil.ExitOK,
			out: []string{"valid: BIJOTEL chain seq 1..12, 12 rows checked", "first link GENESIS"}},
		"since a day": {args: append([]string{"--since", "2026-06-16"}, secret...), want: cmdutil.ExitOK,
			out: []string{"valid: BIJOTEL chain seq 9..20, 12 rows checked", "against seq 8", "3 of them outside"}},
		"no rows in the days": {args: append([]string{"--since", "2027-01-01"}, secret...), want: cmdutil.ExitOK,
			out: []string{"no rows: the window holds none of the 20 rows in the file; nothing was verified"}, not: []string{"valid"}},
		"trimmed": {first: 6, args: secret, want: cmdutil.ExitOK, out: []string{
			"valid: BIJOTEL chain seq 6..20, 15 rows checked of 15 in the file, HMACs checked, first link trusted: prev_hash at seq=6 is taken from the file (boundary — predecessor not in this DB)",
			"note: confirm the boundary"}},
		"body tampered": {tamper: func(p string) { mustTamper(bijoteltest.FlipBodyByte(p, 7)) }, args: secret, want: cmdutil.ExitMismatch,
			out: []string{"seq=7: canonical_hash mismatch (body mutated)"}, not: []string{"valid"}},
		"hmac tampered, in the window": {tamper: func(p string) { mustTamper(bijoteltest.FlipHMAC(p, 7)) },
			args: append([]string{"--range", "6:8"}, secret...), want: cmdutil.ExitMismatch, out: []string{"seq=7: hmac_hash mismatch (secret wrong or hmac mutated)"}},
		"row deleted": {tamper: func(p string) { mustTamper(bijoteltest.DeleteRow(p, 7)) }, args: secret, want: cmdutil.ExitMismatch,
			out: []string{"seq=8: prev_hash mismatch (chain broken)"}},
		"tail deleted": {tamper: func(p string) { mustTamper(bijoteltest.DeleteTail(p, 2)) }, args: secret, want: cmdutil.ExitOK,
			out: []string{"valid: BIJOTEL chain seq 1..18, 18 rows checked of 18", "cannot be detected from the file alone"}},
		"wrong secret": {args: []string{"--secret-hex", strings.Repeat("ab", 32)}, want: cmdutil.ExitMismatch,
			out: []string{"seq=1: hmac_hash mismatch (secret wrong or hmac mutated)"}},
		"malformed row": {tamper: func(p string) { mustTamper(bijoteltest.ExecDB(p, `UPDATE chain SET timestamp_ns = 1.5 WHERE seq = 5`)) },
			args: secret, want: cmdutil.ExitError, out: []string{"malformed row seq=5: timestamp_ns is REAL, want INTEGER"}},
		"no secret":           {want: cmdutil.ExitUsage, out: []string{"BIJOTEL chain file, verified only with its HMAC secret (the original has no keyless mode)"}},
		"short secret":        {args: []string{"--secret-hex", "abcd"}, want: cmdutil.ExitUsage},
		"last with range":     {args: append([]string{"--last", "3", "--range", "1:2"}, secret...), want: cmdutil.ExitUsage},
		"last negative":       {args: append([]string{"--last", "-1"}, secret...), want: cmdutil.ExitUsage},
		"since not a day":     {args: append([]string{"--since", "2026-13-01"}, secret...), want: cmdutil.ExitUsage},
		"since after until":   {args: append([]string{"--since", "2026-06-16", "--until", "2026-06-15"}, secret...), want: cmdutil.ExitUsage},
		"range backwards":     {args: append([]string{"--range", "9:5"}, secret...), want: cmdutil.ExitUsage},
		"until past int64 ns": {args: append([]string{"--until", "2300-01-01"}, secret...), want: cmdutil.ExitUsage},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			first := max(tc.first, 1)
			path := legacyChain(t, first)
			if tc.tamper != nil {
				tc.tamper(path)
			}
			out, err := runCairn(t, append([]string{"chain", "verify", "--db", path}, tc.args...)...)
			if err != nil {
				out += "\nError: " + err.Error()
			}
			if got := cmdutil.ExitCode(err); got != tc.want {
				t.Fatalf("exit %d, want %d\n%s", got, tc.want, out)
			}
			for _, s := range tc.out {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(out, s) {
					t.Errorf("output has %q:\n%s", s, out)
				}
			}
		})
	}
}

// TestChainVerifyWindowsOnCairnChains: --last works on a Cairn chain; --since/--until are
// refused there.
func TestChainVerifyWindowsOnCairnChains(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	run := func(args ...string) (string, int) {
		t.Helper()
		out, err := runCairn(t, append(append([]string{"chain"}, args...), "--db", db, "--secret-hex", testSecretHex)...)
		return out, cmdutil.ExitCode(err)
	}
	if out, code := run("seal", "--file", cmdtest.SpansFile(t, dir, 25)); code != cmdutil.ExitOK {
		t.Fatalf("seal: exit %d\n%s", code, out)
	}
	if out, code := run("verify", "--full", "--last", "5"); code != cmdutil.ExitOK || !strings.Contains(out, "valid: full verify of seq 21..25, 5 entries checked") {
		t.Fatalf("--last 5: exit %d\n%s", code, out)
	}
	if out, code := run("verify", "--last", "50"); code != cmdutil.ExitOK || !strings.Contains(out, "seq 1..25") {
		t.Fatalf("--last 50: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"verify", "--since", "2026-06-15"}, {"verify", "--until", "2026-06-15"}, {"verify", "--last", "2", "--range", "1:3"}, {"verify", "--last", "-2"}} {
		if out, code := run(args...); code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, cmdutil.ExitUsage, out)
		}
	}
}
