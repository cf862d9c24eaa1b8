package seedclient

import "encoding/json"

// The seed's answers, under its names and types.
type (
	challengeAnswer struct {
		Nonce string `json:"nonce"`
	}
	registerAnswer struct {
		OperatorID   string `json:"operator_id"`
		RegisteredAt string `json:"registered_at"`
		TLogLogIndex int64  `json:"tlog_log_index"`
	}
	submitAnswer struct {
		SubmissionID       string `json:"submission_id"`
		OperatorID         string `json:"operator_id"`
		Verified           bool   `json:"verified"`
		EntryCount         int64  `json:"entry_count"`
		FirstSeq           int64  `json:"first_seq"`
		LastSeq            int64  `json:"last_seq"`
		ContinuityVerified bool   `json:"continuity_verified"`
		SubmittedAt        string `json:"submitted_at"`
		PendingAnchor      bool   `json:"pending_anchor"`
	}
	continuityAnswer struct {
		Error                 string `json:"error"`
		ExpectedFirstPrevHash string `json:"expected_first_prev_hash"`
		GotFirstPrevHash      string `json:"got_first_prev_hash"`
		PreviousSubmissionID  string `json:"previous_submission_id"`
		Hint                  string `json:"hint"`
	}
	anchorAnswer struct {
		AnchorID               string   `json:"anchor_id"`
		CrossAnchorHash        string   `json:"cross_anchor_hash"`
		ParticipatingOperators []string `json:"participating_operators"`
		TLogLogIndex           *int64   `json:"tlog_log_index"`
		TLogURL                *string  `json:"tlog_url"`
		SubmissionsAnchored    int      `json:"submissions_anchored"`
	}
	statusAnswer struct {
		FederationPublicKey string      `json:"federation_public_key"`
		OperatorsActive     int         `json:"operators_active"`
		OperatorsTotal      int         `json:"operators_total"`
		SubmissionsLast24h  int         `json:"submissions_last_24h"`
		LastAnchor          *lastAnchor `json:"last_anchor"`
		UptimeSeconds       int64       `json:"uptime_seconds"`
	}
	lastAnchor struct {
		AnchorID     string `json:"anchor_id"`
		AnchoredAt   string `json:"anchored_at"`
		Participants int    `json:"participants"`
	}
	operatorAnswer struct {
		OperatorID   string `json:"operator_id"`
		PublicKeyPEM string `json:"public_key_pem"`
		OrgName      string `json:"org_name"`
		RegisteredAt string `json:"registered_at"`
		Status       string `json:"status"`
		Submissions  []struct {
			SubmissionID string `json:"submission_id"`
			SubmittedAt  string `json:"submitted_at"`
			EntryCount   int64  `json:"entry_count"`
		} `json:"submissions"`
		Anchors []struct {
			AnchorID     string `json:"anchor_id"`
			TLogLogIndex *int64 `json:"tlog_log_index"`
		} `json:"anchors"`
	}
	anchorRecord struct {
		AnchorID        string `json:"anchor_id"`
		CrossAnchorHash string `json:"cross_anchor_hash"`
	}
	verifyAnswer struct {
		AnchorID   string `json:"anchor_id"`
		Valid      bool   `json:"valid"`
		VerifiedAt string `json:"verified_at"`
		Checks     struct {
			CrossAnchorHashRecomputed   bool     `json:"cross_anchor_hash_recomputed"`
			FederationSignatureVerified bool     `json:"federation_signature_verified"`
			TLogEntryPresent            bool     `json:"tlog_entry_present"`
			TLogInclusionProofValid     bool     `json:"tlog_inclusion_proof_valid"`
			OperatorSignaturesVerified  []string `json:"operator_signatures_verified"`
		} `json:"checks"`
	}
	// receipt is the client receipt form: participants as objects.
	receipt struct {
		AnchorID               string `json:"anchor_id"`
		AnchoredAt             string `json:"anchored_at"`
		CrossAnchorHash        string `json:"cross_anchor_hash"`
		FederationSignature    string `json:"federation_signature"`
		ParticipatingOperators []struct {
			OperatorID     string `json:"operator_id"`
			ChainSignature string `json:"chain_signature"`
		} `json:"participating_operators"`
	}
	receiptsAnswer struct {
		Receipts []json.RawMessage `json:"receipts"`
	}
)

// The members each answer must carry, as the seed's table states them.
var (
	challengeMembers  = required("nonce")
	registerMembers   = required("operator_id", "registered_at", "tlog_log_index")
	submitMembers     = required("submission_id", "operator_id", "verified", "entry_count", "first_seq", "last_seq", "continuity_verified", "submitted_at", "pending_anchor")
	continuityMembers = required("error", "expected_first_prev_hash", "got_first_prev_hash", "previous_submission_id", "hint")
	anchorMembers     = required("anchor_id", "cross_anchor_hash", "participating_operators", "tlog_log_index?", "tlog_url?", "submissions_anchored")
	statusMembers     = required("federation_public_key", "operators_active", "operators_total", "submissions_last_24h", "last_anchor?", "uptime_seconds")
	operatorMembers   = required("operator_id", "public_key_pem", "org_name", "registered_at", "status", "submissions", "anchors")
	verifyMembers     = required("anchor_id", "valid", "verified_at", "checks")
	checkMembers      = required("cross_anchor_hash_recomputed", "federation_signature_verified", "tlog_entry_present", "tlog_inclusion_proof_valid", "operator_signatures_verified")
	receiptMembers    = required("anchor_id", "anchored_at", "cross_anchor_hash", "participating_operators", "federation_signature")
)
