package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// verdictDrill is the part of the restore drill that issue 33 added: three operators on
// which the federation decided something before the backup, and a thief. After the
// documented backup and restore, the federation used to forget each decision: a key
// rotated out (because it leaked) registered again under its victim's operator ID, the
// API's suspension was lifted, the withdrawn operator came back Active and the rotated
// one Rejected. The log keeps them now (controllers/recordbook.go).
type verdictDrill struct {
	rotated, suspended, withdrawn *operatorMachine
	ids                           map[*operatorMachine]string
}

// operatorIDPattern finds an operator ID in a command's output.
var operatorIDPattern = regexp.MustCompile(`op_[0-9a-f]{16}`)

// newVerdictDrill registers the drill's three operators with the federation at base,
// before its key rotates, so that their registrations are signed by its first key.
func newVerdictDrill(t *testing.T, base string) *verdictDrill {
	t.Helper()
	d := &verdictDrill{ids: map[*operatorMachine]string{}}
	for _, m := range []**operatorMachine{&d.rotated, &d.suspended, &d.withdrawn} {
		o := newOperatorMachine(t, fmt.Sprintf("Drill Org %d", len(d.ids)))
		out := o.mustRun("federation", "register", "--service", base, "--org", o.org,
			"--public-key", o.path("keys/public.pem"), "--private-key", o.path("keys/private.pem"))
		if d.ids[o] = operatorIDPattern.FindString(out); d.ids[o] == "" {
			t.Fatalf("%s: no operator ID in\n%s", o.org, out)
		}
		*m = o
	}
	return d
}

// machines lists the drill's operators.
func (d *verdictDrill) machines() []*operatorMachine {
	return []*operatorMachine{d.rotated, d.suspended, d.withdrawn}
}

// decide has the federation decide on each operator: one rotates its key (the old key is
// kept, as a thief would have it), one is suspended through the admin API, one
// withdraws. Each is waited for until the log has it.
func (d *verdictDrill) decide(api *apiClient, token string) {
	d.rotated.mustRun("keygen", "--output-dir", d.rotated.path("new-keys"))
	d.rotated.mustRun("federation", "rotate-key", "--new-private-key", d.rotated.path("new-keys/private.pem"))
	var answer struct {
		Phase string `json:"phase"`
	}
	api.do(http.MethodPost, "/federation/operator/"+d.ids[d.suspended]+"/suspend", []byte(`{"reason":"incident 9"}`), "Bearer "+token, http.StatusOK, &answer)
	if answer.Phase != "Suspended" {
		api.t.Fatalf("suspend: phase %s", answer.Phase)
	}
	d.withdrawn.mustRun("federation", "withdraw", "--yes")
}

// check proves, on the restored federation (kubeconfig, API at api), that every decision
// holds: the rotated operator is Active under its new key with both keys in its history,
// the thief's registration of the rotated-out key is refused, the suspended operator is
// suspended (its submission refused) and the API's suspension is back in the
// Federation's status, and the withdrawn operator is Withdrawn (its submission refused).
func (d *verdictDrill) check(ctx context.Context, t *testing.T, kubeconfig, base string) {
	t.Helper()
	field := func(o *operatorMachine, jsonpath string) string {
		return kubectl(t, kubeconfig, "get", "fo", "-o", fmt.Sprintf(`jsonpath={.items[?(@.status.operatorID==%q)]%s}`, d.ids[o], jsonpath))
	}
	waitFor(ctx, t, "the rotated operator back with both keys", "Active 2", func() string {
		return field(d.rotated, ".status.phase") + " " + fmt.Sprint(len(strings.Fields(field(d.rotated, ".status.keyHistory[*].fingerprint"))))
	})
	waitFor(ctx, t, "the suspended operator still suspended", "Suspended", func() string { return field(d.suspended, ".status.phase") })
	waitFor(ctx, t, "the withdrawn operator still withdrawn", "Withdrawn", func() string { return field(d.withdrawn, ".status.phase") })
	if got := kubectl(t, kubeconfig, "get", "fed", "cairn", "-o", "jsonpath={.status.apiSuspensions[*].operatorID}"); got != d.ids[d.suspended] {
		t.Errorf("the restored Federation's API suspensions: %q, want %s", got, d.ids[d.suspended])
	}

	// The thief holds the rotated operator's first key.
	thief := newOperatorMachine(t, "Thief Org")
	for _, f := range []string{"keys/private.pem", "keys/public.pem"} {
		if err := os.WriteFile(thief.path(f), readFile(t, d.rotated.path(f)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, out := thief.run("federation", "register", "--service", base, "--org", thief.org,
		"--public-key", thief.path("keys/public.pem"), "--private-key", thief.path("keys/private.pem"))
	if code == 0 || !strings.Contains(out, "key_already_registered") {
		t.Errorf("the rotated-out key registered again after the restore: exit %d\n%s", code, out)
	}

	for o, refusal := range map[*operatorMachine]string{d.suspended: "operator_suspended", d.withdrawn: "operator_withdrawn"} {
		o.seal(2)
		if code, out := o.run("federation", "submit", "--db", o.db); code != 1 || !strings.Contains(out, refusal) {
			t.Errorf("%s's submission after the restore: exit %d, want 1 with %s\n%s", o.org, code, refusal, out)
		}
	}
	for o, want := range map[*operatorMachine]string{d.rotated: "Active", d.suspended: "Suspended", d.withdrawn: "Withdrawn"} {
		if got := field(o, ".status.phase"); got != want {
			t.Errorf("%s is %s after the thief and the refused submissions, want %s", o.org, got, want)
		}
	}
}
