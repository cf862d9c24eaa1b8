package v1alpha1

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorSuspension is one operator the federation's administrators suspend, and why.
type OperatorSuspension struct {
	// operatorID is the suspended operator.
	// +required
	OperatorID OperatorID `json:"operatorID"`

	// reason says why, for the operator (its refused submissions quote it) and the log.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.trim() != ''",message="reason must not be blank"
	Reason string `json:"reason"`
}

// APISuspension is a suspension made through POST /federation/operator/{id}/suspend.
type APISuspension struct {
	OperatorSuspension `json:",inline"`

	// suspendedAt is when the API recorded it.
	// +optional
	SuspendedAt metav1.Time `json:"suspendedAt,omitzero"`
}

// Suspension sources, as status and the API name them.
const (
	// SuspensionSourceGitOps is spec.suspendedOperators of the Federation.
	SuspensionSourceGitOps = "gitops"
	// SuspensionSourceAPI is status.apiSuspensions of the Federation.
	SuspensionSourceAPI = "api"
)

// Suspension returns why the federation suspends operator id, and which sources
// ("gitops", "api", in that order) hold it: the union of spec.suspendedOperators and
// status.apiSuspensions. The reason joins both sources' reasons with "; ". No sources
// means the operator is not suspended. Nothing of the operator's own object counts.
func (f *Federation) Suspension(id OperatorID) (reason string, sources []string) {
	var reasons []string
	if i := slices.IndexFunc(f.Spec.SuspendedOperators, func(s OperatorSuspension) bool { return s.OperatorID == id }); i >= 0 {
		reasons, sources = append(reasons, f.Spec.SuspendedOperators[i].Reason), append(sources, SuspensionSourceGitOps)
	}
	if i := slices.IndexFunc(f.Status.APISuspensions, func(s APISuspension) bool { return s.OperatorID == id }); i >= 0 {
		reasons, sources = append(reasons, f.Status.APISuspensions[i].Reason), append(sources, SuspensionSourceAPI)
	}
	return strings.Join(slices.Compact(reasons), "; "), sources
}

// SuspensionAction is what a suspension record did.
// +kubebuilder:validation:Enum=Suspend;Resume
type SuspensionAction string

// Suspension actions.
const (
	// ActionSuspend moved the operator from Active to Suspended.
	ActionSuspend SuspensionAction = "Suspend"
	// ActionResume moved it back to Active, its head unchanged.
	ActionResume SuspensionAction = "Resume"
)

// SuspensionRecord is one suspension or resumption of an operator, as the federation
// logged it.
type SuspensionRecord struct {
	// action is Suspend or Resume.
	// +required
	Action SuspensionAction `json:"action"`

	// at is when the controller applied it, RFC 3339 UTC seconds, exactly as logged.
	// +required
	At Timestamp `json:"at"`

	// reason is the suspension's reason; empty for a resumption.
	// +optional
	// +kubebuilder:validation:MaxLength=1100
	Reason string `json:"reason,omitempty"`

	// sources are where the suspension came from: gitops, api, or both.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	Sources []string `json:"sources,omitempty"`

	// logEntry records it in the transparency log; unset until the log took it.
	// +optional
	LogEntry *LogEntry `json:"logEntry,omitempty"`
}
