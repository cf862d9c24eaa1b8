package client

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Defaults of a Client's retry policy and limits.
const (
	// DefaultMaxAttempts is how many times a request is sent at most, the first included.
	DefaultMaxAttempts = 4
	// DefaultBaseBackoff is the wait before the first retry; each later wait doubles.
	DefaultBaseBackoff = 500 * time.Millisecond
	// MaxBackoff caps every wait between attempts, Retry-After included.
	MaxBackoff = 60 * time.Second
	// MaxResponseBytes is the largest response body the client reads.
	MaxResponseBytes = 64 << 20
)

// Client calls one federation's API. It is safe for concurrent use.
type Client struct {
	base        *url.URL
	http        *http.Client
	operatorID  string
	keyMu       sync.RWMutex // guards key, which RotateKey replaces
	key         ed25519.PrivateKey
	adminToken  string
	maxAttempts int
	baseBackoff time.Duration
	now         func() time.Time
	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
	// retryNotice, when set, is told of each retry before its wait (WithRetryNotice).
	retryNotice func(RetryNotice)
}

// Option configures a Client.
type Option func(*Client) error

// New returns a client of the federation API served at baseURL, such as
// "https://federation.example.org" (the /federation paths are appended to it).
// It returns an error if baseURL is not an absolute http or https URL or an option is
// invalid.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("client: service URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: service URL %q is not an absolute http or https URL", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: service URL %q has a query or fragment", baseURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	c := &Client{
		base:        u,
		http:        http.DefaultClient,
		maxAttempts: DefaultMaxAttempts,
		baseBackoff: DefaultBaseBackoff,
		now:         time.Now,
		sleep:       sleepCtx,
	}
	for _, opt := range opts {
		if err := opt(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// WithHTTPClient makes the client send its requests with hc (timeouts, TLS, proxies).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("client: nil HTTP client")
		}
		c.http = hc
		return nil
	}
}

// operatorIDPattern is the form of an operator ID: "op_" and 16 lowercase hex.
var operatorIDPattern = regexp.MustCompile(`^op_[0-9a-f]{16}$`)

// WithOperator sets the operator the client acts as: its ID, as registered, and its
// current Ed25519 private key. Before any rotation the ID is protocol.OperatorID of the
// key's public half; an operator keeps that ID after rotating its key (docs/PROTOCOL.md
// §8), so the two need not match.
func WithOperator(id string, key ed25519.PrivateKey) Option {
	return func(c *Client) error {
		if len(key) != ed25519.PrivateKeySize {
			return fmt.Errorf("client: Ed25519 private key is %d bytes, want %d", len(key), ed25519.PrivateKeySize)
		}
		if !operatorIDPattern.MatchString(id) {
			return fmt.Errorf("client: operator ID %q is not op_ and 16 lowercase hex", id)
		}
		c.operatorID, c.key = id, key
		return nil
	}
}

// WithAdminToken sets the federation's admin token, sent by Anchor.
func WithAdminToken(token string) Option {
	return func(c *Client) error {
		if token == "" || strings.ContainsAny(token, "\r\n") {
			return errors.New("client: admin token is empty or holds a line break")
		}
		c.adminToken = token
		return nil
	}
}

// WithRetry sets how many times a request is sent at most (1: never retried) and the
// wait before the first retry, doubled for each later one and capped at MaxBackoff.
func WithRetry(maxAttempts int, baseBackoff time.Duration) Option {
	return func(c *Client) error {
		if maxAttempts < 1 || baseBackoff < 0 {
			return fmt.Errorf("client: retry needs at least one attempt and a non-negative backoff, got %d and %s", maxAttempts, baseBackoff)
		}
		c.maxAttempts, c.baseBackoff = maxAttempts, baseBackoff
		return nil
	}
}

// WithClock sets the clock that dates bearer tokens and signed statements.
func WithClock(now func() time.Time) Option {
	return func(c *Client) error {
		if now == nil {
			return errors.New("client: nil clock")
		}
		c.now = now
		return nil
	}
}

// OperatorID returns the ID of the operator the client acts as, or "" if none was set.
func (c *Client) OperatorID() string { return c.operatorID }

// operatorKey returns the operator's current key, nil if none was set.
func (c *Client) operatorKey() ed25519.PrivateKey {
	c.keyMu.RLock()
	defer c.keyMu.RUnlock()
	return c.key
}

// sleepCtx waits d, or until ctx is done (then it returns ctx's error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
