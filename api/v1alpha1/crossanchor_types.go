package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CrossAnchorPhase is how far a cross-anchor has got into the transparency log.
// +kubebuilder:validation:Enum=PendingTLog;Anchored;Rejected
type CrossAnchorPhase string

const (
	// PhasePendingTLog means signed and stored, not yet recorded in the log; retried on a backoff.
	PhasePendingTLog CrossAnchorPhase = "PendingTLog"
	// PhaseAnchored means recorded in the log; status.logEntry and status.inclusionProof are set.
	PhaseAnchored CrossAnchorPhase = "Anchored"
	// PhaseAnchorRejected means the federation did not make this record: its hash does not
	// recompute, or its signature does not verify under a key of the Federation's key
	// history. It is never logged, adopted, counted or turned into a receipt.
	PhaseAnchorRejected CrossAnchorPhase = "Rejected"
)

// Participant is one operator's contribution to a cross-anchor.
type Participant struct {
	// operatorID is the operator.
	// +required
	OperatorID OperatorID `json:"operatorID"`

	// chainSignature is the chain_signature of its latest pending submission.
	// +required
	ChainSignature Hash `json:"chainSignature"`

	// lastSeq is the last_seq of that submission: the anchor covers every accepted
	// submission of the operator that ends at or before it. It is not part of the signed
	// receipt; the Submission controller checks it against the submission whose
	// chainSignature the anchor binds before it relies on it.
	// +required
	// +kubebuilder:validation:Minimum=1
	LastSeq int64 `json:"lastSeq"`
}

// AnchorForm is how an anchor commits to its participants.
// +kubebuilder:validation:Enum=merkle-v1
type AnchorForm string

// AnchorFormMerkle is the Merkle form (docs/PROTOCOL.md §7): the participants are the
// leaves of an RFC 6962 tree, kept in the history store, and the anchor states the
// tree's size and root.
const AnchorFormMerkle AnchorForm = "merkle-v1"

// AnchorTree is the tree of a Merkle-form anchor.
type AnchorTree struct {
	// size is the number of leaves: one a participant.
	// +required
	// +kubebuilder:validation:Minimum=1
	Size int64 `json:"size"`

	// rootHash is the tree's RFC 6962 root, in hex.
	// +required
	RootHash Hash `json:"rootHash"`
}

// CrossAnchorSpec is the signed record of one cross-anchor. It never changes once written.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a cross-anchor record is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.anchorForm) ? has(self.tree) && !has(self.participants) : !has(self.tree) && has(self.participants)",message="a seed-form anchor lists its participants; a Merkle-form anchor (anchorForm merkle-v1) states its tree instead"
type CrossAnchorSpec struct {
	// anchorID is the anchor's identifier.
	// +required
	AnchorID AnchorID `json:"anchorID"`

	// anchoredAt is the federation's time in RFC 3339 UTC with exactly nine fractional
	// digits: the bytes hashed into crossAnchorHash.
	// +required
	// +kubebuilder:validation:MaxLength=30
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$')",message="must be RFC 3339 UTC with nine fractional digits, such as 2026-01-02T15:04:05.000000000Z"
	AnchoredAt string `json:"anchoredAt"`

	// crossAnchorHash is hex SHA-256 of the participants' chain signatures, in operatorID
	// order, followed by anchoredAt; in the Merkle form, of the tree's root, size and
	// anchoredAt (docs/PROTOCOL.md §7).
	// +required
	CrossAnchorHash Hash `json:"crossAnchorHash"`

	// anchorForm is merkle-v1 for an anchor of the Merkle form; unset for the seed form.
	// +optional
	AnchorForm AnchorForm `json:"anchorForm,omitempty"`

	// participants are the operators a seed-form anchor binds, ordered by operatorID.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10000
	Participants []Participant `json:"participants,omitempty"`

	// tree is a Merkle-form anchor's tree: its leaves, one a participant, are in the
	// history store.
	// +optional
	Tree *AnchorTree `json:"tree,omitempty"`

	// federationSignature is the federation's Ed25519 signature over the receipt payload.
	// +required
	FederationSignature Signature `json:"federationSignature"`

	// federationPublicKeyPEM is the key that signed this anchor, kept so old receipts keep
	// verifying after the federation rotates its key.
	// +required
	FederationPublicKeyPEM PublicKeyPEM `json:"federationPublicKeyPEM"`
}

// InclusionProof proves a log entry is in the log's tree at a given size (RFC 6962).
type InclusionProof struct {
	// logIndex is the leaf's index in the tree the proof is against; it differs from the
	// entry's log index only on a sharded Rekor.
	// +optional
	// +kubebuilder:validation:Minimum=0
	LogIndex int64 `json:"logIndex,omitempty"`

	// logID is the hex SHA-256 of the log's public key (PKIX DER).
	// +optional
	LogID Hash `json:"logID,omitempty"`

	// treeSize is the size of the tree the proof is against.
	// +required
	// +kubebuilder:validation:Minimum=1
	TreeSize int64 `json:"treeSize"`

	// rootHash is the tree's root at treeSize.
	// +required
	RootHash Hash `json:"rootHash"`

	// hashes are the audit path, leaf to root.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Hashes []Hash `json:"hashes,omitempty"`

	// checkpoint is the log's signed note for treeSize.
	// +optional
	// +kubebuilder:validation:MaxLength=8192
	Checkpoint string `json:"checkpoint,omitempty"`
}

// ReceiptSignature is a later federation key's signature of an anchor's receipt, made
// when the federation rotated its key: receipts under that key verify too.
type ReceiptSignature struct {
	// publicKeyPEM is the key that signed.
	// +required
	PublicKeyPEM PublicKeyPEM `json:"publicKeyPEM"`

	// signature is its Ed25519 signature over the receipt payload at signedAt.
	// +required
	Signature Signature `json:"signature"`

	// signedAt is when it signed.
	// +optional
	SignedAt metav1.Time `json:"signedAt,omitzero"`
}

// CrossAnchorStatus is the anchor's progress into the transparency log.
type CrossAnchorStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is PendingTLog until the log records the anchor, then Anchored; Rejected when
	// the federation did not make it.
	// +optional
	Phase CrossAnchorPhase `json:"phase,omitempty"`

	// logEntry is where the anchor landed in the log.
	// +optional
	LogEntry *LogEntry `json:"logEntry,omitempty"`

	// inclusionProof proves logEntry is in the log.
	// +optional
	InclusionProof *InclusionProof `json:"inclusionProof,omitempty"`

	// signedEntryTimestamp is the log's base64 promise to include the entry.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	SignedEntryTimestamp string `json:"signedEntryTimestamp,omitempty"`

	// rfc3161Timestamps are the timestamp authority's answers (DER TimeStampResp,
	// standard base64) over the logged signature: the time of an entry in a Rekor v2 log,
	// which signs no entry timestamps.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=32768
	RFC3161Timestamps []string `json:"rfc3161Timestamps,omitempty"`

	// entryBody is the log entry's body (the hashedrekord), standard base64, so that
	// receipts carry the log's proof without the key that signed the entry.
	// +optional
	// +kubebuilder:validation:MaxLength=8192
	EntryBody string `json:"entryBody,omitempty"`

	// receiptSignatures are the re-signatures of the receipt by later federation keys.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	ReceiptSignatures []ReceiptSignature `json:"receiptSignatures,omitempty"`

	// attempts counts calls to the log that have failed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Attempts int32 `json:"attempts,omitempty"`

	// nextRetryTime is when the log is tried again (1m, 5m, 15m, 1h, then longer).
	// +optional
	NextRetryTime *metav1.Time `json:"nextRetryTime,omitempty"`

	// conditions: Ready (the anchor is the federation's and is in the log) and Anchored.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CrossAnchor is one signed hash over every operator's latest pending chain signature,
// recorded in a transparency log.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=xa;anchor,categories=cairn
// +kubebuilder:printcolumn:name="Anchored At",type=string,JSONPath=`.spec.anchoredAt`
// +kubebuilder:printcolumn:name="Hash",type=string,JSONPath=`.spec.crossAnchorHash`,priority=1
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Log Index",type=integer,JSONPath=`.status.logEntry.logIndex`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type CrossAnchor struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is the signed record.
	// +required
	Spec CrossAnchorSpec `json:"spec"`

	// status is its progress into the log.
	// +optional
	Status CrossAnchorStatus `json:"status,omitzero"`
}

// CrossAnchorList is a list of CrossAnchor.
//
// +kubebuilder:object:root=true
type CrossAnchorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []CrossAnchor `json:"items"`
}
