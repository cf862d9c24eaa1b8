package tlog

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/witness"
)

// startOmniwitness runs transparency-dev's own witness (hack/omniwitness.sh) trusting the
// log of logKey, with fresh state, and returns its URL and cosignature verifier key. make
// test builds it and sets CAIRN_REQUIRE_OMNIWITNESS; without that the test is skipped.
func startOmniwitness(t *testing.T, logKey string) (url, vkey string) {
	t.Helper()
	if os.Getenv("CAIRN_REQUIRE_OMNIWITNESS") == "" {
		t.Skip("needs transparency-dev's witness: make test builds it (hack/omniwitness.sh build) and sets CAIRN_REQUIRE_OMNIWITNESS")
	}
	logVkey, err := LogVerifierKey(logKey)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := witness.ParseLogKey(logVkey)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	script := filepath.Join("..", "..", "hack", "omniwitness.sh")
	env := append(os.Environ(), "CAIRN_OMNIWITNESS_STATE="+filepath.Join(t.TempDir(), "omniwitness"))
	run := func(args ...string) []byte {
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hack/omniwitness.sh %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}
	out := run("up", "--origin", lk.Origin, "--log-vkey", logVkey, "--port", strconv.Itoa(port))
	t.Cleanup(func() { run("down", "--wipe") })
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "OMNIWITNESS_URL="); ok {
			url = v
		}
		if v, ok := strings.CutPrefix(sc.Text(), "OMNIWITNESS_VKEY="); ok {
			vkey = v
		}
	}
	if url == "" || vkey == "" {
		t.Fatalf("hack/omniwitness.sh up printed no URL or key:\n%s", out)
	}
	return url, vkey
}

// The other way round from internal/witnessd's tests: Cairn's embedded log has its
// checkpoints cosigned by transparency-dev's witness, through Cairn's witnessing loop
// (add-checkpoint with Cairn's consistency proofs), and Cairn's policy check accepts
// that witness's cosignatures; a log restored from an old copy of its directory is
// refused by it as well.
func TestOmniwitnessCosignsTheEmbeddedLog(t *testing.T) {
	key, err := GenerateLogKey("cairn.test/omniwitnessed")
	if err != nil {
		t.Fatal(err)
	}
	url, vkey := startOmniwitness(t, key)
	p, err := witness.ParsePolicy([]byte("witness omni " + vkey + " " + url + "\nquorum omni\n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "log")
	open := func() *Embedded {
		l, err := OpenEmbedded(t.Context(), EmbeddedOptions{Dir: dir, PrivateKey: key, Witnesses: p})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close(t.Context()) })
		return l
	}
	l := open()
	var e *Entry
	for n := range 3 { // three checkpoints, each sent with a proof from the one before
		e = upload(t, l, n)
		waitWitnessing(t, l, "omniwitness's cosignature", func(s WitnessingStatus) bool { return s.WitnessedSize == uint64(e.Index+1) })
	}
	again, err := l.Entry(t.Context(), e.Index)
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Check([]byte(again.Bundle.Verification.InclusionProof.Checkpoint))
	if err != nil || !v.Satisfied {
		t.Fatalf("Cairn does not accept omniwitness's cosignature: %+v, %v\n%s", v, err, again.Bundle.Verification.InclusionProof.Checkpoint)
	}

	// Fork: the directory put back to a copy of size 3, then grown past the 5 it saw.
	backup := copyLogDir(t, l, dir)
	l = open()
	for n := 3; n < 5; n++ {
		upload(t, l, n)
	}
	waitWitnessing(t, l, "size 5 cosigned", func(s WitnessingStatus) bool { return s.WitnessedSize == 5 })
	putBack(t, l, dir, backup)
	l = open()
	for n := 100; n < 104; n++ {
		upload(t, l, n)
	}
	s := waitWitnessing(t, l, "omniwitness's refusal of the fork", func(s WitnessingStatus) bool {
		return s.Size == 7 && strings.Contains(s.Witnesses[0].Error, "HTTP 422")
	})
	if s.Satisfied() || s.WitnessedSize == 7 {
		t.Fatalf("omniwitness cosigned a fork: %+v", s)
	}
	t.Logf("omniwitness on the fork: %s", s.Witnesses[0].Error)
}
