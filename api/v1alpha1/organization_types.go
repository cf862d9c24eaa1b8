package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Rename is an operator's signed statement of its organization's name and contact
// (docs/PROTOCOL.md §6, "rename"): what the federation shows of the operator from the
// controller's acceptance on.
type Rename struct {
	// orgName is the organization's name, as signed.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	OrgName string `json:"orgName"`

	// contact is how to reach the organization, as signed; empty when it gives none.
	// +optional
	// +kubebuilder:validation:MaxLength=320
	Contact string `json:"contact,omitempty"`

	// at is when the operator signed the rename, exactly as signed. It must be later than
	// the at of the rename in force, and at most five minutes after the controller's clock.
	// +required
	At Timestamp `json:"at"`

	// signature is the operator's current key's Ed25519 signature over "rename " followed
	// by the RFC 8785 JSON of {"at", "contact", "operator_id", "org_name"}.
	// +required
	Signature Signature `json:"signature"`
}

// OrganizationRecord is one organization name and contact of an operator that the
// federation verified: the name its registration's proof of possession signs, or a signed
// rename.
type OrganizationRecord struct {
	// orgName is the organization's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	OrgName string `json:"orgName"`

	// contact is how to reach the organization; empty when nothing signed one.
	// +optional
	// +kubebuilder:validation:MaxLength=320
	Contact string `json:"contact,omitempty"`

	// at is the rename's at, exactly as signed; empty for the registration's name.
	// +optional
	At Timestamp `json:"at,omitempty"`

	// signature is the rename's signature; empty for the registration's name, which the
	// proof of possession signs.
	// +optional
	Signature Signature `json:"signature,omitempty"`

	// keyFingerprint is the fingerprint of the operator key that signed it.
	// +required
	KeyFingerprint Hash `json:"keyFingerprint"`

	// acceptedAt is when the controller accepted it.
	// +optional
	AcceptedAt metav1.Time `json:"acceptedAt,omitzero"`

	// logEntry records the rename in the transparency log; unset for the registration's
	// name (the registration record logs it) and until the log took it.
	// +optional
	LogEntry *LogEntry `json:"logEntry,omitempty"`
}

// ConditionOrganizationVerified is True when the organization name and contact a
// FederationOperator's spec states are the ones the federation shows, each signed by the
// operator (the registration's proof of possession, or spec.rename); False when the spec
// says something no signature covers (OrganizationUnsigned) or spec.rename does not verify
// (RenameInvalid). Either way the federation shows the last signed name and contact.
const ConditionOrganizationVerified ConditionType = "OrganizationVerified"

// Reasons of the OrganizationVerified condition.
const (
	// ReasonOrganizationSigned means what the spec states is what is shown, signed.
	ReasonOrganizationSigned = "OrganizationSigned"
	// ReasonRenamed means the controller accepted spec.rename: its name and contact are
	// shown, and a rename record is logged.
	ReasonRenamed = "Renamed"
	// ReasonRenameInvalid means spec.rename does not verify (signature, operator, shape,
	// a time in the future, or not later than the rename in force); nothing shown changes.
	ReasonRenameInvalid = "RenameInvalid"
	// ReasonOrganizationUnsigned means spec.orgName or spec.contact differs from what is
	// shown and no signature covers it: an edit of the spec renames nobody.
	ReasonOrganizationUnsigned = "OrganizationUnsigned"
)
