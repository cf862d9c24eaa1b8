package webhook

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The admission webhooks refuse, when it is written, a FederationOperator or Submission
// that its controller would only reject later in status, so that `kubectl apply` answers
// at once with the reason. They decide with the rules the controllers apply
// (protocol.ParsePublicKeyPEM, protocol.VerifyRegistration, federation.KeyHolder,
// federation.CheckRotation, federation.VerifySubmissionHeader); the controllers still
// check everything, so a cluster without the webhooks is no less safe, only slower to say
// no. A write that leaves the spec as it was (labels, finalizers) is never refused, so an
// object written before the webhooks existed can still be relabelled, and deleted where
// the admission policy (config/admission) lets records go.
//
// A third webhook refuses a second Federation in a namespace; without it, or past it,
// federation.NamespaceFederation still takes the oldest.

// +kubebuilder:webhook:path=/validate-federation-cairn-dev-v1alpha1-federationoperator,mutating=false,failurePolicy=fail,sideEffects=None,groups=federation.cairn.dev,resources=federationoperators,verbs=create;update,versions=v1alpha1,name=vfederationoperator-v1alpha1.federation.cairn.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-federation-cairn-dev-v1alpha1-submission,mutating=false,failurePolicy=fail,sideEffects=None,groups=federation.cairn.dev,resources=submissions,verbs=create;update,versions=v1alpha1,name=vsubmission-v1alpha1.federation.cairn.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-federation-cairn-dev-v1alpha1-federation,mutating=false,failurePolicy=fail,sideEffects=None,groups=federation.cairn.dev,resources=federations,verbs=create,versions=v1alpha1,name=vfederation-v1alpha1.federation.cairn.dev,admissionReviewVersions=v1

// SetupAdmissionWithManager serves the validating webhooks on mgr's webhook server. They
// read FederationOperators and Federations through mgr's API reader, not its cache: an
// object written a moment ago must already count.
func SetupAdmissionWithManager(mgr ctrl.Manager) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &fv1.FederationOperator{}).
		WithValidator(&OperatorValidator{Reader: mgr.GetAPIReader()}).Complete(); err != nil {
		return fmt.Errorf("federationoperator webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &fv1.Submission{}).
		WithValidator(&SubmissionValidator{}).Complete(); err != nil {
		return fmt.Errorf("submission webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &fv1.Federation{}).
		WithValidator(&FederationValidator{Reader: mgr.GetAPIReader()}).Complete(); err != nil {
		return fmt.Errorf("federation webhook: %w", err)
	}
	return nil
}

// omit keeps a field's value out of a refusal: the PEM, the proof or the header is in the
// request already, and repeating it buries the reason.
var omit = field.OmitValueType{}

// OperatorValidator refuses a FederationOperator whose registration or key rotation the
// FederationOperator controller would refuse.
//
// A registration (a create, or an update before the controller registered the operator)
// needs spec.publicKeyPEM to be an Ed25519 public key in the exact form
// protocol.ParsePublicKeyPEM reads (small-order keys, CRLF and other layouts refused),
// spec.proofOfPossession (or, from the HTTP API, spec.challengeProof's signature) to verify
// under it (federation.ProvesPossession), and no other
// operator to hold, have held or have first claimed the key (federation.KeyHolder).
// A registered operator's changed publicKeyPEM is a key rotation: spec.keyRotation must
// verify (federation.CheckRotation) and no other operator may hold or have held the
// new key. A registered operator's spec.orgName and spec.contact do not change (a rename
// is a signed spec.rename, which must verify: admission_organization.go).
type OperatorValidator struct {
	// Reader lists the FederationOperators of the object's namespace.
	Reader client.Reader
	// Now is the clock a key rotation's rotationAt is checked against; time.Now when nil.
	Now func() time.Time
}

var _ admission.Validator[*fv1.FederationOperator] = &OperatorValidator{}

// ValidateCreate refuses a registration the controller would reject.
func (v *OperatorValidator) ValidateCreate(ctx context.Context, fo *fv1.FederationOperator) (admission.Warnings, error) {
	return nil, v.validate(ctx, nil, fo)
}

// ValidateUpdate refuses a changed spec the controller would reject.
func (v *OperatorValidator) ValidateUpdate(ctx context.Context, old, fo *fv1.FederationOperator) (admission.Warnings, error) {
	return nil, v.validate(ctx, old, fo)
}

// ValidateDelete allows every deletion: an operator's key history is kept by the log and
// by the anchors that name it.
func (v *OperatorValidator) ValidateDelete(context.Context, *fv1.FederationOperator) (admission.Warnings, error) {
	return nil, nil
}

// validate checks fo, written over old (nil on create).
func (v *OperatorValidator) validate(ctx context.Context, old, fo *fv1.FederationOperator) error {
	if old != nil && equality.Semantic.DeepEqual(old.Spec, fo.Spec) {
		return nil
	}
	spec := field.NewPath("spec")
	pub, err := protocol.ParsePublicKeyPEM([]byte(fo.Spec.PublicKeyPEM))
	if err != nil {
		return refuseOperator(fo, field.Invalid(spec.Child("publicKeyPEM"), omit, fv1.ReasonKeyInvalid+": "+err.Error()))
	}
	if old == nil || !federation.Registered(fo) {
		return v.validateRegistration(ctx, fo, pub)
	}
	if err := validateOrganization(old, fo, v.now()); err != nil { // admission_organization.go
		return err
	}
	if !rotates(old, fo) {
		return nil
	}
	newPub, reason, msg := federation.CheckRotation(fo, v.now())
	if reason != "" {
		return refuseOperator(fo, field.Invalid(spec.Child("keyRotation"), omit, reason+": "+msg))
	}
	return v.refuseHeldKey(ctx, fo, newPub, "the new key")
}

// validateRegistration checks the proof of possession and that the key is fo's to claim.
// An operator that rotated its key, applied again from a backup, proves possession of
// its current key by the rotation that moved it there (spec.keyRotation, signed by that
// key): its proof of possession names its first key, which only the federation's log
// knows, and the controller takes its history from the log or rejects it.
func (v *OperatorValidator) validateRegistration(ctx context.Context, fo *fv1.FederationOperator, pub ed25519.PublicKey) error {
	if err := federation.ProvesPossession(fo, pub); err != nil && !rotatedHere(fo, pub) {
		return refuseOperator(fo, field.Invalid(field.NewPath("spec", federation.ProofField(fo)), omit,
			fmt.Sprintf("%s: %v (sign \"register <orgName> <fingerprint>\" with the key of publicKeyPEM)", fv1.ReasonSignatureInvalid, err)))
	}
	if err := validateRegistrationRename(fo, pub, fv1.OperatorID(protocol.OperatorID(pub)), v.now()); err != nil {
		return err
	}
	return v.refuseHeldKey(ctx, fo, pub, "this key")
}

// rotatedHere reports whether fo's spec.keyRotation carries pub's signature of its move
// to pub (the rotation's new_key_signature over publicKeyPEM and rotationAt).
func rotatedHere(fo *fv1.FederationOperator, pub ed25519.PublicKey) bool {
	kr := fo.Spec.KeyRotation
	if kr == nil {
		return false
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(string(kr.NewKeySignature))
	return err == nil && len(sig) == ed25519.SignatureSize &&
		ed25519.Verify(pub, protocol.RotationMessage(string(fo.Spec.PublicKeyPEM), string(kr.RotationAt)), sig)
}

// refuseHeldKey refuses fo when another operator holds, held or first claimed pub.
func (v *OperatorValidator) refuseHeldKey(ctx context.Context, fo *fv1.FederationOperator, pub ed25519.PublicKey, what string) error {
	holder, err := federation.KeyHolder(ctx, v.Reader, fo, protocol.OperatorID(pub))
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list FederationOperators: %w", err))
	}
	if holder == nil {
		return nil
	}
	return refuseOperator(fo, field.Invalid(field.NewPath("spec", "publicKeyPEM"), omit,
		fmt.Sprintf("%s: %s holds or once held %s, and an operator ID is never registered twice",
			fv1.ReasonDuplicateKey, federation.DescribeHolder(holder), what)))
}

// rotates reports whether the update asks a registered operator to move to another key:
// its publicKeyPEM is not its current key, and publicKeyPEM or keyRotation changed (a
// rotation the controller refused before is not asked again by an unrelated edit).
func rotates(old, fo *fv1.FederationOperator) bool {
	h := fo.Status.KeyHistory
	if len(h) == 0 || fo.Spec.PublicKeyPEM == h[len(h)-1].PublicKeyPEM {
		return false
	}
	return old.Spec.PublicKeyPEM != fo.Spec.PublicKeyPEM || !equality.Semantic.DeepEqual(old.Spec.KeyRotation, fo.Spec.KeyRotation)
}

func (v *OperatorValidator) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func refuseOperator(fo *fv1.FederationOperator, e *field.Error) error {
	return apierrors.NewInvalid(fv1.GroupVersion.WithKind("FederationOperator").GroupKind(), fo.Name, field.ErrorList{e})
}

// SubmissionValidator refuses a Submission whose signed header does not verify under its
// spec.publicKeyPEM or does not match its spec (federation.VerifySubmissionHeader).
// Whether that key is the operator's current one, continuity and entry-count growth are
// the Submission controller's: they depend on what was accepted before, which a webhook
// cannot order.
type SubmissionValidator struct{}

var _ admission.Validator[*fv1.Submission] = &SubmissionValidator{}

// ValidateCreate refuses a Submission whose header the controller would refuse.
func (v *SubmissionValidator) ValidateCreate(_ context.Context, sub *fv1.Submission) (admission.Warnings, error) {
	return nil, validateSubmission(sub)
}

// ValidateUpdate refuses a changed spec the same way (the CRD makes the spec immutable,
// so only metadata changes reach it, and those pass).
func (v *SubmissionValidator) ValidateUpdate(_ context.Context, old, sub *fv1.Submission) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, sub.Spec) {
		return nil, nil
	}
	return nil, validateSubmission(sub)
}

// ValidateDelete allows every deletion.
func (v *SubmissionValidator) ValidateDelete(context.Context, *fv1.Submission) (admission.Warnings, error) {
	return nil, nil
}

func validateSubmission(sub *fv1.Submission) error {
	spec := field.NewPath("spec")
	pub, err := protocol.ParsePublicKeyPEM([]byte(sub.Spec.PublicKeyPEM))
	if err != nil {
		return refuseSubmission(sub, field.Invalid(spec.Child("publicKeyPEM"), omit, fv1.ReasonSignatureInvalid+": "+err.Error()))
	}
	switch reason, name, msg := federation.VerifySubmissionHeader(&sub.Spec, pub); reason {
	case "":
		if want := federation.SubmissionName(sub.Spec.OperatorID, sub.Spec.FirstSeq); sub.Name != want {
			return refuseSubmission(sub, field.Invalid(field.NewPath("metadata", "name"), omit,
				fv1.ReasonNameNotCanonical+": a Submission of seq "+strconv.FormatInt(sub.Spec.FirstSeq, 10)+" onward is named "+want))
		}
		return nil
	case fv1.ReasonHeaderMismatch:
		// The controller's message states the header's value too: a refusal does not
		// hand back a hash that would have passed.
		return refuseSubmission(sub, field.Invalid(spec.Child(name), omit, reason+": not what the signed header says"))
	default:
		return refuseSubmission(sub, field.Invalid(spec.Child(name), omit, reason+": "+msg))
	}
}

func refuseSubmission(sub *fv1.Submission, e *field.Error) error {
	return apierrors.NewInvalid(fv1.GroupVersion.WithKind("Submission").GroupKind(), sub.Name, field.ErrorList{e})
}

// FederationValidator refuses a Federation created in a namespace that has one already. A
// namespace holds one Federation: its operators, submissions and anchors live beside it
// and are found by namespace (federation.NamespaceFederation). Two creates racing each
// other can both pass; federation.NamespaceFederation then takes the oldest, so the later
// one still neither blocks nor is used for the first one's records.
type FederationValidator struct {
	// Reader lists the Federations of the object's namespace.
	Reader client.Reader
}

var _ admission.Validator[*fv1.Federation] = &FederationValidator{}

// ValidateCreate refuses fed when its namespace has another Federation.
func (v *FederationValidator) ValidateCreate(ctx context.Context, fed *fv1.Federation) (admission.Warnings, error) {
	var feds fv1.FederationList
	if err := v.Reader.List(ctx, &feds, client.InNamespace(fed.Namespace)); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("list Federations: %w", err))
	}
	for _, other := range feds.Items {
		if other.Name == fed.Name {
			continue // the API server answers AlreadyExists
		}
		going := ""
		if other.DeletionTimestamp != nil {
			going = " (being deleted: create this one once it is gone)"
		}
		return nil, apierrors.NewForbidden(fv1.GroupVersion.WithResource("federations").GroupResource(), fed.Name,
			fmt.Errorf("namespace %s already has Federation %s%s: a namespace holds one Federation, whose operators,"+
				" submissions and anchors live beside it; register operators with %s, or create this Federation in another namespace",
				fed.Namespace, other.Name, going, other.Name))
	}
	return nil, nil
}

// ValidateUpdate allows every update: a Federation's name and namespace do not change.
func (v *FederationValidator) ValidateUpdate(context.Context, *fv1.Federation, *fv1.Federation) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete allows every deletion: the garbage collector then deletes the
// Federation's records (federation.RecordOwner).
func (v *FederationValidator) ValidateDelete(context.Context, *fv1.Federation) (admission.Warnings, error) {
	return nil, nil
}
