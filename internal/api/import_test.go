package api

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/internal/bijotel/importer"
	"github.com/cairn-dev/cairn/internal/bijotel/legacydb"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// TestImportedHistoryThroughTheAPI imports a BIJOTEL chain and reads it back through the
// API: the verification names the import, and the legacy rows' replay metadata (the
// original's bijotel.replay.* names) is replay-checked like Cairn's own.
func TestImportedHistoryThroughTheAPI(t *testing.T) {
	f := newFixture(t, 0, nil)
	legacyPath := filepath.Join(t.TempDir(), "legacy.db")
	rows := bijoteltest.Chain(bijoteltest.Secret(), 1, bijotel.GenesisHash, 40)
	if err := bijoteltest.WriteDB(legacyPath, rows, bijoteltest.DBOptions{}); err != nil {
		t.Fatal(err)
	}
	legacy, err := legacydb.Open(legacyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = legacy.Close() }()
	res, err := importer.Import(t.Context(), importer.Options{Legacy: legacy, LegacySecret: bijoteltest.Secret(),
		Into: f.store, ExportPath: filepath.Join(t.TempDir(), "export.json")})
	if err != nil {
		t.Fatal(err)
	}
	f.seal(3) // Cairn's own entries after the history

	resp, body := f.postJSON("/api/chain/verify", `{"full": true}`)
	var v struct {
		Valid   bool        `json:"valid"`
		Checked int64       `json:"entries_verified"`
		Import  *importView `json:"import"`
	}
	if err := json.Unmarshal(body, &v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("verify: %d %s", resp.StatusCode, body)
	}
	want := importView{FirstSeq: 2, LastSeq: 41, LegacyFirstSeq: 1, LegacyLastSeq: 40, LegacyHeadHMACHash: rows[39].HMACHash,
		LegacyExportSHA256: res.Bridge.LegacyExportSHA256, ColumnsChecked: true, LegacyHMACsRederived: false}
	if !v.Valid || v.Checked != 44 || v.Import == nil || *v.Import != want {
		t.Fatalf("verify: %s", body)
	}

	// Legacy row 3 (SpanBody(2)) recorded "output 2" under bijotel.replay.output_hash,
	// with a seed; it is entry 4 here.
	seq := strconv.Itoa(int(res.Bridge.FirstSeq) + 2)
	f.wantReplayAnswer(t, "/api/replay/verify", `{"seq": `+seq+`, "replayed_output": "output 2"}`, map[string]any{
		"match": true, "original_hash": bijotel.BodyHash([]byte("output 2")), "replay_hash": bijotel.BodyHash([]byte("output 2")),
		"deterministic": true, "model_version": "claude-sonnet-4-20250514", "reason": nil,
		"seq": 4.0, "reason_code": "match", "model": "claude-sonnet-4"})
}
