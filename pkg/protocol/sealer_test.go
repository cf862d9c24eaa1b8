package protocol

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// TestEntrySealerMatchesNewEntry seals a chain with one EntrySealer and checks each entry
// against NewEntry's, and that Link moves an entry as sealing it there would.
func TestEntrySealerMatchesNewEntry(t *testing.T) {
	secret := bytes.Repeat([]byte{7}, 32)
	s, err := NewEntrySealer(secret)
	if err != nil {
		t.Fatal(err)
	}
	prev := GenesisPrevHash
	for seq := int64(1); seq <= 5; seq++ {
		body := SpanBody{Name: "chat", Kind: "client", StartTimeNS: seq, EndTimeNS: seq + 1,
			TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7", Attributes: map[string]any{"n": seq}}
		got, err := s.Seal(seq, prev, body)
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewEntry(secret, seq, prev, body)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seq %d:\n sealer %+v\nNewEntry %+v", seq, got, want)
		}
		if err := CheckEntry(got, nil); err != nil || got.HMACHash != EntryHMAC(secret, prev, got.CanonicalHash) {
			t.Fatalf("seq %d: %v, hmac %s", seq, err, got.HMACHash)
		}
		moved := *got
		s.Link(&moved, seq+10, got.HMACHash)
		if atThere, _ := NewEntry(secret, seq+10, got.HMACHash, body); !reflect.DeepEqual(&moved, atThere) {
			t.Fatalf("seq %d linked elsewhere:\n got %+v\nwant %+v", seq, moved, *atThere)
		}
		prev = got.HMACHash
	}
	if _, err := NewEntrySealer(secret[:MinSecretBytes-1]); !errors.Is(err, ErrMalformed) {
		t.Errorf("a short secret: %v, want ErrMalformed", err)
	}
	for name, seal := range map[string]func() error{
		"seq 0":        func() error { _, err := s.Seal(0, GenesisPrevHash, SpanBody{}); return err },
		"bad prevHash": func() error { _, err := s.Seal(1, "abc", SpanBody{}); return err },
	} {
		if err := seal(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}
