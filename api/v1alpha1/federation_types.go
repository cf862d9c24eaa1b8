package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations of an anchor request (docs/OPERATIONS.md, "POST /federation/anchor").
const (
	// AnchorRequestAnnotation on a Federation asks the Federation controller for an anchor
	// run now, whatever the schedule: its value is the request's ID (1 to 128 characters
	// of [A-Za-z0-9._:+-], such as a timestamp). The run is recorded in
	// status.anchorRequest under that ID; a value equal to status.anchorRequest.id asks
	// for nothing. POST /federation/anchor writes it; `kubectl annotate` can too.
	AnchorRequestAnnotation = "federation.cairn.dev/anchor-requested-at"
	// AnchorRequestIDAnnotation on a CrossAnchor is the ID of the request whose run made
	// it, so that a run stopped after creating it is recorded as that request's, not
	// run again.
	AnchorRequestIDAnnotation = "federation.cairn.dev/anchor-request"
	// AnchorSubmissionsAnnotation on a CrossAnchor is how many submissions the run that
	// made it bound (decimal), for the request's record.
	AnchorSubmissionsAnnotation = "federation.cairn.dev/submissions-anchored"
	// AnchorRunPartAnnotation on a CrossAnchor says which of its run's anchors it is, as
	// "i/n": a run binds at most MaxParticipantsPerAnchor operators an anchor and makes as
	// many as it needs, all at one anchoredAt. A run stopped before its last part is run
	// again for the operators it did not bind.
	AnchorRunPartAnnotation = "federation.cairn.dev/run-part"
	// AnchorsAfterAnnotation on a Federation is an anchor ID (anchor-YYYYMMDD-NNN) that
	// every anchor it makes must follow: on that day its anchors are numbered after it.
	// A federation restored without its CrossAnchors (docs/OPERATIONS.md, "Backup and
	// restore") is given its last anchor's ID here, so that it never hands out an ID the
	// federation it was restored from gave another anchor. A value that is not an anchor
	// ID, or names a day after the controller's clock, stops anchor runs with an error.
	AnchorsAfterAnnotation = "federation.cairn.dev/anchors-after"
)

// TransparencyLogType selects the log that records cross-anchors.
// +kubebuilder:validation:Enum=embedded;rekor;rekor-v2
type TransparencyLogType string

const (
	// TransparencyLogEmbedded is the log the manager runs itself, on tessera POSIX storage.
	TransparencyLogEmbedded TransparencyLogType = "embedded"
	// TransparencyLogRekor is a Sigstore Rekor v1 server at spec.transparencyLog.url.
	TransparencyLogRekor TransparencyLogType = "rekor"
	// TransparencyLogRekorV2 is a Sigstore Rekor v2 (rekor-tiles) log at
	// spec.transparencyLog.url, with the timestamp authority of
	// spec.transparencyLog.timestampAuthority.
	TransparencyLogRekorV2 TransparencyLogType = "rekor-v2"
)

// TransparencyLog says where cross-anchors, registrations and key rotations are logged.
// +kubebuilder:validation:XValidation:rule="self.type != 'rekor' || has(self.url)",message="url is required when type is rekor"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['rekor', 'rekor-v2']) || !has(self.witnesses)",message="witnesses are for the embedded log: a Rekor log is witnessed by its own operator's witnesses"
// +kubebuilder:validation:XValidation:rule="self.type != 'rekor-v2' || (has(self.url) && has(self.publicKeyPEM) && has(self.timestampAuthority))",message="url, publicKeyPEM and timestampAuthority are required when type is rekor-v2"
// +kubebuilder:validation:XValidation:rule="self.type == 'rekor-v2' || (!has(self.readURL) && !has(self.timestampAuthority))",message="readURL and timestampAuthority are for type rekor-v2"
type TransparencyLog struct {
	// type is embedded (the default), rekor (Rekor v1) or rekor-v2.
	// +optional
	// +kubebuilder:default=embedded
	Type TransparencyLogType `json:"type,omitempty"`

	// url is the Rekor server's base URL, for example https://rekor.sigstore.dev.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="url must be an http or https URL"
	URL string `json:"url,omitempty"`

	// publicKeyPEM pins the log's public key: a PEM "PUBLIC KEY" block (ECDSA P-256 or
	// Ed25519), as Rekor serves it at /api/v1/log/publicKey. Every proof the log returns
	// must verify under it. Unset, the key is fetched from the log once. Only the exact
	// PEM form is read (LF line ends, one final LF; docs/PROTOCOL.md §4).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self.startsWith('-----BEGIN PUBLIC KEY-----\\n') && self.endsWith('\\n-----END PUBLIC KEY-----\\n') && !self.contains('\\r')",message="publicKeyPEM must be a PEM PUBLIC KEY block in its exact form (LF line ends, one final LF)"
	PublicKeyPEM string `json:"publicKeyPEM,omitempty"`

	// readURL is where a Rekor v2 log's C2SP tlog-tiles are read (checkpoint, tile/...,
	// tile/entries/...); default url, as Sigstore's public Rekor v2 logs serve them.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="readURL must be an http or https URL"
	ReadURL string `json:"readURL,omitempty"`

	// retiredLogs are the logs the federation recorded in before this one (a Rekor v1
	// log's pinned key when it moved to Rekor v2, say): earlier receipts' log legs keep
	// verifying under their keys. The embedded log's own key, and the pinned Rekor key
	// while the embedded log is used, count without being listed.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	RetiredLogs []RetiredLog `json:"retiredLogs,omitempty"`

	// timestampAuthority is the RFC 3161 timestamp authority that timestamps each entry
	// of a Rekor v2 log, whose entries carry no time of their own.
	// +optional
	TimestampAuthority *TimestampAuthority `json:"timestampAuthority,omitempty"`

	// signingKeySecretRef names the Secret holding the embedded log's checkpoint signing
	// key (a signed-note Ed25519 private key under the key "log.key"). It is generated
	// when absent and never overwritten.
	// +optional
	SigningKeySecretRef *SecretReference `json:"signingKeySecretRef,omitempty"`

	// witnesses are the members' witnesses that cosign the embedded log's checkpoints, so
	// that no reader need trust the federation not to show different logs to different
	// readers. Only for the embedded log.
	// +optional
	Witnesses *WitnessPolicy `json:"witnesses,omitempty"`
}

// RetiredLog is a transparency log a federation no longer records in.
type RetiredLog struct {
	// publicKeyPEM is the log's public key, in the form of
	// spec.transparencyLog.publicKeyPEM.
	// +required
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self.startsWith('-----BEGIN PUBLIC KEY-----\\n') && self.endsWith('\\n-----END PUBLIC KEY-----\\n') && !self.contains('\\r')",message="publicKeyPEM must be a PEM PUBLIC KEY block in its exact form (LF line ends, one final LF)"
	PublicKeyPEM string `json:"publicKeyPEM"`
}

// IsRemote reports whether the log is a Rekor server (v1 or v2) rather than the
// embedded log the manager runs.
func (t TransparencyLog) IsRemote() bool {
	return t.Type == TransparencyLogRekor || t.Type == TransparencyLogRekorV2
}

// TimestampAuthority is an RFC 3161 timestamp authority.
type TimestampAuthority struct {
	// url is the authority's timestamp endpoint, for example
	// https://timestamp.sigstore.dev/api/v1/timestamp.
	// +required
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="url must be an http or https URL"
	URL string `json:"url"`

	// certChainPEM is the authority's certificate chain: PEM CERTIFICATE blocks, the
	// signing certificate first and the root last. Every timestamp must verify under it.
	// +required
	// +kubebuilder:validation:MaxLength=16384
	CertChainPEM string `json:"certChainPEM"`
}

// FederationSpec is the federation's configuration, owned by its administrators (GitOps).
type FederationSpec struct {
	// anchorInterval is how often pending submissions are cross-anchored.
	// +optional
	// +kubebuilder:default="6h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="anchorInterval must be at least 1m"
	AnchorInterval metav1.Duration `json:"anchorInterval,omitzero"`

	// pendingThreshold anchors early once this many submissions are pending. Unset means
	// anchor only on the interval.
	// +optional
	// +kubebuilder:validation:Minimum=1
	PendingThreshold *int32 `json:"pendingThreshold,omitempty"`

	// minParticipants is how many operators must have a pending submission before an anchor
	// is made; below it the anchor waits for the next interval.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MinParticipants int32 `json:"minParticipants,omitempty"`

	// seedFormMaxParticipants is how many operators an anchor run binds at most in the seed
	// form, whose receipts list every participant; a run that binds more makes one anchor
	// of the Merkle form (docs/PROTOCOL.md §7), whose receipts carry the holder's leaf and
	// its inclusion proof, and whose leaves the history store keeps. 0 makes every anchor
	// of the Merkle form. Without a history store every anchor is of the seed form, and a
	// run of more operators makes several. Unset means 5000, the most one seed-form anchor
	// binds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5000
	SeedFormMaxParticipants *int32 `json:"seedFormMaxParticipants,omitempty"`

	// maxPendingPerOperator bounds how many accepted submissions of one operator may wait
	// for a cross-anchor; a submission beyond it is refused (PendingLimitExceeded) and can
	// be sent again once an anchor has covered the others.
	// +optional
	// +kubebuilder:default=1000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxPendingPerOperator int32 `json:"maxPendingPerOperator,omitempty"`

	// transparencyLog records every cross-anchor and registration.
	// +optional
	// +kubebuilder:default={type: embedded}
	TransparencyLog TransparencyLog `json:"transparencyLog,omitzero"`

	// signingKeySecretRef names the Secret holding the federation's Ed25519 signing key.
	// When unset the Secret is "<name>-signing-key"; when absent it is generated.
	// +optional
	SigningKeySecretRef *SecretReference `json:"signingKeySecretRef,omitempty"`

	// adminTokenSecretRef names the Secret holding the admin bearer token and the MAC key of
	// registration challenges. When unset the Secret is "<name>-admin"; when absent it is
	// generated.
	// +optional
	AdminTokenSecretRef *SecretReference `json:"adminTokenSecretRef,omitempty"`

	// publicURL is the address operators use to reach the federation API; receipts and
	// log entries link to it.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="publicURL must be an http or https URL"
	PublicURL string `json:"publicURL,omitempty"`

	// suspendedOperators lists the operators the federation's administrators suspend
	// through GitOps, each with its reason. An operator is suspended while this list or
	// status.apiSuspensions (POST /federation/operator/{id}/suspend) names it.
	// +optional
	// +listType=map
	// +listMapKey=operatorID
	// +kubebuilder:validation:MaxItems=1024
	SuspendedOperators []OperatorSuspension `json:"suspendedOperators,omitempty"`

	// registration is open (the default: every operator whose proof of possession
	// verifies is registered) or approval (a new operator stays Pending, unregistered and
	// unlogged, until spec.approvedOperators or status.apiApprovals names it). Switching
	// back to open approves no Pending operator.
	// +optional
	// +kubebuilder:default=open
	Registration RegistrationMode `json:"registration,omitempty"`

	// approvedOperators lists the operators the federation's administrators approve
	// through GitOps, under registration: approval. An operator is approved while this
	// list or status.apiApprovals (POST /federation/operator/{id}/approve) names it; an
	// entry may name an operator before it registers. Once the operator is registered the
	// entry changes nothing and may be removed.
	// +optional
	// +listType=map
	// +listMapKey=operatorID
	// +kubebuilder:validation:MaxItems=1024
	ApprovedOperators []OperatorApproval `json:"approvedOperators,omitempty"`

	// history says how long finished records stay objects before they move to the
	// federation's history store (which the manager's --history flags choose).
	// +optional
	History FederationHistory `json:"history,omitzero"`
}

// FederationHistory is a Federation's retention of finished records in etcd.
type FederationHistory struct {
	// retention is how long an anchored Submission, and a logged CrossAnchor, stays an
	// object after it was made before it moves to the history store, where the API still
	// serves it: at least 24h (a shorter one counts as 24h); 72h when unset. The last
	// anchor run's CrossAnchors and each operator's head Submission stay objects.
	// +optional
	Retention metav1.Duration `json:"retention,omitzero"`
}

// AnchorSummary points at one CrossAnchor.
type AnchorSummary struct {
	// anchorID is the anchor's anchor-YYYYMMDD-NNN identifier and CrossAnchor name.
	// +required
	AnchorID AnchorID `json:"anchorID"`

	// anchoredAt is when the anchor was made.
	// +optional
	AnchoredAt metav1.Time `json:"anchoredAt,omitzero"`

	// crossAnchorHash is the anchor's hash.
	// +optional
	CrossAnchorHash Hash `json:"crossAnchorHash,omitempty"`
}

// AnchorRequest is the last anchor request (AnchorRequestAnnotation) the controller
// handled, written in the same status update as the run's anchor.
type AnchorRequest struct {
	// id is the request's ID: the annotation's value.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	ID string `json:"id"`

	// anchorID is the anchor the run made, its last when it made several; empty when it
	// made none.
	// +optional
	AnchorID AnchorID `json:"anchorID,omitempty"`

	// anchorIDs lists every anchor the run made, in order, when it made more than one: a
	// run binds at most 5,000 operators an anchor.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=200
	AnchorIDs []AnchorID `json:"anchorIDs,omitempty"`

	// submissionsAnchored is how many submissions the run's anchors bind.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SubmissionsAnchored int32 `json:"submissionsAnchored,omitempty"`

	// reason is Anchored, or NotEnoughParticipants when the run made no anchor.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason"`

	// message says what the run did, for people.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// handledAt is when the controller recorded the run.
	// +optional
	HandledAt metav1.Time `json:"handledAt,omitzero"`
}

// FederationStatus is what the controller observed and did.
type FederationStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// publicKeyPEM is the federation's current Ed25519 public key.
	// +optional
	PublicKeyPEM PublicKeyPEM `json:"publicKeyPEM,omitempty"`

	// publicKeyFingerprint is the hex SHA-256 of the raw 32-byte public key.
	// +optional
	PublicKeyFingerprint Hash `json:"publicKeyFingerprint,omitempty"`

	// signingKeySecret is the Secret holding the current signing key. Pointing
	// spec.signingKeySecretRef at another Secret rotates the key: a rotation record signed
	// by both keys is logged, and the anchors of the last 90 days are re-signed.
	// +optional
	SigningKeySecret string `json:"signingKeySecret,omitempty"`

	// keyHistory lists every signing key the federation has used, oldest first, each with
	// the log entry of its rotation record.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	KeyHistory []KeyRecord `json:"keyHistory,omitempty"`

	// genesisLogEntry is where the genesis record, which states the federation's public
	// key, landed in the transparency log: the first record the federation logs.
	// +optional
	GenesisLogEntry *LogEntry `json:"genesisLogEntry,omitempty"`

	// lastAnchor is the most recent cross-anchor.
	// +optional
	LastAnchor *AnchorSummary `json:"lastAnchor,omitempty"`

	// anchorRequest is the last anchor request the controller handled.
	// +optional
	AnchorRequest *AnchorRequest `json:"anchorRequest,omitempty"`

	// recentAnchorRequests are the last anchor requests handled, newest first (the first
	// is anchorRequest), so that a caller waiting for one still finds it after a later
	// request was handled.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	RecentAnchorRequests []AnchorRequest `json:"recentAnchorRequests,omitempty"`

	// nextAnchorTime is when the next cross-anchor is due.
	// +optional
	NextAnchorTime *metav1.Time `json:"nextAnchorTime,omitempty"`

	// operatorCount is the number of Active operators.
	// +optional
	OperatorCount int32 `json:"operatorCount,omitempty"`

	// totalOperators is the number of FederationOperators in any phase.
	// +optional
	TotalOperators int32 `json:"totalOperators,omitempty"`

	// pendingCount is the number of submissions not yet anchored, a suspended operator's
	// left out (they wait for its resumption).
	// +optional
	PendingCount int32 `json:"pendingCount,omitempty"`

	// apiSuspensions lists the operators suspended through the admin API, written by the
	// federation API only (never by GitOps, which owns spec.suspendedOperators); POST
	// /federation/operator/{id}/resume removes an entry.
	// +optional
	// +listType=map
	// +listMapKey=operatorID
	// +kubebuilder:validation:MaxItems=1024
	APISuspensions []APISuspension `json:"apiSuspensions,omitempty"`

	// apiApprovals lists the Pending operators approved through the admin API (POST
	// /federation/operator/{id}/approve), written by the federation API only (never by
	// GitOps, which owns spec.approvedOperators). The API drops an entry once its
	// operator is registered or gone, so the list holds only approvals the controller has
	// not applied yet.
	// +optional
	// +listType=map
	// +listMapKey=operatorID
	// +kubebuilder:validation:MaxItems=256
	APIApprovals []APIApproval `json:"apiApprovals,omitempty"`

	// conditions: Ready, KeyReady and LogReachable.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Federation is one cross-anchoring federation: its schedule, its log and its signing key.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fed,categories=cairn
// +kubebuilder:printcolumn:name="Interval",type=string,JSONPath=`.spec.anchorInterval`
// +kubebuilder:printcolumn:name="Log",type=string,JSONPath=`.spec.transparencyLog.type`
// +kubebuilder:printcolumn:name="Operators",type=integer,JSONPath=`.status.operatorCount`
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=`.status.pendingCount`
// +kubebuilder:printcolumn:name="Last Anchor",type=string,JSONPath=`.status.lastAnchor.anchorID`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Federation struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is the federation's configuration.
	// +required
	Spec FederationSpec `json:"spec"`

	// status is what the controller observed.
	// +optional
	Status FederationStatus `json:"status,omitzero"`
}

// FederationList is a list of Federation.
//
// +kubebuilder:object:root=true
type FederationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Federation `json:"items"`
}
