package protocol

import (
	"bytes"
	"crypto/ed25519"
	"slices"
	"strings"
	"testing"
)

// The attacks of issue 33's "One verifier": VerifyExport, which cairn verify-export, POST
// /api/export/verify and the federation's submit all call, skipped the imported-row rules
// of docs/PROTOCOL.md §2 that cairn chain verify applies. Each test below failed on the
// verifier before they were added to it.

// wantVerdict runs VerifyExport on export in every trust mode and requires want.
func wantVerdict(t *testing.T, export []byte, want string) {
	t.Helper()
	for mode, opts := range exportModes() {
		if _, err := VerifyExport(bytes.NewReader(export), opts); verdict(err) != want {
			t.Errorf("%s: verdict %q, want %q (%v)", mode, verdict(err), want, err)
		}
	}
}

// An honest imported chain, and windows of it that start at its bridge, verify in every
// mode; with the secret alone the whole import authenticates entries_root.
func TestExportOfAnImportedChainVerifies(t *testing.T) {
	entries, b := importedChain(t, 5, 3)
	export := exportSignedBy(t, entries, testKey)
	wantVerdict(t, export, "ok")
	report, err := VerifyExport(bytes.NewReader(export), VerifyOptions{Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	if report.Import == nil || report.Import.Bridge != *b || !report.Import.ColumnsChecked || !report.Import.LegacyHMACsRederived {
		t.Fatalf("import report %+v", report.Import)
	}
	if !slices.Contains(report.Authenticated, "entries_root") {
		t.Fatalf("authenticated %v, want entries_root among them", report.Authenticated)
	}
	// Without the secret the legacy chain is not re-derived, but the columns are checked.
	report, err = VerifyExport(bytes.NewReader(export), VerifyOptions{PublicKey: testKey.Public().(ed25519.PublicKey)})
	if err != nil || !report.Import.ColumnsChecked || report.Import.LegacyHMACsRederived {
		t.Fatalf("public key: %v, %+v", err, report.Import)
	}
	// A chain that imports nothing says so.
	plain := exportSignedBy(t, testChain(t, 3, 16), testKey)
	if report, err := VerifyExport(bytes.NewReader(plain), VerifyOptions{Secret: testSecret}); err != nil || report.Import != nil {
		t.Fatalf("plain chain: %v, import %+v", err, report.Import)
	}
}

// Attack 1 (the federation accepted and anchored it): a body with neither trace_id nor
// span_id, sealed by the holder of the secret in a chain that has no bridge record. Its
// columns are compared with nothing.
func TestExportImportedBodyWithoutABridgeFails(t *testing.T) {
	entries := testChain(t, 4, 16)
	forged := legacyEntry(1)
	forged.SpanName = "anything at all"
	entries[2] = forged
	relink(t, entries, 2)
	wantVerdict(t, exportSignedBy(t, entries, testKey), "bridge_mismatch seq 3")
}

// Attack 2: with the secret alone, an imported row's column rewritten, entries_root
// recomputed and the envelope re-signed with another key. The HMACs do not cover columns;
// the bridge's legacy_rows_sha256 does.
func TestExportImportedColumnRewrittenFails(t *testing.T) {
	for _, column := range []string{"span_name", "span_kind", "trace_id", "span_id", "timestamp_ns"} {
		t.Run(column, func(t *testing.T) {
			entries, _ := importedChain(t, 5, 2)
			e := entries[3]
			switch column {
			case "span_name":
				e.SpanName = "chat gpt-4o"
			case "span_kind":
				e.SpanKind = "SERVER"
			case "trace_id":
				e.TraceID = strings.Repeat("f", 32)
			case "span_id":
				e.SpanID = strings.Repeat("f", 16)
			case "timestamp_ns":
				e.TimestampNS = "1"
			}
			wantVerdict(t, exportSignedBy(t, entries, otherKey), "bridge_mismatch seq 1")
		})
	}
}

// An export that ends inside the import cannot check the imported columns: it verifies,
// but with the secret alone entries_root is not authenticated, since nothing the secret
// covers binds those columns.
func TestExportEndingInsideTheImportDoesNotAuthenticateEntriesRoot(t *testing.T) {
	entries, _ := importedChain(t, 5, 2)
	export := exportSignedBy(t, entries[:4], otherKey)
	report, err := VerifyExport(bytes.NewReader(export), VerifyOptions{Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	if report.Import == nil || report.Import.ColumnsChecked {
		t.Fatalf("import report %+v, want columns not checked", report.Import)
	}
	if slices.Contains(report.Authenticated, "entries_root") || !slices.Contains(report.Unauthenticated, "entries_root") {
		t.Fatalf("authenticated %v, unauthenticated %v: entries_root must not be authenticated", report.Authenticated, report.Unauthenticated)
	}
	// With the operator's key, the signature covers entries_root.
	export = exportSignedBy(t, entries[:4], testKey)
	if report, err := VerifyExport(bytes.NewReader(export), VerifyOptions{PublicKey: testKey.Public().(ed25519.PublicKey)}); err != nil || len(report.Unauthenticated) != 0 {
		t.Fatalf("trusted key: %v, unauthenticated %v", err, report.Unauthenticated)
	}
}

// An export window that starts after seq 1 cannot show the bridge that would import its
// legacy rows: an imported body in it fails, as it would anywhere no bridge imports it.
func TestExportWindowWithoutItsBridgeFails(t *testing.T) {
	entries, _ := importedChain(t, 5, 2)
	wantVerdict(t, exportSignedBy(t, entries[2:], testKey), "bridge_mismatch seq 3")
	// A window of Cairn's own entries after the import verifies.
	wantVerdict(t, exportSignedBy(t, entries[6:], testKey), "ok")
}

// An imported body after the rows its bridge imports fails.
func TestExportImportedBodyAfterTheImportFails(t *testing.T) {
	entries, _ := importedChain(t, 3, 3)
	forged := legacyEntry(9)
	entries[5] = forged
	relink(t, entries, 5)
	wantVerdict(t, exportSignedBy(t, entries, testKey), "bridge_mismatch seq 6")
}

// Entry 1 named as a bridge must be one: a span body of kind internal, status OK, whose
// trace and span IDs are taken from legacy_rows_sha256, with attributes that agree.
func TestExportForgedBridgeFails(t *testing.T) {
	for name, edit := range map[string]func(b *SpanBody){
		"trace_id not from the digest": func(b *SpanBody) { b.TraceID = strings.Repeat("1", 32) },
		"span_id not from the digest":  func(b *SpanBody) { b.SpanID = strings.Repeat("1", 16) },
		"kind":                         func(b *SpanBody) { b.Kind = "client" },
		"status":                       func(b *SpanBody) { b.StatusCode = "ERROR" },
		"end time":                     func(b *SpanBody) { b.EndTimeNS++ },
		"attributes disagree":          func(b *SpanBody) { b.Attributes[bridgeAttr+"last_seq"] = int64(99) },
	} {
		t.Run(name, func(t *testing.T) {
			entries, b := importedChain(t, 3, 1)
			body := b.Body(importTime)
			edit(&body)
			e, err := NewEntry(testSecret, 1, GenesisPrevHash, body)
			if err != nil {
				t.Fatal(err)
			}
			entries[0] = e
			relink(t, entries, 1)
			wantVerdict(t, exportSignedBy(t, entries, testKey), "bridge_mismatch seq 1")
		})
	}
	// A bridge whose body is itself an imported body (no ids): its columns, which name it
	// a bridge, are bound to nothing.
	t.Run("imported body", func(t *testing.T) {
		entries, _ := importedChain(t, 3, 1)
		fake := legacyEntry(1)
		fake.SpanName = BridgeSpanName
		entries[0] = fake
		relink(t, entries, 0)
		wantVerdict(t, exportSignedBy(t, entries, testKey), "bridge_mismatch seq 1")
	})
}
