package bijotel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

func TestChainVerifier(t *testing.T) {
	secret := bijoteltest.Secret()
	for _, c := range []struct {
		name   string
		edit   func(rows []bijotel.Row)
		seq    int64
		reason string
	}{
		{"valid", func([]bijotel.Row) {}, 0, ""},
		{"body byte", func(rows []bijotel.Row) { rows[3].CanonicalBody[5] ^= 1 }, 4, bijotel.ReasonBodyHash},
		{"forged body, hash recomputed", func(rows []bijotel.Row) {
			rows[3].CanonicalBody = []byte(`{"forged":true}`)
			rows[3].CanonicalHash = bijotel.BodyHash(rows[3].CanonicalBody)
		}, 4, bijotel.ReasonHMAC},
		{"link", func(rows []bijotel.Row) { rows[5].PrevHash = rows[3].HMACHash }, 6, bijotel.ReasonPrevHash},
		// The original compares hex strings: the same HMAC in uppercase does not match.
		{"uppercase hmac_hash", func(rows []bijotel.Row) { rows[2].HMACHash = strings.ToUpper(rows[2].HMACHash) }, 3, bijotel.ReasonHMAC},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := bijoteltest.Chain(secret, 1, bijotel.GenesisHash, 8)
			c.edit(rows)
			v, err := bijotel.NewChainVerifier(secret, bijotel.GenesisHash)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				if err = v.Check(&rows[i]); err != nil {
					break
				}
			}
			var re *bijotel.RowError
			switch {
			case c.reason == "" && err != nil:
				t.Fatal(err)
			case c.reason != "" && (!errors.As(err, &re) || re.Seq != c.seq || re.Reason != c.reason):
				t.Fatalf("got %v, want seq %d: %s", err, c.seq, c.reason)
			}
		})
	}
	if _, err := bijotel.NewChainVerifier(secret[:15], bijotel.GenesisHash); !errors.Is(err, bijotel.ErrSecret) {
		t.Fatalf("a 15-byte secret: %v", err)
	}
}
