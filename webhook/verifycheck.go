package webhook

import (
	"context"
	"crypto"
	"errors"
	"strings"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file is the live check of GET /federation/verify/{id}, on evidence already read:
// it trusts nothing the anchor's status says, and states no value that would have
// passed a check that failed.

// verifyResponse is the answer of GET /federation/verify/{id}: the seed's (LEGACY-BIJOTEL
// §3.5, GET /verify/{id}, its checks those of §3.6) plus Cairn's members.
type verifyResponse struct {
	AnchorID        string       `json:"anchor_id" example:"\"anchor-20261124-001\""`
	Valid           bool         `json:"valid" doc:"Every check passed."`
	CrossAnchorHash string       `json:"cross_anchor_hash" doc:"The hash the stored anchor states (never a recomputed one)."`
	Checks          verifyChecks `json:"checks"`
	Reason          *string      `json:"reason" doc:"Why each failed check failed, joined by \"; \"; null when valid."`
	RekorLogIndex   *int64       `json:"rekor_log_index" doc:"The seed's name for tlog_log_index."`
	// Cairn's members.
	TLogLogIndex       *int64   `json:"tlog_log_index" doc:"The log index whose entry was fetched and verified now; null unless tlog_inclusion_verified."`
	Participants       int      `json:"participants" doc:"How many operators the anchor binds."`
	FailedParticipants []string `json:"failed_participants" doc:"The operator IDs whose covered submission was not found or did not verify, in operator ID order."`
	VerifiedAt         string   `json:"verified_at" doc:"When the checks ran, RFC 3339 UTC with nine fractional digits."`
}

// verifyChecks are the checks of a live verification, each run on its own: the seed's
// five, then Cairn's (the original product's names among them).
type verifyChecks struct {
	FederationSignatureVerified bool     `json:"federation_signature_verified" doc:"The seed's: the federation signature verifies under the anchor's key snapshot, and that key is in the Federation's key history (signature_verified and federation_key_in_history)."`
	TLogEntryPresent            bool     `json:"tlog_entry_present" doc:"The seed's: the log, asked now, serves an entry at the anchor's log index."`
	TLogInclusionProofValid     bool     `json:"tlog_inclusion_proof_valid" doc:"The seed's: that entry is the anchor's hashedrekord and its inclusion proof verifies against a checkpoint read now under the log's key (equals tlog_inclusion_verified)."`
	OperatorSignaturesVerified  []string `json:"operator_signatures_verified" doc:"The seed's: the operator IDs whose covered submission re-verifies under the key the operator held when it was accepted, in operator ID order."`
	PubkeyMatchesExpected       bool     `json:"pubkey_matches_expected" doc:"Seed name: the anchor's key is one the federation holds or held (equals federation_key_in_history)."`
	SignatureVerified           bool     `json:"signature_verified" doc:"The federation signature verifies under the anchor's own key snapshot."`
	CrossAnchorHashRecomputed   bool     `json:"cross_anchor_hash_recomputed" doc:"The seed's: the hash recomputes from the participants and anchored_at."`
	Bound                       bool     `json:"bound" doc:"Seed name: the verification is bound to a trusted key (equals federation_key_in_history)."`
	FederationKeyInHistory      bool     `json:"federation_key_in_history" doc:"The anchor's key is in the Federation's key history."`
	TLogInclusionVerified       bool     `json:"tlog_inclusion_verified" doc:"The log entry, fetched now, is the anchor's hashedrekord and its inclusion proof verifies against a checkpoint read now under the log's key."`
	ParticipantsVerified        bool     `json:"participants_verified" doc:"Every participant's covered submission re-verifies under the key its operator held when it was accepted. For a Merkle-form anchor of more than 5,000 participants: its stored leaves make its tree (tree_verified); each participant's own receipt proves its leaf."`
	TreeVerified                *bool    `json:"tree_verified,omitempty" doc:"A Merkle-form anchor's only: its leaves, read from the history store, make the tree whose size and root it states (rebuilt once, then remembered)."`
}

// anchorEvidence is what a live check reads: the Federation, the anchor, and what each
// participant may cover, read from the cache uncopied (nothing may write to any of it).
type anchorEvidence struct {
	fed *fv1.Federation
	ca  *fv1.CrossAnchor
	// participants are those checked one by one: a seed-form anchor's, a Merkle-form
	// one's leaves up to federation.MaxParticipantsPerAnchor of them (none beyond).
	participants []fv1.Participant
	// covered is, for each of participants in order, what its check reads.
	covered []participantEvidence
	// treeErr is why a Merkle-form anchor's stored leaves do not make its tree.
	treeErr error
	// verdicts remembers the checks of the anchor's spec and of each submission's header
	// under each key (nil: nothing is remembered).
	verdicts *federation.VerdictCache
	// logKey is the key the Federation's log signs with, or logKeyErr why it is unknown.
	logKey    crypto.PublicKey
	logKeyErr error
	// readEntry fetches a log entry now, with a proof against a checkpoint read now.
	readEntry func(ctx context.Context, index int64) (*tlog.Entry, error)
}

// participantEvidence is what one participant's check reads: its registered operator (nil
// when none is), and that operator's submissions ending at the participant's lastSeq,
// accepted or not.
type participantEvidence struct {
	operator    *fv1.FederationOperator
	submissions []fv1.Submission
}

// errLogUnreachable is the reason of a log check that could not reach the log.
var errLogUnreachable = errors.New("log unreachable")

// verifyAnchor runs every check on ev and answers, at now.
func verifyAnchor(ctx context.Context, ev *anchorEvidence, now time.Time) verifyResponse {
	ca := ev.ca
	res := verifyResponse{AnchorID: ca.Name, CrossAnchorHash: string(ca.Spec.CrossAnchorHash),
		Participants: federation.ParticipantCount(ca), FailedParticipants: []string{}, VerifiedAt: protocol.FormatAnchoredAt(now)}
	// The hash and the signature are remembered for the anchor's UID and generation; its key
	// is looked up in the key history now.
	spec := ev.verdicts.CheckAnchor(ev.fed, ca)
	reasons := spec.Reasons
	res.Checks.CrossAnchorHashRecomputed, res.Checks.SignatureVerified = spec.HashRecomputed, spec.SignatureVerified
	res.Checks.FederationKeyInHistory = spec.KeyInHistory
	res.Checks.PubkeyMatchesExpected, res.Checks.Bound = spec.KeyInHistory, spec.KeyInHistory

	index, present, err := verifyLogEntry(ctx, ev)
	res.Checks.TLogEntryPresent = present
	if err != nil {
		reasons = append(reasons, "log: "+err.Error())
	} else {
		res.Checks.TLogInclusionVerified = true
		res.TLogLogIndex, res.RekorLogIndex = &index, &index
	}

	res.Checks.OperatorSignaturesVerified = []string{}
	for i, p := range ev.participants {
		if participantVerified(ev, ev.covered[i], p) {
			res.Checks.OperatorSignaturesVerified = append(res.Checks.OperatorSignaturesVerified, string(p.OperatorID))
		} else {
			res.FailedParticipants = append(res.FailedParticipants, string(p.OperatorID))
		}
	}
	res.Checks.ParticipantsVerified = len(res.FailedParticipants) == 0 && len(ev.participants) > 0
	if federation.IsMerkle(ca) {
		treeOK := ev.treeErr == nil
		res.Checks.TreeVerified = &treeOK
		if !treeOK {
			reasons = append(reasons, "tree: "+ev.treeErr.Error())
		}
		res.Checks.ParticipantsVerified = treeOK && (res.Checks.ParticipantsVerified || len(ev.participants) == 0)
	}
	if !res.Checks.ParticipantsVerified && ev.treeErr == nil {
		reasons = append(reasons, "participants: the covered submissions of the operators in failed_participants were not found or do not verify under the keys their operators held when they were accepted")
	}
	res.Checks.FederationSignatureVerified = res.Checks.SignatureVerified && res.Checks.FederationKeyInHistory
	res.Checks.TLogInclusionProofValid = res.Checks.TLogInclusionVerified
	c := res.Checks
	res.Valid = c.SignatureVerified && c.CrossAnchorHashRecomputed && c.FederationKeyInHistory && c.TLogInclusionVerified && c.ParticipantsVerified
	if !res.Valid {
		reason := strings.Join(reasons, "; ")
		res.Reason = &reason
	}
	return res
}

// participantVerified reports whether an accepted submission of p's operator is the one p
// covers and re-verifies (federation.VerifyParticipant: each Ed25519 check of a header
// under a key is remembered, which keys the operator held is read now).
func participantVerified(ev *anchorEvidence, pe participantEvidence, p fv1.Participant) bool {
	if pe.operator == nil {
		return false
	}
	for i := range pe.submissions {
		if ev.verdicts.VerifyParticipant(pe.operator, &pe.submissions[i], p) == nil {
			return true
		}
	}
	return false
}

// verifyLogEntry fetches the anchor's entry from the log now, by the index its status
// names (a pointer only: what is fetched is verified), and checks that its inclusion proof
// verifies against the checkpoint read now under the log's key and that it is the
// hashedrekord of the anchor's hash signed by the anchor's key. It returns the index
// verified, or why not, stating no value that would have passed; present says whether
// the log served an entry at that index at all (one that may not verify).
func verifyLogEntry(ctx context.Context, ev *anchorEvidence) (index int64, present bool, err error) {
	ca := ev.ca
	if ca.Status.LogEntry == nil {
		return 0, false, errors.New("the anchor is not in the log yet")
	}
	if ev.logKeyErr != nil {
		return 0, false, ev.logKeyErr
	}
	index = ca.Status.LogEntry.LogIndex
	e, err := ev.readEntry(ctx, index)
	switch {
	case errors.Is(err, tlog.ErrNotFound):
		return 0, false, errors.New("the log has no entry at the anchor's log index")
	case errors.Is(err, tlog.ErrUnavailable):
		return 0, false, errLogUnreachable
	case err != nil:
		return 0, true, errors.New("the log's entry or proof does not verify under the log's key")
	}
	body, err := protocol.VerifyLogBundle(&e.Bundle, protocol.LogVerifyOptions{Key: ev.logKey, AllowMissingSET: true})
	if err != nil || e.Bundle.LogIndex != index || e.Bundle.Verification.InclusionProof.LogIndex != index {
		return 0, true, errors.New("the log's entry or proof does not verify under the log's key")
	}
	content, err := protocol.CrossAnchorLogContent(string(ca.Spec.CrossAnchorHash))
	anchorKey, kerr := protocol.ParsePublicKeyPEM([]byte(ca.Spec.FederationPublicKeyPEM))
	if err != nil || kerr != nil || protocol.VerifyHashedRekord(body, content, anchorKey) != nil {
		return 0, true, errors.New("the log's entry at the anchor's log index is not this anchor's record")
	}
	return index, true, nil
}
