package openapi

import (
	"slices"
	"testing"
)

type inner struct {
	N int `json:"n"`
}

type outer struct {
	Plain    int     `json:"plain"`
	Pointer  *int64  `json:"pointer"`
	Omitted  *string `json:"omitted,omitempty"`
	Ref      *inner  `json:"ref" doc:"an inner one"`
	Embedded inner   `json:"embedded"`
}

// TestPointersAreNullable: encoding/json writes a nil pointer member as null unless it is
// omitempty, so such a member's schema is nullable (a $ref one through allOf, which alone
// may carry siblings); an omitempty pointer is optional instead, and a value is neither.
func TestPointersAreNullable(t *testing.T) {
	c := NewComponents()
	c.Ref("Inner", "inner", inner{}, nil)
	c.Ref("Outer", "outer", outer{}, nil)
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	s := c.Schemas()["Outer"]
	for name, want := range map[string]bool{"plain": false, "pointer": true, "omitted": false, "ref": true, "embedded": false} {
		if got := s.Properties[name].Nullable; got != want {
			t.Errorf("%s: nullable %t, want %t", name, got, want)
		}
	}
	if ref := s.Properties["ref"]; len(ref.AllOf) != 1 || ref.AllOf[0].Ref != "#/components/schemas/Inner" || ref.Ref != "" {
		t.Errorf("ref: %+v, want allOf of the Inner $ref", ref)
	}
	if slices.Contains(s.Required, "omitted") || !slices.Contains(s.Required, "pointer") {
		t.Errorf("required %v: want pointer and not omitted", s.Required)
	}
}
