package client

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// authKind is how a request authenticates.
type authKind int

const (
	authNone     authKind = iota
	authOperator          // a body-bound operator bearer token
	authAdmin             // the admin token
)

// request is one API call, sent once or more by do.
type request struct {
	method string
	path   string // already escaped, starting with "/"
	query  url.Values
	body   []byte // sent verbatim; nil for none
	// stream, when not nil, is sent instead of body: size bytes from its start, whose
	// SHA-256 is digest. Each attempt seeks it back to its start.
	stream io.ReadSeeker
	size   int64
	digest [sha256.Size]byte
	auth   authKind
	// contentType is the body's; empty means application/json.
	contentType string
}

// do sends req, retrying under the client's policy, and decodes a 2xx JSON answer into
// out (nil: the body is discarded). A refusal is an *APIError.
func (c *Client) do(ctx context.Context, req request, out any) error {
	body, err := c.send(ctx, req)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("client: %s %s: decode the answer: %w", req.method, req.path, err)
	}
	return nil
}

// send sends req until it gets an answer it does not retry, and returns a 2xx answer's
// body or the error. Answers 429 and 503 are retried, unless their Retry-After asks for
// more than MaxBackoff, and transport failures of a GET, except a connection refused or a
// name that does not resolve (an UnreachableError at once); each attempt gets a fresh token.
func (c *Client) send(ctx context.Context, req request) ([]byte, error) {
	if err := c.checkAuth(req.auth); err != nil {
		return nil, err
	}
	var last error
	for attempt := 1; ; attempt++ {
		body, retryAfter, retry, err := c.attempt(ctx, req)
		if err == nil {
			return body, nil
		}
		last = err
		// A server that asks for a longer wait than the client would ever make (a
		// registration limit an hour long) gets its answer passed on at once.
		if !retry || attempt >= c.maxAttempts || retryAfter > MaxBackoff {
			return nil, last
		}
		wait := c.backoff(attempt, retryAfter)
		if c.retryNotice != nil {
			c.retryNotice(RetryNotice{Method: req.method, Path: req.path, Attempt: attempt, MaxAttempts: c.maxAttempts, Wait: wait, Err: last})
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("client: %s %s: gave up after %d attempts: %w: %w", req.method, req.path, attempt, err, last)
		}
	}
}

// backoff is the wait after the attempt-th attempt: the server's Retry-After when it
// gave one, else the base backoff doubled for each earlier retry; capped at MaxBackoff.
func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, MaxBackoff)
	}
	d := c.baseBackoff
	for i := 1; i < attempt && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// attempt sends req once. It returns the 2xx body, or the error, the Retry-After wait
// and whether the error may be retried.
func (c *Client) attempt(ctx context.Context, req request) (body []byte, retryAfter time.Duration, retry bool, err error) {
	hreq, err := c.newHTTPRequest(ctx, req)
	if err != nil {
		return nil, 0, false, err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, false, fmt.Errorf("client: %s %s: %w", req.method, req.path, err)
		}
		if unreachable(err) { // no connection was made: retrying in seconds will not make one
			return nil, 0, false, &UnreachableError{URL: c.base.String(), Err: err}
		}
		// A POST may have been acted on: only a GET is sent again.
		return nil, 0, req.method == http.MethodGet, fmt.Errorf("client: %s %s: %w", req.method, req.path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err = readLimited(resp.Body)
	if err != nil {
		return nil, 0, false, fmt.Errorf("client: %s %s: read the answer (HTTP %d): %w", req.method, req.path, resp.StatusCode, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return body, 0, false, nil
	}
	ae := parseAPIError(resp.StatusCode, resp.Header, body, c.now())
	retry = resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
	return nil, ae.RetryAfter, retry, ae
}

// newHTTPRequest builds one attempt of req, with its Authorization made now.
func (c *Client) newHTTPRequest(ctx context.Context, req request) (*http.Request, error) {
	u := *c.base
	path, err := url.PathUnescape(req.path)
	if err != nil {
		return nil, fmt.Errorf("client: path %q: %w", req.path, err)
	}
	u.Path, u.RawPath = c.base.Path+path, c.base.EscapedPath()+req.path
	if len(req.query) > 0 {
		u.RawQuery = req.query.Encode()
	}
	var rd io.Reader
	digest := req.digest
	switch {
	case req.stream != nil:
		if _, err := req.stream.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("client: %s %s: rewind the body: %w", req.method, req.path, err)
		}
		// Not the stream itself: the transport closes a body that is an io.Closer, and
		// a retry sends the stream again.
		rd = io.LimitReader(req.stream, req.size)
	case req.body != nil:
		rd = bytes.NewReader(req.body)
		digest = sha256.Sum256(req.body)
	default:
		digest = sha256.Sum256(nil)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", req.method, req.path, err)
	}
	hreq.Header.Set("Accept", "application/json")
	if req.stream != nil {
		hreq.ContentLength = req.size
	}
	if req.body != nil || req.stream != nil {
		hreq.Header.Set("Content-Type", cmp.Or(req.contentType, "application/json"))
	}
	switch req.auth {
	case authOperator:
		tok, err := c.token(digest)
		if err != nil {
			return nil, err
		}
		hreq.Header.Set("Authorization", "Bearer "+tok)
	case authAdmin:
		hreq.Header.Set("Authorization", "Bearer "+c.adminToken)
	}
	return hreq, nil
}

// token returns the operator's bearer token for a body whose SHA-256 is digest, made now:
// protocol.SignToken over protocol.BodyDigestNonce. After a key rotation the token names
// the operator's registered ID, signed by the current key (SignToken would name the key's
// own ID).
func (c *Client) token(digest [sha256.Size]byte) (string, error) {
	key := c.operatorKey()
	nonce := protocol.BodyDigestNonce(c.now(), digest)
	if protocol.OperatorID(key.Public().(ed25519.PublicKey)) != c.operatorID {
		t := protocol.Token{OperatorID: c.operatorID, Nonce: nonce, Signature: ed25519.Sign(key, []byte(nonce))}
		return t.String(), nil
	}
	tok, err := protocol.SignToken(key, nonce)
	if err != nil {
		return "", fmt.Errorf("client: sign the bearer token: %w", err)
	}
	return tok, nil
}

// checkAuth refuses a request whose credentials the client was not given.
func (c *Client) checkAuth(kind authKind) error {
	switch {
	case kind == authOperator && c.operatorKey() == nil:
		return errors.New("client: this call acts as an operator: use WithOperator")
	case kind == authAdmin && c.adminToken == "":
		return errors.New("client: this call needs the admin token: use WithAdminToken")
	}
	return nil
}

// readLimited reads r to its end, refusing more than MaxResponseBytes.
func readLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxResponseBytes {
		return nil, fmt.Errorf("answer is over %d bytes", MaxResponseBytes)
	}
	return b, nil
}
