package install

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cairn-dev/cairn/test/testcluster"
)

// configDir is the repository's config/.
var configDir = filepath.Join("..", "..", "config")

// managedNamespace is where config/default installs the manager and the one namespace it
// manages.
const managedNamespace = "cairn-system"

// assetsDir is the directory of kube-apiserver, etcd and kubectl.
func assetsDir(t *testing.T) string { return testcluster.AssetsDir(t) }

// cluster is one envtest API server and an administrator's access to it.
type cluster struct {
	t          *testing.T
	cfg        *rest.Config
	admin      client.Client
	kubeconfig string
}

// startCluster starts env for the test and stops it when the test ends.
func startCluster(t *testing.T, env *envtest.Environment) *cluster {
	t.Helper()
	c := testcluster.Start(t, env, "install-admin")
	return &cluster{t: t, cfg: c.Config, admin: c.Admin, kubeconfig: c.Kubeconfig}
}

// kubectl runs envtest's kubectl as the administrator, with stdin (nil: none), and
// returns its stdout, its stderr and how it exited.
func (c *cluster) kubectl(stdin []byte, args ...string) (stdout, stderr string, err error) {
	c.t.Helper()
	return runKubectl(c.t, stdin, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
}

func runKubectl(t *testing.T, stdin []byte, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(assetsDir(t), "kubectl"), args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// render builds the kustomization in dir with kubectl's kustomize and decodes every
// object it renders.
func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	out, stderr, err := runKubectl(t, nil, "kustomize", dir)
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr)
	}
	objs, err := decodeAll([]byte(out))
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	return objs
}

// decodeAll decodes a stream of YAML documents.
func decodeAll(stream []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// ofKind keeps the objects of objs whose kind is one of kinds.
func ofKind(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var kept []*unstructured.Unstructured
	for _, o := range objs {
		if slices.Contains(kinds, o.GetKind()) {
			kept = append(kept, o)
		}
	}
	return kept
}

// only returns the one object of kind in objs, and fails the test unless there is
// exactly one.
func only(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	found := ofKind(objs, kind)
	if len(found) != 1 {
		names := make([]string, len(found))
		for i, o := range found {
			names[i] = o.GetName()
		}
		t.Fatalf("rendered %d objects of kind %s (%s), want one", len(found), kind, strings.Join(names, ", "))
	}
	return found[0]
}
