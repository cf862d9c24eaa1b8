package witnessd_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	fnote "github.com/transparency-dev/formats/note"
	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-dev/cairn/internal/witnessd"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// tessera's own witness client (the gateway its appender runs before it publishes a
// checkpoint) gets Cairn's witness to cosign a tessera log as it grows, learning the size
// the witness holds from its 409s and sending tessera's own consistency proofs; the
// published checkpoints carry cosignatures transparency-dev's verifier accepts.
func TestTesseraWitnessesThroughCairnsWitness(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logSkey, logVkey, err := note.GenerateKey(rand.Reader, "cairn.test/tessera-log")
	if err != nil {
		t.Fatal(err)
	}
	logKey, err := witness.ParseLogKey(logVkey)
	if err != nil {
		t.Fatal(err)
	}
	wSkey, wVkey, err := witness.GenerateSignerKey("member-b.example/witness", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cosigner, err := witness.ParseSignerKey(wSkey)
	if err != nil {
		t.Fatal(err)
	}
	w, err := witnessd.Open(witnessd.Options{Cosigner: cosigner, Logs: []witness.LogKey{logKey}, StatePath: filepath.Join(t.TempDir(), "w.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()

	group, err := tessera.NewWitnessGroupFromPolicy(fmt.Appendf(nil, "witness w %s %s\nquorum w\n", wVkey, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(logSkey)
	if err != nil {
		t.Fatal(err)
	}
	driver, err := posix.New(ctx, posix.Config{Path: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	appender, shutdown, reader, err := tessera.NewAppender(ctx, driver, tessera.NewAppendOptions().
		WithCheckpointSigner(signer).
		WithBatching(1, 10*time.Millisecond).
		WithCheckpointInterval(100*time.Millisecond).
		WithWitnesses(group, &tessera.WitnessOptions{Timeout: 5 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = shutdown(ctx) }()
	await := tessera.NewPublicationAwaiter(ctx, reader.ReadCheckpoint, 10*time.Millisecond)
	verifier, err := fnote.NewVerifierForCosignatureV1(wVkey)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		_, cp, err := await.Await(ctx, appender.Add(ctx, tessera.NewEntry(fmt.Appendf(nil, "entry %d", i))))
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if _, err := note.Open(cp, note.VerifierList(verifier)); err != nil {
			t.Fatalf("the checkpoint tessera published after entry %d carries no valid cosignature of Cairn's witness: %v\n%s", i, err, cp)
		}
	}
	latest, ok, err := w.Latest(ctx, "cairn.test/tessera-log")
	if err != nil || !ok {
		t.Fatalf("the witness holds no checkpoint of the log: %v", err)
	}
	t.Logf("the witness's latest:\n%s", latest)
}
