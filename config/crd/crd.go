// Package crd embeds the generated CustomResourceDefinitions, so `cairn dev` installs the
// same bytes that `kubectl apply -k config/crd` would, from any working directory.
package crd

import "embed"

// Bases holds config/crd/bases/*.yaml, one CRD per file, as controller-gen wrote them.
//
//go:embed bases/*.yaml
var Bases embed.FS
