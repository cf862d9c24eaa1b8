package federation

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// TestAuditTiesARotatedKey: an export signed by an operator's rotated key is tied to the
// operator through the federation's records, fetched once and then read offline; a forged
// rotation in the records ties nothing.
func TestAuditTiesARotatedKey(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	_, oldPub, id := operatorKeys(t, filepath.Join(dir, "old"))
	newPriv, newPub, _ := operatorKeys(t, filepath.Join(dir, "new"))
	db := filepath.Join(dir, "chain.db")
	if out, err := runCairn(t, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 4), "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
	export := filepath.Join(dir, "export.json")
	if out, err := runCairn(t, "export", "--sign-key", newPriv, "--output", export, "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	ef, err := os.Open(export)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := protocol.VerifyExport(ef, protocol.VerifyOptions{})
	_ = ef.Close()

	// The federation's log, with the rotation record signed by the federation key.
	logPriv, err := tlog.GenerateLogKey("audit.test/log")
	if err != nil {
		t.Fatal(err)
	}
	l, err := tlog.OpenEmbedded(context.Background(), tlog.EmbeddedOptions{Dir: t.TempDir(), PrivateKey: logPriv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	logSrv := httptest.NewServer(l.Handler())
	t.Cleanup(logSrv.Close)
	logKey, _ := l.PublicKey(context.Background())
	logPEM, err := logKeyPEM(logKey)
	if err != nil {
		t.Fatal(err)
	}
	oldText, _ := os.ReadFile(oldPub)
	newText, _ := os.ReadFile(newPub)
	rec := protocol.KeyRotationRecord{Type: protocol.RecordKeyRotation, Federation: "ns/fed", OperatorID: id,
		OldPublicKeyPEM: string(oldText), NewPublicKeyPEM: string(newText), ValidFrom: "2026-11-25T06:00:01Z"}
	content, _ := canonical.Marshal(rec)
	body, err := protocol.NewHashedRekord(content, f.fedKey)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := l.Upload(context.Background(), body)
	if err != nil {
		t.Fatal(err)
	}
	oldKey, _ := cmdutil.LoadPrivateKey(filepath.Join(dir, "old", "keys", "private.pem"))
	newKey, _ := cmdutil.LoadPrivateKey(newPriv)
	msg := protocol.RotationMessage(string(newText), "2026-11-25T06:00:00Z")
	f.routes["GET /federation/operator/"+id+"/keys"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "federation": "ns/fed", "keys": []map[string]any{
			{"public_key_pem": string(oldText), "valid_from": "2026-11-24T06:00:00Z"},
			{"public_key_pem": string(newText), "valid_from": "2026-11-25T06:00:01Z", "rotation": map[string]any{
				"record": rec, "tlog_log_index": entry.Index, "rotation_at": "2026-11-25T06:00:00Z",
				"old_key_signature": base64.StdEncoding.EncodeToString(ed25519.Sign(oldKey, msg)),
				"new_key_signature": base64.StdEncoding.EncodeToString(ed25519.Sign(newKey, msg))}},
		}})
	}
	f.routes["GET /federation/operator/"+id] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "submissions": []map[string]any{
			{"submission_id": "sub-1", "first_seq": 1, "last_seq": 4, "chain_signature": rep.Header.ChainSignature}}})
	}
	receipt := filepath.Join(dir, "receipt.json")
	if err := os.WriteFile(receipt, receiptSignedByWith(t, f.fedKey, "anchor-20261125-001", id, rep.Header.ChainSignature), 0o600); err != nil {
		t.Fatal(err)
	}
	fedPEM, logKeyFile := filepath.Join(dir, "federation.pem"), filepath.Join(dir, "log.pem")
	if err := os.WriteFile(fedPEM, []byte(f.publicKeyPEM()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logKeyFile, logPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	records := filepath.Join(dir, "records.json")
	audit := []string{"federation", "audit", "--config-dir", t.TempDir(), "--federation-key", fedPEM, "--log-key", logKeyFile,
		"--receipt", receipt, "--export", export}

	out, err := runCairn(t, audit...)
	if cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(out, "no participant of the anchor") || !strings.Contains(out, "--fetch-records") {
		t.Fatalf("audit without the records: exit %d, want %d pointing to --fetch-records\n%s", cmdutil.ExitCode(err), cmdutil.ExitMismatch, out)
	}
	out, err = runCairn(t, append(audit, "--service", f.URL, "--log", logSrv.URL, "--fetch-records", records)...)
	if err != nil || !strings.Contains(out, id+" took part in the anchor; the export is signed by its key") ||
		!strings.Contains(out, "signed by the retired key") || !strings.Contains(out, "ok    bound_by_receipt") {
		t.Fatalf("audit --fetch-records: %v\n%s", err, out)
	}

	// Offline: the servers are gone, the records file is enough.
	f.Close()
	logSrv.Close()
	out, err = runCairn(t, append(audit, "--records", records)...)
	if err != nil || !strings.Contains(out, id+" took part in the anchor; the export is signed by its key") {
		t.Fatalf("audit --records offline: %v\n%s", err, out)
	}

	// A forged rotation: the records rotate the operator to another key than the one logged.
	b, _ := os.ReadFile(records)
	var recs map[string]any
	if err := json.Unmarshal(b, &recs); err != nil {
		t.Fatal(err)
	}
	_, attackerPub, _ := operatorKeys(t, filepath.Join(dir, "attacker"))
	attackerText, _ := os.ReadFile(attackerPub)
	forged := strings.ReplaceAll(string(b), jsonString(string(newText)), jsonString(string(attackerText)))
	if forged == string(b) {
		t.Fatal("the records do not hold the new key")
	}
	forgedFile := filepath.Join(dir, "forged.json")
	if err := os.WriteFile(forgedFile, []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = runCairn(t, append(audit, "--records", forgedFile)...)
	if cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(out, "FAIL  key_history") || !strings.Contains(out, "FAIL  participant") {
		t.Fatalf("audit with a forged rotation: exit %d, want %d with the history and the participant failed\n%s", cmdutil.ExitCode(err), cmdutil.ExitMismatch, out)
	}
}

// jsonString is s as a JSON string's body (no quotes), as an indented file spells it.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
