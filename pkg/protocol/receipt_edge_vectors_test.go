package protocol

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"crypto/ed25519"
)

// The receipt vectors of issue 33's "One verifier": points where docs/PROTOCOL.md was
// silent or disagreed with the binary, each now a rule of §7 or §8. The bundle faults are
// found by the tlog_entry check, which runs only once the receipt's key is trusted: with
// no key the verdict is no_trusted_key.

// noteLine is a C2SP signature line of text by key, named name.
func noteLine(key ed25519.PrivateKey, name, text string) string {
	var keyHash [4]byte
	binary.BigEndian.PutUint32(keyHash[:], noteKeyHash(name, key.Public().(ed25519.PublicKey)))
	return "\u2014 " + name + " " + base64.StdEncoding.EncodeToString(append(keyHash[:], ed25519.Sign(key, []byte(text))...)) + "\n"
}

// splitCheckpoint returns a checkpoint's text (ending in LF) and its signature lines.
func splitCheckpoint(tb testing.TB, cp string) (string, []string) {
	tb.Helper()
	text, sigs, ok := strings.Cut(cp, "\n\n")
	if !ok {
		tb.Fatalf("checkpoint %q has no signature block", cp)
	}
	lines := strings.SplitAfter(sigs, "\n")
	return text + "\n", lines[:len(lines)-1] // the last is empty: sigs ends in LF
}

// flippedLine is line with one byte of its signature flipped.
func flippedLine(tb testing.TB, line string) string {
	tb.Helper()
	i := strings.LastIndexByte(line, ' ')
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(line[i+1:], "\n"))
	if err != nil {
		tb.Fatal(err)
	}
	raw[10] ^= 1
	return line[:i+1] + base64.StdEncoding.EncodeToString(raw) + "\n"
}

// receiptEdgeVectors are those cases, keyed by file name suffix.
func receiptEdgeVectors(tb testing.TB) map[string]loggedVectorCase {
	fed := federationKey
	honest := func() map[string]any { return loggedReceipt(tb, fed, fed) }
	editEntry := func(edit func(b *LogBundle)) []byte {
		m := honest()
		b := entryOf(tb, m)
		edit(b)
		setEntry(tb, m, b)
		return encodeObject(tb, m)
	}
	editCheckpoint := func(edit func(text string, lines []string) string) []byte {
		return editEntry(func(b *LogBundle) {
			p := &b.Verification.InclusionProof
			text, lines := splitCheckpoint(tb, p.Checkpoint)
			p.Checkpoint = edit(text, lines)
		})
	}
	witness := ed25519.NewKeyFromSeed([]byte(strings.Repeat("w", ed25519.SeedSize)))
	hash := honest()["cross_anchor_hash"].(string)
	return map[string]loggedVectorCase{
		"logged-checkpoint-bad-line-after-good": {"the checkpoint's valid signature line, then a second line by the log's key whose signature does not verify: every line by the log's key must verify, in any order",
			editCheckpoint(func(text string, lines []string) string {
				return text + "\n" + lines[0] + flippedLine(tb, lines[0])
			}), fed, "not_included", "no_trusted_key"},
		"logged-checkpoint-bad-line-before-good": {"the same two signature lines by the log's key, the bad one first",
			editCheckpoint(func(text string, lines []string) string {
				return text + "\n" + flippedLine(tb, lines[0]) + lines[0]
			}), fed, "not_included", "no_trusted_key"},
		"logged-checkpoint-witness-line": {"a witness's signature line (a key the verifier does not know) after the log's: allowed, and not checked",
			editCheckpoint(func(text string, lines []string) string {
				return text + "\n" + lines[0] + noteLine(witness, "witness.example", text)
			}), fed, "ok", "no_trusted_key"},
		"logged-checkpoint-101-lines": {"the log's signature line and 100 witness lines: a checkpoint has at most 100 signature lines",
			editCheckpoint(func(text string, lines []string) string {
				return text + "\n" + lines[0] + strings.Repeat(noteLine(witness, "witness.example", text), 100)
			}), fed, "malformed", "no_trusted_key"},
		"logged-checkpoint-size-2p53": {"the checkpoint's size set to 2^53 (9007199254740992), re-signed by the log: a size is at most 2^53-1",
			editCheckpoint(func(text string, _ []string) string {
				lines := strings.SplitN(text, "\n", 3)
				text = lines[0] + "\n9007199254740992\n" + lines[2]
				return text + "\n" + noteLine(vectorLogKey, vectorLogOrigin, text)
			}), fed, "malformed", "no_trusted_key"},
		"logged-hashes-null": {"the inclusion proof's hashes written null rather than the empty array",
			func() []byte {
				m := honest()
				m[receiptTLogEntryMember].(map[string]any)["verification"].(map[string]any)["inclusionProof"].(map[string]any)["hashes"] = nil
				return encodeObject(tb, m)
			}(), fed, "malformed", "no_trusted_key"},
		"logged-log-index-2p53": {"tlog_log_index 2^53 (9007199254740992), signed: every integer of a receipt is at most 2^53-1",
			func() []byte {
				m := honest()
				m["tlog_log_index"] = json.Number("9007199254740992")
				return signReceiptObject(tb, m, fed)
			}(), fed, "malformed", "malformed"},
		"logged-record-signed-by-another-key": {"tlog_entry (unsigned) swapped for the same log's bundle of the same anchor, whose hashedrekord another key signed",
			func() []byte {
				m := honest()
				setEntry(tb, m, vectorBundle(tb, vectorLogKey, otherKey, hash))
				return encodeObject(tb, m)
			}(), fed, "key_not_trusted", "no_trusted_key"},
		"signature-63-bytes": {"federation_signature the canonical base64 of 63 bytes: a signature of another length than 64 is malformed, not a signature that fails",
			func() []byte {
				m := honest()
				m[receiptSignatureMember] = base64.StdEncoding.EncodeToString(make([]byte, 63))
				return encodeObject(tb, m)
			}(), fed, "malformed", "malformed"},
	}
}
