package tlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/witnessd/witnesstest"
	"github.com/cairn-dev/cairn/pkg/witness"
)

func startWitnesses(t testing.TB, n int, logKey string) []*witnesstest.Witness {
	t.Helper()
	vkey, err := LogVerifierKey(logKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out []*witnesstest.Witness
	for i := range n {
		w, err := witnesstest.Start(fmt.Sprintf("w%d.member.example", i), vkey, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		out = append(out, w)
	}
	return out
}

func policyOf(t testing.TB, k int, ws []*witnesstest.Witness) *witness.Policy {
	t.Helper()
	p, err := witness.ParsePolicy([]byte(witnesstest.Policy(k, ws...)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func openWitnessedLog(t testing.TB, dir string, p *witness.Policy) *Embedded {
	t.Helper()
	l, err := OpenEmbedded(t.Context(), EmbeddedOptions{Dir: dir, PrivateKey: testLogKey, Witnesses: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

// waitWitnessing waits until cond holds of the log's witnessing status.
func waitWitnessing(t testing.TB, l *Embedded, what string, cond func(WitnessingStatus) bool) WitnessingStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, _ := l.Witnessing()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %+v", what, s)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func upload(t testing.TB, l *Embedded, n int) *Entry {
	t.Helper()
	body, _ := record(t, n)
	e, err := l.Upload(t.Context(), body)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Three witnesses, two of three required: the log's entries come to be proven against
// checkpoints two witnesses cosigned; with one witness down they still are, and with two
// down the log goes on uploading and the status says who is missing.
func TestWitnessedLogMeetsTwoOfThree(t *testing.T) {
	ws := startWitnesses(t, 3, testLogKey)
	p := policyOf(t, 2, ws)
	l := openWitnessedLog(t, t.TempDir(), p)
	meets := func(e *Entry) bool {
		v, err := p.Check([]byte(e.Bundle.Verification.InclusionProof.Checkpoint))
		return err == nil && v.Satisfied
	}
	e := upload(t, l, 1)
	s := waitWitnessing(t, l, "a cosigned checkpoint", func(s WitnessingStatus) bool { return s.Satisfied() && s.WitnessedSize == uint64(e.Index+1) })
	again, err := l.Entry(t.Context(), e.Index)
	if err != nil || !meets(again) {
		t.Fatalf("the entry is not proven against a cosigned checkpoint: %v\n%s", err, again.Bundle.Verification.InclusionProof.Checkpoint)
	}
	if _, err := l.Verify(t.Context(), &again.Bundle); err != nil {
		t.Fatalf("a bundle with cosignatures does not verify under the log key: %v", err)
	}
	if s.Policy != "2 of (w0.member.example, w1.member.example, w2.member.example)" {
		t.Errorf("policy %q", s.Policy)
	}

	ws[2].Stop()
	e = upload(t, l, 2)
	waitWitnessing(t, l, "2 of 3 with one witness down", func(s WitnessingStatus) bool {
		return s.Satisfied() && s.WitnessedSize == uint64(e.Index+1) && s.Witnesses[2].Error != ""
	})
	if again, _ := l.Entry(t.Context(), e.Index); !meets(again) {
		t.Fatal("with one witness down, the entry is not proven against a cosigned checkpoint")
	}

	ws[1].Stop()
	start := time.Now()
	e = upload(t, l, 3)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("an upload with the quorum down took %v", d)
	}
	s = waitWitnessing(t, l, "the quorum missed", func(s WitnessingStatus) bool {
		return s.Size == uint64(e.Index+1) && s.Witnesses[0].CosignedSize == s.Size && s.Witnesses[1].Error != ""
	})
	if s.Satisfied() || s.WitnessedSize >= s.Size {
		t.Fatalf("one cosignature of three met a 2-of-3 policy: %+v", s)
	}
	if again, _ := l.Entry(t.Context(), e.Index); meets(again) {
		t.Fatal("an entry is claimed witnessed with one cosignature")
	}
	// The older entries keep their cosigned proofs.
	if again, _ := l.Entry(t.Context(), 0); !meets(again) {
		t.Fatal("an entry under the last cosigned checkpoint lost its cosignatures")
	}
}

// A log whose directory is restored from an old copy and grown otherwise (a fork) is
// refused by every witness, which says so with both checkpoints; the cosigned checkpoint
// file never holds a cosignature of the forked tree.
func TestWitnessesRefuseAForkedLog(t *testing.T) {
	ws := startWitnesses(t, 3, testLogKey)
	p := policyOf(t, 2, ws)
	dir := filepath.Join(t.TempDir(), "log")
	l := openWitnessedLog(t, dir, p)
	for n := range 3 {
		upload(t, l, n)
	}
	waitWitnessing(t, l, "size 3 cosigned", func(s WitnessingStatus) bool { return s.WitnessedSize == 3 })
	backup := copyLogDir(t, l, dir)
	l = openWitnessedLog(t, dir, p)
	for n := 3; n < 6; n++ {
		upload(t, l, n)
	}
	waitWitnessing(t, l, "size 6 cosigned by all", func(s WitnessingStatus) bool {
		return s.WitnessedSize == 6 && s.Witnesses[0].CosignedSize == 6 && s.Witnesses[1].CosignedSize == 6 && s.Witnesses[2].CosignedSize == 6
	})
	putBack(t, l, dir, backup)
	l = openWitnessedLog(t, dir, p)
	for n := 100; n < 102; n++ { // size 5: behind what the witnesses cosigned
		upload(t, l, n)
	}
	waitWitnessing(t, l, "the rollback refused", func(s WitnessingStatus) bool {
		return s.Size == 5 && allSplit(s, "larger than the log's 5")
	})
	for n := 102; n < 105; n++ { // size 8: past it, on another tree
		upload(t, l, n)
	}
	s := waitWitnessing(t, l, "the fork refused", func(s WitnessingStatus) bool {
		return s.Size == 8 && allSplit(s, "not consistent with the cosigned checkpoint")
	})
	if s.Satisfied() || s.WitnessedSize == 8 {
		t.Fatalf("the forked checkpoint counts as witnessed: %+v", s)
	}
	for i, w := range ws {
		cs, err := w.Witnessd().Conflicts(t.Context(), "cairn.test/embedded")
		if err != nil || len(cs) != 1 || !strings.Contains(cs[0].Cosigned, "\n6\n") || !strings.Contains(cs[0].Offered, "\n8\n") {
			t.Fatalf("witness %d's evidence: %+v, %v", i, cs, err)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, WitnessedCheckpointFile))
	if strings.Contains(string(raw), "\n8\n") || strings.Contains(string(raw), "\n5\n") {
		t.Fatalf("the cosigned checkpoint file holds the forked tree:\n%s", raw)
	}
}

func allSplit(s WitnessingStatus, want string) bool {
	for _, w := range s.Witnesses {
		if !strings.Contains(w.SplitView, want) {
			return false
		}
	}
	return len(s.Witnesses) > 0
}

// BenchmarkWitnessedUpload is the latency from an upload to a proof of it that meets a
// policy of 2 of 3 local witnesses: the upload, the next witnessing round (at most a
// checkpoint interval away) and the witnesses' answers. It also reports how many bytes
// the cosignatures add to a checkpoint, so to each receipt's log proof.
func BenchmarkWitnessedUpload(b *testing.B) {
	ws := startWitnesses(b, 3, testLogKey)
	dir := b.TempDir()
	l := openWitnessedLog(b, dir, policyOf(b, 2, ws))
	var afterUpload time.Duration
	b.ResetTimer()
	for i := range b.N {
		e := upload(b, l, i)
		uploaded := time.Now()
		waitWitnessing(b, l, "the entry witnessed", func(s WitnessingStatus) bool { return s.WitnessedSize > uint64(e.Index) })
		afterUpload += time.Since(uploaded)
	}
	b.StopTimer()
	b.ReportMetric(float64(afterUpload.Microseconds())/1000/float64(b.N), "ms-after-upload/op")
	waitWitnessing(b, l, "all three cosigned", func(s WitnessingStatus) bool {
		return s.Satisfied() && s.Witnesses[0].CosignedSize == s.Size && s.Witnesses[1].CosignedSize == s.Size && s.Witnesses[2].CosignedSize == s.Size
	})
	cosigned, err := os.ReadFile(filepath.Join(dir, CosignedCheckpointFile))
	if err != nil {
		b.Fatal(err)
	}
	plain, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(cosigned)-len(plain)), "cosignature-bytes")
}

// copyLogDir closes l and copies its directory dir, as a backup of the stopped log.
func copyLogDir(t testing.TB, l *Embedded, dir string) string {
	t.Helper()
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(backup, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return backup
}

// putBack closes l and puts the copy backup in place of its directory dir: a restore
// from an old backup.
func putBack(t testing.TB, l *Embedded, dir, backup string) {
	t.Helper()
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(backup, dir); err != nil {
		t.Fatal(err)
	}
}
