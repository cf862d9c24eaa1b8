package v1alpha1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RegistrationMode says whether a new operator needs the administrators' approval.
// +kubebuilder:validation:Enum=open;approval
type RegistrationMode string

const (
	// RegistrationOpen registers every operator whose proof of possession verifies and
	// whose key no operator holds or held: the default.
	RegistrationOpen RegistrationMode = "open"
	// RegistrationApproval keeps a new operator Pending, unregistered and unlogged, until
	// spec.approvedOperators or status.apiApprovals names it.
	RegistrationApproval RegistrationMode = "approval"
)

// OperatorApproval is one operator the federation's administrators approve.
type OperatorApproval struct {
	// operatorID is the approved operator.
	// +required
	OperatorID OperatorID `json:"operatorID"`

	// note says why or on whose word, for the administrators; it is not logged.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Note string `json:"note,omitempty"`
}

// APIApproval is an approval made through POST /federation/operator/{id}/approve.
type APIApproval struct {
	OperatorApproval `json:",inline"`

	// approvedAt is when the API recorded it.
	// +optional
	ApprovedAt metav1.Time `json:"approvedAt,omitzero"`
}

// Approval sources, as status and the API name them.
const (
	// ApprovalSourceGitOps is spec.approvedOperators of the Federation.
	ApprovalSourceGitOps = "gitops"
	// ApprovalSourceAPI is status.apiApprovals of the Federation.
	ApprovalSourceAPI = "api"
)

// RequiresApproval reports whether a new registration waits for an approval:
// spec.registration is approval. Unset is open, the default the API server writes.
func (f *Federation) RequiresApproval() bool {
	return f.Spec.Registration == RegistrationApproval
}

// Approval returns which sources ("gitops", "api", in that order) approve operator id:
// spec.approvedOperators and status.apiApprovals. None means it is not approved. An
// approval matters only while the operator is Pending (or not yet registered): once
// registered, removing it changes nothing.
func (f *Federation) Approval(id OperatorID) (sources []string) {
	if slices.ContainsFunc(f.Spec.ApprovedOperators, func(a OperatorApproval) bool { return a.OperatorID == id }) {
		sources = append(sources, ApprovalSourceGitOps)
	}
	if slices.ContainsFunc(f.Status.APIApprovals, func(a APIApproval) bool { return a.OperatorID == id }) {
		sources = append(sources, ApprovalSourceAPI)
	}
	return sources
}
