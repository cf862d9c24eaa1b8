package federation

import (
	"fmt"
	"strings"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// WitnessPolicyText is fed's witness policy in the text form verifiers take
// (`cairn federation verify --witness-policy`), "" when it has none: one witness line each,
// then a group of quorum of them.
func WitnessPolicyText(fed *fv1.Federation) string {
	p := fed.Spec.TransparencyLog.Witnesses
	if p == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The witness policy of Federation %s/%s: %d of %d.\n", fed.Namespace, fed.Name, p.Quorum, len(p.Witnesses))
	names := make([]string, len(p.Witnesses))
	for i, w := range p.Witnesses {
		fmt.Fprintf(&b, "witness %s %s %s\n", w.Name, w.Key, w.URL)
		names[i] = w.Name
	}
	fmt.Fprintf(&b, "group federation %d %s\nquorum federation\n", p.Quorum, strings.Join(names, " "))
	return b.String()
}

// WitnessPolicy returns fed's witness policy, nil when it has none; a key that is not a
// witness's verifier key is an error naming it.
func WitnessPolicy(fed *fv1.Federation) (*witness.Policy, error) {
	text := WitnessPolicyText(fed)
	if text == "" {
		return nil, nil
	}
	p, err := witness.ParsePolicy([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("spec.transparencyLog.witnesses: %w", err)
	}
	return p, nil
}
