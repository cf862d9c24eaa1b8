package federation

import (
	"crypto/ed25519"
	"fmt"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// An operator's organization name and contact, as the federation shows them, are only
// ever what the operator signed: the name its registration's proof of possession signs,
// or a rename (protocol.Rename) signed by its current key. The FederationOperator
// controller records each in status.organization; the API and the public page show the
// last one. A spec edit nobody signed changes nothing shown.

// MaxOrganizationRecords is how many organization records an operator's status holds at
// most (the CRD's limit); keptRenames is how many logged renames the controller keeps.
const (
	MaxOrganizationRecords = 64
	keptRenames            = 16
)

// ShownOrganization returns the organization name and contact the federation shows of
// fo: the last of status.organization. ok is false when the federation verified none
// (an operator registered before status.organization existed whose spec no longer holds
// the name its proof of possession signs); then nothing is shown.
func ShownOrganization(fo *fv1.FederationOperator) (orgName, contact string, ok bool) {
	n := len(fo.Status.Organization)
	if n == 0 {
		return "", "", false
	}
	last := fo.Status.Organization[n-1]
	return last.OrgName, last.Contact, true
}

// RenameOf is fo's spec.rename as the protocol statement, naming fo's registered ID.
func RenameOf(fo *fv1.FederationOperator) protocol.Rename {
	rn := fo.Spec.Rename
	return protocol.Rename{OperatorID: string(fo.Status.OperatorID), OrgName: rn.OrgName, Contact: rn.Contact,
		At: string(rn.At), Signature: string(rn.Signature)}
}

// RenameApplied reports whether fo's spec.rename is one status.organization holds
// already (the same at and signature).
func RenameApplied(fo *fv1.FederationOperator) bool {
	rn := fo.Spec.Rename
	if rn == nil {
		return false
	}
	for _, rec := range fo.Status.Organization {
		if rec.At == rn.At && rec.Signature == rn.Signature {
			return true
		}
	}
	return false
}

// CheckRename checks fo's spec.rename (which must be set) as the controller applies it:
// signed by pub (the operator's current key; at registration, the key it registers)
// naming fo's operator ID (protocol.Rename.VerifyAs, at no later than five minutes
// after now), and at later than the at of the rename in force, so that an older
// statement sent again changes nothing. It returns the record to append, or the reason
// and message of the refusal.
func CheckRename(fo *fv1.FederationOperator, pub ed25519.PublicKey, now time.Time) (*fv1.OrganizationRecord, string, string) {
	r := RenameOf(fo)
	if err := r.VerifyAs(string(fo.Status.OperatorID), pub, now); err != nil {
		return nil, fv1.ReasonRenameInvalid, err.Error()
	}
	at, _ := r.Time() // VerifyAs parsed it
	for _, rec := range fo.Status.Organization {
		if rec.At == "" {
			continue
		}
		prev, err := time.Parse(time.RFC3339, string(rec.At))
		if err == nil && !at.After(prev) {
			return nil, fv1.ReasonRenameInvalid, fmt.Sprintf("the rename at %s is not later than the one of %s: a rename only replaces an older one", r.At, rec.At)
		}
	}
	return &fv1.OrganizationRecord{OrgName: r.OrgName, Contact: r.Contact, At: fo.Spec.Rename.At, Signature: fo.Spec.Rename.Signature,
		KeyFingerprint: fv1.Hash(protocol.Fingerprint(pub))}, "", ""
}

// AppendOrganization appends rec to fo's organization records, dropping the oldest
// logged renames past the last 16 (the registration's name stays first; the log keeps
// every rename). It reports false, appending nothing, when the records are full of
// renames the log has not taken yet.
func AppendOrganization(fo *fv1.FederationOperator, rec fv1.OrganizationRecord) bool {
	recs := fo.Status.Organization
	first := 0
	if len(recs) > 0 && recs[0].At == "" {
		first = 1 // the registration's name
	}
	for len(recs)-first >= keptRenames && recs[first].LogEntry != nil {
		recs = append(recs[:first:first], recs[first+1:]...)
	}
	if len(recs) >= MaxOrganizationRecords {
		return false
	}
	recs = append(recs, rec)
	fo.Status.Organization = recs
	return true
}

// UnsignedOrganization says what fo's spec states of its organization that no signature
// covers and the federation therefore does not show: a spec.orgName other than the name
// the registration's proof of possession signs, or, without spec.rename, a spec.contact
// other than the contact shown. "" when the spec states nothing unsigned.
func UnsignedOrganization(fo *fv1.FederationOperator) string {
	recs := fo.Status.Organization
	if len(recs) == 0 {
		return fmt.Sprintf("spec.orgName %s is not the name the registration's proof of possession signs; no name is shown until a signed rename",
			protocol.Quote(fo.Spec.OrgName))
	}
	if recs[0].At == "" && fo.Spec.OrgName != recs[0].OrgName {
		return fmt.Sprintf("spec.orgName %s is not the name the registration signed (%s): rename with a signed spec.rename",
			protocol.Quote(fo.Spec.OrgName), protocol.Quote(recs[0].OrgName))
	}
	if _, contact, _ := ShownOrganization(fo); fo.Spec.Rename == nil && fo.Spec.Contact != contact {
		return fmt.Sprintf("spec.contact %s is signed by nothing and not shown (shown: %s): sign it with spec.rename",
			protocol.Quote(fo.Spec.Contact), protocol.Quote(contact))
	}
	return ""
}

// RegisteredOrgName is the name fo's registration record logs: the one its proof of
// possession signs, as the controller verified it.
func RegisteredOrgName(fo *fv1.FederationOperator) string {
	if recs := fo.Status.Organization; len(recs) > 0 && recs[0].At == "" {
		return recs[0].OrgName
	}
	return fo.Spec.OrgName // registered before status.organization: logged then
}

// KeyPEMOf returns the key of fo's key history whose fingerprint is fingerprint; "" when
// none is.
func KeyPEMOf(fo *fv1.FederationOperator, fingerprint fv1.Hash) fv1.PublicKeyPEM {
	for _, k := range fo.Status.KeyHistory {
		if k.Fingerprint == fingerprint {
			return k.PublicKeyPEM
		}
	}
	return ""
}
