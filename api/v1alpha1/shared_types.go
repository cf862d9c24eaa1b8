package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Hash is a SHA-256 or HMAC-SHA256 value: 64 lowercase hex characters.
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9a-f]{64}$')",message="must be 64 lowercase hex characters"
type Hash string

// OperatorID identifies an operator: "op_" and the first 16 hex characters of the SHA-256
// of its raw 32-byte Ed25519 public key.
// +kubebuilder:validation:MaxLength=19
// +kubebuilder:validation:XValidation:rule="self.matches('^op_[0-9a-f]{16}$')",message="must be op_ followed by 16 lowercase hex characters"
type OperatorID string

// Signature is a base64 (standard, padded) Ed25519 signature: 64 bytes, 88 characters.
// +kubebuilder:validation:MaxLength=88
// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9+/]{86}==$')",message="must be a base64 Ed25519 signature (88 characters)"
type Signature string

// PublicKeyPEM is an Ed25519 public key as a PEM "PUBLIC KEY" block (SubjectPublicKeyInfo).
// Every Ed25519 SPKI encodes to the same 16-character prefix, so the rule checks the key
// type, not only the PEM armour.
// +kubebuilder:validation:MaxLength=256
// +kubebuilder:validation:XValidation:rule="self.matches(r'^-----BEGIN PUBLIC KEY-----\\nMCowBQYDK2VwAyEA[A-Za-z0-9+/]{43}=\\n-----END PUBLIC KEY-----\\n$')",message="must be a PEM-encoded Ed25519 public key in its exact form (-----BEGIN PUBLIC KEY----- block, LF line ends, one final LF)"
type PublicKeyPEM string

// Timestamp is an RFC 3339 time kept as the exact string that was signed, so that a
// verifier hashes the same bytes the signer did.
// +kubebuilder:validation:MaxLength=40
// +kubebuilder:validation:XValidation:rule="self.matches(r'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$')",message="must be an RFC 3339 time such as 2026-01-02T15:04:05Z"
type Timestamp string

// SecretReference names a Secret in the object's own namespace.
type SecretReference struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// LogEntry is where a record landed in the transparency log.
type LogEntry struct {
	// logIndex is the entry's index in the log.
	// +required
	// +kubebuilder:validation:Minimum=0
	LogIndex int64 `json:"logIndex"`

	// uuid is the log's identifier for the entry (Rekor's entry UUID; the leaf hash for the
	// embedded log).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	UUID string `json:"uuid,omitempty"`

	// url fetches the entry from the log.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url,omitempty"`

	// integratedTime is when the log integrated the entry.
	// +optional
	IntegratedTime *metav1.Time `json:"integratedTime,omitempty"`
}

// AnchorID names a cross-anchor: "anchor-", the UTC date as YYYYMMDD, "-" and the
// three-digit sequence of that day.
// +kubebuilder:validation:MaxLength=19
// +kubebuilder:validation:XValidation:rule="self.matches('^anchor-[0-9]{8}-[0-9]{3}$')",message="must look like anchor-20260102-001"
type AnchorID string
