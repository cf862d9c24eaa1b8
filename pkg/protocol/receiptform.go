package protocol

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// This file reads and checks what a receipt says of its anchor's participants, in each
// form: the seed form lists them all (participating_operators), the Merkle form carries
// the holder's leaf and its inclusion proof (leaf, inclusion_proof).

// LeafInclusionProof is a Merkle-form receipt's proof that its leaf is in the anchor's tree.
type LeafInclusionProof struct {
	// LeafIndex is the leaf's index in the tree, below TreeSize.
	LeafIndex uint64 `json:"leaf_index"`
	// TreeSize is the number of leaves (participants), from 1 to 2^53−1.
	TreeSize uint64 `json:"tree_size"`
	// RootHash is the tree's RFC 6962 root in standard padded base64, as a Sigstore
	// bundle's inclusion proof writes hashes (44 characters, where hex takes 64: a proof
	// among a million leaves is 20 of them).
	RootHash string `json:"root_hash"`
	// Hashes is the inclusion proof (RFC 9162 §2.1.3), from the leaf up, each in
	// standard padded base64; empty, never null, for a tree of one leaf.
	Hashes []string `json:"hashes"`
}

// Participants are the participants r shows: every one in the seed form, the holder's
// leaf alone in the Merkle form, whose receipt proves nothing of the others.
func (r *Receipt) Participants() []Participant {
	if r.Leaf != nil {
		return []Participant{{OperatorID: r.Leaf.OperatorID, ChainSignature: r.Leaf.ChainSignature}}
	}
	return r.ParticipatingOperators
}

// maxProofHashes bounds an inclusion proof: a tree of 2^53 leaves needs 53.
const maxProofHashes = 64

// failedCheck is the check of VerifyReceiptWith that failed, and why.
type failedCheck struct {
	check string
	err   error
}

// checkSeedReceipt runs the seed form's "participants_order" and "cross_anchor_hash".
func checkSeedReceipt(r *Receipt, pass func(name, detail string)) *failedCheck {
	if err := checkParticipantOrder(r.ParticipatingOperators); err != nil {
		// The list is well formed but not in the order the hash is defined over: a
		// reordered receipt does not match, rather than being unreadable.
		return &failedCheck{"participants_order", &MismatchError{Field: "participating_operators", Want: "ascending operator_id order", Got: err.Error()}}
	}
	if n := len(r.ParticipatingOperators); n == 1 {
		pass("participants_order", "1 operator")
	} else {
		pass("participants_order", fmt.Sprintf("%d operators in ascending operator_id order", n))
	}
	want, err := CrossAnchorHash(r.ParticipatingOperators, r.AnchoredAt)
	if err != nil {
		return &failedCheck{"cross_anchor_hash", err}
	}
	if want != r.CrossAnchorHash {
		return &failedCheck{"cross_anchor_hash", &MismatchError{Field: "cross_anchor_hash", Want: want, Got: r.CrossAnchorHash}}
	}
	pass("cross_anchor_hash", "")
	return nil
}

// checkMerkleReceipt runs the Merkle form's "leaf_inclusion" (the proof leads from the
// leaf to root_hash) and "cross_anchor_hash" (the hash of root_hash, tree_size and
// anchored_at). parseReceipt has checked every shape.
func checkMerkleReceipt(r *Receipt, pass func(name, detail string)) *failedCheck {
	ip := r.InclusionProof
	var root [32]byte
	base64.StdEncoding.Decode(root[:], []byte(ip.RootHash)) //nolint:errcheck // parseReceipt checked it is 32 bytes' base64
	path := make([][32]byte, len(ip.Hashes))
	for i, h := range ip.Hashes {
		base64.StdEncoding.Decode(path[i][:], []byte(h)) //nolint:errcheck // likewise
	}
	if err := VerifyMerkleInclusion(*r.Leaf, ip.LeafIndex, ip.TreeSize, path, root); err != nil {
		return &failedCheck{"leaf_inclusion", &MismatchError{Field: "inclusion_proof", Want: "a path from the leaf to root_hash", Got: err.Error()}}
	}
	pass("leaf_inclusion", fmt.Sprintf("%s at %d of %d participants", r.Leaf.OperatorID, ip.LeafIndex, ip.TreeSize))
	want, err := MerkleAnchorHash(root, ip.TreeSize, r.AnchoredAt)
	if err != nil {
		return &failedCheck{"cross_anchor_hash", err}
	}
	if want != r.CrossAnchorHash {
		return &failedCheck{"cross_anchor_hash", &MismatchError{Field: "cross_anchor_hash", Want: want, Got: r.CrossAnchorHash}}
	}
	pass("cross_anchor_hash", "")
	return nil
}

// parseAnchorForm reads anchor_form and the members of that form into r: without
// anchor_form, participating_operators; with anchor_form "merkle-v1", leaf and
// inclusion_proof, and no participating_operators. Anything else is ErrMalformed.
func parseAnchorForm(r *Receipt, byName map[string]json.RawMessage) error {
	v, ok := byName["anchor_form"]
	if !ok {
		for _, name := range []string{receiptLeafMember, receiptProofMember} {
			if _, ok := byName[name]; ok {
				return fmt.Errorf("%w: receipt member %s belongs to anchor_form %s, and the receipt has no anchor_form", ErrMalformed, name, MerkleForm)
			}
		}
		var err error
		r.ParticipatingOperators, err = participantsMember(byName["participating_operators"])
		return err
	}
	form, err := jsonString("anchor_form", v)
	if err != nil {
		return err
	}
	if form != MerkleForm {
		return fmt.Errorf("%w: anchor_form %s is not %s (absent for the seed form)", ErrMalformed, Quote(form), MerkleForm)
	}
	r.AnchorForm = form
	if _, ok := byName["participating_operators"]; ok {
		return fmt.Errorf("%w: a receipt of anchor_form %s has no participating_operators", ErrMalformed, MerkleForm)
	}
	if r.Leaf, err = leafMember(byName[receiptLeafMember]); err != nil {
		return err
	}
	r.InclusionProof, err = inclusionProofMember(byName[receiptProofMember])
	return err
}

// leafMember reads the leaf object: exactly operator_id, chain_signature and last_seq,
// each of its form (MerkleLeaf.Check).
func leafMember(v json.RawMessage) (*MerkleLeaf, error) {
	obj, err := objectMember(receiptLeafMember, v, "operator_id", "chain_signature", "last_seq")
	if err != nil {
		return nil, err
	}
	l := &MerkleLeaf{}
	if l.OperatorID, err = jsonString("leaf.operator_id", obj["operator_id"]); err != nil {
		return nil, err
	}
	if l.ChainSignature, err = jsonString("leaf.chain_signature", obj["chain_signature"]); err != nil {
		return nil, err
	}
	seq, err := safeUint("leaf.last_seq", obj["last_seq"])
	if err != nil {
		return nil, err
	}
	l.LastSeq = int64(seq) //nolint:gosec // safeUint bounds it by 2^53-1
	return l, l.Check()
}

// inclusionProofMember reads the inclusion_proof object: exactly leaf_index (below
// tree_size), tree_size (at least 1), root_hash and hashes (at most 64), each hash the
// canonical standard padded base64 of 32 bytes.
func inclusionProofMember(v json.RawMessage) (*LeafInclusionProof, error) {
	obj, err := objectMember(receiptProofMember, v, "leaf_index", "tree_size", "root_hash", "hashes")
	if err != nil {
		return nil, err
	}
	ip := &LeafInclusionProof{}
	if ip.LeafIndex, err = safeUint("inclusion_proof.leaf_index", obj["leaf_index"]); err != nil {
		return nil, err
	}
	if ip.TreeSize, err = safeUint("inclusion_proof.tree_size", obj["tree_size"]); err != nil {
		return nil, err
	}
	if ip.TreeSize == 0 || ip.LeafIndex >= ip.TreeSize {
		return nil, fmt.Errorf("%w: inclusion_proof: leaf_index %d is not below tree_size %d", ErrMalformed, ip.LeafIndex, ip.TreeSize)
	}
	if ip.RootHash, err = jsonString("inclusion_proof.root_hash", obj["root_hash"]); err != nil {
		return nil, err
	}
	if _, err := decodeCanonicalBase64("inclusion_proof.root_hash", ip.RootHash, 32); err != nil {
		return nil, err
	}
	var raw []json.RawMessage
	if h := obj["hashes"]; h[0] != '[' || json.Unmarshal(h, &raw) != nil {
		return nil, fmt.Errorf("%w: inclusion_proof.hashes is not an array", ErrMalformed)
	}
	if len(raw) > maxProofHashes {
		return nil, fmt.Errorf("%w: inclusion_proof.hashes has %d hashes, at most %d", ErrMalformed, len(raw), maxProofHashes)
	}
	ip.Hashes = make([]string, len(raw))
	for i, h := range raw {
		name := fmt.Sprintf("inclusion_proof.hashes[%d]", i)
		if ip.Hashes[i], err = jsonString(name, h); err != nil {
			return nil, err
		}
		if _, err := decodeCanonicalBase64(name, ip.Hashes[i], 32); err != nil {
			return nil, err
		}
	}
	return ip, nil
}

// objectMember reads v, the receipt member name, as a JSON object with exactly the
// members names.
func objectMember(name string, v json.RawMessage, names ...string) (map[string]json.RawMessage, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: receipt member %s is missing", ErrMalformed, name)
	}
	var obj map[string]json.RawMessage
	if v[0] != '{' || json.Unmarshal(v, &obj) != nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object", ErrMalformed, name)
	}
	for _, n := range names {
		if _, ok := obj[n]; !ok {
			return nil, fmt.Errorf("%w: %s has no member %s", ErrMalformed, name, n)
		}
	}
	if len(obj) != len(names) {
		return nil, fmt.Errorf("%w: %s has members other than %v", ErrMalformed, name, names)
	}
	return obj, nil
}

// errNotSafeUint is why safeUint refused a value.
var errNotSafeUint = errors.New("not an integer from 0 to 2^53-1")

// safeUint reads v as a JSON integer from 0 to 2^53−1, written without sign, fraction or
// exponent.
func safeUint(name string, v json.RawMessage) (uint64, error) {
	n, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil || n > maxSafeInteger {
		return 0, fmt.Errorf("%w: %s is %w", ErrMalformed, name, errNotSafeUint)
	}
	return n, nil
}
