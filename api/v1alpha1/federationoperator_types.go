package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorPhase is where an operator stands in the federation.
// +kubebuilder:validation:Enum=Pending;Active;Suspended;Withdrawn;Rejected
type OperatorPhase string

const (
	// PhasePending means the operator's proof of possession verified and its key is its
	// own, but its Federation (registration: approval) has not approved it yet: it is not
	// registered, nothing of it is logged, and it may not submit.
	PhasePending OperatorPhase = "Pending"
	// PhaseActive means the operator is registered and may submit.
	PhaseActive OperatorPhase = "Active"
	// PhaseSuspended means the federation stopped accepting the operator's submissions.
	PhaseSuspended OperatorPhase = "Suspended"
	// PhaseWithdrawn means the operator left with a signed withdrawal; submissions get 403.
	PhaseWithdrawn OperatorPhase = "Withdrawn"
	// PhaseRejected means the registration failed verification; conditions say why.
	PhaseRejected OperatorPhase = "Rejected"
)

// Withdrawal is an operator's signed request to leave the federation.
type Withdrawal struct {
	// at is when the operator signed the withdrawal, exactly as signed.
	// +required
	At Timestamp `json:"at"`

	// signature is the operator's Ed25519 signature over "withdraw <operatorID> at <at>".
	// +required
	Signature Signature `json:"signature"`
}

// FederationOperatorSpec is one organization's registration, owned by that organization.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.withdrawal) || has(self.withdrawal)",message="a withdrawal cannot be removed"
type FederationOperatorSpec struct {
	// orgName is the organization's name as the registration states it: the name the
	// proof of possession signs. Once the operator is registered, editing it changes
	// nothing the federation shows (it is reported, condition OrganizationVerified); a
	// rename is spec.rename.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	OrgName string `json:"orgName"`

	// publicKeyPEM is the operator's Ed25519 public key; its operator ID derives from it.
	// +required
	PublicKeyPEM PublicKeyPEM `json:"publicKeyPEM"`

	// contact is how the federation reaches the organization (an e-mail address or URL),
	// as the registration states it. The proof of possession does not sign it: it is shown
	// only once spec.rename signs it.
	// +optional
	// +kubebuilder:validation:MaxLength=320
	Contact string `json:"contact,omitempty"`

	// metadata is free-form labelling the organization publishes with its registration.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Metadata map[string]string `json:"metadata,omitempty"`

	// proofOfPossession is the Ed25519 signature, by publicKeyPEM's private key, over
	// "register <orgName> <fingerprint>", where fingerprint is the hex SHA-256 of the raw
	// public key. Registrations applied with kubectl need it; the HTTP API checks a signed
	// challenge instead.
	// +optional
	ProofOfPossession Signature `json:"proofOfPossession,omitempty"`

	// challengeProof is the proof of possession of a registration through the HTTP API
	// that sent the seed's body alone (no proof_of_possession): the federation's challenge
	// and publicKeyPEM's signature over it. The controller verifies it like
	// proofOfPossession, and also that the federation issued the challenge, that this
	// object was created before it expired, and that the API used it for this object and
	// orgName; so it serves one registration only. proofOfPossession, when set, is the
	// proof instead.
	// +optional
	ChallengeProof *ChallengeProof `json:"challengeProof,omitempty"`

	// withdrawal, once set, withdraws the operator. It cannot be removed.
	// +optional
	Withdrawal *Withdrawal `json:"withdrawal,omitempty"`

	// keyRotation moves a registered operator to the key now in publicKeyPEM: change
	// publicKeyPEM and set keyRotation in the same apply. Without a keyRotation that both
	// keys signed, a changed publicKeyPEM is refused and the current key stays; so is a key
	// that this or any other operator holds or ever held.
	// +optional
	KeyRotation *KeyRotation `json:"keyRotation,omitempty"`

	// rename is the operator's signed statement of its organization's name and contact
	// (docs/PROTOCOL.md §6): once the controller accepts it, the federation shows its
	// orgName and contact and logs a rename record. Signed by the operator's current key;
	// its at must be later than the rename in force. Sent with a registration, it signs
	// the contact from the start.
	// +optional
	Rename *Rename `json:"rename,omitempty"`
}

// ChallengeProof is a registration challenge and the operator key's signature over it.
type ChallengeProof struct {
	// nonce is the challenge, as GET /federation/register/challenge issued it.
	// +required
	// +kubebuilder:validation:MaxLength=272
	// +kubebuilder:validation:Pattern=`^cairn-challenge:[A-Za-z0-9_-]{16,256}$`
	Nonce string `json:"nonce"`

	// signature is publicKeyPEM's Ed25519 signature over the nonce's UTF-8 bytes.
	// +required
	Signature Signature `json:"signature"`
}

// KeyRotation is an operator's signed move to a new key. Both signatures cover the new
// publicKeyPEM text exactly as applied, immediately followed by rotationAt.
type KeyRotation struct {
	// rotationAt is when the rotation was signed; it must be within five minutes of the
	// controller's clock when it is applied.
	// +required
	RotationAt Timestamp `json:"rotationAt"`

	// oldKeySignature is the current key's signature.
	// +required
	OldKeySignature Signature `json:"oldKeySignature"`

	// newKeySignature is the new key's signature (proof of possession).
	// +required
	NewKeySignature Signature `json:"newKeySignature"`
}

// SubmissionHead is an operator's last accepted submission: where its next one must start.
type SubmissionHead struct {
	// submission is the Submission's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Submission string `json:"submission"`

	// lastSeq is the last sequence number it covered.
	// +required
	// +kubebuilder:validation:Minimum=1
	LastSeq int64 `json:"lastSeq"`

	// lastHMACHash is the hmac_hash of its last entry.
	// +required
	LastHMACHash Hash `json:"lastHMACHash"`

	// chainSignature is its chain_signature. Heads written before this field existed lack
	// it.
	// +optional
	ChainSignature Hash `json:"chainSignature,omitempty"`

	// uid is the Submission's metadata.uid: a Submission deleted and made again under the
	// same name is another submission. Heads written before this field existed lack it.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	UID string `json:"uid,omitempty"`

	// entryCount is the chain's length through lastSeq.
	// +required
	// +kubebuilder:validation:Minimum=1
	EntryCount int64 `json:"entryCount"`

	// acceptedAt is when the federation accepted it.
	// +optional
	AcceptedAt metav1.Time `json:"acceptedAt,omitzero"`
}

// KeyRecord is one key an operator has held.
type KeyRecord struct {
	// publicKeyPEM is the key.
	// +required
	PublicKeyPEM PublicKeyPEM `json:"publicKeyPEM"`

	// fingerprint is the hex SHA-256 of the raw public key.
	// +required
	Fingerprint Hash `json:"fingerprint"`

	// validFrom is when the key took effect.
	// +optional
	ValidFrom metav1.Time `json:"validFrom,omitzero"`

	// validUntil is when a rotation replaced the key; unset for the current key.
	// +optional
	ValidUntil *metav1.Time `json:"validUntil,omitempty"`

	// logEntry records the registration or rotation in the transparency log.
	// +optional
	LogEntry *LogEntry `json:"logEntry,omitempty"`
}

// FederationOperatorStatus is what the federation made of the registration.
type FederationOperatorStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// operatorID derives from the registered key.
	// +optional
	OperatorID OperatorID `json:"operatorID,omitempty"`

	// phase is Pending, Active, Suspended, Withdrawn or Rejected.
	// +optional
	Phase OperatorPhase `json:"phase,omitempty"`

	// approvedBy names the sources whose approval registered the operator (gitops, api,
	// or both) under registration: approval; empty when the Federation's registration
	// was open.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	ApprovedBy []string `json:"approvedBy,omitempty"`

	// registeredAt is when the registration was accepted.
	// +optional
	RegisteredAt *metav1.Time `json:"registeredAt,omitempty"`

	// registrationLogEntry records the registration in the transparency log.
	// +optional
	RegistrationLogEntry *LogEntry `json:"registrationLogEntry,omitempty"`

	// withdrawalLogEntry records the withdrawal in the transparency log.
	// +optional
	WithdrawalLogEntry *LogEntry `json:"withdrawalLogEntry,omitempty"`

	// suspensions lists the operator's suspensions and resumptions, oldest first, each
	// with its log entry; the controller drops logged ones past the last 64 (the log keeps
	// them all), never one the log has not taken yet.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Suspensions []SuspensionRecord `json:"suspensions,omitempty"`

	// head is the last accepted submission.
	// +optional
	Head *SubmissionHead `json:"head,omitempty"`

	// organization lists the organization names and contacts the federation verified for
	// the operator, oldest first; the last is the one shown. The first is the name the
	// registration's proof of possession signs, each later one a signed rename. The
	// controller drops logged renames past the last 16 (the log keeps them all).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Organization []OrganizationRecord `json:"organization,omitempty"`

	// keyHistory lists every key the operator has held, oldest first.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	KeyHistory []KeyRecord `json:"keyHistory,omitempty"`

	// conditions: Ready and SignatureVerified.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// FederationOperator is one organization registered with a federation by its Ed25519 key.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fo,categories=cairn
// +kubebuilder:printcolumn:name="Org",type=string,JSONPath=`.status.organization[-1:].orgName`,description="The organization name the operator signed (its last rename, else its registration)"
// +kubebuilder:printcolumn:name="Operator ID",type=string,JSONPath=`.status.operatorID`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Last Submission",type=string,JSONPath=`.status.head.submission`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FederationOperator struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is the organization's registration.
	// +required
	Spec FederationOperatorSpec `json:"spec"`

	// status is what the federation made of it.
	// +optional
	Status FederationOperatorStatus `json:"status,omitzero"`
}

// FederationOperatorList is a list of FederationOperator.
//
// +kubebuilder:object:root=true
type FederationOperatorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []FederationOperator `json:"items"`
}
