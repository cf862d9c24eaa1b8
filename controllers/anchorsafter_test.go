package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// A restored federation numbers its anchors after the one its annotation names, on that
// day only; a value it cannot read, or a day still to come, stops the run rather than
// risk an ID the federation it was restored from gave another anchor.
func TestAnchorsAfter(t *testing.T) {
	const today = "anchor-20261126-"
	cases := map[string]struct {
		annotations map[string]string
		want        int
		wantErr     bool
	}{
		"absent":              {},
		"today":               {annotations: map[string]string{fv1.AnchorsAfterAnnotation: "anchor-20261126-002"}, want: 2},
		"an earlier day":      {annotations: map[string]string{fv1.AnchorsAfterAnnotation: "anchor-20261125-017"}},
		"a later day":         {annotations: map[string]string{fv1.AnchorsAfterAnnotation: "anchor-20261127-001"}, wantErr: true},
		"empty":               {annotations: map[string]string{fv1.AnchorsAfterAnnotation: ""}, wantErr: true},
		"a name":              {annotations: map[string]string{fv1.AnchorsAfterAnnotation: "crossanchor/anchor-20261126-002"}, wantErr: true},
		"not a date":          {annotations: map[string]string{fv1.AnchorsAfterAnnotation: "anchor-20261399-002"}, wantErr: true},
		"a signed sequence":   {annotations: map[string]string{fv1.AnchorsAfterAnnotation: "anchor-20261126-+12"}, wantErr: true},
		"a sequence too long": {annotations: map[string]string{fv1.AnchorsAfterAnnotation: "anchor-20261126-0002"}, wantErr: true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Annotations: c.annotations}}
			got, err := anchorsAfter(fed, today)
			if (err != nil) != c.wantErr || got != c.want {
				t.Errorf("anchorsAfter = %d, %v; want %d, error %t", got, err, c.want, c.wantErr)
			}
		})
	}
}
