package protocol

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// The Merkle form of a cross-anchor (docs/PROTOCOL.md §7, "merkle-v1"). Its participants
// are the leaves of an RFC 6962 tree, in ascending operator_id order, and what the
// federation signs and logs commits to the tree's root and size and to the anchor's
// time, so a receipt carries its own leaf and an inclusion proof rather than every
// participant: about 30 hashes among a billion participants, and nothing of the others.

// MerkleForm names the Merkle form of a cross-anchor, as the receipt's anchor_form says it.
const MerkleForm = "merkle-v1"

// merkleAnchorDomain starts what a Merkle-form cross_anchor_hash is taken over. The seed
// form's hash input starts with 64 hex characters, and "i" is not one, so the two forms
// never hash the same bytes.
const merkleAnchorDomain = "cairn-merkle-anchor:v1\n"

// maxLastSeq is the largest last_seq a leaf holds: 2^53−1, the largest integer every JSON
// reader reads exactly.
const maxLastSeq = 1<<53 - 1

// MerkleLeaf is one participant of a Merkle-form cross-anchor: the operator, the
// chain_signature of its submission the anchor covers last, and that submission's
// last_seq, which the seed form does not bind.
type MerkleLeaf struct {
	// OperatorID is "op_" followed by 16 lowercase hex characters (see OperatorID).
	OperatorID string `json:"operator_id"`
	// ChainSignature is 64 lowercase hex characters.
	ChainSignature string `json:"chain_signature"`
	// LastSeq is from 1 to 2^53−1.
	LastSeq int64 `json:"last_seq"`
}

// Check reports whether every member of l has its form; the error wraps ErrMalformed.
func (l MerkleLeaf) Check() error {
	switch {
	case !wellFormedOperatorID(l.OperatorID):
		return fmt.Errorf("%w: leaf operator_id %s is not \"op_\" and 16 lowercase hex characters", ErrMalformed, Quote(l.OperatorID))
	case !isHex(l.ChainSignature, 64):
		return fmt.Errorf("%w: leaf %s: chain_signature is not 64 lowercase hex characters", ErrMalformed, l.OperatorID)
	case l.LastSeq < 1 || l.LastSeq > maxLastSeq:
		return fmt.Errorf("%w: leaf %s: last_seq %d is not from 1 to 2^53-1", ErrMalformed, l.OperatorID, l.LastSeq)
	}
	return nil
}

// AppendData appends l's leaf data to b: the RFC 8785 JSON of its three members,
// {"chain_signature":…,"last_seq":…,"operator_id":…}. l must pass Check; the members
// then need no escaping, and the keys are in RFC 8785's order.
func (l MerkleLeaf) AppendData(b []byte) []byte {
	b = append(b, `{"chain_signature":"`...)
	b = append(b, l.ChainSignature...)
	b = append(b, `","last_seq":`...)
	b = strconv.AppendInt(b, l.LastSeq, 10)
	b = append(b, `,"operator_id":"`...)
	b = append(b, l.OperatorID...)
	return append(b, `"}`...)
}

// Hash returns l's RFC 6962 leaf hash, SHA-256(0x00 ‖ leaf data), after checking it.
func (l MerkleLeaf) Hash() ([32]byte, error) {
	if err := l.Check(); err != nil {
		return [32]byte{}, err
	}
	var buf [160]byte
	return sha256.Sum256(l.AppendData(append(buf[:0], 0x00))), nil
}

// MerkleAnchorHash returns a Merkle-form anchor's cross_anchor_hash: the lowercase hex of
// SHA-256(ASCII("cairn-merkle-anchor:v1\n" ‖ hex(root) ‖ "\n" ‖ size ‖ "\n" ‖ anchoredAt)),
// size in decimal. It is what the federation signs and logs, as for the seed form. size
// must be at least 1 and anchoredAt of the form ParseAnchoredAt accepts; otherwise the
// error wraps ErrMalformed.
func MerkleAnchorHash(root [32]byte, size uint64, anchoredAt string) (string, error) {
	if size < 1 {
		return "", fmt.Errorf("%w: a Merkle anchor's tree_size is at least 1", ErrMalformed)
	}
	if _, err := ParseAnchoredAt(anchoredAt); err != nil {
		return "", err
	}
	b := make([]byte, 0, len(merkleAnchorDomain)+64+1+20+1+len(anchoredAt))
	b = append(b, merkleAnchorDomain...)
	b = hex.AppendEncode(b, root[:])
	b = append(b, '\n')
	b = strconv.AppendUint(b, size, 10)
	b = append(b, '\n')
	b = append(b, anchoredAt...)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// ErrLeafNotInTree says that a Merkle anchor's inclusion proof does not lead from the
// receipt's leaf to the tree's root.
var ErrLeafNotInTree = errors.New("leaf not in the anchor's tree")

// VerifyMerkleInclusion checks that leaf is leaf index of the RFC 6962 tree of size
// leaves whose root is root, by the inclusion proof path (RFC 9162 §2.1.3.2). A proof of
// the wrong length for index and size, or that leads elsewhere, is an error wrapping
// ErrLeafNotInTree; a malformed leaf, one wrapping ErrMalformed.
func VerifyMerkleInclusion(leaf MerkleLeaf, index, size uint64, path [][32]byte, root [32]byte) error {
	h, err := leaf.Hash()
	if err != nil {
		return err
	}
	if index >= size {
		return fmt.Errorf("%w: leaf_index %d is not below tree_size %d", ErrLeafNotInTree, index, size)
	}
	hashes := make([][]byte, len(path))
	for i := range path {
		hashes[i] = path[i][:]
	}
	err = proof.VerifyInclusion(rfc6962.DefaultHasher, index, size, h[:], hashes, root[:])
	var mismatch proof.RootMismatchError
	switch {
	case errors.As(err, &mismatch): // its message holds the root the proof led to: not said
		return fmt.Errorf("%w: the proof of leaf %s at %d of %d leads to another root", ErrLeafNotInTree, leaf.OperatorID, index, size)
	case err != nil:
		return fmt.Errorf("%w: leaf %s at %d of %d: %w", ErrLeafNotInTree, leaf.OperatorID, index, size, err)
	}
	return nil
}
