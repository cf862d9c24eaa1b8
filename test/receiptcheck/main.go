// Command receiptcheck verifies a federation receipt's federation leg, written from
// docs/PROTOCOL.md alone with nothing but Go's standard library (SHA-256, Ed25519, JSON):
// a check of Cairn's receipts that shares none of Cairn's code.
//
//	go run ./test/receiptcheck [-federation-key KEY.pem] RECEIPT.json
//
// It checks both anchor forms (§7): the seed form's participant order and hash, or the
// Merkle form's leaf inclusion (RFC 9162 §2.1.3.2) and hash; then the Ed25519 signature
// over the receipt payload (§1's receipt form), and that the key is the one given. It does
// not check the log leg (tlog_entry): `cairn federation verify` does. Exit 0 when every
// check passes, 3 when one fails, 1 when the receipt cannot be read.
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

func main() {
	keyFile := flag.String("federation-key", "", "the federation's public key (PEM) the receipt must be signed by")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: receiptcheck [-federation-key KEY.pem] RECEIPT.json")
		os.Exit(1)
	}
	raw, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "receiptcheck:", err)
		os.Exit(1)
	}
	trusted := ""
	if *keyFile != "" {
		pemText, err := os.ReadFile(*keyFile)
		if err == nil {
			_, err = parseKey(string(pemText))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "receiptcheck: -federation-key:", err)
			os.Exit(1)
		}
		trusted = string(pemText)
	}
	os.Exit(run(raw, trusted, os.Stdout))
}

// run verifies raw, trusting trustedPEM when it is not "", prints each check to w and
// returns the exit code.
func run(raw []byte, trustedPEM string, w io.Writer) int {
	checks, err := verify(raw, trustedPEM)
	var out strings.Builder
	for _, c := range checks {
		out.WriteString(c + "\n")
	}
	var unreadable *malformed
	code := 0
	switch {
	case errors.As(err, &unreadable):
		out.WriteString("UNREADABLE: " + err.Error() + "\n")
		code = 1
	case err != nil:
		out.WriteString("FAIL: " + err.Error() + "\n")
		code = 3
	default:
		out.WriteString("MATCH\n")
	}
	if _, err := io.WriteString(w, out.String()); err != nil {
		return 1
	}
	return code
}

// malformed is a receipt this script cannot read.
type malformed struct{ msg string }

func (e *malformed) Error() string { return "malformed: " + e.msg }

func bad(format string, a ...any) error { return &malformed{fmt.Sprintf(format, a...)} }

var (
	hex64      = regexp.MustCompile(`^[0-9a-f]{64}$`)
	operatorID = regexp.MustCompile(`^op_[0-9a-f]{16}$`)
)

// verify runs the checks in order and returns those that passed, and the first failure.
func verify(raw []byte, trustedPEM string) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var r map[string]any
	if err := dec.Decode(&r); err != nil {
		return nil, bad("not a JSON object: %v", err)
	}
	if err := logMembers(r); err != nil {
		return nil, err
	}
	var done []string
	anchoredAt, ok1 := r["anchored_at"].(string)
	crossAnchorHash, ok2 := r["cross_anchor_hash"].(string)
	if !ok1 || !ok2 || !hex64.MatchString(crossAnchorHash) {
		return nil, bad("anchored_at or cross_anchor_hash missing or of the wrong shape")
	}

	// The participants: §7's seed form, or its Merkle form.
	var want string
	switch form, present := r["anchor_form"]; {
	case !present:
		h, err := seedHash(r, anchoredAt)
		if err != nil {
			return done, err
		}
		want = h
		done = append(done, "participants_order: ok")
	case form == "merkle-v1":
		h, err := merkleHash(r, anchoredAt)
		if err != nil {
			return done, err
		}
		want = h
		done = append(done, "leaf_inclusion: ok")
	default:
		return nil, bad("anchor_form %v is not merkle-v1", form)
	}
	if want != crossAnchorHash {
		return done, errors.New("cross_anchor_hash does not recompute")
	}
	done = append(done, "cross_anchor_hash: ok")

	// The signature over the payload: every member but these, in the receipt form.
	keyPEM, _ := r["federation_public_key_pem"].(string)
	key, err := parseKey(keyPEM)
	if err != nil {
		return done, err
	}
	sigText, _ := r["federation_signature"].(string)
	sig, err := base64.StdEncoding.DecodeString(sigText)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return done, bad("federation_signature is not the base64 of 64 bytes")
	}
	signed := map[string]any{}
	for k, v := range r {
		switch k {
		case "federation_signature", "tlog_entry", "leaf", "inclusion_proof":
		default:
			signed[k] = v
		}
	}
	var payload strings.Builder
	if err := receiptForm(&payload, signed); err != nil {
		return done, err
	}
	if !ed25519.Verify(key, []byte(payload.String()), sig) {
		return done, errors.New("federation_signature does not verify over the payload")
	}
	done = append(done, "federation_signature: ok")

	if trustedPEM != "" {
		trusted, err := parseKey(trustedPEM)
		if err != nil {
			return done, err
		}
		if !trusted.Equal(key) {
			return done, errors.New("the receipt is signed by another key than the one given")
		}
		done = append(done, "trusted_key: ok")
	}
	done = append(done, "tlog_entry: not checked by this script")
	return done, nil
}

// logMembers checks §7's null rule: the four log members are all null (the log leg is
// pending, and there is no tlog_entry) or all set (and tlog_entry is there); a receipt of
// the legacy format has neither key member and no such rule. tlog_log_index is an
// integer when set.
func logMembers(r map[string]any) error {
	names := []string{"tlog_log_index", "tlog_url", "tlog_public_key_pem", "tlog_record_public_key_pem"}
	present, null := 0, 0
	for _, k := range names {
		if v, ok := r[k]; ok {
			present++
			if v == nil {
				null++
			}
		}
	}
	_, entry := r["tlog_entry"]
	_, logKey := r["tlog_public_key_pem"]
	_, recordKey := r["tlog_record_public_key_pem"]
	switch {
	case !logKey && !recordKey: // the legacy format: no null rule
	case present != len(names):
		return bad("some of the log members are missing")
	case null == len(names) && !entry:
	case null == 0 && entry:
	default:
		return bad("the log members are neither all null without tlog_entry nor all set with it")
	}
	if v := r["tlog_log_index"]; v != nil {
		if _, err := integer(v, 0); err != nil {
			return bad("tlog_log_index: %v", err)
		}
	}
	return nil
}

// seedHash checks participating_operators' order and returns
// hex(SHA-256(cs_1 ‖ … ‖ cs_n ‖ anchored_at)).
func seedHash(r map[string]any, anchoredAt string) (string, error) {
	ps, ok := r["participating_operators"].([]any)
	if !ok || len(ps) == 0 {
		return "", bad("participating_operators is missing or empty")
	}
	h := sha256.New()
	prev := ""
	for _, p := range ps {
		m, ok := p.(map[string]any)
		id, _ := m["operator_id"].(string)
		cs, _ := m["chain_signature"].(string)
		if !ok || len(m) != 2 || !operatorID.MatchString(id) || !hex64.MatchString(cs) {
			return "", bad("a participant is not {operator_id, chain_signature}")
		}
		if id <= prev {
			return "", errors.New("participants are not in strictly ascending operator_id order")
		}
		prev = id
		h.Write([]byte(cs))
	}
	h.Write([]byte(anchoredAt))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// merkleHash checks the leaf's inclusion proof and returns
// hex(SHA-256("cairn-merkle-anchor:v1\n" ‖ hex(root) ‖ "\n" ‖ tree_size ‖ "\n" ‖ anchored_at)).
func merkleHash(r map[string]any, anchoredAt string) (string, error) {
	if _, ok := r["participating_operators"]; ok {
		return "", bad("a Merkle-form receipt lists no participating_operators")
	}
	leaf, ok := r["leaf"].(map[string]any)
	id, _ := leaf["operator_id"].(string)
	cs, _ := leaf["chain_signature"].(string)
	lastSeq, err := integer(leaf["last_seq"], 1)
	if !ok || len(leaf) != 3 || !operatorID.MatchString(id) || !hex64.MatchString(cs) || err != nil {
		return "", bad("leaf is not {operator_id, chain_signature, last_seq}")
	}
	proof, ok := r["inclusion_proof"].(map[string]any)
	if !ok || len(proof) != 4 {
		return "", bad("inclusion_proof is not {leaf_index, tree_size, root_hash, hashes}")
	}
	index, err1 := integer(proof["leaf_index"], 0)
	size, err2 := integer(proof["tree_size"], 1)
	root, err3 := hash32(proof["root_hash"])
	list, ok := proof["hashes"].([]any)
	if err1 != nil || err2 != nil || err3 != nil || !ok || index >= size {
		return "", bad("inclusion_proof's members are of the wrong shape")
	}
	path := make([][]byte, len(list))
	for i, v := range list {
		if path[i], err = hash32(v); err != nil {
			return "", err
		}
	}
	data := fmt.Sprintf(`{"chain_signature":%q,"last_seq":%d,"operator_id":%q}`, cs, lastSeq, id)
	if !included(sum([]byte{0}, []byte(data)), index, size, path, root) {
		return "", errors.New("the inclusion proof does not lead from the leaf to root_hash")
	}
	in := "cairn-merkle-anchor:v1\n" + hex.EncodeToString(root) + "\n" + strconv.FormatUint(size, 10) + "\n" + anchoredAt
	return hex.EncodeToString(sum([]byte(in))), nil
}

// included is RFC 9162 §2.1.3.2: whether path leads from leaf at index of size to root.
func included(leaf []byte, index, size uint64, path [][]byte, root []byte) bool {
	fn, sn, h := index, size-1, leaf
	for _, p := range path {
		if sn == 0 {
			return false
		}
		if fn&1 == 1 || fn == sn {
			h = sum([]byte{1}, p, h)
			for fn&1 == 0 && fn != 0 {
				fn, sn = fn>>1, sn>>1
			}
		} else {
			h = sum([]byte{1}, h, p)
		}
		fn, sn = fn>>1, sn>>1
	}
	return sn == 0 && bytes.Equal(h, root)
}

func sum(parts ...[]byte) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// integer reads a JSON integer from min to 2^53−1.
func integer(v any, min uint64) (uint64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, bad("not a number")
	}
	u, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil || u < min || u > 1<<53-1 || strconv.FormatUint(u, 10) != string(n) {
		return 0, bad("%s is not an integer from %d to 2^53-1", n, min)
	}
	return u, nil
}

// hash32 reads a hash written as the canonical padded base64 of 32 bytes.
func hash32(v any) ([]byte, error) {
	s, _ := v.(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 32 || base64.StdEncoding.EncodeToString(b) != s {
		return nil, bad("a hash is not the padded base64 of 32 bytes")
	}
	return b, nil
}

// parseKey reads an Ed25519 public key from a PEM "PUBLIC KEY" block.
func parseKey(pemText string) (ed25519.PublicKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, bad("not a PEM public key")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, bad("public key: %v", err)
	}
	ed, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, bad("not an Ed25519 key")
	}
	return ed, nil
}

// receiptForm writes v as §1's receipt form: Python's json.dumps(sort_keys=True,
// separators=(",", ":")), every character outside 0x20–0x7e escaped.
func receiptForm(b *strings.Builder, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return bad("the number %s is not an integer", v)
		}
		b.WriteString(strconv.FormatInt(n, 10))
	case string:
		quote(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := receiptForm(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // bytewise UTF-8 order is code point order
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			quote(b, k)
			b.WriteByte(':')
			if err := receiptForm(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	}
	return nil
}

// quote writes s as a JSON string of the receipt form.
func quote(b *strings.Builder, s string) {
	short := map[rune]string{'"': `\"`, '\\': `\\`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\b': `\b`, '\f': `\f`}
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case short[c] != "":
			b.WriteString(short[c])
		case c >= 0x20 && c <= 0x7e:
			b.WriteRune(c)
		default:
			for _, u := range utf16.Encode([]rune{c}) {
				fmt.Fprintf(b, `\u%04x`, u)
			}
		}
	}
	b.WriteByte('"')
}
