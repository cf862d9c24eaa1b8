package tlog

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/rfc3161"
)

// RekorV2Options configures a client of a Sigstore Rekor v2 (rekor-tiles) log.
type RekorV2Options struct {
	// URL is the log's base URL, where POST /api/v2/log/entries is served. Required.
	URL string
	// ReadURL is where the log's C2SP tlog-tiles are read (checkpoint, tile/..., and
	// tile/entries/...); default URL, as Sigstore's public Rekor v2 logs serve them.
	// (rekor-server itself serves no tiles: its POSIX directory is served beside it.)
	ReadURL string
	// PublicKeyPEM is the log's checkpoint key (PKIX PEM, Ed25519 or ECDSA P-256).
	// Required: Rekor v2 serves no key, a trusted root distributes it.
	PublicKeyPEM []byte
	// TimestampURL is the RFC 3161 timestamp authority's endpoint (for Sigstore's,
	// .../api/v1/timestamp). Required: Rekor v2 entries carry no time of their own.
	TimestampURL string
	// TimestampChainPEM is the authority's certificate chain, leaf first, root last.
	TimestampChainPEM []byte
	// Timeout bounds each HTTP request; default and minimum 30s, as an upload waits for
	// the log to publish a checkpoint that holds it.
	Timeout time.Duration
	// Attempts and Backoff: see RekorOptions.
	Attempts int
	Backoff  time.Duration
	// HTTPClient, if set, sends the requests (its Timeout is left alone).
	HTTPClient *http.Client
}

// RekorV2 is a client of a Sigstore Rekor v2 log. It uploads hashedrekord 0.0.2 entries
// (the 0.0.1 bodies Cairn makes, restated; protocol.HashedRekordV2Request), asks the
// timestamp authority to timestamp each entry's signature first, and reads entries back
// through the log's tiles. Every entry it returns verifies under the log's key, and its
// timestamps under the authority's chain.
type RekorV2 struct {
	retrying
	read  *url.URL
	key   crypto.PublicKey
	tsa   string
	chain []*x509.Certificate
}

// NewRekorV2 returns a client for the log at o.URL.
func NewRekorV2(o RekorV2Options) (*RekorV2, error) {
	rt, err := newRetrying("rekor v2", o.URL, o.Timeout, o.Attempts, o.Backoff, o.HTTPClient)
	if err != nil {
		return nil, err
	}
	r := &RekorV2{retrying: rt, read: rt.base}
	if o.ReadURL != "" {
		if r.read, err = url.Parse(strings.TrimSuffix(o.ReadURL, "/")); err != nil || (r.read.Scheme != "http" && r.read.Scheme != "https") || r.read.Host == "" {
			return nil, fmt.Errorf("rekor v2 read URL %q: want http(s)://host[:port][/path]", o.ReadURL)
		}
	}
	if len(o.PublicKeyPEM) == 0 {
		return nil, fmt.Errorf("rekor v2 needs the log's public key: it serves none")
	}
	if r.key, err = protocol.ParseLogPublicKeyPEM(o.PublicKeyPEM); err != nil {
		return nil, fmt.Errorf("rekor v2 key: %w", err)
	}
	if o.TimestampURL == "" {
		return nil, fmt.Errorf("rekor v2 needs a timestamp authority: its entries carry no time")
	}
	if u, err := url.Parse(o.TimestampURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("timestamp authority URL %q: want http(s)://host[:port]/path", o.TimestampURL)
	}
	r.tsa = o.TimestampURL
	if r.chain, err = rfc3161.ParseChainPEM(o.TimestampChainPEM); err != nil {
		return nil, fmt.Errorf("timestamp authority: %w", err)
	}
	return r, nil
}

// TimestampAuthority returns the authority's certificate chain, leaf first.
func (r *RekorV2) TimestampAuthority() []*x509.Certificate { return r.chain }

// Upload timestamps body's signature, then records body as a hashedrekord 0.0.2 entry,
// and returns the entry with its proof and the timestamp. A body the log already holds
// (409 with its index, on a log that keeps an antispam index) returns that entry, read
// back through the tiles, with the new timestamp. The timestamp comes first so that a
// timestamp authority that is down records nothing.
func (r *RekorV2) Upload(ctx context.Context, body []byte) (*Entry, error) {
	request, want, err := protocol.HashedRekordV2Request(body)
	if err != nil {
		return nil, err
	}
	h, err := protocol.ParseHashedRekord(want)
	if err != nil {
		return nil, err
	}
	tsr, at, err := rfc3161.Request(ctx, r.http, r.tsa, h.Signature, r.chain)
	if err != nil {
		return nil, &UnavailableError{Op: "timestamp", Err: err}
	}
	resp, err := r.do(ctx, "upload", http.MethodPost, "/api/v2/log/entries", request)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	var e *Entry
	switch resp.StatusCode {
	case http.StatusOK, http.StatusCreated:
		e, err = r.decodeEntry(resp, want)
	case http.StatusConflict:
		index, perr := strconv.ParseInt(resp.Header.Get("X-Log-Index"), 10, 64)
		if perr != nil || index < 0 {
			return nil, &RefusedError{Status: resp.StatusCode, Message: "409 without the index of the entry the log holds: " + readMessage(resp)}
		}
		e, err = r.Entry(ctx, index)
		if err == nil && !sameRecord(mustBase64(e.Bundle.Body), want) {
			err = fmt.Errorf("rekor v2: 409 names index %d, which records another body", index)
		}
	default:
		return nil, &RefusedError{Status: resp.StatusCode, Message: readMessage(resp)}
	}
	if err != nil {
		return nil, err
	}
	e.Bundle.Verification.RFC3161Timestamps = []string{base64.StdEncoding.EncodeToString(tsr)}
	e.IntegratedTime = at
	return e, nil
}

// v2Entry is the part of Rekor v2's TransparencyLogEntry (protobuf JSON) Cairn reads.
type v2Entry struct {
	LogIndex       int64 `json:"logIndex,string"`
	InclusionProof struct {
		LogIndex   int64    `json:"logIndex,string"`
		RootHash   []byte   `json:"rootHash"`
		TreeSize   int64    `json:"treeSize,string"`
		Hashes     [][]byte `json:"hashes"`
		Checkpoint struct {
			Envelope string `json:"envelope"`
		} `json:"checkpoint"`
	} `json:"inclusionProof"`
	CanonicalizedBody []byte `json:"canonicalizedBody"`
}

// decodeEntry reads an upload's answer, checks that it records want, and verifies it.
func (r *RekorV2) decodeEntry(resp *http.Response, want []byte) (*Entry, error) {
	var te v2Entry
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxTileBytes)).Decode(&te); err != nil {
		return nil, fmt.Errorf("rekor v2: decode entry: %w", err)
	}
	if !sameRecord(te.CanonicalizedBody, want) {
		return nil, fmt.Errorf("rekor v2: the entry at index %d records another body than the one uploaded", te.LogIndex)
	}
	p := te.InclusionProof
	hashes := make([]string, len(p.Hashes))
	for i, h := range p.Hashes {
		hashes[i] = hex.EncodeToString(h)
	}
	logID, err := protocol.LogID(r.key)
	if err != nil {
		return nil, err
	}
	leaf := rfc6962.DefaultHasher.HashLeaf(te.CanonicalizedBody)
	e := &Entry{Index: te.LogIndex, UUID: hex.EncodeToString(leaf), URL: r.base.String(), Bundle: protocol.LogBundle{
		UUID: hex.EncodeToString(leaf), Body: base64.StdEncoding.EncodeToString(te.CanonicalizedBody), LogID: logID, LogIndex: te.LogIndex,
		Verification: protocol.LogVerification{InclusionProof: protocol.InclusionProof{LogIndex: p.LogIndex,
			RootHash: hex.EncodeToString(p.RootHash), TreeSize: p.TreeSize, Hashes: hashes, Checkpoint: p.Checkpoint.Envelope}}}}
	if _, err := protocol.VerifyLogBundle(&e.Bundle, protocol.LogVerifyOptions{Key: r.key}); err != nil {
		return nil, fmt.Errorf("rekor v2 entry %d: %w", te.LogIndex, err)
	}
	return e, nil
}

// sameRecord reports whether the logged body got states the same digest, signature and
// key as want, whatever its layout.
func sameRecord(got, want []byte) bool {
	a, errA := protocol.ParseHashedRekord(got)
	b, errB := protocol.ParseHashedRekord(want)
	return errA == nil && errB == nil && a.APIVersion == b.APIVersion && bytes.Equal(a.Digest, b.Digest) &&
		bytes.Equal(a.Signature, b.Signature) && a.PublicKey.Equal(b.PublicKey)
}

// Entry reads the entry at index through the log's tiles, with a proof against its
// checkpoint of now. It carries no timestamp: the one taken at upload is the caller's.
func (r *RekorV2) Entry(ctx context.Context, index int64) (*Entry, error) {
	e, err := ReadURLEntry(ctx, r.read, r.http, index, r.key)
	if err != nil {
		return nil, err
	}
	e.URL = r.base.String()
	return e, nil
}

// PublicKey returns the log's pinned key.
func (r *RekorV2) PublicKey(context.Context) (crypto.PublicKey, error) { return r.key, nil }

// Verify checks b offline against the log's key and, when b carries timestamps, the
// authority's chain.
func (r *RekorV2) Verify(_ context.Context, b *protocol.LogBundle) ([]byte, error) {
	opts := protocol.LogVerifyOptions{Key: r.key}
	if len(b.Verification.RFC3161Timestamps) > 0 {
		opts.TimestampAuthorities = [][]*x509.Certificate{r.chain}
	}
	return protocol.VerifyLogBundle(b, opts)
}

// Reachable reads the log's checkpoint and verifies it.
func (r *RekorV2) Reachable(ctx context.Context) error {
	_, _, err := r.Checkpoint(ctx)
	return err
}

// mustBase64 decodes a body Entry has verified.
func mustBase64(s string) []byte {
	b, _ := base64.StdEncoding.DecodeString(s)
	return b
}
