// Package v1alpha1 holds the federation.cairn.dev/v1alpha1 API: the Federation that GitOps
// configures, the FederationOperator each organization registers, the Submission read from
// each chain export, and the CrossAnchor record that binds them under one signed hash.
//
// +kubebuilder:object:generate=true
// +groupName=federation.cairn.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "federation.cairn.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
