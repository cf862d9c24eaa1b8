// Package admission embeds config/admission, the ValidatingAdmissionPolicy that lets only
// the federation manager create CrossAnchors and Submissions and write the status of the
// federation's kinds, and nobody but the manager, the garbage collector and the namespace
// controller delete a record (a CrossAnchor, an accepted Submission) or change its owner
// references, so that `cairn dev` and the envtest suites install the same bytes that
// `kubectl apply -k config/default` does. Install applies it and waits until the API
// server enforces it.
package admission

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// ManagerUsername is the one user the policy lets make records: the manager's ServiceAccount
// `manager` once config/default has put it in namespace cairn-system and prefixed its name
// with cairn-. `cairn dev` and the envtest suites run their managers under this name with a
// client certificate, which the policy cannot tell from the ServiceAccount's token.
const ManagerUsername = "system:serviceaccount:cairn-system:cairn-manager"

// policyYAML is config/admission/policy.yaml: the policy, then its binding.
//
//go:embed policy.yaml
var policyYAML []byte

// Objects decodes the embedded policy and its binding, in that order, named as
// config/admission names them (config/default adds the prefix cairn-). Unknown fields are
// errors, so a typo in the YAML cannot silently drop a rule.
func Objects() ([]client.Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(policyYAML)))
	var objs []client.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read embedded admission policy: %w", err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, err := decode(doc)
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// decode turns one YAML document into a policy or a binding.
func decode(doc []byte) (client.Object, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, fmt.Errorf("decode embedded admission policy: %w", err)
	}
	var obj client.Object
	switch tm.Kind {
	case "ValidatingAdmissionPolicy":
		obj = &admissionregistrationv1.ValidatingAdmissionPolicy{}
	case "ValidatingAdmissionPolicyBinding":
		obj = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	default:
		return nil, fmt.Errorf("decode embedded admission policy: unexpected kind %q", tm.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, fmt.Errorf("decode embedded %s: %w", tm.Kind, err)
	}
	return obj, nil
}
