package admission

import (
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestObjectsArePolicyAndItsBinding(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("Objects: %d objects, want the policy and its binding", len(objs))
	}
	policy, ok := objs[0].(*admissionregistrationv1.ValidatingAdmissionPolicy)
	if !ok {
		t.Fatalf("first object is %T, want the policy", objs[0])
	}
	binding, ok := objs[1].(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	if !ok {
		t.Fatalf("second object is %T, want the binding", objs[1])
	}
	if binding.Spec.PolicyName != policy.Name {
		t.Errorf("binding names policy %q, the policy is %q", binding.Spec.PolicyName, policy.Name)
	}
	if !slices.Equal(binding.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("binding's actions are %v, want [Deny]", binding.Spec.ValidationActions)
	}
	// OPERATIONS tells how to patch the username at /spec/variables/0/expression.
	if v := policy.Spec.Variables; len(v) == 0 || v[0].Name != "manager" || v[0].Expression != "'"+ManagerUsername+"'" {
		t.Errorf("the policy's first variable is not the manager %q: %+v", ManagerUsername, v)
	}
}

func TestPolicyMatchesWhatOnlyTheManagerWrites(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	policy := objs[0].(*admissionregistrationv1.ValidatingAdmissionPolicy)
	matched := map[admissionregistrationv1.OperationType][]string{}
	for _, r := range policy.Spec.MatchConstraints.ResourceRules {
		if !slices.Equal(r.APIGroups, []string{"federation.cairn.dev"}) {
			t.Errorf("rule for groups %v", r.APIGroups)
		}
		for _, op := range r.Operations {
			matched[op] = append(matched[op], r.Resources...)
		}
	}
	want := map[admissionregistrationv1.OperationType][]string{
		admissionregistrationv1.Create: {"crossanchors", "submissions"},
		// Deleting a record, and changing the owner references that would let the garbage
		// collector delete it.
		admissionregistrationv1.Delete: {"crossanchors", "submissions"},
		admissionregistrationv1.Update: {"crossanchors", "crossanchors/status", "federationoperators/status", "federations/status",
			"submissions", "submissions/status"},
	}
	for op, resources := range want {
		got := slices.Sorted(slices.Values(matched[op]))
		if !slices.Equal(got, resources) {
			t.Errorf("%s matches %v, want %v", op, got, resources)
		}
	}
	if len(matched) != len(want) {
		t.Errorf("the policy matches operations %v, want only CREATE, UPDATE and DELETE", matched)
	}
	if fp := policy.Spec.FailurePolicy; fp == nil || *fp != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v, want Fail", fp)
	}
}
