package protocol

import (
	"bytes"
	"crypto/ed25519"
	"sync"
	"testing"
)

// BenchmarkVerifyExportPublicKey verifies a 100,000-entry export with bodies of about
// 1 KB in public-key mode. Each op is the whole export; see entries/s.
func BenchmarkVerifyExportPublicKey(b *testing.B) {
	benchVerify(b, VerifyOptions{PublicKey: testKey.Public().(ed25519.PublicKey)})
}

// BenchmarkVerifyExportBoth is the same with the secret too: every HMAC recomputed.
func BenchmarkVerifyExportBoth(b *testing.B) {
	benchVerify(b, VerifyOptions{Secret: testSecret, PublicKey: testKey.Public().(ed25519.PublicKey)})
}

// benchExport is a 100,000-entry export with bodies of about 1 KB, made once.
var benchExport = sync.OnceValue(func() []byte {
	b := &testing.B{}
	return writeExport(b, testChain(b, benchEntries, 760), testKey, false)
})

const benchEntries = 100_000

func benchVerify(b *testing.B, opts VerifyOptions) {
	const n = benchEntries
	export := benchExport()
	b.SetBytes(int64(len(export)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := VerifyExport(bytes.NewReader(export), opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkVerifyExportImported verifies, with the secret and the key, a 100,000-entry
// export of a chain imported from the original product: the bridge record and 99,999
// legacy rows behind it, whose import digest and legacy HMAC chain are recomputed too.
func BenchmarkVerifyExportImported(b *testing.B) {
	export := benchImportedExport()
	opts := VerifyOptions{Secret: testSecret, PublicKey: testKey.Public().(ed25519.PublicKey)}
	b.SetBytes(int64(len(export)))
	b.ResetTimer()
	for b.Loop() {
		report, err := VerifyExport(bytes.NewReader(export), opts)
		if err != nil || !report.Import.LegacyHMACsRederived {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchEntries*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// benchImportedExport is that export, made once.
var benchImportedExport = sync.OnceValue(func() []byte {
	b := &testing.B{}
	entries, _ := importedChain(b, benchEntries-1, 0)
	return exportSignedBy(b, entries, testKey)
})
