package tlog

import (
	"bytes"
	"cmp"
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// PublicRekorURL is the public Sigstore Rekor instance, the default log for production.
const PublicRekorURL = "https://rekor.sigstore.dev"

// RekorOptions configures a Rekor client.
type RekorOptions struct {
	// URL is the server's base URL; default PublicRekorURL.
	URL string
	// PublicKeyPEM pins the log's key (PKIX PEM, as the Federation spec holds it). Without
	// it, the key is fetched once from /api/v1/log/publicKey.
	PublicKeyPEM []byte
	// Timeout bounds each HTTP request; default and minimum 30s, as a busy public log
	// can be slow to answer.
	Timeout time.Duration
	// Attempts is how many times a request is tried while the log answers 429, 5xx or
	// not at all; default 4. Waits double from Backoff (default 1s), or follow Retry-After.
	Attempts int
	Backoff  time.Duration
	// HTTPClient, if set, sends the requests (its Timeout is left alone).
	HTTPClient *http.Client
}

// Rekor is a client of a Sigstore Rekor v1 server.
type Rekor struct {
	retrying

	keyMu sync.Mutex
	key   crypto.PublicKey // pinned or fetched; nil until known
}

// NewRekor returns a client for the server at o.URL.
func NewRekor(o RekorOptions) (*Rekor, error) {
	rt, err := newRetrying("rekor", cmp.Or(o.URL, PublicRekorURL), o.Timeout, o.Attempts, o.Backoff, o.HTTPClient)
	if err != nil {
		return nil, err
	}
	r := &Rekor{retrying: rt}
	if o.PublicKeyPEM != nil {
		if r.key, err = protocol.ParseLogPublicKeyPEM(o.PublicKeyPEM); err != nil {
			return nil, fmt.Errorf("pinned rekor key: %w", err)
		}
	}
	return r, nil
}

// rekorEntries is Rekor's LogEntry: one entry under its UUID.
type rekorEntries map[string]protocol.LogBundle

// Upload records body (a hashedrekord, which is also Rekor's proposed entry) and returns
// the entry, checked offline. "Already exists" (409) fetches the entry the log holds.
func (r *Rekor) Upload(ctx context.Context, body []byte) (*Entry, error) {
	resp, err := r.do(ctx, "upload", http.MethodPost, "/api/v1/log/entries", body)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	switch resp.StatusCode {
	case http.StatusCreated:
		return r.decodeEntry(ctx, resp, body)
	case http.StatusConflict:
		loc := resp.Header.Get("Location")
		if loc == "" {
			return nil, &RefusedError{Status: resp.StatusCode, Message: "409 without a Location header"}
		}
		u, err := r.base.Parse(loc)
		if err != nil || u.Host != r.base.Host {
			return nil, fmt.Errorf("rekor: 409 names an entry elsewhere: %q", loc)
		}
		existing, err := r.do(ctx, "read existing entry", http.MethodGet, u.Path, nil)
		if err != nil {
			return nil, err
		}
		defer drain(existing)
		if existing.StatusCode != http.StatusOK {
			return nil, &UnavailableError{Op: "read existing entry", Err: statusError(existing)}
		}
		return r.decodeEntry(ctx, existing, body)
	default:
		return nil, &RefusedError{Status: resp.StatusCode, Message: readMessage(resp)}
	}
}

// Entry returns the entry at index.
func (r *Rekor) Entry(ctx context.Context, index int64) (*Entry, error) {
	resp, err := r.do(ctx, "read entry", http.MethodGet, "/api/v1/log/entries?logIndex="+strconv.FormatInt(index, 10), nil)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	switch resp.StatusCode {
	case http.StatusOK:
		return r.decodeEntry(ctx, resp, nil)
	case http.StatusNotFound:
		return nil, fmt.Errorf("%w: rekor index %d", ErrNotFound, index)
	}
	return nil, fmt.Errorf("rekor: read entry %d: %w", index, statusError(resp))
}

// decodeEntry reads a LogEntry response, verifies it offline and, when want is not nil,
// checks that it records want.
func (r *Rekor) decodeEntry(ctx context.Context, resp *http.Response, want []byte) (*Entry, error) {
	var entries rekorEntries
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&entries); err != nil {
		return nil, fmt.Errorf("rekor: decode entry: %w", err)
	}
	if len(entries) != 1 {
		return nil, fmt.Errorf("rekor: response holds %d entries, want 1", len(entries))
	}
	for uuid, b := range entries {
		b.UUID = uuid
		if b.Verification.InclusionProof.Hashes == nil {
			// A receipt's bundle writes an empty proof as [], never null (docs/PROTOCOL.md §8).
			b.Verification.InclusionProof.Hashes = []string{}
		}
		body, err := r.Verify(ctx, &b)
		if err != nil {
			return nil, fmt.Errorf("rekor entry %s: %w", uuid, err)
		}
		if want != nil && !bytes.Equal(body, want) {
			return nil, fmt.Errorf("rekor entry %s records another body than the one uploaded", uuid)
		}
		return &Entry{
			Index:          b.LogIndex,
			UUID:           uuid,
			URL:            r.base.JoinPath("/api/v1/log/entries", uuid).String(),
			IntegratedTime: time.Unix(b.IntegratedTime, 0),
			Bundle:         b,
		}, nil
	}
	panic("unreachable")
}

// Verify checks b offline against the log's key, requiring a signed entry timestamp.
func (r *Rekor) Verify(ctx context.Context, b *protocol.LogBundle) ([]byte, error) {
	key, err := r.PublicKey(ctx)
	if err != nil {
		return nil, err
	}
	return protocol.VerifyLogBundle(b, protocol.LogVerifyOptions{Key: key})
}

// PublicKey returns the pinned key, or fetches the log's once.
func (r *Rekor) PublicKey(ctx context.Context) (crypto.PublicKey, error) {
	r.keyMu.Lock()
	defer r.keyMu.Unlock()
	if r.key != nil {
		return r.key, nil
	}
	resp, err := r.do(ctx, "fetch public key", http.MethodGet, "/api/v1/log/publicKey", nil)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, &UnavailableError{Op: "fetch public key", Err: statusError(resp)}
	}
	text, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, &UnavailableError{Op: "fetch public key", Err: err}
	}
	if r.key, err = protocol.ParseLogPublicKeyPEM(text); err != nil {
		return nil, fmt.Errorf("rekor public key: %w", err)
	}
	return r.key, nil
}

// Reachable asks the log for its tree head.
func (r *Rekor) Reachable(ctx context.Context) error {
	resp, err := r.do(ctx, "reach", http.MethodGet, "/api/v1/log", nil)
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return &UnavailableError{Op: "reach", Err: statusError(resp)}
	}
	return nil
}
