package controllers

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Receipt returns the signed receipt of a CrossAnchor, as each participant gets it. Once
// the log leg is done it names the log entry and carries the log's proof bundle
// (tlog_entry), and the signature covers tlog_log_index and tlog_url: the federation
// re-signs the receipt when the log leg completes. key must be the key that signed the
// anchor (spec.federationPublicKeyPEM).
func Receipt(ca *fv1.CrossAnchor, key ed25519.PrivateKey) ([]byte, error) {
	r := protocol.Receipt{AnchorID: string(ca.Spec.AnchorID), AnchoredAt: ca.Spec.AnchoredAt, CrossAnchorHash: string(ca.Spec.CrossAnchorHash)}
	for _, p := range ca.Spec.Participants {
		r.ParticipatingOperators = append(r.ParticipatingOperators, protocol.Participant{OperatorID: string(p.OperatorID), ChainSignature: string(p.ChainSignature)})
	}
	if ca.Status.Phase == fv1.PhaseAnchored && ca.Status.LogEntry != nil && ca.Status.InclusionProof != nil {
		bundle, err := logBundle(ca, key)
		if err != nil {
			return nil, err
		}
		if r.TLogEntry, err = json.Marshal(bundle); err != nil {
			return nil, err
		}
		index, url := ca.Status.LogEntry.LogIndex, ca.Status.LogEntry.URL
		r.TLogLogIndex, r.TLogURL = &index, &url
	}
	out, err := protocol.SignReceipt(&r, key)
	if err != nil {
		return nil, fmt.Errorf("receipt of %s: %w", ca.Name, err)
	}
	if r.FederationPublicKeyPEM != string(ca.Spec.FederationPublicKeyPEM) {
		return nil, fmt.Errorf("receipt of %s: the key given did not sign the anchor", ca.Name)
	}
	return out, nil
}

// logBundle rebuilds the log's proof bundle of ca from its status. The entry body is
// deterministic (Ed25519ph signatures are), so it is made again rather than stored.
func logBundle(ca *fv1.CrossAnchor, key ed25519.PrivateKey) (*protocol.LogBundle, error) {
	body, err := crossAnchorRecord(ca, key)
	if err != nil {
		return nil, err
	}
	e, p := ca.Status.LogEntry, ca.Status.InclusionProof
	b := &protocol.LogBundle{UUID: e.UUID, Body: base64.StdEncoding.EncodeToString(body), LogID: string(p.LogID), LogIndex: e.LogIndex,
		Verification: protocol.LogVerification{SignedEntryTimestamp: ca.Status.SignedEntryTimestamp,
			InclusionProof: protocol.InclusionProof{LogIndex: p.LogIndex, RootHash: string(p.RootHash), TreeSize: p.TreeSize, Checkpoint: p.Checkpoint}}}
	if e.IntegratedTime != nil {
		b.IntegratedTime = e.IntegratedTime.Unix()
	}
	for _, h := range p.Hashes {
		b.Verification.InclusionProof.Hashes = append(b.Verification.InclusionProof.Hashes, string(h))
	}
	return b, nil
}
