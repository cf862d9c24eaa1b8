package federation

import (
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/anchortree"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Receipt returns the signed receipt of a CrossAnchor of fed, as each participant gets
// it. Once the log leg is done it names the log entry and carries the log's proof bundle
// (tlog_entry), and the signature covers tlog_log_index, tlog_url, the log's key
// (logKey, the key of fed's transparency log) and the key that signed the logged record
// (the anchor's): the federation re-signs the receipt when the log leg completes. The
// bundle rebuilt from ca's status must verify under logKey, signed entry timestamp
// included, and log the anchor under its key; status is not evidence. logKey may be nil
// only while the log leg is pending.
//
// It refuses a CrossAnchor the federation did not make (see Trust.Verify: the hash must
// recompute and the signature verify under a key of fed's key history), and a key that
// is not fed's: key must be the one that signed the anchor, or a later one of fed's key
// history (a federation key rotation re-signs recent receipts).
//
// A Merkle-form anchor's receipt is its holder's: leaf, from the anchor's checked tree
// (MerkleAnchors.Tree), is the holder's leaf and its inclusion proof.
func Receipt(fed *fv1.Federation, ca *fv1.CrossAnchor, key ed25519.PrivateKey, logKey crypto.PublicKey, leaf *ReceiptLeaf) ([]byte, error) {
	var trust *Trust // no memory: each call verifies
	if err := trust.Verify(fed, ca); err != nil {
		return nil, fmt.Errorf("receipt of %s: %w", ca.Name, err)
	}
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("receipt of %s: the key is %d bytes, want %d", ca.Name, len(key), ed25519.PrivateKeySize)
	}
	pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	if signer := KeyIndex(fed, fv1.PublicKeyPEM(pemText)); signer < 0 || signer < KeyIndex(fed, ca.Spec.FederationPublicKeyPEM) {
		return nil, fmt.Errorf("receipt of %s: the key given neither signed the anchor nor followed the key that did in Federation %s's key history", ca.Name, fed.Name)
	}
	if IsMerkle(ca) && leaf == nil {
		return nil, fmt.Errorf("receipt of %s: a Merkle-form receipt is a participant's, and none was given", ca.Name)
	}
	_, out, err := SignReceipt(ca, key, logKey, leaf)
	return out, err
}

// ReceiptLeaf is the holder's part of a Merkle-form receipt.
type ReceiptLeaf struct {
	Leaf  protocol.MerkleLeaf
	Proof *protocol.LeafInclusionProof
}

// LeafOf is operator's ReceiptLeaf in tree, the checked tree of a Merkle-form anchor, and
// whether the anchor binds operator.
func LeafOf(tree *anchortree.Anchor, operator fv1.OperatorID) (*ReceiptLeaf, bool, error) {
	i, l, ok := tree.Find(string(operator))
	if !ok {
		return nil, false, nil
	}
	proof, err := tree.InclusionProof(i)
	if err != nil {
		return nil, false, err
	}
	return &ReceiptLeaf{Leaf: l, Proof: proof}, true, nil
}

// SignReceipt builds ca's receipt and signs it with key: of the seed form, or of the
// Merkle form with leaf (nil signs the payload every participant's receipt of ca shares,
// and returns no bytes: the leaf and proof are not part of it).
func SignReceipt(ca *fv1.CrossAnchor, key ed25519.PrivateKey, logKey crypto.PublicKey, leaf *ReceiptLeaf) (*protocol.Receipt, []byte, error) {
	r, err := verifiedReceipt(ca, logKey)
	if err != nil {
		return nil, nil, err
	}
	if IsMerkle(ca) && leaf == nil {
		if err := signAnchorPayload(&r, key); err != nil {
			return nil, nil, fmt.Errorf("receipt of %s: %w", ca.Name, err)
		}
		return &r, nil, nil
	}
	if leaf != nil {
		r.Leaf, r.InclusionProof = &leaf.Leaf, leaf.Proof
	}
	out, err := protocol.SignReceipt(&r, key)
	if err != nil {
		return nil, nil, fmt.Errorf("receipt of %s: %w", ca.Name, err)
	}
	return &r, out, nil
}

// VerifyLogLeg checks that the log entry ca's status records verifies under logKey (the
// log's key, from its backend) and logs ca's cross-anchor under the key that signed the
// anchor. Status is the manager's word only: whoever shows a log index or URL of an
// anchor checks it here first. An anchor not yet logged has nothing to check.
func VerifyLogLeg(ca *fv1.CrossAnchor, logKey crypto.PublicKey) error {
	_, err := verifiedReceipt(ca, logKey)
	return err
}

// verifiedReceipt is ca's unsigned receipt. Once ca is Anchored it carries the log's
// proof bundle rebuilt from ca's status, verified under logKey.
func verifiedReceipt(ca *fv1.CrossAnchor, logKey crypto.PublicKey) (protocol.Receipt, error) {
	r := AnchorReceipt(ca)
	if ca.Status.Phase != fv1.PhaseAnchored || ca.Status.LogEntry == nil || ca.Status.InclusionProof == nil {
		return r, nil
	}
	if logKey == nil {
		return r, fmt.Errorf("receipt of %s: the log's key is needed to name the log", ca.Name)
	}
	bundle, err := logBundle(ca)
	if err != nil {
		return r, err
	}
	if r.TLogEntry, err = json.Marshal(bundle); err != nil {
		return r, err
	}
	logPEM, err := LogKeyPEM(logKey)
	if err != nil {
		return r, err
	}
	recordPEM := string(ca.Spec.FederationPublicKeyPEM) // the key that logged the anchor
	index, url := ca.Status.LogEntry.LogIndex, ca.Status.LogEntry.URL
	r.TLogLogIndex, r.TLogURL, r.TLogPublicKeyPEM, r.TLogRecordPublicKeyPEM = &index, &url, &logPEM, &recordPEM
	if err := protocol.VerifyReceiptLog(&r, protocol.LogVerifyOptions{Key: logKey}); err != nil {
		return r, fmt.Errorf("receipt of %s: the log entry in its status does not verify: %w", ca.Name, err)
	}
	return r, nil
}

// signAnchorPayload sets r's key and signature to key's over r's payload, which in the
// Merkle form leaves out the holder's leaf and proof (docs/PROTOCOL.md §7). The caller has
// verified r's anchor (Trust.Verify) and its log leg (verifiedReceipt).
func signAnchorPayload(r *protocol.Receipt, key ed25519.PrivateKey) error {
	pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		return err
	}
	r.FederationPublicKeyPEM, r.FederationSignature = string(pemText), ""
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	payload, err := protocol.ReceiptPayload(raw)
	if err != nil {
		return err
	}
	r.FederationSignature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, payload))
	return nil
}

// LogKeyPEM is a log's public key as a receipt names it: PKIX PEM, as Rekor serves it.
func LogKeyPEM(key crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return "", fmt.Errorf("log key: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}

// logBundle rebuilds the log's proof bundle of ca from its status.
func logBundle(ca *fv1.CrossAnchor) (*protocol.LogBundle, error) {
	if ca.Status.EntryBody == "" {
		return nil, fmt.Errorf("CrossAnchor %s is Anchored without its entry body", ca.Name)
	}
	e, p := ca.Status.LogEntry, ca.Status.InclusionProof
	b := &protocol.LogBundle{UUID: e.UUID, Body: ca.Status.EntryBody, LogID: string(p.LogID), LogIndex: e.LogIndex,
		Verification: protocol.LogVerification{SignedEntryTimestamp: ca.Status.SignedEntryTimestamp, RFC3161Timestamps: ca.Status.RFC3161Timestamps,
			InclusionProof: protocol.InclusionProof{LogIndex: p.LogIndex, RootHash: string(p.RootHash), TreeSize: p.TreeSize, Checkpoint: p.Checkpoint}}}
	if e.IntegratedTime != nil && ca.Status.SignedEntryTimestamp != "" { // else the log states no time (Rekor v2)
		b.IntegratedTime = e.IntegratedTime.Unix()
	}
	for _, h := range p.Hashes {
		b.Verification.InclusionProof.Hashes = append(b.Verification.InclusionProof.Hashes, string(h))
	}
	return b, nil
}
