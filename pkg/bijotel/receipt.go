package bijotel

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// MaxReceiptBytes bounds a receipt: larger input is malformed.
const MaxReceiptBytes = 16 << 20

// AnchoredAtLayout is the original's anchored_at: strftime("%Y-%m-%dT%H:%M:%SZ").
const AnchoredAtLayout = "2006-01-02T15:04:05Z"

// Participant is one operator of a cross-anchor: its ID ("op_" and 12 hex digits of the
// SHA-256 of its registered PEM text) and its last hmac_hash when it was anchored.
type Participant struct {
	OperatorID     string `json:"operator_id"`
	ChainSignature string `json:"chain_signature"`
}

// Receipt is the original federation's cross-anchor receipt (bijotel-federation 0.3.0,
// GET /anchor/{id}; LEGACY-BIJOTEL.md §3.5).
type Receipt struct {
	AnchorID               string // anchor_<YYYYMMDDTHHMMSSZ>_<6 hex>
	AnchoredAt             string // AnchoredAtLayout
	CrossAnchorHash        string // see CrossAnchorHash
	Participants           []Participant
	RekorLogIndex          *int64  // nil: null or absent
	RekorURL               *string // nil: null or absent
	FederationSignature    string  // base64 Ed25519 signature over ReceiptPayload
	FederationPublicKeyPEM string  // exactly as signed (often without a final newline)
}

var (
	anchorIDPattern   = regexp.MustCompile(`^anchor_([0-9]{8}T[0-9]{6}Z)_[0-9a-f]{6}$`)
	operatorIDPattern = regexp.MustCompile(`^op_[0-9a-f]{12}$`)
)

// IsReceipt reports whether raw looks like the original's receipt rather than Cairn's:
// its anchor_id starts with "anchor_", or it has a rekor_log_index or rekor_url member. It
// verifies nothing.
func IsReceipt(raw []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil {
		return false
	}
	var id string
	_ = json.Unmarshal(probe["anchor_id"], &id)
	_, index := probe["rekor_log_index"]
	_, url := probe["rekor_url"]
	return strings.HasPrefix(id, "anchor_") || index || url
}

// ParseReceipt reads a receipt strictly: one JSON object (at most MaxReceiptBytes) with
// the original's members only, each once, of the original's shapes (anchor_id,
// anchored_at, 64-hex hashes, op_ IDs, an integer or null log index, padded base64
// signature of 64 bytes, an Ed25519 PEM). rekor_log_index and rekor_url may be absent,
// as the original allows. Errors wrap protocol.ErrMalformed. It verifies nothing.
func ParseReceipt(raw []byte) (*Receipt, error) {
	if len(raw) > MaxReceiptBytes {
		return nil, malformedf("receipt is larger than %d bytes", MaxReceiptBytes)
	}
	d := &exportDecoder{src: &budgetReader{r: bytes.NewReader(raw), left: MaxValueBytes}}
	d.dec = json.NewDecoder(d.src)
	d.dec.UseNumber()
	rc := &Receipt{}
	seen := map[string]bool{}
	err := d.members("receipt", func(name string) error {
		seen[name] = true
		switch name {
		case "anchor_id":
			return d.str(&rc.AnchorID, name)
		case "anchored_at":
			return d.str(&rc.AnchoredAt, name)
		case "cross_anchor_hash":
			return d.hash(&rc.CrossAnchorHash, name)
		case "participating_operators":
			return d.participants(&rc.Participants)
		case "rekor_log_index":
			return d.logIndex(&rc.RekorLogIndex)
		case "rekor_url":
			return d.nullableStr(&rc.RekorURL, name)
		case "federation_signature":
			return d.str(&rc.FederationSignature, name)
		case "federation_public_key_pem":
			return d.str(&rc.FederationPublicKeyPEM, name)
		}
		return malformedf("receipt: unknown member %s: the original's receipts have none", protocol.Quote(name))
	})
	if err != nil {
		return nil, err
	}
	if t, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, malformedf("data after the receipt object (%s)", tokenKind(t))
	}
	for _, name := range []string{"anchor_id", "cross_anchor_hash", "participating_operators", "anchored_at", "federation_signature", "federation_public_key_pem"} {
		if !seen[name] {
			return nil, malformedf("receipt malformed: no %q member", name)
		}
	}
	return rc, rc.checkShape()
}

// checkShape checks every member's form.
func (rc *Receipt) checkShape() error {
	switch {
	case !anchorIDPattern.MatchString(rc.AnchorID):
		return malformedf("anchor_id %.80q is not anchor_<YYYYMMDDTHHMMSSZ>_<6 hex>", rc.AnchorID)
	case len(rc.Participants) == 0:
		return malformedf("receipt has no participating_operators")
	}
	if _, err := time.Parse(AnchoredAtLayout, rc.AnchoredAt); err != nil || len(rc.AnchoredAt) != len(AnchoredAtLayout) {
		return malformedf("anchored_at %.40q is not YYYY-MM-DDTHH:MM:SSZ", rc.AnchoredAt)
	}
	for i, p := range rc.Participants {
		if !operatorIDPattern.MatchString(p.OperatorID) || !isHash(p.ChainSignature) {
			return malformedf("participant %d: want an op_ and 12 hex digits operator_id and a 64-hex chain_signature", i)
		}
	}
	if rc.RekorLogIndex != nil && *rc.RekorLogIndex < 0 {
		return malformedf("rekor_log_index %d is negative", *rc.RekorLogIndex)
	}
	if sig, err := decodeBase64(rc.FederationSignature); err != nil || len(sig) != ed25519.SignatureSize {
		return malformedf("federation_signature is not the base64 of a 64-byte Ed25519 signature")
	}
	if _, err := ParseFederationKeyPEM([]byte(rc.FederationPublicKeyPEM)); err != nil {
		return fmt.Errorf("federation_public_key_pem: %w", err)
	}
	return nil
}

// ParseFederationKeyPEM reads an Ed25519 public key PEM as the original's federation holds
// it: protocol.ParsePublicKeyPEM's exact form, with or without the final newline (the
// original's settings read it from an environment variable set with $(cat file), which
// strips it). A key of small order is refused (protocol.ErrMalformed).
func ParseFederationKeyPEM(text []byte) (ed25519.PublicKey, error) {
	if !bytes.HasSuffix(text, []byte("\n")) {
		text = append(bytes.Clone(text), '\n')
	}
	return protocol.ParsePublicKeyPEM(text)
}

func (d *exportDecoder) participants(dst *[]Participant) error {
	if err := d.delim('[', "participating_operators"); err != nil {
		return err
	}
	for d.dec.More() {
		var p Participant
		n := 0
		err := d.members("participant", func(name string) error {
			n++
			switch name {
			case "operator_id":
				return d.str(&p.OperatorID, "participant operator_id")
			case "chain_signature":
				return d.str(&p.ChainSignature, "participant chain_signature")
			}
			return malformedf("participant: unknown member %s", protocol.Quote(name))
		})
		if err != nil {
			return err
		}
		if n != 2 {
			return malformedf("participant: want operator_id and chain_signature")
		}
		*dst = append(*dst, p)
	}
	return d.delim(']', "participating_operators")
}

func (d *exportDecoder) logIndex(dst **int64) error {
	t, err := d.token()
	if err != nil || t == nil {
		*dst = nil
		return err
	}
	n, err := integerToken(t, "rekor_log_index", 0)
	*dst = &n
	return err
}

// CrossAnchorHash is the original's cross_anchor_hash (§3.5 step 4): hex SHA-256 of the
// participants' chain_signatures in operator_id order, then anchored_at, concatenated.
// participants is not changed.
func CrossAnchorHash(participants []Participant, anchoredAt string) string {
	sorted := append([]Participant(nil), participants...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].OperatorID < sorted[j].OperatorID })
	h := sha256.New()
	for _, p := range sorted {
		h.Write([]byte(p.ChainSignature))
	}
	h.Write([]byte(anchoredAt))
	return hex.EncodeToString(h.Sum(nil))
}

// ReceiptPayload returns the bytes the original federation signs for rc (§3.5 step 7):
// Python's json.dumps of anchor_id, anchored_at, cross_anchor_hash,
// federation_public_key_pem, participating_operators (in rc's order) and
// rekor_log_index and rekor_url (null when nil), sort_keys=True, separators=(",",":"),
// ensure_ascii=True, as canonical.ReceiptForm writes it.
func ReceiptPayload(rc *Receipt) ([]byte, error) {
	obj, err := json.Marshal(struct {
		AnchorID        string        `json:"anchor_id"`
		AnchoredAt      string        `json:"anchored_at"`
		CrossAnchorHash string        `json:"cross_anchor_hash"`
		PEM             string        `json:"federation_public_key_pem"`
		Participants    []Participant `json:"participating_operators"`
		RekorLogIndex   *int64        `json:"rekor_log_index"`
		RekorURL        *string       `json:"rekor_url"`
	}{rc.AnchorID, rc.AnchoredAt, rc.CrossAnchorHash, rc.FederationPublicKeyPEM, rc.Participants, rc.RekorLogIndex, rc.RekorURL})
	if err != nil {
		return nil, malformedf("receipt payload: %v", err)
	}
	payload, err := canonical.ReceiptForm(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: receipt payload: %w", protocol.ErrMalformed, err)
	}
	return payload, nil
}
