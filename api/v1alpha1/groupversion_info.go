// Package v1alpha1 holds the federation.cairn.dev/v1alpha1 API: the Federation that GitOps
// configures, the FederationOperator each organization registers, the Submission read from
// each chain export, and the CrossAnchor record that binds them under one signed hash.
//
// +kubebuilder:object:generate=true
// +groupName=federation.cairn.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "federation.cairn.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Federation{}, &FederationList{},
		&FederationOperator{}, &FederationOperatorList{},
		&Submission{}, &SubmissionList{},
		&CrossAnchor{}, &CrossAnchorList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
