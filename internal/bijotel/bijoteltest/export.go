package bijoteltest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// CreatedAt is the created_at of generated exports (with microseconds, as the original's
// datetime.now(UTC) has).
var CreatedAt = time.Date(2026, 6, 15, 3, 0, 5, 123456000, time.UTC)

// OperatorKey is the Ed25519 key generated v2 exports are signed with, and AttackerKey
// another one, for key swaps.
func OperatorKey() ed25519.PrivateKey { return seededKey("bijoteltest operator key") }

// AttackerKey is a key that is not the operator's.
func AttackerKey() ed25519.PrivateKey { return seededKey("bijoteltest attacker key") }

func seededKey(label string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte(label))
	return ed25519.NewKeyFromSeed(seed[:])
}

// ExportSpec says which export to make.
type ExportSpec struct {
	Format string // bijotel.FormatV1 or bijotel.FormatV2
	// Signed signs a v2 export with OperatorKey.
	Signed bool
	// FirstSeq is the first row's seq: 1 starts at GENESIS; above 1 the rows continue a
	// chain whose earlier rows are not exported.
	FirstSeq int64
	// N is how many rows.
	N int
	// Segment writes a segment block (a range export); it is forced when FirstSeq > 1.
	Segment bool
	// Extra is how many rows the chain holds after the exported ones (counted in
	// total_in_full_chain).
	Extra int64
}

// ExportRows are the rows of the export spec describes, sealed with secret: the rows of a
// chain from seq 1, less the ones before FirstSeq.
func ExportRows(secret []byte, spec ExportSpec) []bijotel.Row {
	first := spec.FirstSeq
	if first < 1 {
		first = 1
	}
	all := Chain(secret, 1, bijotel.GenesisHash, int(first-1)+spec.N)
	return all[first-1:]
}

// ExportHeader is the header the original writes for rows under spec, chain_signature
// made with secret.
func ExportHeader(secret []byte, spec ExportSpec, rows []bijotel.Row) bijotel.ExportHeader {
	h := bijotel.ExportHeader{
		Format: spec.Format, CreatedAt: CreatedAt, EntriesCount: int64(len(rows)), HeadHash: bijotel.GenesisHash,
	}
	if len(rows) > 0 {
		h.HeadHash = rows[len(rows)-1].HMACHash
	}
	h.ChainSignature = bijotel.ChainSignature(secret, h.HeadHash, h.EntriesCount)
	if (spec.Segment || spec.FirstSeq > 1) && len(rows) > 0 {
		first, last := rows[0].Seq, rows[len(rows)-1].Seq
		total := last + spec.Extra
		h.Segment = &bijotel.Segment{
			FirstSeq: first, LastSeq: last, TotalInSegment: int64(len(rows)), TotalInFullChain: total,
			BoundaryPrevHash: rows[0].PrevHash, IsCompleteChain: first == 1 && last == total,
		}
	}
	if spec.Signed {
		h.SignKey = OperatorKey()
	}
	return h
}

// Export writes the export spec describes, sealed with secret.
func Export(secret []byte, spec ExportSpec) []byte {
	rows := ExportRows(secret, spec)
	return mustWrite(ExportHeader(secret, spec, rows), rows)
}

func mustWrite(h bijotel.ExportHeader, rows []bijotel.Row) []byte {
	var out bytes.Buffer
	if err := bijotel.WriteExport(&out, h, rows); err != nil {
		panic(err)
	}
	return out.Bytes()
}

// Tamper names an attack on an export, as the issue lists them.
type Tamper string

// The tampered variants. Each keeps what its attacker cannot recompute (chain_signature,
// which needs the secret; the operator's signature, which needs its key).
const (
	// BodyByte flips a bit of a middle entry's body.
	BodyByte Tamper = "body_byte"
	// ForgedBody replaces a middle entry's body and recomputes its canonical_hash.
	ForgedBody Tamper = "forged_body_recomputed_hash"
	// TruncatedTail cuts the last two entries and fixes entries_count and head_hash,
	// keeping chain_signature and the signature.
	TruncatedTail Tamper = "truncated_tail_signature_kept"
	// DeletedMiddle deletes a middle entry and fixes entries_count.
	DeletedMiddle Tamper = "deleted_middle_entry"
	// KeySwap re-signs chain_signature with AttackerKey and embeds its public key.
	KeySwap Tamper = "key_swap_resigned"
	// CountMismatch states one entry more than the export holds.
	CountMismatch Tamper = "entries_count_mismatch"
	// TamperedSignature flips a bit of the Ed25519 signature.
	TamperedSignature Tamper = "tampered_signature"
)

// Tampers are every Tamper.
var Tampers = []Tamper{BodyByte, ForgedBody, TruncatedTail, DeletedMiddle, KeySwap, CountMismatch, TamperedSignature}

// TamperedExport writes the export spec describes (at least 4 rows), then attacks it.
// KeySwap and TamperedSignature need a signed v2 spec.
func TamperedExport(secret []byte, spec ExportSpec, t Tamper) []byte {
	rows := ExportRows(secret, spec)
	h := ExportHeader(secret, spec, rows)
	mid := len(rows) / 2
	switch t {
	case BodyByte:
		rows[mid].CanonicalBody = bytes.Clone(rows[mid].CanonicalBody)
		rows[mid].CanonicalBody[len(rows[mid].CanonicalBody)/2] ^= 0x01
	case ForgedBody:
		rows[mid].CanonicalBody = []byte(`{"attributes":{"gen_ai.operation.name":"chat"},"name":"forged"}`)
		rows[mid].CanonicalHash = bijotel.BodyHash(rows[mid].CanonicalBody)
	case TruncatedTail:
		rows = rows[:len(rows)-2]
		h.EntriesCount, h.HeadHash = int64(len(rows)), rows[len(rows)-1].HMACHash
		if h.Segment != nil {
			h.Segment.LastSeq, h.Segment.TotalInSegment = rows[len(rows)-1].Seq, int64(len(rows))
			h.Segment.IsCompleteChain = h.Segment.FirstSeq == 1 && h.Segment.LastSeq == h.Segment.TotalInFullChain
		}
	case DeletedMiddle:
		rows = append(rows[:mid:mid], rows[mid+1:]...)
		h.EntriesCount = int64(len(rows))
		if h.Segment != nil {
			h.Segment.TotalInSegment = int64(len(rows))
		}
	case KeySwap:
		h.SignKey = AttackerKey()
	case CountMismatch:
		out := mustWrite(h, rows)
		from := fmt.Sprintf("\"entries_count\": %d,", len(rows))
		to := "\"entries_count\": " + strconv.Itoa(len(rows)+1) + ","
		return bytes.Replace(out, []byte(from), []byte(to), 1)
	case TamperedSignature:
		out := mustWrite(h, rows)
		sig := ed25519.Sign(h.SignKey, []byte(h.ChainSignature))
		bad := bytes.Clone(sig)
		bad[10] ^= 0x01
		return bytes.Replace(out, []byte(base64.StdEncoding.EncodeToString(sig)), []byte(base64.StdEncoding.EncodeToString(bad)), 1)
	default:
		panic("bijoteltest: unknown tamper " + string(t))
	}
	return mustWrite(h, rows)
}
