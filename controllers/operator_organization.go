package controllers

import (
	"context"
	"crypto/ed25519"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The organization an operator shows (federation.ShownOrganization) is what it signed:
// the name its proof of possession signs, recorded at registration, then each rename
// (spec.rename, protocol.Rename) its current key signs, recorded and logged like a key
// rotation. A spec.orgName or spec.contact nobody signed changes nothing shown; the
// OrganizationVerified condition and a Warning Event report it.

// registerOrganization records, for fo whose proof of possession over spec.orgName has
// just verified under pub, the registration's name and, when spec.rename verifies under
// pub, the rename it came with (the contact it signs). Records equal to those held are
// kept as they are, so a Pending operator reconciled again changes nothing.
func (r *FederationOperatorReconciler) registerOrganization(fo *fv1.FederationOperator, pub ed25519.PublicKey) {
	fingerprint := fv1.Hash(protocol.Fingerprint(pub))
	want := []fv1.OrganizationRecord{{OrgName: fo.Spec.OrgName, KeyFingerprint: fingerprint}}
	status, reason, msg := metav1.ConditionTrue, fv1.ReasonOrganizationSigned, "the name is the one the proof of possession signs"
	if registrationChallenge(fo) != nil {
		msg = "the name is the one sent with the signed challenge the federation took for this registration"
	}
	if fo.Spec.Rename != nil {
		held := fo.Status.Organization
		fo.Status.Organization = nil // a registration's rename is checked against nothing older
		rec, why, refusal := federation.CheckRename(fo, pub, r.now())
		fo.Status.Organization = held
		if rec != nil {
			want = append(want, *rec)
			reason, msg = fv1.ReasonRenamed, "the rename sent with the registration verifies: its name and contact are shown"
		} else {
			status, reason, msg = metav1.ConditionFalse, why, "the rename sent with the registration is refused; the registration's name is shown, no contact: "+refusal
		}
	} else if fo.Spec.Contact != "" {
		status, reason, msg = metav1.ConditionFalse, fv1.ReasonOrganizationUnsigned, "spec.contact is signed by nothing and not shown: sign it with spec.rename"
	}
	if !sameOrganization(fo.Status.Organization, want) {
		now := metav1.NewTime(r.now())
		for i := range want {
			want[i].AcceptedAt = now
		}
		fo.Status.Organization = want
	}
	setOrganizationCondition(fo, status, reason, msg)
}

// sameOrganization reports whether two lists of records state the same names, contacts
// and signatures by the same keys.
func sameOrganization(a, b []fv1.OrganizationRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.OrgName != y.OrgName || x.Contact != y.Contact || x.At != y.At || x.Signature != y.Signature || x.KeyFingerprint != y.KeyFingerprint {
			return false
		}
	}
	return true
}

// followOrganization applies to a registered fo a spec.rename its current key signed
// and that is later than the rename in force, and reports a spec that states what no
// signature covers. An operator registered before status.organization existed first
// adopts its spec.orgName when its proof of possession signs it under its first key.
func (r *FederationOperatorReconciler) followOrganization(_ context.Context, fo *fv1.FederationOperator) (*event, error) {
	if len(fo.Status.Organization) == 0 {
		adoptRegistrationName(fo)
	}
	if fo.Spec.Rename != nil && !federation.RenameApplied(fo) {
		return r.rename(fo), nil
	}
	if why := federation.UnsignedOrganization(fo); why != "" {
		return organizationWarning(fo, fv1.ReasonOrganizationUnsigned, "Rename", why), nil
	}
	if c := meta.FindStatusCondition(fo.Status.Conditions, string(fv1.ConditionOrganizationVerified)); c == nil || c.Status != metav1.ConditionTrue {
		setOrganizationCondition(fo, metav1.ConditionTrue, fv1.ReasonOrganizationSigned, "the spec states the organization the federation shows")
	}
	return nil, nil
}

// rename applies fo's spec.rename, or records why it is refused.
func (r *FederationOperatorReconciler) rename(fo *fv1.FederationOperator) *event {
	pub := federation.MustKey(federation.CurrentKey(fo).PublicKeyPEM)
	rec, reason, msg := federation.CheckRename(fo, pub, r.now())
	if rec == nil {
		return organizationWarning(fo, reason, "Rename", "rename refused, nothing shown changes: "+msg)
	}
	rec.AcceptedAt = metav1.NewTime(r.now())
	if !federation.AppendOrganization(fo, *rec) {
		return organizationWarning(fo, fv1.ReasonRenameInvalid, "Rename",
			fmt.Sprintf("rename refused: %d renames wait for the transparency log; send it again once they are logged", federation.MaxOrganizationRecords))
	}
	note := fmt.Sprintf("renamed to %s, contact %s (signed at %s)", protocol.Quote(rec.OrgName), protocol.Quote(rec.Contact), rec.At)
	setOrganizationCondition(fo, metav1.ConditionTrue, fv1.ReasonRenamed, note)
	return &event{corev1.EventTypeNormal, fv1.ReasonRenamed, "Rename", note}
}

// adoptRegistrationName records, for an operator registered before status.organization
// existed, its spec.orgName when its proof of possession signs it under its first key:
// the name its registration record logged. Otherwise it records nothing, and nothing is
// shown until a signed rename.
func adoptRegistrationName(fo *fv1.FederationOperator) {
	if len(fo.Status.KeyHistory) == 0 {
		return
	}
	first := fo.Status.KeyHistory[0]
	pub := federation.MustKey(first.PublicKeyPEM)
	if pub == nil || protocol.VerifyRegistration(pub, fo.Spec.OrgName, string(fo.Spec.ProofOfPossession)) != nil {
		return
	}
	rec := fv1.OrganizationRecord{OrgName: fo.Spec.OrgName, KeyFingerprint: first.Fingerprint, AcceptedAt: first.ValidFrom}
	if fo.Status.RegisteredAt != nil {
		rec.AcceptedAt = *fo.Status.RegisteredAt
	}
	fo.Status.Organization = []fv1.OrganizationRecord{rec}
}

// organizationWarning sets OrganizationVerified False for reason and returns its Warning
// Event.
func organizationWarning(fo *fv1.FederationOperator, reason, action, msg string) *event {
	setOrganizationCondition(fo, metav1.ConditionFalse, reason, msg)
	return &event{corev1.EventTypeWarning, reason, action, msg}
}

// setOrganizationCondition sets fo's OrganizationVerified condition.
func setOrganizationCondition(fo *fv1.FederationOperator, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionOrganizationVerified),
		Status: status, Reason: reason, Message: msg, ObservedGeneration: fo.Generation})
}

// logRenames logs, through try, each rename of fo's status the log does not hold yet, as
// a rename record naming the key that signed it.
func logRenames(fo *fv1.FederationOperator, try func(dst **fv1.LogEntry, record func(federation string) any)) {
	for i := range fo.Status.Organization {
		rec := &fo.Status.Organization[i]
		if rec.At == "" {
			continue // the registration's name: the registration record logs it
		}
		try(&rec.LogEntry, func(fed string) any {
			return protocol.RenameRecord{Type: protocol.RecordRename, Federation: fed, PublicKeyPEM: string(federation.KeyPEMOf(fo, rec.KeyFingerprint)),
				Rename: protocol.Rename{OperatorID: string(fo.Status.OperatorID), OrgName: rec.OrgName, Contact: rec.Contact,
					At: string(rec.At), Signature: string(rec.Signature)}}
		})
	}
}
