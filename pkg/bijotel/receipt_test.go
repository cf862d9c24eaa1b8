package bijotel_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

func federationPub() ed25519.PublicKey {
	return bijoteltest.FederationKey().Public().(ed25519.PublicKey)
}

// TestBijotelReceipts verifies valid 2- and 3-operator receipts (PEM with and without its
// final newline, logged or not) and each tampered one; the failing check and its sentinel
// are the first the attack trips.
func TestBijotelReceipts(t *testing.T) {
	for _, spec := range []bijoteltest.ReceiptSpec{
		{Operators: 2}, {Operators: 3, Logged: true}, {Operators: 3, PEMNewline: true},
	} {
		raw := bijoteltest.Receipt(spec)
		report, err := bijotel.VerifyReceipt(raw, federationPub())
		if err != nil {
			t.Fatalf("%+v: %v", spec, err)
		}
		last := report.Checks[len(report.Checks)-1]
		if last.Name != "rekor" || !last.Skipped || last.OK {
			t.Errorf("%+v: the Rekor leg is %+v, want skipped, never verified", spec, last)
		}
		if _, err := bijotel.VerifyReceipt(raw, nil); !errors.Is(err, protocol.ErrNoTrustedKey) {
			t.Errorf("%+v without a federation key: %v, want ErrNoTrustedKey", spec, err)
		}
	}
	want := map[bijoteltest.ReceiptTamper]struct {
		check string
		kind  error
	}{
		bijoteltest.TamperedHash:          {"cross_anchor_hash", protocol.ErrMismatch},
		bijoteltest.ParticipantRehashed:   {"federation_signature", protocol.ErrSignature},
		bijoteltest.ParticipantsReordered: {"participants_order", protocol.ErrMismatch},
		bijoteltest.SelfSigned:            {"federation_key", protocol.ErrKeyNotTrusted},
	}
	for _, tamper := range bijoteltest.ReceiptTampers {
		for _, n := range []int{2, 3} {
			t.Run(string(tamper), func(t *testing.T) {
				raw := bijoteltest.TamperedReceipt(bijoteltest.ReceiptSpec{Operators: n, Logged: true}, tamper)
				report, err := bijotel.VerifyReceipt(raw, federationPub())
				var ce *bijotel.CheckError
				if !errors.As(err, &ce) || ce.Check != want[tamper].check || !errors.Is(err, want[tamper].kind) {
					t.Fatalf("error %v, want check %s wrapping %v", err, want[tamper].check, want[tamper].kind)
				}
				sigOK := false
				for _, c := range report.Checks {
					sigOK = sigOK || c.Name == "federation_signature" && c.OK
				}
				// Every attack but the attacker's own key breaks the federation's signature.
				if sigOK != (tamper == bijoteltest.SelfSigned) {
					t.Errorf("federation_signature ok = %t: %+v", sigOK, report.Checks)
				}
			})
		}
	}
}

// TestBijotelReceiptMalformed refuses receipts that are not of the original's shape.
func TestBijotelReceiptMalformed(t *testing.T) {
	good := string(bijoteltest.Receipt(bijoteltest.ReceiptSpec{Operators: 2, Logged: true}))
	edits := map[string][2]string{
		"anchor_id_cairn":   {`"anchor_20260910T034501Z_9224cd"`, `"anchor-20260910-001"`},
		"operator_id_16hex": {`"operator_id": "op_`, `"operator_id": "op_0000"`},
		"upper_hex_hash":    {`"cross_anchor_hash": "`, `"cross_anchor_hash": "A`},
		"float_log_index":   {`"rekor_log_index": 123456789`, `"rekor_log_index": 123456789.0`},
		"negative_index":    {`"rekor_log_index": 123456789`, `"rekor_log_index": -1`},
		"unknown_member":    {`"anchor_id":`, `"extra": 1, "anchor_id":`},
		"duplicate_member":  {`"anchor_id":`, `"rekor_url": null, "anchor_id":`},
		"bad_anchored_at":   {`"2026-09-10T03:45:01Z"`, `"2026-09-10 03:45:01Z"`},
		"no_signature":      {`"federation_signature"`, `"federation_signaturex"`},
	}
	for name, e := range edits {
		t.Run(name, func(t *testing.T) {
			raw := strings.Replace(good, e[0], e[1], 1)
			if raw == good {
				t.Fatal("the edit did not apply")
			}
			if _, err := bijotel.VerifyReceipt([]byte(raw), federationPub()); !errors.Is(err, protocol.ErrMalformed) {
				t.Errorf("error %v, want ErrMalformed", err)
			}
		})
	}
	noRekor := strings.Replace(strings.Replace(good, `"rekor_log_index": 123456789,`, "", 1), `"rekor_url": "https://rekor.sigstore.dev",`, "", 1)
	if _, err := bijotel.ParseReceipt([]byte(noRekor)); err != nil {
		t.Errorf("receipt without the Rekor members (the original allows it): %v", err)
	}
	if !bijotel.IsReceipt([]byte(good)) || bijotel.IsReceipt([]byte(`{"anchor_id":"anchor-20260910-001","tlog_url":null}`)) {
		t.Error("IsReceipt does not tell the original's receipt from Cairn's")
	}
}

// TestBijotelReceiptPayloadMatchesPython compares ReceiptPayload with Python's
// json.dumps(sort_keys=True, separators=(",", ":")) of the same receipt, with a URL that
// needs ensure_ascii escapes and the PEM's newlines.
func TestBijotelReceiptPayloadMatchesPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	good := string(bijoteltest.Receipt(bijoteltest.ReceiptSpec{Operators: 3, Logged: true}))
	for name, raw := range map[string]string{
		"logged":    good,
		"odd_url":   strings.Replace(good, `"https://rekor.sigstore.dev"`, `"https://rekor.example/\u00e9\u2028\ud83d\ude00/<&>\u007f\"q\"\\"`, 1),
		"null_logs": strings.Replace(strings.Replace(good, `"rekor_log_index": 123456789`, `"rekor_log_index": null`, 1), `"https://rekor.sigstore.dev"`, "null", 1),
	} {
		t.Run(name, func(t *testing.T) {
			if name != "logged" && raw == good {
				t.Fatal("the edit did not apply")
			}
			rc, err := bijotel.ParseReceipt([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := bijotel.ReceiptPayload(rc)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(python, "testdata/receipt_payload.py")
			cmd.Stdin = strings.NewReader(raw)
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("python: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("payload differs:\ngo:     %s\npython: %s", got, want)
			}
		})
	}
}
