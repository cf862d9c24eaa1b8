package v1alpha1

// ConditionType names a condition in a status.conditions list of this API.
type ConditionType string

// Condition types. Each controller moves its own and leaves the others to their owners.
const (
	// ConditionReady is True when the object does its job: a Federation accepts
	// registrations and anchors, an operator may submit, a submission is verified and a
	// cross-anchor is recorded in the transparency log.
	ConditionReady ConditionType = "Ready"

	// ConditionKeyReady is True when a Federation's signing key has been loaded from, or
	// generated into, the Secret named by spec.signingKeySecretRef; status.publicKeyPEM and
	// status.publicKeyFingerprint then describe it.
	ConditionKeyReady ConditionType = "KeyReady"

	// ConditionLogReachable is True when the last call to the transparency log succeeded.
	ConditionLogReachable ConditionType = "LogReachable"

	// ConditionSignatureVerified is True when a Submission's envelope signature verified
	// against its operator's current key, or a FederationOperator's proof of possession
	// verified against spec.publicKeyPEM.
	ConditionSignatureVerified ConditionType = "SignatureVerified"

	// ConditionContinuityVerified is True when a Submission starts exactly where its
	// operator's previous accepted submission ended.
	ConditionContinuityVerified ConditionType = "ContinuityVerified"

	// ConditionAnchored is True when a Submission is bound into a CrossAnchor; status.anchorRef
	// names it.
	ConditionAnchored ConditionType = "Anchored"

	// ConditionWitnessed is True when the embedded log's latest checkpoint carries the
	// cosignatures of as many of spec.transparencyLog.witnesses as its quorum asks.
	ConditionWitnessed ConditionType = "Witnessed"
)

// Reasons for conditions. A condition's reason is one of these, never free text.
const (
	// ReasonVerified means the signature or continuity check passed.
	ReasonVerified = "Verified"
	// ReasonSignatureInvalid means a signature did not verify against the key that should have made it.
	ReasonSignatureInvalid = "SignatureInvalid"
	// ReasonContinuityViolation means first_seq or first_prev_hash does not follow the previous submission.
	ReasonContinuityViolation = "ContinuityViolation"
	// ReasonEntryCountRegression means entry_count is below the previous submission's.
	ReasonEntryCountRegression = "EntryCountRegression"
	// ReasonKeyLoaded means the federation signing key was read from its Secret.
	ReasonKeyLoaded = "KeyLoaded"
	// ReasonKeyGenerated means the federation signing key was absent and has been generated.
	ReasonKeyGenerated = "KeyGenerated"
	// ReasonKeyInvalid means the signing-key Secret exists but holds no usable Ed25519 key.
	ReasonKeyInvalid = "KeyInvalid"
	// ReasonKeyMissing means the Secret of the signing key the Federation used was deleted;
	// no key is generated in its place: restore the Secret.
	ReasonKeyMissing = "KeyMissing"
	// ReasonLogReachable means the transparency log answered.
	ReasonLogReachable = "LogReachable"
	// ReasonLogUnreachable means the transparency log did not answer; the call is retried.
	ReasonLogUnreachable = "LogUnreachable"
	// ReasonLogKeyMissing means a Federation's embedded log directory holds a log but the
	// Secret of its key does not exist (a log restored without its key): the controller
	// generates no new key for it, and the log stays closed until the Secret is restored.
	ReasonLogKeyMissing = "LogKeyMissing"
	// ReasonLogKeyMismatch means a Federation's embedded log directory holds a log whose
	// checkpoint the key in its Secret did not sign (a log restored with another key): the
	// log stays closed, never re-signed, until the Secret holds the log's own key.
	ReasonLogKeyMismatch = "LogKeyMismatch"
	// ReasonPendingTLog means a cross-anchor is signed but not yet recorded in the log.
	ReasonPendingTLog = "PendingTLog"
	// ReasonAnchored means a cross-anchor is recorded in the log, or a submission is bound into one.
	ReasonAnchored = "Anchored"
	// ReasonPending means a submission waits for the next cross-anchor.
	ReasonPending = "Pending"
	// ReasonWithdrawn means the operator withdrew with a signed withdrawal.
	ReasonWithdrawn = "Withdrawn"
	// ReasonSuspended means the federation suspended the operator.
	ReasonSuspended = "Suspended"
	// ReasonAwaitingApproval means an operator's proof of possession verified and its key
	// is its own, but its Federation (registration: approval) has not approved it: it is
	// Pending, and Ready is False, until spec.approvedOperators or status.apiApprovals
	// names it.
	ReasonAwaitingApproval = "AwaitingApproval"
	// ReasonRegistered means an operator's key and proof of possession verified and the key
	// is its own.
	ReasonRegistered = "Registered"
	// ReasonDuplicateKey means another operator holds, or once held, the public key (every
	// key in its status.keyHistory counts, withdrawn operators included): a registration is
	// Rejected, a key rotation refused and the current key kept.
	ReasonDuplicateKey = "DuplicateKey"
	// ReasonWithdrawalInvalid means spec.withdrawal does not verify (signature, or at more
	// than five minutes from the controller's clock); the operator stays as it was.
	ReasonWithdrawalInvalid = "WithdrawalInvalid"
	// ReasonKeyRotated means the operator moved to a new key with a rotation both keys
	// signed.
	ReasonKeyRotated = "KeyRotated"
	// ReasonKeyRotationInvalid means publicKeyPEM changed without a valid keyRotation; the
	// current key stays.
	ReasonKeyRotationInvalid = "KeyRotationInvalid"
	// ReasonKeyRotationWaiting means the federation key rotation waits for every
	// cross-anchor signed by the old key to be in the log.
	ReasonKeyRotationWaiting = "KeyRotationWaiting"
	// ReasonOperatorAmbiguous means more than one FederationOperator that is not Rejected
	// claims a submission's operatorID; the federation refuses the submission rather than
	// pick one. It is final: remove the object that should not hold the ID, then submit again.
	ReasonOperatorAmbiguous = "OperatorAmbiguous"
	// ReasonOperatorUnknown means a submission names an operator that is not registered and
	// Active in the namespace; it is retried.
	ReasonOperatorUnknown = "OperatorUnknown"
	// ReasonNotEnoughParticipants means fewer operators have pending submissions than
	// spec.minParticipants; the anchor waits for the next interval.
	ReasonNotEnoughParticipants = "NotEnoughParticipants"
	// ReasonLogRefused means the transparency log refused a record; it is not retried.
	ReasonLogRefused = "LogRefused"
	// ReasonHeaderMismatch means a submission's fields differ from its signed header.
	ReasonHeaderMismatch = "HeaderMismatch"
	// ReasonDeletionRefused meant a CrossAnchor was deleted while its Federation existed
	// and was kept, Terminating, by a finalizer. It is no longer given: the admission
	// policy refuses the delete itself, and a record goes with its Federation (its owner).
	ReasonDeletionRefused = "DeletionRefused"
	// ReasonUntrusted means a CrossAnchor is not the federation's: its anchorID is not its
	// name, its hash does not recompute from its participants and anchoredAt, or its
	// federationSignature does not verify under a key of the Federation's key history. It
	// is Rejected: never logged, adopted, counted, re-signed or turned into a receipt.
	ReasonUntrusted = "Untrusted"
	// ReasonPendingLimitExceeded means the operator already has spec.maxPendingPerOperator
	// accepted submissions waiting for a cross-anchor; the submission is refused and can be
	// sent again once an anchor has covered them.
	ReasonPendingLimitExceeded = "PendingLimitExceeded"
	// ReasonNameNotCanonical means a Submission is not named after its operator and first
	// seq (sub-<operator ID without "op_">-<firstSeq>), as the federation's API names every
	// one: the name is what keeps two exports of one segment from both being accepted.
	ReasonNameNotCanonical = "NameNotCanonical"
	// ReasonAnchorMissing means a CrossAnchor the Federation's status names is gone
	// (deleted past the admission policy, or lost in a restore): anchoring goes on from
	// the anchors that remain, and the submissions it bound keep their receipts.
	ReasonAnchorMissing = "AnchorMissing"
	// ReasonNotServing means a Federation is not its namespace's: an older one is, and this
	// one makes no key, record or anchor.
	ReasonNotServing = "NotServing"
	// ReasonWitnessed means the log's latest checkpoint meets the witness policy.
	ReasonWitnessed = "Witnessed"
	// ReasonWitnessQuorumNotMet means too few witnesses cosigned the log's latest checkpoint
	// yet (down, slow, or not asked yet); they are asked again with backoff.
	ReasonWitnessQuorumNotMet = "WitnessQuorumNotMet"
	// ReasonSplitViewRefused means a witness refused the log's checkpoint as contradicting
	// one it had cosigned: the log was rolled back or forked (a restore from an old copy).
	ReasonSplitViewRefused = "SplitViewRefused"
	// ReasonWitnessPolicyInvalid means spec.transparencyLog.witnesses names a key that is not
	// a witness's cosignature/v1 verifier key.
	ReasonWitnessPolicyInvalid = "WitnessPolicyInvalid"
)
