package tlog

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/rfc3161"
)

// The tests in this file run against a real Rekor v2 (rekor-tiles) log and timestamp
// authority started by hack/rekor-v2-up.sh, read from the environment its env file sets
// (make test sets it). Without REKOR_V2_URL they are skipped, unless
// CAIRN_REQUIRE_REKOR_V2=1 makes that a failure.

func rekorV2Options(t testing.TB) RekorV2Options {
	t.Helper()
	u := os.Getenv("REKOR_V2_URL")
	if u == "" {
		if os.Getenv("CAIRN_REQUIRE_REKOR_V2") == "1" {
			t.Fatal("REKOR_V2_URL is not set: run hack/rekor-v2-up.sh")
		}
		t.Skip("REKOR_V2_URL is not set: run hack/rekor-v2-up.sh (make test does)")
	}
	read := func(name string) []byte {
		text, err := os.ReadFile(os.Getenv(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return text
	}
	return RekorV2Options{URL: u, ReadURL: os.Getenv("REKOR_V2_READ_URL"), PublicKeyPEM: read("REKOR_V2_PUBLIC_KEY"),
		TimestampURL: os.Getenv("TSA_TIMESTAMP_URL"), TimestampChainPEM: read("TSA_CERT_CHAIN")}
}

func newRekorV2(t testing.TB, o RekorV2Options) *RekorV2 {
	t.Helper()
	r, err := NewRekorV2(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRekorV2UploadFetchVerify(t *testing.T) {
	ctx := t.Context()
	r := newRekorV2(t, rekorV2Options(t))
	body, content := record(t, int(time.Now().UnixNano()%(1<<40)))
	before := time.Now().Add(-time.Minute)
	e, err := r.Upload(ctx, body)
	if err != nil {
		t.Fatal(err)
	}
	logged, err := r.Verify(ctx, &e.Bundle)
	if err != nil {
		t.Fatalf("verify the uploaded entry: %v", err)
	}
	if !protocol.IsRekorV2Body(logged) {
		t.Errorf("the entry's body is not a hashedrekord 0.0.2: %s", logged)
	}
	if err := protocol.VerifyHashedRekord(logged, content, federationKey.Public().(ed25519.PublicKey)); err != nil {
		t.Errorf("the entry does not log the record: %v", err)
	}
	at, err := protocol.VerifyLogTimestamps(&e.Bundle, [][]*x509.Certificate{r.TimestampAuthority()})
	if err != nil || at.Before(before) || at.After(time.Now().Add(time.Minute)) || !at.Equal(e.IntegratedTime) {
		t.Errorf("the timestamp says %v (%v), the entry %v", at, err, e.IntegratedTime)
	}

	got, err := r.Entry(ctx, e.Index)
	if err != nil {
		t.Fatalf("read entry %d back: %v", e.Index, err)
	}
	if got.UUID != e.UUID || got.Bundle.Body != e.Bundle.Body || got.Index != e.Index {
		t.Errorf("entry %d read back as %+v, uploaded as %+v", e.Index, got, e)
	}
	if _, err := r.Verify(ctx, &got.Bundle); err != nil {
		t.Errorf("verify the entry read back: %v", err)
	}

	// Again, from a new client as after a crash: the same entry, a new timestamp.
	again, err := newRekorV2(t, rekorV2Options(t)).Upload(ctx, body)
	if err != nil {
		t.Fatalf("upload again: %v", err)
	}
	if again.Index != e.Index || again.Bundle.Body != e.Bundle.Body {
		t.Errorf("uploaded again at %d, first at %d", again.Index, e.Index)
	}
	if _, err := r.Entry(ctx, 1<<40); !errors.Is(err, ErrNotFound) {
		t.Errorf("entry past the end: %v, want ErrNotFound", err)
	}
}

// A timestamp that is not the authority's, or is over another signature, fails the
// bundle; so does an entry claiming a time or another index.
func TestRekorV2BundleAttacks(t *testing.T) {
	ctx := t.Context()
	r := newRekorV2(t, rekorV2Options(t))
	body, _ := record(t, int(time.Now().UnixNano()%(1<<40)))
	e, err := r.Upload(ctx, body)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := record(t, int(time.Now().UnixNano()%(1<<40))+1)
	o, err := r.Upload(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	tsr, _ := base64.StdEncoding.DecodeString(e.Bundle.Verification.RFC3161Timestamps[0])
	flipped := bytes.Clone(tsr)
	flipped[len(flipped)-10] ^= 1
	for name, change := range map[string]func(b *protocol.LogBundle){
		"timestamp of another entry": func(b *protocol.LogBundle) {
			b.Verification.RFC3161Timestamps = o.Bundle.Verification.RFC3161Timestamps
		},
		"flipped timestamp": func(b *protocol.LogBundle) {
			b.Verification.RFC3161Timestamps = []string{base64.StdEncoding.EncodeToString(flipped)}
		},
		"integrated time claimed": func(b *protocol.LogBundle) { b.IntegratedTime = time.Now().Unix() },
		"another log index":       func(b *protocol.LogBundle) { b.LogIndex++ },
	} {
		t.Run(name, func(t *testing.T) {
			b := e.Bundle
			change(&b)
			if _, err := r.Verify(ctx, &b); err == nil {
				t.Fatal("verified")
			}
		})
	}
}

// With the timestamp authority down nothing is logged, and the error says to retry.
func TestRekorV2TimestampAuthorityDown(t *testing.T) {
	o := rekorV2Options(t)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	o.TimestampURL = down.URL
	r := newRekorV2(t, o)
	body, _ := record(t, int(time.Now().UnixNano()%(1<<40)))
	size := func() uint64 {
		cp, _, err := r.Checkpoint(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return cp.Size
	}
	was := size()
	_, err := r.Upload(t.Context(), body)
	var se *rfc3161.StatusError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &se) {
		t.Fatalf("upload with the authority down: %v, want ErrUnavailable with its status", err)
	}
	time.Sleep(300 * time.Millisecond)
	if now := size(); now != was {
		t.Errorf("the log grew from %d to %d", was, now)
	}
}

// BenchmarkRekorV2Upload uploads distinct records to the local Rekor v2, one at a time and
// 32 at once: each upload is a timestamp, then the log's wait for a checkpoint that covers
// it (rekor-server looks once a second). ms/upload is what one anchor waits; uploads/s
// what the federation gets through.
func BenchmarkRekorV2Upload(b *testing.B) {
	o := rekorV2Options(b)
	r := newRekorV2(b, o)
	base := int(time.Now().UnixNano() % (1 << 40))
	var next atomic.Int64
	for _, parallel := range []int{1, 32} {
		b.Run(fmt.Sprintf("parallel=%d", parallel), func(b *testing.B) {
			var wg sync.WaitGroup
			var spent atomic.Int64
			start := time.Now()
			for range parallel {
				wg.Go(func() {
					for i := next.Add(1); i <= int64(b.N)*int64(parallel); i = next.Add(1) {
						body, _ := record(b, base+int(i))
						began := time.Now()
						if _, err := r.Upload(context.Background(), body); err != nil {
							b.Error(err)
							return
						}
						spent.Add(int64(time.Since(began)))
					}
				})
			}
			wg.Wait()
			n := float64(b.N * parallel)
			b.ReportMetric(float64(spent.Load())/n/1e6, "ms/upload")
			b.ReportMetric(n/time.Since(start).Seconds(), "uploads/s")
			next.Store(0)
			base += b.N * parallel
		})
	}
}
