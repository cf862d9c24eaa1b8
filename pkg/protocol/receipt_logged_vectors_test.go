package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/transparency-dev/merkle/rfc6962"
)

// The current-format receipt vectors (issue 14, holes 4, 5 and 10): receipts that name
// their log's key and the key that signed the logged record, around a proof bundle built
// by hand from fixed keys, so the bytes never change.

// Fixed keys of the logged vectors.
var (
	vectorLogKey      = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, ed25519.SeedSize))
	vectorOtherLogKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{6}, ed25519.SeedSize))
	rotatedKey        = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
)

// Where the vectors' log put the entry: a sharded log's global index, and a one-leaf
// shard in which it is leaf 0.
const (
	vectorLogOrigin  = "log.example/cairn-vectors"
	vectorTreeID     = "3904496407287907"
	vectorLogIndex   = 1000
	vectorIntegrated = 1763748000
)

// vectorBundle is the bundle of log (keyed logKey) recording the cross-anchor hash under
// recordKey: a one-leaf tree, whose root is the leaf hash and whose proof is empty, with
// a C2SP checkpoint and a signed entry timestamp.
func vectorBundle(tb testing.TB, logKey, recordKey ed25519.PrivateKey, hash string) *LogBundle {
	tb.Helper()
	content, err := CrossAnchorLogContent(hash)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := NewHashedRekord(content, recordKey)
	if err != nil {
		tb.Fatal(err)
	}
	leaf := rfc6962.DefaultHasher.HashLeaf(body)
	pub := logKey.Public().(ed25519.PublicKey)
	logID, err := LogID(pub)
	if err != nil {
		tb.Fatal(err)
	}
	b := &LogBundle{
		UUID: vectorTreeID + hex.EncodeToString(leaf), Body: base64.StdEncoding.EncodeToString(body),
		IntegratedTime: vectorIntegrated, LogID: logID, LogIndex: vectorLogIndex,
		Verification: LogVerification{InclusionProof: InclusionProof{
			LogIndex: 0, RootHash: hex.EncodeToString(leaf), TreeSize: 1, Hashes: []string{},
			Checkpoint: vectorCheckpoint(logKey, leaf),
		}},
	}
	payload, err := EntryTimestampPayload(b)
	if err != nil {
		tb.Fatal(err)
	}
	b.Verification.SignedEntryTimestamp = base64.StdEncoding.EncodeToString(ed25519.Sign(logKey, payload))
	return b
}

// vectorCheckpoint is the C2SP checkpoint of a one-leaf tree, signed in the signed-note
// form: "— <origin> <base64(key hash ‖ signature)>".
func vectorCheckpoint(logKey ed25519.PrivateKey, root []byte) string {
	text := vectorLogOrigin + "\n1\n" + base64.StdEncoding.EncodeToString(root) + "\n"
	var keyHash [4]byte
	binary.BigEndian.PutUint32(keyHash[:], noteKeyHash(vectorLogOrigin, logKey.Public().(ed25519.PublicKey)))
	sig := append(keyHash[:], ed25519.Sign(logKey, []byte(text))...)
	return text + "\n\u2014 " + vectorLogOrigin + " " + base64.StdEncoding.EncodeToString(sig) + "\n"
}

// loggedReceipt is testReceipt's anchor in the current format with its log leg done,
// logged under recordKey in the vectors' log and signed by signKey, as a JSON object a
// tamperer can edit; sign it with signReceiptObject.
func loggedReceipt(tb testing.TB, signKey, recordKey ed25519.PrivateKey) map[string]any {
	tb.Helper()
	var r Receipt
	if err := json.Unmarshal(testReceipt(tb, signKey), &r); err != nil {
		tb.Fatal(err)
	}
	b := vectorBundle(tb, vectorLogKey, recordKey, r.CrossAnchorHash)
	logPEM := string(mustMarshalPEM(tb, vectorLogKey))
	recordPEM := string(mustMarshalPEM(tb, recordKey))
	index, url := int64(vectorLogIndex), "https://log.example/api/v1/log/entries/"+b.UUID
	r.Legacy = false
	r.TLogLogIndex, r.TLogURL, r.TLogPublicKeyPEM, r.TLogRecordPublicKeyPEM = &index, &url, &logPEM, &recordPEM
	var err error
	if r.TLogEntry, err = json.Marshal(b); err != nil {
		tb.Fatal(err)
	}
	raw, err := SignReceipt(&r, signKey)
	if err != nil {
		tb.Fatal(err)
	}
	return decodeObject(tb, raw)
}

func mustMarshalPEM(tb testing.TB, key ed25519.PrivateKey) []byte {
	tb.Helper()
	p, err := MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// decodeObject decodes a JSON object keeping numbers' digits.
func decodeObject(tb testing.TB, raw []byte) map[string]any {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// signReceiptObject signs m over its payload with key, as the federation would sign
// whatever it holds, and returns the receipt's JSON.
func signReceiptObject(tb testing.TB, m map[string]any, key ed25519.PrivateKey) []byte {
	tb.Helper()
	delete(m, receiptSignatureMember)
	m["federation_public_key_pem"] = string(mustMarshalPEM(tb, key))
	raw := encodeObject(tb, m)
	payload, err := ReceiptPayload(raw)
	if err != nil {
		tb.Fatal(err)
	}
	m[receiptSignatureMember] = base64.StdEncoding.EncodeToString(ed25519.Sign(key, payload))
	return encodeObject(tb, m)
}

func encodeObject(tb testing.TB, m map[string]any) []byte {
	tb.Helper()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// entryOf returns m's tlog_entry as a bundle to edit; setEntry puts it back.
func entryOf(tb testing.TB, m map[string]any) *LogBundle {
	tb.Helper()
	raw, err := json.Marshal(m[receiptTLogEntryMember])
	if err != nil {
		tb.Fatal(err)
	}
	var b LogBundle
	if err := json.Unmarshal(raw, &b); err != nil {
		tb.Fatal(err)
	}
	return &b
}

func setEntry(tb testing.TB, m map[string]any, b *LogBundle) {
	tb.Helper()
	raw, err := json.Marshal(b)
	if err != nil {
		tb.Fatal(err)
	}
	m[receiptTLogEntryMember] = decodeObject(tb, raw)
}

// loggedVectorCase is one current-format receipt and its verdicts.
type loggedVectorCase struct {
	desc          string
	receipt       []byte
	key           ed25519.PrivateKey // the federation key the trusted_key mode trusts
	trusted, none string
}

// loggedReceiptVectors are the current-format cases, keyed by file name suffix.
func loggedReceiptVectors(tb testing.TB) map[string]loggedVectorCase {
	fed := federationKey
	honest := func() map[string]any { return loggedReceipt(tb, fed, fed) }
	signed := func(edit func(m map[string]any)) []byte {
		m := honest()
		edit(m)
		return signReceiptObject(tb, m, fed)
	}
	unsigned := func(edit func(m map[string]any)) []byte {
		m := honest()
		edit(m)
		return encodeObject(tb, m)
	}
	editEntry := func(edit func(b *LogBundle)) []byte {
		return unsigned(func(m map[string]any) {
			b := entryOf(tb, m)
			edit(b)
			setEntry(tb, m, b)
		})
	}
	crlf := func(s any) string { return strings.ReplaceAll(s.(string), "\n", "\r\n") }
	hash := honest()["cross_anchor_hash"].(string)
	otherHash := strings.Repeat("ab", 32)
	return map[string]loggedVectorCase{
		"logged": {"an honest receipt in the current format: the log's key and the logged record's key are signed, and tlog_entry verifies under them",
			encodeObject(tb, honest()), fed, "ok", "no_trusted_key"},
		"logged-resigned": {"a receipt re-signed by a later federation key after a rotation: the logged record is signed by the earlier key, which the receipt names and its signer vouches for",
			encodeObject(tb, loggedReceipt(tb, rotatedKey, fed)), rotatedKey, "ok", "no_trusted_key"},
		"logged-entry-of-another-log": {"tlog_entry (unsigned) swapped for the same record's bundle from another log",
			unsigned(func(m map[string]any) { setEntry(tb, m, vectorBundle(tb, vectorOtherLogKey, fed, hash)) }), fed, "mismatch logID", "no_trusted_key"},
		"logged-entry-of-another-anchor": {"tlog_entry (unsigned) swapped for the same log's bundle of another anchor",
			unsigned(func(m map[string]any) { setEntry(tb, m, vectorBundle(tb, vectorLogKey, fed, otherHash)) }), fed, "mismatch data.hash.value", "no_trusted_key"},
		"logged-forged-log-key": {"tlog_public_key_pem changed to another log's key after signing, with that log's bundle",
			unsigned(func(m map[string]any) {
				m["tlog_public_key_pem"] = string(mustMarshalPEM(tb, vectorOtherLogKey))
				setEntry(tb, m, vectorBundle(tb, vectorOtherLogKey, fed, hash))
			}), fed, "signature", "signature"},
		"logged-no-set": {"the bundle's signed entry timestamp removed: integratedTime and logIndex would be the log's word only",
			editEntry(func(b *LogBundle) { b.Verification.SignedEntryTimestamp = "" }), fed, "not_included", "no_trusted_key"},
		"logged-integrated-time-edited": {"the bundle's integratedTime moved by one second",
			editEntry(func(b *LogBundle) { b.IntegratedTime++ }), fed, "not_included", "no_trusted_key"},
		"logged-uuid-tree-id-not-hex": {"the uuid's 16-character tree ID is not lowercase hex",
			editEntry(func(b *LogBundle) { b.UUID = "zzzzzzzzzzzzzzzz" + b.UUID[16:] }), fed, "malformed", "no_trusted_key"},
		"logged-entry-case-variant-member": {"tlog_entry with a member named LogIndex beside logIndex, same value",
			unsigned(func(m map[string]any) { m[receiptTLogEntryMember].(map[string]any)["LogIndex"] = json.Number("1000") }), fed, "malformed", "no_trusted_key"},
		"logged-checkpoint-hyphen": {"the checkpoint's signature line starts with a hyphen-minus, not the em dash U+2014",
			editEntry(func(b *LogBundle) {
				p := &b.Verification.InclusionProof
				p.Checkpoint = strings.Replace(p.Checkpoint, "\n\u2014 ", "\n- ", 1)
			}), fed, "malformed", "no_trusted_key"},
		"logged-in-shard-index": {"tlog_log_index states the bundle's in-shard inclusionProof.logIndex, not its top-level logIndex",
			signed(func(m map[string]any) { m["tlog_log_index"] = 0 }), fed, "mismatch tlog_log_index", "no_trusted_key"},
		"logged-log-index-minus-zero": {"tlog_log_index written -0",
			bytes.Replace(signed(func(m map[string]any) { m["tlog_log_index"] = 0 }), []byte(`"tlog_log_index": 0`), []byte(`"tlog_log_index": -0`), 1), fed, "malformed", "malformed"},
		"logged-half-null": {"tlog_url null while the other log members are set, signed",
			signed(func(m map[string]any) { m["tlog_url"] = nil }), fed, "malformed", "malformed"},
		"logged-one-key-member": {"tlog_record_public_key_pem removed, tlog_public_key_pem kept, signed",
			signed(func(m map[string]any) { delete(m, "tlog_record_public_key_pem") }), fed, "malformed", "malformed"},
		"pending-with-entry": {"a pending receipt (all log members null) with a tlog_entry added",
			func() []byte {
				m := honest()
				for _, k := range []string{"tlog_log_index", "tlog_url", "tlog_public_key_pem", "tlog_record_public_key_pem"} {
					m[k] = nil
				}
				return signReceiptObject(tb, m, fed)
			}(), fed, "malformed", "malformed"},
		"logged-log-key-crlf": {"tlog_public_key_pem with CRLF line ends, signed",
			signed(func(m map[string]any) { m["tlog_public_key_pem"] = crlf(m["tlog_public_key_pem"]) }), fed, "malformed", "malformed"},
		"logged-blank-line-key": {"tlog_record_public_key_pem with a blank line after the block, signed",
			signed(func(m map[string]any) {
				m["tlog_record_public_key_pem"] = m["tlog_record_public_key_pem"].(string) + "\n"
			}), fed, "malformed", "malformed"},
		"logged-federation-key-crlf": {"federation_public_key_pem with CRLF line ends",
			unsigned(func(m map[string]any) { m["federation_public_key_pem"] = crlf(m["federation_public_key_pem"]) }), fed, "malformed", "malformed"},
		"logged-empty-participants": {"participating_operators empty, signed",
			signed(func(m map[string]any) { m["participating_operators"] = []any{} }), fed, "malformed", "malformed"},
		"logged-participant-extra-member": {"a participant object with a member besides operator_id and chain_signature, signed",
			signed(func(m map[string]any) {
				m["participating_operators"].([]any)[0].(map[string]any)["last_seq"] = 100
			}), fed, "malformed", "malformed"},
	}
}
