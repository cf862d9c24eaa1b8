package tlog

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// protocol.VerifyReceiptLog against real entries of the embedded log: the receipt's
// tlog_entry must prove this cross-anchor, at the index the receipt states, under the
// federation key the receipt names.
func TestVerifyReceiptLog(t *testing.T) {
	l := openTestLog(t, t.TempDir())
	receiptFor := func(n int) protocol.Receipt {
		body, content := record(t, n)
		e, err := l.Upload(t.Context(), body)
		if err != nil {
			t.Fatal(err)
		}
		entry, err := json.Marshal(e.Bundle)
		if err != nil {
			t.Fatal(err)
		}
		pemText, err := protocol.MarshalPublicKeyPEM(federationKey.Public().(ed25519.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		index := e.Index
		// record(n) logs CrossAnchorLogContent of a hash: the hash's raw bytes.
		return protocol.Receipt{CrossAnchorHash: hex.EncodeToString(content), TLogLogIndex: &index, TLogEntry: entry, FederationPublicKeyPEM: string(pemText)}
	}
	opts := protocol.LogVerifyOptions{Key: l.pub}
	good := receiptFor(1)
	if err := protocol.VerifyReceiptLog(&good, opts); err != nil {
		t.Fatalf("a logged receipt: %v", err)
	}
	other := receiptFor(2)
	otherKey, err := protocol.MarshalPublicKeyPEM(ed25519.NewKeyFromSeed(append(make([]byte, 31), 9)).Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	wrongIndex := *good.TLogLogIndex + 1
	for name, c := range map[string]struct {
		edit func(r *protocol.Receipt)
		want error
	}{
		"no log entry yet":       {func(r *protocol.Receipt) { r.TLogEntry = nil }, protocol.ErrNotIncluded},
		"another index":          {func(r *protocol.Receipt) { r.TLogLogIndex = &wrongIndex }, protocol.ErrMismatch},
		"a null index":           {func(r *protocol.Receipt) { r.TLogLogIndex = nil }, protocol.ErrMismatch},
		"another anchor's entry": {func(r *protocol.Receipt) { r.TLogEntry, r.TLogLogIndex = other.TLogEntry, other.TLogLogIndex }, protocol.ErrMismatch},
		"another federation key": {func(r *protocol.Receipt) { r.FederationPublicKeyPEM = string(otherKey) }, protocol.ErrKeyNotTrusted},
		"an unknown member":      {func(r *protocol.Receipt) { r.TLogEntry = append([]byte(`{"extra":1,`), r.TLogEntry[1:]...) }, protocol.ErrMalformed},
	} {
		r := good
		c.edit(&r)
		if err := protocol.VerifyReceiptLog(&r, opts); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if err := protocol.VerifyReceiptLog(&good, protocol.LogVerifyOptions{Key: federationKey.Public()}); !errors.Is(err, protocol.ErrMismatch) {
		t.Errorf("another log's key: %v, want a logID mismatch", err)
	}
}
