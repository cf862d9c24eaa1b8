package otlp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestSealFailures checks the answer to a Seal that fails: 503 with Retry-After when a
// retry may succeed, 500 when it cannot, a google.rpc.Status in the request's encoding,
// and nothing sealed; the same request then seals in full once the chain takes it.
func TestSealFailures(t *testing.T) {
	ctx := context.Background()
	request := protoRequest(t, genAISpan("a"), genAISpan("b"), genAISpan("c"))

	t.Run("busy database", func(t *testing.T) {
		srv, sealer := newServer(t)
		sealer.err = errors.New("database is locked (5) (SQLITE_BUSY)")
		for _, contentType := range []string{protobufType, jsonType} {
			body := request
			if contentType == jsonType {
				body = []byte(handWrittenJSON)
			}
			resp, out := post(t, srv, body, map[string]string{"Content-Type": contentType})
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "5" {
				t.Fatalf("%s: %s, Retry-After %q: %q", contentType, resp.Status, resp.Header.Get("Retry-After"), out)
			}
			st := decodeStatus(t, resp, out)
			if codes.Code(st.GetCode()) != codes.Unavailable || !strings.Contains(st.GetMessage(), "nothing was sealed") ||
				!strings.Contains(st.GetMessage(), "SQLITE_BUSY") {
				t.Errorf("%s: status %d %q", contentType, st.GetCode(), st.GetMessage())
			}
		}
		if st, err := sealer.store.Stats(ctx); err != nil || st.Entries != 0 {
			t.Fatalf("chain has %d entries (%v) after failed seals", st.Entries, err)
		}

		sealer.err = nil // the database is free again: the client's retry lands, once
		resp, out := post(t, srv, request, map[string]string{"Content-Type": protobufType})
		if resp.StatusCode != http.StatusOK || len(out) != 0 {
			t.Fatalf("retry: %s %q", resp.Status, out)
		}
		if n := verifyFull(t, sealer.store); n != 3 {
			t.Fatalf("chain has %d entries after the retry, want 3", n)
		}
	})

	t.Run("chain refuses valid bodies", func(t *testing.T) {
		srv, sealer := newServer(t)
		sealer.err = fmt.Errorf("seal: the chain's last entry cannot be built on: %w", protocol.ErrMalformed)
		resp, out := post(t, srv, request, map[string]string{"Content-Type": protobufType})
		if resp.StatusCode != http.StatusInternalServerError || resp.Header.Get("Retry-After") != "" {
			t.Fatalf("%s, Retry-After %q: %q", resp.Status, resp.Header.Get("Retry-After"), out)
		}
		if calls, _ := sealer.sealed(); len(calls) != 1 || calls[0] != 3 {
			t.Fatalf("Seal calls %v, want one of 3: no body is at fault, so no second try", calls)
		}
	})

	t.Run("closed store", func(t *testing.T) {
		srv, sealer := newServer(t)
		if err := sealer.store.Close(); err != nil {
			t.Fatal(err)
		}
		resp, out := post(t, srv, request, map[string]string{"Content-Type": protobufType})
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s: %q", resp.Status, out)
		}
	})

	t.Run("read-only store", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "chain.db")
		rw, err := store.Open(path, testSecret)
		if err != nil {
			t.Fatal(err)
		}
		if err := rw.Close(); err != nil {
			t.Fatal(err)
		}
		ro, err := store.Open(path, nil) // no secret: Seal fails with ErrNoSecret, forever
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ro.Close() })
		srv, _ := serve(t, &recordingSealer{store: ro})
		resp, out := post(t, srv, request, map[string]string{"Content-Type": protobufType})
		if resp.StatusCode != http.StatusInternalServerError || resp.Header.Get("Retry-After") != "" {
			t.Fatalf("%s, Retry-After %q: %q", resp.Status, resp.Header.Get("Retry-After"), out)
		}
		if st := decodeStatus(t, resp, out); codes.Code(st.GetCode()) != codes.Internal ||
			!strings.Contains(st.GetMessage(), store.ErrNoSecret.Error()) {
			t.Errorf("status %d %q", st.GetCode(), st.GetMessage())
		}
		if st, err := ro.Stats(ctx); err != nil || st.Entries != 0 {
			t.Fatalf("chain has %d entries (%v)", st.Entries, err)
		}
	})
}
