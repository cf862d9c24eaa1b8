package bijotel_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// trustModes are the four ways an export can be checked.
var trustModes = []struct {
	name string
	opts func() bijotel.VerifyOptions
}{
	{"secret", func() bijotel.VerifyOptions { return bijotel.VerifyOptions{Secret: bijoteltest.Secret()} }},
	{"public_key", func() bijotel.VerifyOptions { return bijotel.VerifyOptions{PublicKey: operatorPub()} }},
	{"both", func() bijotel.VerifyOptions {
		return bijotel.VerifyOptions{Secret: bijoteltest.Secret(), PublicKey: operatorPub()}
	}},
	{"neither", func() bijotel.VerifyOptions { return bijotel.VerifyOptions{} }},
}

func operatorPub() ed25519.PublicKey {
	return bijoteltest.OperatorKey().Public().(ed25519.PublicKey)
}

// outcome is what a verification must give: the verdict, the first failed check, its
// sentinel and a piece of its reason.
type outcome struct {
	verdict string
	check   string // "" for a nil error
	kind    error
	reason  string
}

var (
	valid    = outcome{verdict: bijotel.VerdictValid}
	notBound = outcome{bijotel.VerdictNotBound, "entries_bound", bijotel.ErrEntriesNotBound, "signature valid, entries not bound"}
	unbound  = outcome{bijotel.VerdictUnbound, "trust_anchor", protocol.ErrNoTrustedKey, "verify requires a trust anchor"}
	// noAnchor is the neither mode on an export whose structure fails too.
	noAnchor = outcome{bijotel.VerdictInvalid, "trust_anchor", protocol.ErrNoTrustedKey, "verify requires a trust anchor"}
)

func invalid(check string, kind error, reason string) outcome {
	return outcome{bijotel.VerdictInvalid, check, kind, reason}
}

// TestBijotelExportTrustModes verifies the signed v2 export and each tampered variant,
// whole chain and segment, in every trust mode. The case names say where a mode is weak:
// "undetected" means the mode cannot see the attack, and the verdict is then never valid
// without the secret.
func TestBijotelExportTrustModes(t *testing.T) {
	bodyFail := invalid("entries", protocol.ErrMismatch, "canonical_body tampered at seq=")
	chainSig := invalid("chain_signature", protocol.ErrMismatch, "chain_signature mismatch — file may be tampered")
	count := invalid("entries_count", protocol.ErrMismatch, "entries_count mismatch (13 vs len(entries)=12)")
	cases := []struct {
		tamper bijoteltest.Tamper // "" for the untampered export
		modes  map[string]outcome
		names  map[string]string // a mode's case name when it documents a weakness
	}{
		{"", map[string]outcome{"secret": valid, "public_key": notBound, "both": valid, "neither": unbound},
			map[string]string{"public_key": "public_key_only_never_valid"}},
		{bijoteltest.BodyByte, map[string]outcome{"secret": bodyFail, "public_key": bodyFail, "both": bodyFail, "neither": noAnchor}, nil},
		{bijoteltest.ForgedBody, map[string]outcome{
			"secret": invalid("entries", protocol.ErrMismatch, "hmac_hash mismatch at seq="), "public_key": notBound,
			"both": invalid("entries", protocol.ErrMismatch, "hmac_hash mismatch at seq="), "neither": unbound,
		}, map[string]string{"public_key": "public_key_only_undetected_entries_not_bound", "neither": "neither_undetected_bound_to_nothing"}},
		{bijoteltest.TruncatedTail, map[string]outcome{"secret": chainSig, "public_key": notBound, "both": chainSig, "neither": unbound},
			map[string]string{"public_key": "public_key_only_undetected_entries_not_bound", "neither": "neither_undetected_bound_to_nothing"}},
		{bijoteltest.DeletedMiddle, map[string]outcome{
			"secret": chainSig, "public_key": invalid("entries", protocol.ErrMismatch, "prev_hash chain break at seq="),
			"both": chainSig, "neither": noAnchor,
		}, nil},
		{bijoteltest.KeySwap, map[string]outcome{
			"secret": valid, "public_key": invalid("ed25519_signature", protocol.ErrKeyNotTrusted, "possible key-swap attack"),
			"both": invalid("ed25519_signature", protocol.ErrKeyNotTrusted, "possible key-swap attack"), "neither": unbound,
		}, map[string]string{"secret": "secret_only_signature_not_checked_entries_bound"}},
		{bijoteltest.CountMismatch, map[string]outcome{"secret": count, "public_key": count, "both": count, "neither": count}, nil},
		{bijoteltest.TamperedSignature, map[string]outcome{
			"secret": valid, "public_key": invalid("ed25519_signature", protocol.ErrSignature, "ed25519 signature does NOT match chain_signature"),
			"both": invalid("ed25519_signature", protocol.ErrSignature, "does NOT match"), "neither": unbound,
		}, map[string]string{"secret": "secret_only_signature_not_checked_entries_bound"}},
	}
	specs := map[string]bijoteltest.ExportSpec{
		"whole_chain": {Format: bijotel.FormatV2, Signed: true, FirstSeq: 1, N: 12},
		"segment":     {Format: bijotel.FormatV2, Signed: true, FirstSeq: 31, N: 12, Extra: 5},
	}
	for specName, spec := range specs {
		for _, tc := range cases {
			var export []byte
			name := string(tc.tamper)
			if tc.tamper == "" {
				export, name = bijoteltest.Export(bijoteltest.Secret(), spec), "untampered"
			} else {
				export = bijoteltest.TamperedExport(bijoteltest.Secret(), spec, tc.tamper)
			}
			for _, m := range trustModes {
				caseName := m.name
				if n, ok := tc.names[m.name]; ok {
					caseName = n
				}
				t.Run(specName+"/"+name+"/"+caseName, func(t *testing.T) {
					report, err := bijotel.VerifyExport(bytes.NewReader(export), m.opts())
					checkOutcome(t, report, err, tc.modes[m.name])
					if specName == "segment" && report.StructureChecked && !report.BoundaryTrusted {
						t.Error("a segment from seq 31 passed without BoundaryTrusted")
					}
				})
			}
		}
	}
}

func checkOutcome(t *testing.T, report *bijotel.ExportReport, err error, want outcome) {
	t.Helper()
	if report == nil {
		t.Fatalf("no report (error %v)", err)
	}
	if report.Verdict != want.verdict {
		t.Errorf("verdict %q, want %q (error %v)", report.Verdict, want.verdict, err)
	}
	if want.check == "" {
		if err != nil {
			t.Fatalf("error %v, want none; checks %+v", err, report.Checks)
		}
		if !report.EntriesBound || !report.HMACsChecked || !report.ChainSignatureChecked || !report.StructureChecked {
			t.Errorf("valid without every bound: %+v", report)
		}
		return
	}
	var xe *bijotel.CheckError
	if !errors.As(err, &xe) {
		t.Fatalf("error %v, want an *CheckError of %s", err, want.check)
	}
	if xe.Check != want.check || !errors.Is(err, want.kind) || !strings.Contains(xe.Reason, want.reason) {
		t.Errorf("failed %s (%q), want %s wrapping %v with %q", xe.Check, xe.Reason, want.check, want.kind, want.reason)
	}
	if report.EntriesBound {
		t.Error("EntriesBound on a failed verification")
	}
}

// TestBijotelExportV1 checks a v1 export: only the secret verifies it; the public key
// alone is the original's auditor-mode refusal, and both fail the signature check.
func TestBijotelExportV1(t *testing.T) {
	for _, spec := range []bijoteltest.ExportSpec{
		{Format: bijotel.FormatV1, FirstSeq: 1, N: 9},
		{Format: bijotel.FormatV1, FirstSeq: 1, N: 9, Segment: true, Extra: 3},
		{Format: bijotel.FormatV1, FirstSeq: 4, N: 9},
		{Format: bijotel.FormatV1, FirstSeq: 1, N: 0},
	} {
		export := bijoteltest.Export(bijoteltest.Secret(), spec)
		want := map[string]outcome{
			"secret":     valid,
			"public_key": {bijotel.VerdictUnbound, "trust_anchor", protocol.ErrNoTrustedKey, "auditor-mode verify requires a v2 (signed) export"},
			"both":       invalid("ed25519_signature", protocol.ErrSignature, "--public-key provided but file is bijotel-chain-v1"),
			"neither":    unbound,
		}
		for _, m := range trustModes {
			t.Run(m.name, func(t *testing.T) {
				report, err := bijotel.VerifyExport(bytes.NewReader(export), m.opts())
				checkOutcome(t, report, err, want[m.name])
			})
		}
	}
}

// TestBijotelExportRefusals covers what is refused before any check: a short secret, a
// small-order key, malformed input.
func TestBijotelExportRefusals(t *testing.T) {
	good := bijoteltest.Export(bijoteltest.Secret(), bijoteltest.ExportSpec{Format: bijotel.FormatV2, Signed: true, FirstSeq: 1, N: 3})
	if _, err := bijotel.VerifyExport(bytes.NewReader(good), bijotel.VerifyOptions{Secret: make([]byte, 15)}); !errors.Is(err, bijotel.ErrSecret) {
		t.Errorf("15-byte secret: %v, want ErrSecret", err)
	}
	identity := make(ed25519.PublicKey, 32)
	identity[0] = 1
	if _, err := bijotel.VerifyExport(bytes.NewReader(good), bijotel.VerifyOptions{PublicKey: identity}); !errors.Is(err, protocol.ErrMalformed) {
		t.Errorf("small-order key: %v, want ErrMalformed", err)
	}
	s := string(good)
	malformed := map[string]string{
		"not_json":          "{",
		"trailing_data":     s + "{}",
		"format_v3":         strings.Replace(s, bijotel.FormatV2, "bijotel-chain-v3", 1),
		"float_seq":         strings.Replace(s, `"seq": 2,`, `"seq": 2.0,`, 1),
		"big_timestamp":     strings.Replace(s, `"timestamp_ns": 1781492405123456789`, `"timestamp_ns": 9223372036854775808`, 1),
		"duplicate_member":  strings.Replace(s, `"seq": 2,`, `"seq": 2, "seq": 2,`, 1),
		"unknown_member":    strings.Replace(s, `"seq": 2,`, `"seq": 2, "extra": 1,`, 1),
		"missing_member":    strings.Replace(s, `"seq": 2,`, ``, 1),
		"upper_hex":         strings.Replace(s, `"head_hash": "`, `"head_hash": "A`, 1),
		"base64_newline":    strings.Replace(s, `"canonical_body_b64": "ey`, `"canonical_body_b64": "e\ny`, 1),
		"base64_bad_pad":    strings.Replace(s, `=",`+"\n      \"canonical_hash\"", `",`+"\n      \"canonical_hash\"", 1),
		"no_entries_member": strings.Replace(s, `"entries": [`, `"entries_": [`, 1),
	}
	for name, text := range malformed {
		t.Run(name, func(t *testing.T) {
			if text == s {
				t.Fatal("the edit did not apply")
			}
			_, err := bijotel.VerifyExport(strings.NewReader(text), bijotel.VerifyOptions{Secret: bijoteltest.Secret()})
			if !errors.Is(err, protocol.ErrMalformed) {
				t.Errorf("error %v, want ErrMalformed", err)
			}
		})
	}
}

// TestBijotelExportBase64TrailingBits accepts non-zero trailing bits as Python's
// b64decode(validate=True) does: "e31=" decodes to the same "{}" as "e30=".
func TestBijotelExportBase64TrailingBits(t *testing.T) {
	rows := bijoteltest.Chain(bijoteltest.Secret(), 1, bijotel.GenesisHash, 2)
	rows[1].CanonicalBody = []byte("{}")
	bijoteltest.Reseal(bijoteltest.Secret(), rows, 1)
	spec := bijoteltest.ExportSpec{Format: bijotel.FormatV1, FirstSeq: 1, N: 2}
	var out bytes.Buffer
	if err := bijotel.WriteExport(&out, bijoteltest.ExportHeader(bijoteltest.Secret(), spec, rows), rows); err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(out.String(), `"canonical_body_b64": "e30="`, `"canonical_body_b64": "e31="`, 1)
	if text == out.String() {
		t.Fatal("the body's base64 is not e30=")
	}
	report, err := bijotel.VerifyExport(strings.NewReader(text), bijotel.VerifyOptions{Secret: bijoteltest.Secret()})
	if err != nil || !report.EntriesBound {
		t.Fatalf("trailing bits refused: %v", err)
	}
}

// endless is an export whose version string never ends.
type endless struct{ started bool }

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	if !e.started {
		n = copy(p, `{"version": "`)
		e.started = true
	}
	for i := n; i < len(p); i++ {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestBijotelExportRefusesHugeValues stops reading a member longer than MaxValueBytes
// with a clear error instead of buffering it.
func TestBijotelExportRefusesHugeValues(t *testing.T) {
	_, err := bijotel.VerifyExport(&endless{}, bijotel.VerifyOptions{Secret: bijoteltest.Secret()})
	if !errors.Is(err, protocol.ErrMalformed) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("error %v, want ErrMalformed saying the member is too large", err)
	}
}

// TestBijotelExportCompactAndReordered verifies an export re-dumped compact with its keys
// sorted (segment and format after the entries): the reader takes members in any order.
func TestBijotelExportCompactAndReordered(t *testing.T) {
	export := bijoteltest.Export(bijoteltest.Secret(), bijoteltest.ExportSpec{Format: bijotel.FormatV2, Signed: true, FirstSeq: 7, N: 5})
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(export))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	compact, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	report, err := bijotel.VerifyExport(bytes.NewReader(compact), bijotel.VerifyOptions{Secret: bijoteltest.Secret(), PublicKey: operatorPub()})
	if err != nil || !report.BoundaryTrusted || !report.SignatureChecked {
		t.Fatalf("compact sorted export: %v %+v", err, report)
	}
}
