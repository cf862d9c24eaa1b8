package client

import "encoding/json"

// The answers of the federation API, under the server's JSON names (webhook/*.go,
// docs/OPERATIONS.md). Times are RFC 3339 UTC strings as the server sends them.

// Challenge answers GET /federation/register/challenge.
type Challenge struct {
	// Nonce is "cairn-challenge:" and 75 characters of [A-Za-z0-9_-].
	Nonce string `json:"nonce"`
}

// RegisterRequest is the body of POST /federation/register.
type RegisterRequest struct {
	PublicKeyPEM      string `json:"public_key_pem"`
	OrgName           string `json:"org_name"`
	ContactEmail      string `json:"contact_email,omitempty"`
	Nonce             string `json:"nonce"`
	NonceSignature    string `json:"nonce_signature"`
	ProofOfPossession string `json:"proof_of_possession"`
	// RenameAt and RenameSignature are the rename (protocol.Rename) of the operator to
	// OrgName and ContactEmail sent with the registration: what signs the contact, which
	// the proof of possession does not. Empty when no contact is given.
	RenameAt        string `json:"rename_at,omitempty"`
	RenameSignature string `json:"rename_signature,omitempty"`
}

// Registration answers POST /federation/register (and POST
// /federation/operator/{id}/approve). A federation that approves registrations answers
// one it holds with 202 and Status RegistrationPendingApproval: no RegisteredAt, no log
// entry, and submissions refused until an administrator approves it.
type Registration struct {
	OperatorID   string `json:"operator_id"`
	OrgName      string `json:"org_name"`
	PublicKeyPEM string `json:"public_key_pem"`
	ContactEmail string `json:"contact_email"`
	RegisteredAt string `json:"registered_at"`
	TLogLogIndex int64  `json:"tlog_log_index"`
	TLogURL      string `json:"tlog_url,omitempty"`
	// Status is "active", or RegistrationPendingApproval; empty from a server that
	// predates it (registered).
	Status string `json:"status,omitempty"`
	// RequestedAt is when a pending registration was taken.
	RequestedAt string `json:"requested_at,omitempty"`
	// ApprovedBy names the lists whose approval registered the operator: gitops, api.
	ApprovedBy []string `json:"approved_by,omitempty"`
}

// RegistrationPendingApproval is the Status of a registration the federation holds for
// its administrators' approval.
const RegistrationPendingApproval = "pending_approval"

// Pending reports whether the federation holds the registration for approval.
func (r *Registration) Pending() bool { return r.Status == RegistrationPendingApproval }

// SubmitResult answers POST /federation/submit.
type SubmitResult struct {
	SubmissionID         string `json:"submission_id"`
	OperatorID           string `json:"operator_id"`
	Verified             bool   `json:"verified"`
	EntryCount           int64  `json:"entry_count"`
	FirstSeq             int64  `json:"first_seq"`
	LastSeq              int64  `json:"last_seq"`
	ContinuityVerified   bool   `json:"continuity_verified"`
	SubmittedAt          string `json:"submitted_at"`
	PendingAnchor        bool   `json:"pending_anchor"`
	EntriesVerified      int64  `json:"entries_verified"`
	PreviousSubmissionID string `json:"previous_submission_id,omitempty"`
	AnchorID             string `json:"anchor_id,omitempty"`
}

// Status answers GET /federation/status.
type Status struct {
	FederationPublicKey string      `json:"federation_public_key"`
	TLogPublicKey       string      `json:"tlog_public_key"`
	OperatorsActive     int         `json:"operators_active"`
	OperatorsTotal      int         `json:"operators_total"`
	SubmissionsLast24h  int         `json:"submissions_last_24h"`
	LastAnchor          *LastAnchor `json:"last_anchor"`
	UptimeSeconds       int64       `json:"uptime_seconds"`
	Version             string      `json:"version"`
	// Raw is the answer as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// LastAnchor is the last anchor the federation made, in Status.
type LastAnchor struct {
	AnchorID     string `json:"anchor_id"`
	AnchoredAt   string `json:"anchored_at"`
	Participants int    `json:"participants"`
}

// Participant is one operator an anchor binds.
type Participant struct {
	OperatorID     string `json:"operator_id"`
	ChainSignature string `json:"chain_signature"`
	LastSeq        int64  `json:"last_seq"`
}

// AnchorResult answers POST /federation/anchor: an anchor (Status "anchored"; the log
// members nil while the log leg is pending) or, with Status "no-op", Reason and Message,
// no anchor.
type AnchorResult struct {
	Status                 string        `json:"status"`
	AnchorID               string        `json:"anchor_id"`
	CrossAnchorHash        string        `json:"cross_anchor_hash"`
	AnchoredAt             string        `json:"anchored_at"`
	ParticipatingOperators []string      `json:"participating_operators"` // the seed's: operator IDs
	ParticipantDetails     []Participant `json:"participant_details"`     // Cairn's: with what each binds
	TLogLogIndex           *int64        `json:"tlog_log_index"`
	TLogURL                *string       `json:"tlog_url"`
	SubmissionsAnchored    int           `json:"submissions_anchored"`
	ParticipantCount       string        `json:"participant_count"`
	RekorLogIndex          string        `json:"rekor_log_index"`
	RequestID              string        `json:"request_id"`
	Reason                 string        `json:"reason"`
	Message                string        `json:"message"`
}

// NoOp reports whether the anchor run made no anchor (status "no-op").
func (r *AnchorResult) NoOp() bool { return r.Status == "no-op" }

// AnchorRecord answers GET /federation/anchor/{id}.
type AnchorRecord struct {
	AnchorID               string        `json:"anchor_id"`
	CrossAnchorHash        string        `json:"cross_anchor_hash"`
	AnchoredAt             string        `json:"anchored_at"`
	ParticipatingOperators []Participant `json:"participating_operators"`
	RekorLogIndex          *int64        `json:"rekor_log_index"`
	RekorURL               *string       `json:"rekor_url"`
	FederationSignature    string        `json:"federation_signature"`
	FederationPublicKeyPEM string        `json:"federation_public_key_pem"`
	TLogLogIndex           *int64        `json:"tlog_log_index"`
	TLogURL                *string       `json:"tlog_url"`
	Participants           int           `json:"participants"`
	Phase                  string        `json:"phase"`
}

// Verification answers GET /federation/verify/{id}.
type Verification struct {
	AnchorID           string             `json:"anchor_id"`
	Valid              bool               `json:"valid"`
	CrossAnchorHash    string             `json:"cross_anchor_hash"`
	Checks             VerificationChecks `json:"checks"`
	Reason             *string            `json:"reason"`
	RekorLogIndex      *int64             `json:"rekor_log_index"`
	TLogLogIndex       *int64             `json:"tlog_log_index"`
	Participants       int                `json:"participants"`
	FailedParticipants []string           `json:"failed_participants"`
	VerifiedAt         string             `json:"verified_at"`
}

// VerificationChecks are the checks of a Verification.
type VerificationChecks struct {
	// The seed's five.
	FederationSignatureVerified bool     `json:"federation_signature_verified"`
	TLogEntryPresent            bool     `json:"tlog_entry_present"`
	TLogInclusionProofValid     bool     `json:"tlog_inclusion_proof_valid"`
	OperatorSignaturesVerified  []string `json:"operator_signatures_verified"`
	// CrossAnchorHashRecomputed below is the seed's fifth; the rest are Cairn's.
	PubkeyMatchesExpected     bool `json:"pubkey_matches_expected"`
	SignatureVerified         bool `json:"signature_verified"`
	CrossAnchorHashRecomputed bool `json:"cross_anchor_hash_recomputed"`
	Bound                     bool `json:"bound"`
	FederationKeyInHistory    bool `json:"federation_key_in_history"`
	TLogInclusionVerified     bool `json:"tlog_inclusion_verified"`
	ParticipantsVerified      bool `json:"participants_verified"`
}

// OperatorSummary answers GET /federation/operator/{id}: the operator and one page of
// its accepted submissions and of the anchors binding it, newest first.
type OperatorSummary struct {
	OperatorID       string               `json:"operator_id"`
	OrgName          string               `json:"org_name"`
	PublicKeyPEM     string               `json:"public_key_pem"`
	ContactEmail     string               `json:"contact_email"`
	RegisteredAt     string               `json:"registered_at"`
	RekorLogIndex    *int64               `json:"rekor_log_index"`
	LastSubmissionAt *string              `json:"last_submission_at"`
	TLogLogIndex     *int64               `json:"tlog_log_index"`
	TLogURL          *string              `json:"tlog_url"`
	Phase            string               `json:"phase"`
	Status           string               `json:"status"`
	Submissions      []OperatorSubmission `json:"submissions"`
	Anchors          []OperatorAnchor     `json:"anchors"`
	// NextPageToken continues both lists (PageOptions.PageToken); nil on the last page.
	NextPageToken *string `json:"next_page_token"`
}

// OperatorSubmission is one accepted submission in an OperatorSummary.
type OperatorSubmission struct {
	SubmissionID   string  `json:"submission_id"`
	EntryCount     int64   `json:"entry_count"`
	FirstSeq       int64   `json:"first_seq"`
	LastSeq        int64   `json:"last_seq"`
	ChainSignature string  `json:"chain_signature"`
	SubmittedAt    string  `json:"submitted_at"`
	AnchorID       *string `json:"anchor_id"`
	// Sidecars are the attestation sidecars sent with the export, in the order sent.
	Sidecars []SidecarRef `json:"sidecars"`
}

// SidecarRef is what an operator summary lists of one sidecar; Client.Sidecar fetches it.
type SidecarRef struct {
	SHA256    string `json:"sha256"`
	MediaType string `json:"media_type"`
	Size      int64  `json:"size"`
	Name      string `json:"name"`
	// URL is the path that serves the sidecar under this submission's name and media type
	// (GET /federation/submission/{id}/sidecar/{sha256}); empty from a federation older
	// than that route.
	URL string `json:"url,omitempty"`
}

// OperatorAnchor is one anchor in an OperatorSummary.
type OperatorAnchor struct {
	AnchorID        string `json:"anchor_id"`
	AnchoredAt      string `json:"anchored_at"`
	CrossAnchorHash string `json:"cross_anchor_hash"`
	ChainSignature  string `json:"chain_signature"`
	Participants    int    `json:"participants"`
	TLogLogIndex    *int64 `json:"tlog_log_index"`
}

// ReceiptsPage answers GET /federation/receipts: one page of the operator's signed
// receipts (docs/PROTOCOL.md §7), newest first, each exactly as signed.
type ReceiptsPage struct {
	OperatorID    string            `json:"operator_id"`
	Receipts      []json.RawMessage `json:"receipts"`
	NextPageToken *string           `json:"next_page_token"`
}

// Withdrawn answers POST /federation/withdraw.
type Withdrawn struct {
	OperatorID   string `json:"operator_id"`
	Status       string `json:"status"`
	WithdrawnAt  string `json:"withdrawn_at"`
	TLogLogIndex int64  `json:"tlog_log_index"`
	TLogURL      string `json:"tlog_url,omitempty"`
}

// Rotated answers POST /federation/rotate-key.
type Rotated struct {
	OperatorID     string `json:"operator_id"`
	NewPublicKey   string `json:"new_public_key"`
	NewFingerprint string `json:"new_fingerprint"`
	RotatedAt      string `json:"rotated_at"`
	TLogLogIndex   int64  `json:"tlog_log_index"`
	TLogURL        string `json:"tlog_url,omitempty"`
}

// Renamed answers POST /federation/rename.
type Renamed struct {
	OperatorID   string `json:"operator_id"`
	OrgName      string `json:"org_name"`
	Contact      string `json:"contact"`
	RenamedAt    string `json:"renamed_at"`
	TLogLogIndex int64  `json:"tlog_log_index"`
	TLogURL      string `json:"tlog_url,omitempty"`
}

// LogSnapshots answers GET /federation/log/snapshots.
type LogSnapshots struct {
	TLogPublicKey string        `json:"tlog_public_key"`
	Snapshots     []LogSnapshot `json:"snapshots"`
}

// LogSnapshot is one weekly checkpoint of the federation's log.
type LogSnapshot struct {
	Week       string `json:"week"`
	Origin     string `json:"origin"`
	TreeSize   uint64 `json:"tree_size"`
	RootHash   string `json:"root_hash"`
	Checkpoint string `json:"checkpoint"`
}
