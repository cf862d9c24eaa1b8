// Package openapi describes Go types as OpenAPI 3.0 schemas by reflection, so that an
// HTTP API's documented bodies and its response types cannot drift apart. cairn serve's
// /openapi.json and the federation's /federation/openapi.json are both built on it.
package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Schema is an OpenAPI 3.0 Schema Object, as much of it as the service's types need.
type Schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Description          string             `json:"description,omitempty"`
	Enum                 []string           `json:"enum,omitempty"`
	Nullable             bool               `json:"nullable,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	Default              any                `json:"default,omitempty"`
	Example              any                `json:"example,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties any                `json:"additionalProperties,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`
}

// FieldDocs describes the members of a type whose fields carry no doc tags (a type of
// another package), by JSON name: its Description, Enum, Example and Nullable are merged
// into the member's schema.
type FieldDocs map[string]Schema

// Components is the document's components.schemas: schemas built from Go types by
// reflection, so a response type and its description cannot drift apart.
//
// A struct field's JSON name and omitempty come from its json tag (members without
// omitempty are required); its description from a doc tag, its allowed values from an
// enum tag (comma-separated), its format from a format tag and an example value from an
// example tag (JSON).
type Components struct {
	schemas map[string]*Schema
	names   map[reflect.Type]string
	err     error // the first type that could not be described; Err returns it
}

// Err returns the first error met while describing a type: a type no schema describes,
// an example that is not JSON, or one type registered under two names.
func (c *Components) Err() error { return c.err }

// Schemas returns the registered schemas by name, for the document's components.schemas.
func (c *Components) Schemas() map[string]*Schema { return c.schemas }

// fail records the first error of the document's construction.
func (c *Components) fail(format string, args ...any) *Schema {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
	return &Schema{}
}

// NewComponents returns an empty set of schemas.
func NewComponents() *Components {
	return &Components{schemas: map[string]*Schema{}, names: map[reflect.Type]string{}}
}

// Ref registers the Schema of v's type as component name, unless it is registered, and
// returns a reference to it. Struct fields whose type is a registered component refer
// to it; register nested types first.
func (c *Components) Ref(name, description string, v any, docs FieldDocs) *Schema {
	t := reflect.TypeOf(v)
	if registered, ok := c.names[t]; ok {
		if registered != name {
			return c.fail("type %s is registered as Schema %s and %s", t, registered, name)
		}
		return &Schema{Ref: "#/components/schemas/" + name}
	}
	s := c.of(t, docs)
	s.Description = description
	c.schemas[name], c.names[t] = s, name
	return &Schema{Ref: "#/components/schemas/" + name}
}

// Optional drops members from the required list of component name, registered before:
// members a type of another package decodes without omitempty but does not need.
func (c *Components) Optional(name string, members ...string) {
	s := c.schemas[name]
	if s == nil {
		c.fail("optional members of Schema %s, which is not registered", name)
		return
	}
	s.Required = slices.DeleteFunc(s.Required, func(m string) bool { return slices.Contains(members, m) })
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	timeType       = reflect.TypeFor[time.Time]()
)

// of builds the Schema of t.
func (c *Components) of(t reflect.Type, docs FieldDocs) *Schema {
	if name, ok := c.names[t]; ok {
		return &Schema{Ref: "#/components/schemas/" + name}
	}
	switch {
	case t == rawMessageType:
		return &Schema{} // any JSON value
	case t == timeType:
		return &Schema{Type: "string", Format: "date-time"} // encoding/json writes RFC 3339
	case t.Kind() == reflect.Pointer:
		return c.of(t.Elem(), docs)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return &Schema{Type: "string", Format: "byte"}
	case t.Kind() == reflect.Slice:
		return &Schema{Type: "array", Items: c.of(t.Elem(), nil)}
	case t.Kind() == reflect.Map:
		return &Schema{Type: "object", AdditionalProperties: c.of(t.Elem(), nil)}
	case t.Kind() == reflect.Struct:
		return c.object(t, docs)
	case t.Kind() == reflect.Interface:
		return &Schema{}
	}
	switch t.Kind() {
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return &Schema{Type: "integer", Format: "int64"}
	case reflect.Int32, reflect.Int16, reflect.Int8, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		return &Schema{Type: "integer", Format: "int32"}
	case reflect.Float64, reflect.Float32:
		return &Schema{Type: "number", Format: "double"}
	}
	return c.fail("no Schema for Go type %s", t)
}

// object builds the Schema of struct type t from its exported, JSON-encoded fields.
func (c *Components) object(t reflect.Type, docs FieldDocs) *Schema {
	s := &Schema{Type: "object", Properties: map[string]*Schema{}}
	for f := range t.Fields() {
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if embedded := f.Type; f.Anonymous && name == "" && (embedded.Kind() == reflect.Struct ||
			embedded.Kind() == reflect.Pointer && embedded.Elem().Kind() == reflect.Struct) {
			// encoding/json lifts an embedded struct's members into the object; those of
			// an embedded pointer are all absent when it is nil, so none is required.
			var inner *Schema
			if embedded.Kind() == reflect.Pointer {
				inner = c.object(embedded.Elem(), docs)
				inner.Required = nil
			} else {
				inner = c.object(embedded, docs)
			}
			for k, v := range inner.Properties {
				s.Properties[k] = v
			}
			s.Required = append(s.Required, inner.Required...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		omitted := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		// encoding/json writes a nil pointer as null unless the member is omitted then.
		nilPointer := f.Type.Kind() == reflect.Pointer && !omitted
		p := c.of(f.Type, nil)
		if d := docs[name]; p.Ref != "" && (f.Tag.Get("doc") != "" || d.Description != "" || d.Nullable || nilPointer) {
			p = &Schema{AllOf: []*Schema{p}} // a $ref takes no siblings in OpenAPI 3.0
		}
		p.Nullable = nilPointer
		p.Description = f.Tag.Get("doc")
		if e := f.Tag.Get("enum"); e != "" {
			p.Enum = strings.Split(e, ",")
		}
		if format := f.Tag.Get("format"); format != "" {
			p.Format = format
		}
		if ex := f.Tag.Get("example"); ex != "" {
			if err := json.Unmarshal([]byte(ex), &p.Example); err != nil {
				c.fail("the example of %s.%s is not JSON: %w", t, f.Name, err)
			}
		}
		if d, ok := docs[name]; ok {
			if d.Description != "" {
				p.Description = d.Description
			}
			if d.Enum != nil {
				p.Enum = d.Enum
			}
			if d.Example != nil {
				p.Example = d.Example
			}
			p.Nullable = p.Nullable || d.Nullable
		}
		s.Properties[name] = p
		if !omitted {
			s.Required = append(s.Required, name)
		}
	}
	return s
}
