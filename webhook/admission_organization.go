package webhook

import (
	"crypto/ed25519"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// validateOrganization refuses, on a registered operator, a spec that would state an
// organization no signature covers: a changed spec.orgName (the name the registration's
// proof of possession signs) or spec.contact (which nothing signs), or a new spec.rename
// the controller would refuse (federation.CheckRename under the current key). The
// controller shows none of them anyway; refusing says so at once.
func validateOrganization(old, fo *fv1.FederationOperator, now time.Time) error {
	spec := field.NewPath("spec")
	if old.Spec.OrgName != fo.Spec.OrgName {
		return refuseOperator(fo, field.Invalid(spec.Child("orgName"), omit, fv1.ReasonOrganizationUnsigned+
			": orgName is the name the registration's proof of possession signs; rename with a signed spec.rename (cairn federation rename)"))
	}
	if old.Spec.Contact != fo.Spec.Contact {
		return refuseOperator(fo, field.Invalid(spec.Child("contact"), omit, fv1.ReasonOrganizationUnsigned+
			": nothing signs contact; change it with a signed spec.rename (cairn federation rename)"))
	}
	if fo.Spec.Rename == nil || equality.Semantic.DeepEqual(old.Spec.Rename, fo.Spec.Rename) || federation.RenameApplied(fo) ||
		len(fo.Status.KeyHistory) == 0 {
		return nil
	}
	if _, reason, msg := federation.CheckRename(fo, federation.MustKey(federation.CurrentKey(fo).PublicKeyPEM), now); reason != "" {
		return refuseOperator(fo, field.Invalid(spec.Child("rename"), omit, reason+": "+msg))
	}
	return nil
}

// validateRegistrationRename refuses a registration whose spec.rename the controller would
// refuse: not signed by pub, the key it registers, for pub's operator ID.
func validateRegistrationRename(fo *fv1.FederationOperator, pub ed25519.PublicKey, id fv1.OperatorID, now time.Time) error {
	if fo.Spec.Rename == nil {
		return nil
	}
	check := &fv1.FederationOperator{Spec: fv1.FederationOperatorSpec{Rename: fo.Spec.Rename}}
	check.Status.OperatorID = id
	if _, reason, msg := federation.CheckRename(check, pub, now); reason != "" {
		return refuseOperator(fo, field.Invalid(field.NewPath("spec", "rename"), omit, reason+": "+msg))
	}
	return nil
}
