package federation

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// A federation without a publicURL signs receipts whose tlog_url is "": audit cannot read
// their entry online unless told where the log is, and says so instead of failing.
func TestAuditLogWithoutLogURL(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	index, empty, keyText := int64(3), "", string(keyPEM)
	r := &protocol.Receipt{TLogLogIndex: &index, TLogURL: &empty, TLogPublicKeyPEM: &keyText}

	var a auditReport
	(&auditOptions{}).auditLog(context.Background(), &a, r, nil)
	if len(a.Checks) != 1 || !a.Checks[0].Skipped || !strings.Contains(a.Checks[0].Detail, "pass --log") {
		t.Fatalf("audit of a receipt with an empty tlog_url: %+v, want one skipped check naming --log", a.Checks)
	}

	a = auditReport{}
	(&auditOptions{log: "http://127.0.0.1:1/federation/log"}).auditLog(context.Background(), &a, r, nil)
	if len(a.Checks) != 1 || a.Checks[0].OK || a.Checks[0].Skipped {
		t.Fatalf("audit with a --log that does not answer: %+v, want a failure", a.Checks)
	}
}

// auditFixture seals a chain of 6 entries, exports seq 1..3 and 4..6 signed by a fresh
// operator key, and writes a receipt signed by fedKey that binds the second export.
func auditFixture(t *testing.T, fedKey ed25519.PrivateKey) (dir, receipt, early, late string) {
	t.Helper()
	dir = t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	db := filepath.Join(dir, "chain.db")
	if out, err := runCairn(t, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 6), "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
	early, late = filepath.Join(dir, "early.json"), filepath.Join(dir, "late.json")
	for path, window := range map[string]string{early: "1:3", late: "4:6"} {
		if out, err := runCairn(t, "export", "--sign-key", priv, "--range", window, "--output", path, "--db", db, "--secret-hex", testSecretHex); err != nil {
			t.Fatalf("export %s: %v\n%s", window, err, out)
		}
	}
	f, err := os.Open(late)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	rep, _ := protocol.VerifyExport(f, protocol.VerifyOptions{})
	if rep == nil || rep.Header == nil {
		t.Fatal("the late export does not read")
	}
	receipt = filepath.Join(dir, "receipt.json")
	if err := os.WriteFile(receipt, receiptSignedByWith(t, fedKey, "anchor-20261125-001", id, rep.Header.ChainSignature), 0o600); err != nil {
		t.Fatal(err)
	}
	keyPEM, _ := protocol.MarshalPublicKeyPEM(fedKey.Public().(ed25519.PublicKey))
	if err := os.WriteFile(filepath.Join(dir, "federation.pem"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, receipt, early, late
}

// TestAuditExplainsAnEarlierSegment: the export of an earlier segment, whose receipt binds
// the operator's later head, is explained as such (not "chain_signature mismatch"), is
// covered when the later export is given too, and a partial audit never says PASSED.
func TestAuditExplainsAnEarlierSegment(t *testing.T) {
	_, fedKey, _ := ed25519.GenerateKey(rand.Reader)
	dir, receipt, early, late := auditFixture(t, fedKey)
	audit := []string{"federation", "audit", "--config-dir", t.TempDir(), "--federation-key", filepath.Join(dir, "federation.pem"), "--receipt", receipt}

	out, err := runCairn(t, append(audit, "--export", early)...)
	if cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(out, "export (seq 1..3) is not the head the receipt binds") ||
		!strings.Contains(out, "submitted after seq 3") || strings.Contains(out, "1 checks") {
		t.Fatalf("audit of the earlier segment alone: exit %d\n%s", cmdutil.ExitCode(err), out)
	}
	out, err = runCairn(t, append(audit, "--export", early, "--export", late)...)
	if err != nil || !strings.Contains(out, "covered_by_later_export") || !strings.Contains(out, "export ends at seq 3; the receipt binds the head at seq 6") ||
		strings.Contains(out, "PASSED") || !strings.Contains(out, "AUDIT PARTIAL") {
		t.Fatalf("audit of both segments (no log entry to read): %v\n%s", err, out)
	}
	names := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "export ") {
			names = map[string]int{}
		}
		if f := strings.Fields(line); len(f) > 1 && (f[0] == "ok" || f[0] == "FAIL" || f[0] == "SKIP") {
			if names[f[1]]++; names[f[1]] > 1 {
				t.Errorf("check %s appears twice for one subject:\n%s", f[1], out)
			}
		}
	}
}
