package api

import "github.com/cairn-dev/cairn/internal/openapi"

// The OpenAPI schema builder lives in internal/openapi, shared with the federation API;
// these names keep this package's route declarations short.
type (
	schema     = openapi.Schema
	fieldDocs  = openapi.FieldDocs
	components = openapi.Components
)

var newComponents = openapi.NewComponents
