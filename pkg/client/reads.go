package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Status returns the federation's state: keys, counts and its last anchor.
// The answer's Raw holds its JSON as the server sent it.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	req := request{method: http.MethodGet, path: "/federation/status"}
	raw, err := c.send(ctx, req)
	if err != nil {
		return nil, err
	}
	var out Status
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("client: %s %s: decode the answer: %w", req.method, req.path, err)
	}
	out.Raw = raw
	return &out, nil
}

// PageOptions select a page of an operator summary's lists.
type PageOptions struct {
	// Limit is the items of each list per page, 1 to 1000; 0: the server's default (100).
	Limit int
	// PageToken is the previous page's NextPageToken; empty: the first page.
	PageToken string
}

// Operator returns the summary of operator id with one page of its submissions and
// anchors, newest first.
func (c *Client) Operator(ctx context.Context, id string, page PageOptions) (*OperatorSummary, error) {
	q := url.Values{}
	setPage(q, page.Limit, page.PageToken)
	return get[OperatorSummary](ctx, c, request{method: http.MethodGet, path: "/federation/operator/" + url.PathEscape(id), query: q})
}

// AnchorRecord returns the stored record of anchor id, such as anchor-20261124-001.
func (c *Client) AnchorRecord(ctx context.Context, id string) (*AnchorRecord, error) {
	return get[AnchorRecord](ctx, c, request{method: http.MethodGet, path: "/federation/anchor/" + url.PathEscape(id)})
}

// VerifyAnchor asks the federation to verify anchor id now, trusting nothing stored.
// A check that fails is an answer with Valid false, not an error.
func (c *Client) VerifyAnchor(ctx context.Context, id string) (*Verification, error) {
	return get[Verification](ctx, c, request{method: http.MethodGet, path: "/federation/verify/" + url.PathEscape(id)})
}

// LogSnapshots returns the weekly checkpoints of the federation's log, newest first.
func (c *Client) LogSnapshots(ctx context.Context) (*LogSnapshots, error) {
	return get[LogSnapshots](ctx, c, request{method: http.MethodGet, path: "/federation/log/snapshots"})
}

// LogSnapshot returns the checkpoint of one ISO week, such as 2026-W48, exactly as the
// log signed it (a signed note).
func (c *Client) LogSnapshot(ctx context.Context, week string) ([]byte, error) {
	return c.send(ctx, request{method: http.MethodGet, path: "/federation/log/snapshots/" + url.PathEscape(week)})
}

// LogCheckpoint returns the embedded log's latest checkpoint (a signed note).
func (c *Client) LogCheckpoint(ctx context.Context) ([]byte, error) {
	return c.send(ctx, request{method: http.MethodGet, path: "/federation/log/checkpoint"})
}

// LogTile returns one tile of the embedded log (C2SP tlog-tiles): tilePath is the path
// after tile/, such as "0/000" or "entries/000.p/5".
func (c *Client) LogTile(ctx context.Context, tilePath string) ([]byte, error) {
	return c.send(ctx, request{method: http.MethodGet, path: "/federation/log/tile/" + escapeSegments(tilePath)})
}

// OpenAPI returns the federation's OpenAPI 3.0 document.
func (c *Client) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	return c.send(ctx, request{method: http.MethodGet, path: "/federation/openapi.json"})
}

// Anchor asks the federation to run an anchor now (admin token): the anchor made, or an
// answer whose NoOp is true when there were not enough participants. Retried only on 429
// and 503, which the server answers before acting.
func (c *Client) Anchor(ctx context.Context) (*AnchorResult, error) {
	var out AnchorResult
	if err := c.do(ctx, request{method: http.MethodPost, path: "/federation/anchor", auth: authAdmin}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TrustedRoot returns the Sigstore trusted root of the federation's Rekor log (GET
// /federation/log/trusted-root), as the federation serves it: the caller checks the keys
// it names against the ones it trusts.
func (c *Client) TrustedRoot(ctx context.Context) (json.RawMessage, error) {
	out, err := get[json.RawMessage](ctx, c, request{method: http.MethodGet, path: "/federation/log/trusted-root", auth: authNone})
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// get sends req and decodes the answer as a T.
func get[T any](ctx context.Context, c *Client, req request) (*T, error) {
	var out T
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// escapeSegments escapes each '/'-separated segment of p.
func escapeSegments(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
