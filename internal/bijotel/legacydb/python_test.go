package legacydb

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// TestPythonWrittenChain verifies a chain.db that testdata/bijotel_chain.py wrote with
// Python's own sqlite3, hashlib and hmac, by the original's algorithm: valid as written,
// valid after a prefix is trimmed (trusted boundary), broken at the seq the script tampers.
func TestPythonWrittenChain(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	path := filepath.Join(t.TempDir(), "chain.db")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(python, append([]string{filepath.Join("testdata", "bijotel_chain.py")}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("bijotel_chain.py %v: %v\n%s", args, err, out)
		}
	}
	run("build", path, "40", bijoteltest.SecretHex)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the script's file: %v, %v", fi, err)
	}
	if is, err := Is(path); !is || err != nil {
		t.Fatalf("Is = %v, %v", is, err)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ctx := context.Background()
	secret := bijoteltest.Secret()

	rep, err := db.Verify(ctx, secret, Window{})
	if err != nil || rep.Checked != 40 || rep.FirstLink != LinkGenesis || rep.HeadSeq != 40 {
		t.Fatalf("as written: %+v, %v", rep, err)
	}
	// Python's bodies are RFC 8785 already: Cairn's encoder gives the same bytes back.
	err = db.Scan(ctx, 0, 0, func(r *bijotel.Row) error {
		again, err := canonical.Transform(r.CanonicalBody)
		if err != nil || string(again) != string(r.CanonicalBody) {
			t.Errorf("seq %d: Python's body %s, Cairn's %s (%v)", r.Seq, r.CanonicalBody, again, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Verify(ctx, secret, Window{SinceNS: bijoteltest.BaseTimeNS + 10*1_000_000_007}); err != nil {
		t.Fatalf("time window: %v", err)
	}

	run("trim", path, "11")
	rep, err = db.Verify(ctx, secret, Window{})
	if err != nil || rep.Checked != 30 || rep.FirstSeq != 11 || rep.FirstLink != LinkTrusted {
		t.Fatalf("trimmed: %+v, %v", rep, err)
	}

	run("tamper", path, "23")
	rep, err = db.Verify(ctx, secret, Window{})
	var rowErr *bijotel.RowError
	if !errors.As(err, &rowErr) || rowErr.Seq != 23 || rowErr.Reason != bijotel.ReasonBodyHash || rep.Checked != 12 {
		t.Fatalf("tampered at 23: %+v, %v", rep, err)
	}
}
