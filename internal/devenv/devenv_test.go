package devenv

import (
	"slices"
	"strings"
	"testing"
)

func TestLoadCRDsDecodesEveryKind(t *testing.T) {
	crds, err := LoadCRDs()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range crds {
		if c.Spec.Group != "federation.cairn.dev" {
			t.Errorf("%s: group %q", c.Name, c.Spec.Group)
		}
		kinds = append(kinds, c.Spec.Names.Kind)
	}
	slices.Sort(kinds)
	want := []string{"CrossAnchor", "Federation", "FederationOperator", "Submission"}
	if !slices.Equal(kinds, want) {
		t.Errorf("embedded CRDs are for %v, want %v", kinds, want)
	}
}

func TestStartWithoutBinariesSaysWhatToRun(t *testing.T) {
	_, err := Start(t.Context(), Options{Dir: t.TempDir(), AssetsDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver not found") || !strings.Contains(err.Error(), "hack/setup-envtest.sh") {
		t.Fatalf("Start with an empty assets directory: got %v", err)
	}
}
