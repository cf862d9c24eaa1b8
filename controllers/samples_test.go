package controllers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	federationv1alpha1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/config/admission"
)

const samplesDir = "../config/samples"

// decodeSample decodes one file of config/samples into obj.
func decodeSample(file string, obj client.Object) error {
	raw, err := os.ReadFile(filepath.Join(samplesDir, file))
	if err != nil {
		return err
	}
	return yaml.UnmarshalStrict(raw, obj)
}

// sample decodes one file of config/samples into a fresh object of its kind.
func sample[T client.Object](file string, obj T) T {
	Expect(decodeSample(file, obj)).To(Succeed())
	return obj
}

func sampleFederation() *federationv1alpha1.Federation {
	return sample("federation_v1alpha1_federation.yaml", &federationv1alpha1.Federation{})
}

func sampleOperator() *federationv1alpha1.FederationOperator {
	return sample("federation_v1alpha1_federationoperator.yaml", &federationv1alpha1.FederationOperator{})
}

func sampleSubmission() *federationv1alpha1.Submission {
	return sample("federation_v1alpha1_submission.yaml", &federationv1alpha1.Submission{})
}

func sampleCrossAnchor() *federationv1alpha1.CrossAnchor {
	return sample("federation_v1alpha1_crossanchor.yaml", &federationv1alpha1.CrossAnchor{})
}

// kubectl runs the kubectl that hack/setup-envtest.sh built, as a cluster administrator.
type kubectl struct{ path, kubeconfig string }

// newKubectl is a person's: an administrator, whom the admission policy still refuses the
// creation of CrossAnchors and Submissions and status writes.
func newKubectl() kubectl { return newKubectlAs("sample-admin") }

// newManagerKubectl acts as the federation manager, whom the admission policy lets through.
func newManagerKubectl() kubectl { return newKubectlAs(admission.ManagerUsername) }

func newKubectlAs(user string) kubectl {
	admin, err := testEnv.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kc, err := admin.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(os.WriteFile(path, kc, 0o600)).To(Succeed())
	return kubectl{path: filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), kubeconfig: path}
}

func (k kubectl) run(args ...string) string {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(k.path, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	Expect(cmd.Run()).To(Succeed(), "kubectl %v: %s", args, stderr.String())
	return stdout.String()
}

// tryRun runs kubectl and returns what it printed on stdout and on stderr, whether or not
// it failed.
func (k kubectl) tryRun(args ...string) (stdout, stderr string) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(k.path, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	_ = cmd.Run() // the caller judges the output
	return out.String(), errOut.String()
}

// fails runs kubectl, requires it to fail and returns what it printed on stderr.
func (k kubectl) fails(args ...string) string {
	GinkgoHelper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(k.path, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	Expect(cmd.Run()).NotTo(Succeed(), "kubectl %v succeeded: %s", args, stdout.String())
	return stderr.String()
}

var _ = Describe("config/samples", func() {
	It("applies with kubectl and shows the printer columns", func() {
		ns := newNamespace()
		k := newKubectl()

		out := k.run("apply", "-n", ns, "-f", samplesDir+"/federation_v1alpha1_federation.yaml",
			"-f", samplesDir+"/federation_v1alpha1_federationoperator.yaml")
		Expect(out).To(ContainSubstring("federation.federation.cairn.dev/cairn created"))
		Expect(out).To(ContainSubstring("federationoperator.federation.cairn.dev/acme-research created"))
		// Submissions and CrossAnchors are the federation's records: a person's are refused.
		records := []string{"-f", samplesDir + "/federation_v1alpha1_submission.yaml", "-f", samplesDir + "/federation_v1alpha1_crossanchor.yaml"}
		Expect(k.fails(append([]string{"apply", "-n", ns}, records...)...)).To(And(
			ContainSubstring(refusedSubmission), ContainSubstring(refusedCrossAnchor)))
		out = newManagerKubectl().run(append([]string{"apply", "-n", ns}, records...)...)
		Expect(out).To(ContainSubstring("submission.federation.cairn.dev/sub-032760a40378d8c2-1 created"))
		Expect(out).To(ContainSubstring("crossanchor.federation.cairn.dev/anchor-20261121-001 created"))

		By("waiting for the controllers to register the operator and accept its submission")
		Eventually(func() string { return k.run("get", "fo", "-n", ns) }).Should(And(
			MatchRegexp(`NAME\s+ORG\s+OPERATOR ID\s+PHASE\s+LAST SUBMISSION\s+AGE`),
			MatchRegexp(`acme-research\s+Acme Research\s+op_032760a40378d8c2\s+Active\s+sub-032760a40378d8c2-1\s+\d+s`)))
		Expect(k.run("get", "fo", "-n", ns, "-o", "wide")).To(MatchRegexp(`LAST SUBMISSION\s+READY\s+AGE`))

		Expect(k.run("get", "fed", "-n", ns)).To(MatchRegexp(
			`NAME\s+INTERVAL\s+LOG\s+OPERATORS\s+PENDING\s+LAST ANCHOR\s+READY\s+AGE\ncairn\s+6h\s+embedded\s`))
		Expect(k.run("get", "sub", "-n", ns)).To(MatchRegexp(
			`NAME\s+OPERATOR\s+FIRST\s+LAST\s+ENTRIES\s+ANCHOR\s+READY\s+AGE\nsub-032760a40378d8c2-1\s+op_032760a40378d8c2\s+1\s+42\s+42\s`))
		Expect(k.run("get", "xa", "-n", ns)).To(MatchRegexp(
			`NAME\s+ANCHORED AT\s+PHASE\s+LOG INDEX\s+READY\s+AGE\nanchor-20261121-001\s+2026-11-21T18:00:00.000000000Z\s`))
		Expect(k.run("get", "cairn", "-n", ns, "-o", "name")).To(And(
			ContainSubstring("federation.federation.cairn.dev/cairn"),
			ContainSubstring("crossanchor.federation.cairn.dev/anchor-20261121-001")))
	})

	It("installs config/default, the manifests a cluster gets, on a real API server", func() {
		k := newKubectl()
		// envtest runs no cert-manager: its two kinds are refused, everything else applies.
		// The webhook configuration goes at once: its Service has no manager behind it, and
		// failurePolicy Fail would refuse every later spec's operators and submissions.
		DeferCleanup(func() {
			k.run("delete", "validatingwebhookconfiguration", "cairn-validating-webhook-configuration", "--ignore-not-found")
		})
		out, stderr := k.tryRun("apply", "-k", "../config/default")
		Expect(stderr).To(And(ContainSubstring(`no matches for kind "Certificate" in version "cert-manager.io/v1"`),
			ContainSubstring(`no matches for kind "Issuer" in version "cert-manager.io/v1"`)))
		Expect(strings.Count(stderr, "no matches for kind")).To(Equal(2), stderr)
		for _, want := range []string{
			"namespace/cairn-system", "serviceaccount/cairn-manager", "clusterrole.rbac.authorization.k8s.io/cairn-manager-role",
			"role.rbac.authorization.k8s.io/cairn-leader-election", "deployment.apps/cairn-manager", "service/cairn-metrics",
			"persistentvolumeclaim/cairn-tlog",
			"validatingadmissionpolicy.admissionregistration.k8s.io/cairn-federation-manager-only",
			"validatingadmissionpolicybinding.admissionregistration.k8s.io/cairn-federation-manager-only",
			"service/cairn-webhook-service", "validatingwebhookconfiguration.admissionregistration.k8s.io/cairn-validating-webhook-configuration",
		} {
			Expect(out).To(ContainSubstring(want))
		}
		// cert-manager injects the CA of the Certificate named here, whose DNS names must be
		// the Service the webhooks call, as namePrefix and namespace renamed it.
		Expect(k.run("get", "validatingwebhookconfiguration", "cairn-validating-webhook-configuration", "-o",
			`jsonpath={.metadata.annotations.cert-manager\.io/inject-ca-from} {.webhooks[*].clientConfig.service.namespace}/{.webhooks[*].clientConfig.service.name}`)).
			To(Equal("cairn-system/cairn-serving-cert cairn-system cairn-system cairn-system/cairn-webhook-service cairn-webhook-service cairn-webhook-service"),
				"each of the three webhooks")
		built := k.run("kustomize", "../config/default")
		Expect(built).To(And(ContainSubstring("  name: cairn-serving-cert\n  namespace: cairn-system\n"),
			ContainSubstring("- cairn-webhook-service.cairn-system.svc\n"), ContainSubstring("name: cairn-selfsigned-issuer\n")))
		Expect(k.run("get", "deployment", "cairn-manager", "-n", "cairn-system", "-o",
			"jsonpath={.spec.template.spec.containers[0].args}")).To(ContainSubstring("--enable-webhooks"))
		// namePrefix renamed the policy: a binding naming the old name would bind nothing.
		Expect(k.run("get", "validatingadmissionpolicybinding", "cairn-federation-manager-only", "-o", "jsonpath={.spec.policyName}")).
			To(Equal("cairn-federation-manager-only"))
	})
})
