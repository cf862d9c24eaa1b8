package bijotel_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// exportSentinels are the errors every failure of VerifyExport wraps one of.
var exportSentinels = []error{protocol.ErrMalformed, protocol.ErrMismatch, protocol.ErrSignature,
	protocol.ErrKeyNotTrusted, protocol.ErrNoTrustedKey}

// FuzzVerifyBijotelExport feeds arbitrary bytes to the export reader and verifier in
// every trust mode. It must never panic; every failure wraps a known sentinel; the
// verdict is "valid" exactly when the error is nil, which happens only with the secret
// and only for an export an independent check (the chain rules of ChainVerifier, the
// count, head and chain_signature) also accepts. The public key alone never gives nil.
func FuzzVerifyBijotelExport(f *testing.F) {
	secret := bijoteltest.Secret()
	small := []bijoteltest.ExportSpec{
		{Format: bijotel.FormatV2, Signed: true, FirstSeq: 1, N: 3},
		{Format: bijotel.FormatV1, FirstSeq: 4, N: 2},
		{Format: bijotel.FormatV1, FirstSeq: 1, N: 0},
	}
	for _, spec := range small {
		f.Add(bijoteltest.Export(secret, spec))
	}
	for _, tamper := range []bijoteltest.Tamper{bijoteltest.ForgedBody, bijoteltest.TruncatedTail, bijoteltest.CountMismatch} {
		f.Add(bijoteltest.TamperedExport(secret, bijoteltest.ExportSpec{Format: bijotel.FormatV2, Signed: true, FirstSeq: 1, N: 4}, tamper))
	}
	f.Add([]byte(`{"entries":[{"seq":1}],"format":"bijotel-chain-v1"}`))
	pub := bijoteltest.OperatorKey().Public().(ed25519.PublicKey)
	f.Fuzz(func(t *testing.T, export []byte) {
		for _, opts := range []bijotel.VerifyOptions{{Secret: secret}, {PublicKey: pub}, {Secret: secret, PublicKey: pub}, {}} {
			report, err := bijotel.VerifyExport(bytes.NewReader(export), opts)
			if report != nil && (report.Verdict == bijotel.VerdictValid) != (err == nil) {
				t.Fatalf("verdict %q with error %v", report.Verdict, err)
			}
			if err == nil {
				if opts.Secret == nil {
					t.Fatal("verified without the secret")
				}
				if why := independentlyInvalid(export, secret); why != "" {
					t.Fatalf("reported valid, but %s", why)
				}
				continue
			}
			known := false
			for _, s := range exportSentinels {
				known = known || errors.Is(err, s)
			}
			if !known {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
		}
	})
}

// independentlyInvalid checks an export the long way, with the chain rules of
// ChainVerifier (verify_chain's), and says why it is not valid ("" if it is).
func independentlyInvalid(export []byte, secret []byte) string {
	var rows []bijotel.Row
	env, err := bijotel.ReadExport(bytes.NewReader(export), func(r *bijotel.Row) error {
		c := *r
		c.CanonicalBody = bytes.Clone(r.CanonicalBody)
		rows = append(rows, c)
		return nil
	})
	if err != nil {
		return "it does not read: " + err.Error()
	}
	first := bijotel.GenesisHash
	if env.Segment != nil {
		first = env.Segment.BoundaryPrevHash
	}
	v, err := bijotel.NewChainVerifier(secret, first)
	if err != nil {
		return err.Error()
	}
	for i := range rows {
		if err := v.Check(&rows[i]); err != nil {
			return err.Error()
		}
	}
	switch {
	case env.EntriesCount != int64(len(rows)):
		return "the count differs"
	case v.Head() != env.HeadHash:
		return "the head differs"
	case bijotel.ChainSignature(secret, env.HeadHash, env.EntriesCount) != env.ChainSignature:
		return "chain_signature differs"
	}
	return ""
}

// FuzzVerifyBijotelReceipt feeds arbitrary bytes to the receipt parser and verifier. It
// must never panic; without a key nothing verifies; a receipt that verifies has its
// participants in order, its recomputed hash and a signature by the trusted key over its
// payload.
func FuzzVerifyBijotelReceipt(f *testing.F) {
	for _, spec := range []bijoteltest.ReceiptSpec{{Operators: 2}, {Operators: 3, Logged: true, PEMNewline: true}} {
		f.Add(bijoteltest.Receipt(spec))
	}
	for _, tamper := range bijoteltest.ReceiptTampers {
		f.Add(bijoteltest.TamperedReceipt(bijoteltest.ReceiptSpec{Operators: 2}, tamper))
	}
	f.Add([]byte(`{"anchor_id":"anchor_20260910T034501Z_9224cd","rekor_log_index":null}`))
	pub := bijoteltest.FederationKey().Public().(ed25519.PublicKey)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := bijotel.VerifyReceipt(raw, nil); err == nil {
			t.Fatal("verified without a federation key")
		}
		report, err := bijotel.VerifyReceipt(raw, pub)
		if err != nil {
			known := false
			for _, s := range exportSentinels {
				known = known || errors.Is(err, s)
			}
			if !known {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		rc := report.Receipt
		payload, perr := bijotel.ReceiptPayload(rc)
		sig, serr := base64.StdEncoding.DecodeString(rc.FederationSignature)
		switch {
		case perr != nil || serr != nil || !ed25519.Verify(pub, payload, sig):
			t.Fatal("verified, but the trusted key did not sign its payload")
		case bijotel.CrossAnchorHash(rc.Participants, rc.AnchoredAt) != rc.CrossAnchorHash:
			t.Fatal("verified with a wrong cross_anchor_hash")
		}
		for i := 1; i < len(rc.Participants); i++ {
			if rc.Participants[i-1].OperatorID >= rc.Participants[i].OperatorID {
				t.Fatal("verified with participants out of order")
			}
		}
	})
}
