package importer

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/internal/bijotel/legacydb"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var (
	cairnSecret = bytes.Repeat([]byte{0x5c}, 32)
	importTime  = time.Date(2026, 11, 26, 10, 0, 0, 123456000, time.UTC)
)

// fixture is a legacy chain file and a Cairn chain file to import it into.
type fixture struct {
	dir, legacy, into, export string
	rows                      []bijotel.Row
}

// newFixture writes a legacy chain of n rows from seq first, sealed with secret.
func newFixture(t testing.TB, secret []byte, first int64, n int) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, legacy: filepath.Join(dir, "legacy.db"), into: filepath.Join(dir, "chain.db"),
		export: filepath.Join(dir, "legacy-export.json")}
	prev := bijotel.GenesisHash
	if first > 1 {
		prev = bijotel.BodyHash([]byte("the archived row before"))
	}
	f.rows = bijoteltest.Chain(secret, first, prev, n)
	if err := bijoteltest.WriteDB(f.legacy, f.rows, bijoteltest.DBOptions{}); err != nil {
		t.Fatal(err)
	}
	return f
}

// run imports the fixture's legacy file into its Cairn chain.
func (f *fixture) run(t testing.TB, cairn, legacy []byte, key ed25519.PrivateKey) (*Result, error) {
	t.Helper()
	db, err := legacydb.Open(f.legacy)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	s, err := store.Open(f.into, cairn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	return Import(t.Context(), Options{Legacy: db, LegacySecret: legacy, Into: s, ExportPath: f.export, SignKey: key, Now: importTime})
}

func (f *fixture) mustRun(t testing.TB, cairn, legacy []byte) *Result {
	t.Helper()
	res, err := f.run(t, cairn, legacy, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// verify runs a full verification of the Cairn chain.
func (f *fixture) verify(t *testing.T, secret []byte) *store.VerifyReport {
	t.Helper()
	s, err := store.Open(f.into, secret)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	report, err := s.Verify(t.Context(), store.VerifyOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	return report
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// The import's two proofs meet: the Cairn chain verifies with its bridge, and the legacy
// export the bridge binds verifies with the legacy secret and ends at the bridge's head.
func TestImportProvesContinuity(t *testing.T) {
	for _, c := range []struct {
		name      string
		legacy    []byte
		first     int64
		rederived bool
	}{
		{"same secret", cairnSecret, 1, true},
		{"legacy secret", bijoteltest.Secret(), 1, false},
		{"archived start", bijoteltest.Secret(), 41, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.legacy, c.first, 1500)
			res := f.mustRun(t, cairnSecret, c.legacy)
			b := res.Bridge
			if res.AlreadyImported || !res.ExportWritten || res.EnergyRows == 0 || b.LegacyRows != 1500 || b.LegacyFirstSeq != c.first ||
				b.LegacyHeadHMACHash != f.rows[1499].HMACHash || b.LegacyFirstPrevHash != f.rows[0].PrevHash {
				t.Fatalf("result %+v", res)
			}
			report := f.verify(t, cairnSecret)
			if report.Checked != 1501 || report.Import == nil || !report.Import.ColumnsChecked ||
				report.Import.LegacyHMACsRederived != c.rederived || report.Import.Bridge != b {
				t.Fatalf("verify: %+v %+v", report, report.Import)
			}
			if got := fileSHA256(t, f.export); got != b.LegacyExportSHA256 {
				t.Fatalf("export sha256 %s, bridge binds %s", got, b.LegacyExportSHA256)
			}
			in, err := os.Open(f.export)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = in.Close() }()
			xr, err := bijotel.VerifyExport(in, bijotel.VerifyOptions{Secret: c.legacy})
			if err != nil {
				t.Fatal(err)
			}
			if xr.Envelope.HeadHash != b.LegacyHeadHMACHash || xr.Envelope.EntriesCount != b.LegacyRows {
				t.Fatalf("the export ends at %s (%d rows), the bridge at %s", xr.Envelope.HeadHash, xr.Envelope.EntriesCount, b.LegacyHeadHMACHash)
			}
		})
	}
}

func TestImportAgainChangesNothing(t *testing.T) {
	f := newFixture(t, bijoteltest.Secret(), 1, 300)
	first := f.mustRun(t, cairnSecret, bijoteltest.Secret())
	export, err := os.ReadFile(f.export)
	if err != nil {
		t.Fatal(err)
	}
	again := f.mustRun(t, cairnSecret, bijoteltest.Secret())
	if !again.AlreadyImported || again.ExportWritten || again.Bridge != first.Bridge || again.BridgeHMAC != first.BridgeHMAC {
		t.Fatalf("second import: %+v, first %+v", again, first)
	}
	// A lost export is written again, byte for byte.
	if err := os.Remove(f.export); err != nil {
		t.Fatal(err)
	}
	if res := f.mustRun(t, cairnSecret, bijoteltest.Secret()); !res.ExportWritten {
		t.Fatal("the missing export was not written")
	}
	if rewritten, err := os.ReadFile(f.export); err != nil || !bytes.Equal(rewritten, export) {
		t.Fatalf("the export written again differs (%v)", err)
	}
	// An export file that is not the bound one is refused, not overwritten.
	if err := os.WriteFile(f.export, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(t, cairnSecret, bijoteltest.Secret(), nil); err == nil {
		t.Fatal("a foreign file at the export path was accepted")
	}
	if st := f.verify(t, cairnSecret); st.Checked != 301 {
		t.Fatalf("the chain has %d entries after the imports, want 301", st.Checked)
	}
}

func TestChangedLegacyFileIsRefusedAtItsFirstDifference(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, f *fixture)
		seq    int64
		target error
	}{
		{"rows added", func(t *testing.T, f *fixture) {
			more := bijoteltest.Chain(bijoteltest.Secret(), 301, f.rows[299].HMACHash, 5)
			if err := bijoteltest.WriteDB(f.legacy, more, bijoteltest.DBOptions{}); err != nil {
				t.Fatal(err)
			}
		}, 301, ErrChanged},
		{"tail deleted", func(t *testing.T, f *fixture) {
			if err := bijoteltest.DeleteTail(f.legacy, 4); err != nil {
				t.Fatal(err)
			}
		}, 297, ErrChanged},
		{"a row resealed by the secret's holder", func(t *testing.T, f *fixture) {
			f.rows[119].SpanName = "renamed"
			_ = os.Remove(f.legacy)
			if err := bijoteltest.WriteDB(f.legacy, f.rows, bijoteltest.DBOptions{}); err != nil {
				t.Fatal(err)
			}
		}, 120, ErrChanged},
		{"a body edited", func(t *testing.T, f *fixture) {
			if err := bijoteltest.FlipBodyByte(f.legacy, 77); err != nil {
				t.Fatal(err)
			}
		}, 77, protocol.ErrMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, bijoteltest.Secret(), 1, 300)
			f.mustRun(t, cairnSecret, bijoteltest.Secret())
			c.change(t, f)
			_, err := f.run(t, cairnSecret, bijoteltest.Secret(), nil)
			var changed *ChangedError
			var broken *bijotel.RowError
			switch {
			case !errors.Is(err, c.target):
				t.Fatalf("got %v, want %v", err, c.target)
			case errors.As(err, &changed) && changed.Seq != c.seq:
				t.Fatalf("first differing seq %d, want %d (%v)", changed.Seq, c.seq, err)
			case errors.As(err, &broken) && broken.Seq != c.seq:
				t.Fatalf("broken at %d, want %d (%v)", broken.Seq, c.seq, err)
			case changed == nil && broken == nil:
				t.Fatalf("%v names no seq", err)
			}
			if st := f.verify(t, cairnSecret); st.Checked != 301 {
				t.Fatalf("the refused import changed the chain: %d entries", st.Checked)
			}
		})
	}
}

func TestImportRefuses(t *testing.T) {
	t.Run("a legacy chain that fails verification", func(t *testing.T) {
		f := newFixture(t, bijoteltest.Secret(), 1, 50)
		if err := bijoteltest.FlipHMAC(f.legacy, 20); err != nil {
			t.Fatal(err)
		}
		var broken *bijotel.RowError
		if _, err := f.run(t, cairnSecret, bijoteltest.Secret(), nil); !errors.As(err, &broken) || broken.Seq != 20 {
			t.Fatalf("got %v, want broken at seq 20", err)
		}
		if _, err := os.Stat(f.into); err == nil {
			if st := f.verify(t, cairnSecret); st.Checked != 0 {
				t.Fatalf("a broken legacy chain left %d entries", st.Checked)
			}
		}
	})
	t.Run("the wrong legacy secret", func(t *testing.T) {
		f := newFixture(t, bijoteltest.Secret(), 1, 50)
		if _, err := f.run(t, cairnSecret, cairnSecret, nil); !errors.Is(err, protocol.ErrMismatch) {
			t.Fatalf("got %v, want a mismatch", err)
		}
	})
	t.Run("a seq gap", func(t *testing.T) {
		f := newFixture(t, bijoteltest.Secret(), 1, 50)
		if err := bijoteltest.DeleteRow(f.legacy, 30); err != nil {
			t.Fatal(err)
		}
		if _, err := f.run(t, cairnSecret, bijoteltest.Secret(), nil); err == nil {
			t.Fatal("a chain with a gap was imported")
		}
	})
	t.Run("a Cairn chain that is not an import", func(t *testing.T) {
		f := newFixture(t, bijoteltest.Secret(), 1, 50)
		s, err := store.Open(f.into, cairnSecret)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Seal(t.Context(), []protocol.SpanBody{{Name: "chat", Kind: "client", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b1"}})
		if cerr := s.Close(); err != nil || cerr != nil {
			t.Fatal(err, cerr)
		}
		if _, err := f.run(t, cairnSecret, bijoteltest.Secret(), nil); !errors.Is(err, store.ErrNotEmpty) {
			t.Fatalf("got %v, want ErrNotEmpty", err)
		}
	})
}

func TestSignedLegacyExport(t *testing.T) {
	f := newFixture(t, bijoteltest.Secret(), 1, 40)
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	res, err := f.run(t, cairnSecret, bijoteltest.Secret(), key)
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(f.export)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close() }()
	xr, err := bijotel.VerifyExport(in, bijotel.VerifyOptions{Secret: bijoteltest.Secret(), PublicKey: key.Public().(ed25519.PublicKey)})
	if err != nil || xr.Envelope.Format != bijotel.FormatV2 {
		t.Fatalf("signed export: %+v, %v", xr, err)
	}
	// Importing again without the key would write another export than the bridge binds.
	if _, err := f.run(t, cairnSecret, bijoteltest.Secret(), nil); err == nil {
		t.Fatal("a second import without the key was accepted")
	}
	if again, err := f.run(t, cairnSecret, bijoteltest.Secret(), key); err != nil || again.Bridge != res.Bridge {
		t.Fatalf("second import with the key: %v", err)
	}
}
