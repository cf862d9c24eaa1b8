package protocol

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	caTestAt   = "2026-11-21T18:00:00.000000000Z"
	caTestCS1  = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	caTestCS2  = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	caTestOp1  = "op_0000000000000001"
	caTestOp2  = "op_00000000000000ff"
	caTestHash = "d2d80e23ee67a059071c948c17492b45929773646b134b05f057f30171e6bff0" // SHA-256 of CS1‖CS2‖At, by hand
)

func TestAnchoredAt(t *testing.T) {
	ok := map[string]struct {
		in   time.Time
		want string
	}{
		"whole second": {time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC), caTestAt},
		"nanoseconds":  {time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), "2026-01-02T03:04:05.000000006Z"},
		"other zone":   {time.Date(2026, 11, 21, 19, 0, 0, 120_000_000, time.FixedZone("CET", 3600)), "2026-11-21T18:00:00.120000000Z"},
	}
	for name, c := range ok {
		t.Run(name, func(t *testing.T) {
			got := FormatAnchoredAt(c.in)
			if got != c.want {
				t.Fatalf("FormatAnchoredAt = %s, want %s", got, c.want)
			}
			back, err := ParseAnchoredAt(got)
			if err != nil || !back.Equal(c.in) {
				t.Fatalf("ParseAnchoredAt(%s) = %v, %v", got, back, err)
			}
		})
	}
	bad := map[string]string{
		"no fraction":       "2026-11-21T18:00:00Z",
		"six digits":        "2026-11-21T18:00:00.000000Z",
		"ten digits":        "2026-11-21T18:00:00.0000000000Z",
		"offset":            "2026-11-21T18:00:00.000000000+00:00",
		"lowercase z":       "2026-11-21T18:00:00.000000000z",
		"lowercase t":       "2026-11-21t18:00:00.000000000Z",
		"space for T":       "2026-11-21 18:00:00.000000000Z",
		"month 13":          "2026-13-21T18:00:00.000000000Z",
		"february 30":       "2026-02-30T18:00:00.000000000Z",
		"leap second":       "2026-12-31T23:59:60.000000000Z",
		"trailing space":    caTestAt + " ",
		"short year":        "226-11-21T18:00:00.000000000Z",
		"comma for period":  "2026-11-21T18:00:00,000000000Z",
		"empty":             "",
		"unpadded hour":     "2026-11-21T8:00:00.000000000Z",
		"sign in fraction":  "2026-11-21T18:00:00.-00000000Z",
		"hour 24":           "2026-11-21T24:00:00.000000000Z",
		"non-ascii digit":   "2026-11-21T18:00:00.00000000٠Z",
		"fraction with dot": "2026-11-21T18:00:00..00000000Z",
	}
	for name, in := range bad {
		t.Run("bad "+name, func(t *testing.T) {
			if got, err := ParseAnchoredAt(in); !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParseAnchoredAt(%q) = %v, %v; want ErrMalformed", in, got, err)
			}
		})
	}
}

func TestCrossAnchorHash(t *testing.T) {
	ps := []Participant{{caTestOp1, caTestCS1}, {caTestOp2, caTestCS2}}
	got, err := CrossAnchorHash(ps, caTestAt)
	if err != nil || got != caTestHash {
		t.Fatalf("CrossAnchorHash = %s, %v; want %s", got, err, caTestHash)
	}
	one, err := CrossAnchorHash(ps[:1], caTestAt)
	if err != nil || one == got {
		t.Fatalf("one participant: %s, %v", one, err)
	}
}

func TestCrossAnchorHashErrors(t *testing.T) {
	good := func() []Participant { return []Participant{{caTestOp1, caTestCS1}, {caTestOp2, caTestCS2}} }
	cases := map[string]struct {
		ps      []Participant
		at      string
		mention string
	}{
		"unsorted":             {[]Participant{{caTestOp2, caTestCS2}, {caTestOp1, caTestCS1}}, caTestAt, "participant 1"},
		"duplicate operator":   {[]Participant{{caTestOp1, caTestCS1}, {caTestOp1, caTestCS2}}, caTestAt, "duplicate"},
		"none":                 {nil, caTestAt, "no participating"},
		"63-hex signature":     {[]Participant{{caTestOp1, caTestCS1[1:]}}, caTestAt, "participant 0"},
		"uppercase signature":  {[]Participant{{caTestOp1, strings.ToUpper(caTestCS2)}}, caTestAt, "chain_signature"},
		"uppercase operator":   {[]Participant{{"op_00000000000000FF", caTestCS1}}, caTestAt, "operator_id"},
		"short operator":       {[]Participant{{"op_000000000000001", caTestCS1}}, caTestAt, "operator_id"},
		"operator prefix":      {[]Participant{{"OP_0000000000000001", caTestCS1}}, caTestAt, "operator_id"},
		"bad third operator":   {append(good(), Participant{"op_x", caTestCS1}), caTestAt, "participant 2"},
		"anchored_at offset":   {good(), "2026-11-21T18:00:00.000000000+00:00", "anchored_at"},
		"anchored_at 3 digits": {good(), "2026-11-21T18:00:00.000Z", "anchored_at"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := CrossAnchorHash(c.ps, c.at)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("CrossAnchorHash = %q, %v; want ErrMalformed", got, err)
			}
			if !strings.Contains(err.Error(), c.mention) {
				t.Errorf("error %q does not mention %q", err, c.mention)
			}
		})
	}
}

func TestSortParticipants(t *testing.T) {
	ps := []Participant{{"op_b000000000000000", "2"}, {"op_0000000000000010", "1"}, {"op_a000000000000000", "3"}, {"op_0000000000000002", "0"}}
	SortParticipants(ps)
	var got []string
	for _, p := range ps {
		got = append(got, p.OperatorID)
	}
	want := "op_0000000000000002 op_0000000000000010 op_a000000000000000 op_b000000000000000"
	if strings.Join(got, " ") != want {
		t.Fatalf("sorted to %v, want %s", got, want)
	}
}

func TestCrossAnchorLogContent(t *testing.T) {
	got, err := CrossAnchorLogContent(caTestHash)
	if err != nil || len(got) != 32 || got[0] != 0xd2 || got[31] != 0xf0 {
		t.Fatalf("CrossAnchorLogContent = %x, %v", got, err)
	}
	for name, in := range map[string]string{
		"63 hex":    caTestHash[1:],
		"65 hex":    caTestHash + "0",
		"uppercase": strings.ToUpper(caTestHash),
		"not hex":   strings.Repeat("g", 64),
		"empty":     "",
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := CrossAnchorLogContent(in); !errors.Is(err, ErrMalformed) {
				t.Fatalf("CrossAnchorLogContent(%q) = %x, %v; want ErrMalformed", in, got, err)
			}
		})
	}
}

// rcptKey is a deterministic test key.
func rcptKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

func rcptPub(b byte) ed25519.PublicKey { return rcptKey(b).Public().(ed25519.PublicKey) }

// rcptForeignPEMs are public keys of other algorithms.
var rcptForeignPEMs = sync.OnceValue(func() map[string]string {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		panic(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	out := map[string]string{}
	for name, pub := range map[string]any{"RSA": &rsaKey.PublicKey, "P-256": &ecKey.PublicKey} {
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			panic(err)
		}
		out[name] = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	}
	return out
})
