package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SubmissionSpec is what the federation read from one signed chain export: its header,
// never its entries. It is immutable: a submission is a record of what was sent.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
// +kubebuilder:validation:XValidation:rule="self.firstSeq <= self.lastSeq",message="firstSeq must not exceed lastSeq"
// +kubebuilder:validation:XValidation:rule="self.entryCount >= self.lastSeq",message="entryCount counts every entry through lastSeq, so it cannot be below lastSeq"
type SubmissionSpec struct {
	// operatorID is the submitting operator.
	// +required
	OperatorID OperatorID `json:"operatorID"`

	// chainSignature is HMAC-SHA256(secret, "chain:" ‖ lastHMACHash ‖ ":" ‖ entryCount).
	// +required
	ChainSignature Hash `json:"chainSignature"`

	// entryCount is the number of entries in the chain through lastSeq.
	// +required
	// +kubebuilder:validation:Minimum=1
	EntryCount int64 `json:"entryCount"`

	// firstSeq is the first sequence number the export covers.
	// +required
	// +kubebuilder:validation:Minimum=1
	FirstSeq int64 `json:"firstSeq"`

	// lastSeq is the last sequence number the export covers.
	// +required
	// +kubebuilder:validation:Minimum=1
	LastSeq int64 `json:"lastSeq"`

	// firstPrevHash is the prev_hash of the first exported entry.
	// +required
	FirstPrevHash Hash `json:"firstPrevHash"`

	// lastHMACHash is the hmac_hash of the last exported entry.
	// +required
	LastHMACHash Hash `json:"lastHMACHash"`

	// exportedAt is the export's exported_at, exactly as signed.
	// +required
	ExportedAt Timestamp `json:"exportedAt"`

	// signedHeader is the RFC 8785 JSON of the export's header (every top-level field but
	// entries and signature): the exact bytes the envelope signature covers.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=16384
	SignedHeader string `json:"signedHeader"`

	// signature is the envelope's Ed25519 signature over signedHeader.
	// +required
	Signature Signature `json:"signature"`

	// publicKeyPEM is the key the envelope named, kept so the signature can be re-checked
	// after the operator rotates its key.
	// +required
	PublicKeyPEM PublicKeyPEM `json:"publicKeyPEM"`

	// sidecars are the attestation sidecars sent with the export, in the order sent:
	// what the federation stored of each (by digest, beside the embedded log), never
	// verified. The operator's token covered them with the export, and the spec is
	// immutable, so none can be added later.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Sidecars []SubmissionSidecar `json:"sidecars,omitempty"`
}

// SubmissionSidecar is one attestation sidecar of a submission.
type SubmissionSidecar struct {
	// digest is the lowercase hex SHA-256 of the content, its name in the sidecar store.
	// +required
	Digest Hash `json:"digest"`

	// mediaType is the media type the operator gave, in canonical form.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=127
	MediaType string `json:"mediaType"`

	// size is the content's length in bytes, at most 1 MiB.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1048576
	Size int64 `json:"size"`

	// name is the file name the operator gave, for display only (never a path).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name,omitempty"`
}

// SubmissionStatus is what the federation verified about the submission.
type SubmissionStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// submissionID is the identifier returned to the operator.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SubmissionID string `json:"submissionID,omitempty"`

	// ed25519Verified is true when the envelope signature verified against the operator's
	// key at submission time.
	// +optional
	Ed25519Verified bool `json:"ed25519Verified,omitempty"`

	// continuityVerified is true when the submission follows the previous one exactly.
	// +optional
	ContinuityVerified bool `json:"continuityVerified,omitempty"`

	// previousSubmission names the submission this one continues; empty for the first.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PreviousSubmission string `json:"previousSubmission,omitempty"`

	// anchored is true once a cross-anchor covers the submission.
	// +optional
	Anchored bool `json:"anchored,omitempty"`

	// anchorRef names the CrossAnchor that covers it.
	// +optional
	AnchorRef AnchorID `json:"anchorRef,omitempty"`

	// conditions: Ready, SignatureVerified, ContinuityVerified and Anchored.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Submission is one signed chain export an operator sent to the federation.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sub,categories=cairn
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.spec.operatorID`
// +kubebuilder:printcolumn:name="First",type=integer,JSONPath=`.spec.firstSeq`
// +kubebuilder:printcolumn:name="Last",type=integer,JSONPath=`.spec.lastSeq`
// +kubebuilder:printcolumn:name="Entries",type=integer,JSONPath=`.spec.entryCount`
// +kubebuilder:printcolumn:name="Anchor",type=string,JSONPath=`.status.anchorRef`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Submission struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is what the export said.
	// +required
	Spec SubmissionSpec `json:"spec"`

	// status is what the federation verified.
	// +optional
	Status SubmissionStatus `json:"status,omitzero"`
}

// SubmissionList is a list of Submission.
//
// +kubebuilder:object:root=true
type SubmissionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Submission `json:"items"`
}
