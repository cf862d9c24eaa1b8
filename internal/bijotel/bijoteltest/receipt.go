package bijoteltest

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// FederationKey is the key generated receipts are signed with.
func FederationKey() ed25519.PrivateKey { return seededKey("bijoteltest federation key") }

// FederationPEM is the public half of key as the original's settings hold it: the PEM
// text without its final newline (BIJOTEL_FED_PUBLIC_KEY_PEM="$(cat pub.pem)").
func FederationPEM(key ed25519.PrivateKey) string {
	text, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(text), "\n")
}

// AnchoredAt is the anchored_at of generated receipts.
var AnchoredAt = time.Date(2026, 9, 10, 3, 45, 1, 0, time.UTC)

// receiptJSON is GET /anchor/{id}'s member order.
type receiptJSON struct {
	AnchorID        string                `json:"anchor_id"`
	CrossAnchorHash string                `json:"cross_anchor_hash"`
	AnchoredAt      string                `json:"anchored_at"`
	RekorLogIndex   *int64                `json:"rekor_log_index"`
	RekorURL        *string               `json:"rekor_url"`
	Signature       string                `json:"federation_signature"`
	PEM             string                `json:"federation_public_key_pem"`
	Participants    []bijotel.Participant `json:"participating_operators"`
}

// ReceiptSpec says which receipt to make.
type ReceiptSpec struct {
	Operators int
	// Logged gives the receipt a Rekor log index and URL (not checkable offline).
	Logged bool
	// PEMNewline keeps the PEM's final newline (as a PEM file holds it).
	PEMNewline bool
}

// ReceiptTamper names an attack on a receipt.
type ReceiptTamper string

// The tampered receipts.
const (
	// TamperedHash changes a digit of cross_anchor_hash.
	TamperedHash ReceiptTamper = "tampered_hash"
	// ParticipantRehashed changes a participant's chain_signature and recomputes the hash.
	ParticipantRehashed ReceiptTamper = "participant_rehashed"
	// ParticipantsReordered swaps the first two participants.
	ParticipantsReordered ReceiptTamper = "participants_reordered"
	// SelfSigned re-signs the receipt with AttackerKey and embeds its PEM.
	SelfSigned ReceiptTamper = "self_signed_attacker_key"
)

// ReceiptTampers are every ReceiptTamper.
var ReceiptTampers = []ReceiptTamper{TamperedHash, ParticipantRehashed, ParticipantsReordered, SelfSigned}

// Receipt makes the receipt spec describes, signed with FederationKey, as the original
// federation builds it (§3.5).
func Receipt(spec ReceiptSpec) []byte { return TamperedReceipt(spec, "") }

// TamperedReceipt makes the receipt spec describes, then attacks it ("" for none).
func TamperedReceipt(spec ReceiptSpec, t ReceiptTamper) []byte {
	r := receiptJSON{AnchoredAt: AnchoredAt.Format(bijotel.AnchoredAtLayout)}
	r.AnchorID = "anchor_" + AnchoredAt.Format("20060102T150405Z") + "_9224cd"
	for i := range spec.Operators {
		pemText := fmt.Sprintf("-----BEGIN PUBLIC KEY-----\noperator %d\n-----END PUBLIC KEY-----\n", i)
		id := sha256.Sum256([]byte(pemText))
		head := sha256.Sum256([]byte(fmt.Sprintf("head of operator %d", i)))
		r.Participants = append(r.Participants, bijotel.Participant{
			OperatorID: "op_" + hex.EncodeToString(id[:])[:12], ChainSignature: hex.EncodeToString(head[:]),
		})
	}
	sort.Slice(r.Participants, func(i, j int) bool { return r.Participants[i].OperatorID < r.Participants[j].OperatorID })
	if spec.Logged {
		index, url := int64(123456789), "https://rekor.sigstore.dev"
		r.RekorLogIndex, r.RekorURL = &index, &url
	}
	r.CrossAnchorHash = bijotel.CrossAnchorHash(r.Participants, r.AnchoredAt)
	key := FederationKey()
	switch t {
	case ParticipantRehashed:
		sign(&r, key, spec.PEMNewline)
		r.Participants[0].ChainSignature = strings.Repeat("ab", 32)
		r.CrossAnchorHash = bijotel.CrossAnchorHash(r.Participants, r.AnchoredAt)
		return marshal(r)
	case SelfSigned:
		key = AttackerKey()
	}
	sign(&r, key, spec.PEMNewline)
	switch t {
	case TamperedHash:
		b := []byte(r.CrossAnchorHash)
		b[5] = "0123456789abcdef"[(strings.IndexByte("0123456789abcdef", b[5])+1)%16]
		r.CrossAnchorHash = string(b)
	case ParticipantsReordered:
		r.Participants[0], r.Participants[1] = r.Participants[1], r.Participants[0]
	}
	return marshal(r)
}

func sign(r *receiptJSON, key ed25519.PrivateKey, newline bool) {
	r.PEM = FederationPEM(key)
	if newline {
		r.PEM += "\n"
	}
	payload, err := bijotel.ReceiptPayload(&bijotel.Receipt{
		AnchorID: r.AnchorID, AnchoredAt: r.AnchoredAt, CrossAnchorHash: r.CrossAnchorHash, Participants: r.Participants,
		RekorLogIndex: r.RekorLogIndex, RekorURL: r.RekorURL, FederationPublicKeyPEM: r.PEM,
	})
	if err != nil {
		panic(err)
	}
	r.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, payload))
}

func marshal(r receiptJSON) []byte {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}
