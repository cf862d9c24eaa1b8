package install

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// refusal is how the API server words an authorization or admission refusal, as every
// logged Kubernetes error carries it: `secrets is forbidden: User "..." cannot watch ...`.
const refusal = "is forbidden:"

// refusals collects what the manager and client-go log, to find refusals that leave no
// other trace: an informer that may list but not watch keeps retrying, an Event the
// API server refuses is dropped, and neither fails a request.
type refusals struct {
	mu    sync.Mutex
	lines []string
}

// captureRefusals routes controller-runtime's, client-go's (klog) and the federation
// API's (slog) logs into a new collector until the test ends. The loggers are global:
// no other test of the package may run a manager at the same time.
func captureRefusals(t *testing.T) *refusals {
	r := &refusals{}
	logger := funcr.New(func(prefix, args string) {
		if strings.Contains(args, refusal) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.lines = append(r.lines, prefix+" "+args)
		}
	}, funcr.Options{Verbosity: 4})
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	saved := slog.Default()
	slog.SetDefault(slog.New(logr.ToSlogHandler(logger)))
	t.Cleanup(func() {
		klog.ClearLogger()
		slog.SetDefault(saved)
	})
	return r
}

// err reports every refusal logged so far; nil when there was none.
func (r *refusals) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) == 0 {
		return nil
	}
	return fmt.Errorf("the manager was refused %d times:\n%s", len(r.lines), strings.Join(r.lines, "\n"))
}

// check fails the test with every refusal logged so far.
func (r *refusals) check(t *testing.T) {
	t.Helper()
	if err := r.err(); err != nil {
		t.Error(err)
	}
}
