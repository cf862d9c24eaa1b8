package federation

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// witnessedLog signs checkpoints as a log and has three witnesses cosign them.
type witnessedLog struct {
	signer    note.Signer
	pub       ed25519.PublicKey
	witnesses []*witness.Cosigner
	policy    *witness.Policy
}

func newWitnessedLog(t *testing.T) *witnessedLog {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "cairn.test/witnessed")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	lk, err := witness.ParseLogKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	l := &witnessedLog{signer: signer, pub: lk.Public}
	text := ""
	for i := range 3 {
		sk, vk, _ := witness.GenerateSignerKey(fmt.Sprintf("w%d.example", i), rand.Reader)
		c, _ := witness.ParseSignerKey(sk)
		l.witnesses = append(l.witnesses, c)
		text += fmt.Sprintf("witness w%d %s\n", i, vk)
	}
	if l.policy, err = witness.ParsePolicy([]byte(text + "group all-of-us 2 w0 w1 w2\nquorum all-of-us\n")); err != nil {
		t.Fatal(err)
	}
	return l
}

// receipt is a receipt whose log proof's checkpoint is of size with a root from seed,
// cosigned by the first n witnesses. Only what witnessChecks reads is filled in.
func (l *witnessedLog) receipt(t *testing.T, size, seed, n int) *protocol.Receipt {
	t.Helper()
	text := fmt.Sprintf("cairn.test/witnessed\n%d\n%s\n", size, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{byte(seed)}, 32)))
	cp, err := note.Sign(&note.Note{Text: text}, l.signer)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range l.witnesses[:n] {
		line, err := c.Cosign([]byte(text), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		cp = append(cp, line...)
	}
	logID, _ := protocol.LogID(l.pub)
	b := protocol.LogBundle{LogID: logID}
	b.Verification.InclusionProof.Checkpoint = string(cp)
	raw, _ := json.Marshal(b)
	pemText, err := federation.LogKeyPEM(l.pub)
	if err != nil {
		t.Fatal(err)
	}
	return &protocol.Receipt{TLogEntry: raw, TLogPublicKeyPEM: &pemText}
}

func TestWitnessChecksRequireTheQuorum(t *testing.T) {
	l := newWitnessedLog(t)
	keys := &trustedKeys{witnesses: l.policy, witnessesFrom: "--witness-policy p", seen: clientconfig.Dir(t.TempDir())}
	checks, err := witnessChecks(l.receipt(t, 5, 1, 2), keys)
	if err != nil || len(checks) != 1 || !checks[0].OK || !strings.Contains(checks[0].Detail, "cosigned by w0.example, w1.example") {
		t.Fatalf("2 of 3: %+v, %v", checks, err)
	}
	checks, err = witnessChecks(l.receipt(t, 6, 2, 1), keys)
	if !errors.Is(err, witness.ErrNotWitnessed) || cmdutil.ExitCode(err) != cmdutil.ExitMismatch || checks[0].OK {
		t.Fatalf("1 of 3: %+v, %v", checks, err)
	}
	if _, err := witnessChecks(&protocol.Receipt{}, keys); !errors.Is(err, witness.ErrNotWitnessed) {
		t.Fatalf("no log proof: %v", err)
	}
	// Without a policy, nothing is required and no line is added.
	if checks, err := witnessChecks(l.receipt(t, 7, 3, 0), &trustedKeys{}); err != nil || checks != nil {
		t.Fatalf("no policy: %+v, %v", checks, err)
	}
}

// Two receipts whose checkpoints state one size with different roots: the second is a
// split view, reported with both checkpoints, whatever cosignatures either carries.
func TestWitnessChecksCatchASplitView(t *testing.T) {
	l := newWitnessedLog(t)
	keys := &trustedKeys{seen: clientconfig.Dir(t.TempDir())}
	if _, err := witnessChecks(l.receipt(t, 9, 1, 3), keys); err != nil {
		t.Fatal(err)
	}
	if _, err := witnessChecks(l.receipt(t, 4, 7, 0), keys); err != nil {
		t.Fatalf("a smaller checkpoint is no split view by itself: %v", err)
	}
	other := l.receipt(t, 9, 2, 3)
	checks, err := witnessChecks(other, keys)
	var split *witness.SplitViewError
	if !errors.As(err, &split) || cmdutil.ExitCode(err) != cmdutil.ExitMismatch || len(checks) != 1 || checks[0].Name != "split_view" {
		t.Fatalf("another root at size 9: %+v, %v", checks, err)
	}
	if !strings.Contains(string(split.Seen), "\n9\nAQEB") || !strings.Contains(string(split.Offered), "\n9\nAgIC") {
		t.Fatalf("the report does not state both checkpoints:\n%v", err)
	}
}
