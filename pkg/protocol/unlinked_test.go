package protocol

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestUnlinkedEntryIsCheckEntrysVerdict holds NewUnlinkedEntry to what a store that skips
// CheckEntry relies on: it accepts a body exactly when NewEntry seals it into an entry that
// CheckEntry accepts, and, once linked, the entry is NewEntry's byte for byte. Bodies are
// generated with the shapes CheckEntry refuses (ids, times, UTF-8, nesting, numbers) mixed
// in.
func TestUnlinkedEntryIsCheckEntrysVerdict(t *testing.T) {
	secret := bytes.Repeat([]byte{9}, 32)
	sealer, err := NewEntrySealer(secret)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, secret)
	r := rand.New(rand.NewPCG(22, 1))
	prev := GenesisPrevHash
	accepted, refused := 0, 0
	for i := range 3000 {
		body := genBody(r)
		seq := int64(i + 1)
		want, sealErr := NewEntry(secret, seq, prev, body)
		if sealErr == nil {
			sealErr = CheckEntry(want, mac)
		}
		got, err := NewUnlinkedEntry(&body)
		switch {
		case (err == nil) != (sealErr == nil):
			t.Fatalf("body %d %+v:\nNewUnlinkedEntry: %v\nNewEntry+CheckEntry: %v", i, body, err, sealErr)
		case err != nil:
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("body %d: %v does not wrap ErrMalformed", i, err)
			}
			refused++
			continue
		}
		if got.Seq != 0 || got.PrevHash != "" || got.HMACHash != "" {
			t.Fatalf("body %d: unlinked entry has a place: %+v", i, got)
		}
		sealer.Link(got, seq, prev)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("body %d linked:\n got %+v\nwant %+v", i, got, want)
		}
		accepted++
		prev = got.HMACHash
	}
	if accepted < 1000 || refused < 300 {
		t.Fatalf("%d accepted, %d refused: the generator no longer covers both", accepted, refused)
	}
}

// genBody returns a span body that is usually well formed, now and then with one column or
// attribute of a kind CheckEntry or the canonical form refuses.
func genBody(r *rand.Rand) SpanBody {
	texts := []string{"", "chat gpt-4o", "ü", "\u2028", "😀", "a\"b\\c", "\x00\x1f", "\ufeff"}
	b := SpanBody{
		Name: texts[r.IntN(len(texts))], Kind: texts[r.IntN(len(texts))],
		StatusCode: texts[r.IntN(len(texts))], StatusDescription: texts[r.IntN(len(texts))],
		StartTimeNS: r.Int64N(math.MaxInt64), EndTimeNS: r.Int64N(math.MaxInt64),
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7",
		Attributes: map[string]any{"gen_ai.usage.input_tokens": r.Int64N(1 << 20), "k": texts[r.IntN(len(texts))]},
	}
	switch r.IntN(24) {
	case 0:
		b.TraceID = strings.ToUpper(b.TraceID)
	case 1:
		b.SpanID = b.SpanID[1:]
	case 2:
		b.StartTimeNS = -r.Int64N(1000) - 1
	case 3:
		b.EndTimeNS = -1 // not a column: only the body carries it
	case 4:
		b.Name = "bad \xff name"
	case 5:
		b.Kind = "\xc3"
	case 6:
		b.StatusDescription = "\xff" // written as U+FFFD: not a column
	case 7:
		b.Attributes["n"] = math.NaN()
	case 8:
		b.Attributes["n"] = int64(1 << 60)
	case 9:
		b.Attributes["f"] = func() {}
	case 10:
		b.Attributes = nil
	case 11, 12:
		b.Attributes["deep"] = nested(MaxBodyNesting - 2 + r.IntN(4)) // around the limit
	case 13:
		b.Attributes["f"] = 1.5e-7
	case 14:
		b.TraceID = ""
	case 15:
		b.Attributes["\xffkey"] = "v"
	}
	return b
}

// nested returns an array nested levels deep, its innermost holding a string; as an
// attribute it puts the body's deepest value at level levels+1.
func nested(levels int) any {
	var v any = "x"
	for range levels {
		v = []any{v}
	}
	return v
}

// TestCanonicalMatchesViaMap holds Canonical's direct writing of a body's members to the
// general way, a map given to canonical.Marshal: the same bytes, or both an error.
func TestCanonicalMatchesViaMap(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 3))
	direct := 0
	for i := range 3000 {
		body := genBody(r)
		got, gotDirect, err := body.appendCanonical(nil)
		if !gotDirect {
			continue
		}
		direct++
		want, wantErr := body.canonicalViaMap()
		if (err == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("body %d %+v:\n direct %s, %v\nvia map %s, %v", i, body, got, err, want, wantErr)
		}
	}
	if direct < 2500 {
		t.Fatalf("only %d bodies were written directly", direct)
	}
}
