package store

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// Two processes sealing into one file, as two instances of an operator's collector would.
const (
	childBatches   = 200
	childBatchSize = 5
)

func TestTwoProcessesSealOneChain(t *testing.T) {
	path := t.TempDir() + "/chain.db"
	openStore(t, path, testSecret) // create the file, so that neither child races to
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i := range outs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSealChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "CAIRN_STORE_CHILD="+path, fmt.Sprintf("CAIRN_STORE_CHILD_ID=%d", i))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("child %d: %v\n%s", i, err, out)
			}
			outs[i] = string(out)
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	s := openStore(t, path, testSecret)
	r, err := s.Verify(t.Context(), VerifyOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	const want = 2 * childBatches * childBatchSize
	if r.Checked != want || r.To != want {
		t.Fatalf("verified %+v, want %d entries", r, want)
	}
	// Each child's batches are runs of consecutive seqs, and no seq is claimed twice.
	owner := map[int64]int{}
	for i, out := range outs {
		n := 0
		for _, line := range strings.Split(out, "\n") {
			var first, last int64
			if _, err := fmt.Sscanf(line, "sealed %d-%d", &first, &last); err != nil {
				continue
			}
			n++
			if last-first+1 != childBatchSize {
				t.Errorf("child %d sealed %d-%d", i, first, last)
			}
			for seq := first; seq <= last; seq++ {
				if o, ok := owner[seq]; ok {
					t.Errorf("seq %d sealed by children %d and %d", seq, o, i)
				}
				owner[seq] = i
			}
		}
		if n != childBatches {
			t.Errorf("child %d reported %d batches, want %d", i, n, childBatches)
		}
	}
	switches := 0
	for seq := int64(2); seq <= want; seq++ {
		if owner[seq] != owner[seq-1] {
			switches++
		}
	}
	t.Logf("the writers took turns %d times", switches)
}

// TestSealChild is a child of TestTwoProcessesSealOneChain; it does nothing unless that
// test started it.
func TestSealChild(t *testing.T) {
	path := os.Getenv("CAIRN_STORE_CHILD")
	if path == "" {
		t.Skip("run by TestTwoProcessesSealOneChain")
	}
	id := os.Getenv("CAIRN_STORE_CHILD_ID")
	s := openStore(t, path, testSecret)
	for b := range childBatches {
		bodies := testBodies(int64(b*childBatchSize), childBatchSize)
		for i := range bodies {
			bodies[i].Attributes["writer"] = id
		}
		es, err := s.Seal(t.Context(), bodies)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("sealed %d-%d\n", es[0].Seq, es[len(es)-1].Seq)
	}
}

func TestConcurrentSealsAndVerifiesInOneProcess(t *testing.T) {
	s, _ := newStore(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Verify(t.Context(), VerifyOptions{Full: true}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var sealers sync.WaitGroup
	for w := range 4 {
		sealers.Go(func() {
			for b := range 50 {
				if _, err := s.Seal(t.Context(), testBodies(int64(w*1000+b*3), 3)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	sealers.Wait()
	close(stop)
	wg.Wait()
	r, err := s.Verify(t.Context(), VerifyOptions{Full: true})
	if err != nil || r.Checked != 4*50*3 {
		t.Fatalf("%+v, %v", r, err)
	}
}
