package client

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Challenge asks the federation for a registration challenge.
func (c *Client) Challenge(ctx context.Context) (*Challenge, error) {
	var out Challenge
	if err := c.do(ctx, request{method: http.MethodGet, path: "/federation/register/challenge"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PrepareRegistration gets a challenge and returns the registration of key for orgName
// (contactEmail may be empty), signed and ready for PostRegistration. A contact is signed
// with a rename (protocol.NewRename, dated by the client's clock) sent with it: the
// federation shows no contact the operator did not sign. It refuses, and
// posts nothing, when the federation's nonce is not a challenge (protocol.SignChallenge):
// the key signs nothing else.
func (c *Client) PrepareRegistration(ctx context.Context, key ed25519.PrivateKey, orgName, contactEmail string) (*RegisterRequest, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("client: Ed25519 private key is %d bytes, want %d", len(key), ed25519.PrivateKeySize)
	}
	pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, fmt.Errorf("client: encode the public key: %w", err)
	}
	ch, err := c.Challenge(ctx)
	if err != nil {
		return nil, err
	}
	sig, err := protocol.SignChallenge(key, ch.Nonce)
	if err != nil {
		return nil, fmt.Errorf("client: the federation's challenge: %w", err)
	}
	reg := &RegisterRequest{
		PublicKeyPEM:      string(pemText),
		OrgName:           orgName,
		ContactEmail:      contactEmail,
		Nonce:             ch.Nonce,
		NonceSignature:    sig,
		ProofOfPossession: protocol.SignRegistration(key, orgName),
	}
	if contactEmail != "" { // the proof of possession signs no contact: a rename does
		rn, err := protocol.NewRename(key, protocol.OperatorID(key.Public().(ed25519.PublicKey)), orgName, contactEmail, c.now())
		if err != nil {
			return nil, fmt.Errorf("client: sign the contact: %w", err)
		}
		reg.RenameAt, reg.RenameSignature = rn.At, rn.Signature
	}
	return reg, nil
}

// PostRegistration posts a registration made by PrepareRegistration.
func (c *Client) PostRegistration(ctx context.Context, reg *RegisterRequest) (*Registration, error) {
	var out Registration
	if err := c.postJSON(ctx, "/federation/register", reg, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Register registers key as an operator of orgName: PrepareRegistration, then
// PostRegistration. The answer's OperatorID is protocol.OperatorID of key's public half.
func (c *Client) Register(ctx context.Context, key ed25519.PrivateKey, orgName, contactEmail string) (*Registration, error) {
	reg, err := c.PrepareRegistration(ctx, key, orgName, contactEmail)
	if err != nil {
		return nil, err
	}
	return c.PostRegistration(ctx, reg)
}

// Submit posts a cairn-chain-v2 export (docs/PROTOCOL.md §3) as the client's operator.
// export is sent verbatim: the bearer token binds its SHA-256.
func (c *Client) Submit(ctx context.Context, export []byte) (*SubmitResult, error) {
	if export == nil {
		export = []byte{}
	}
	var out SubmitResult
	req := request{method: http.MethodPost, path: "/federation/submit", body: export, auth: authOperator}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SubmitStream posts the export read from body, size bytes from its start, without
// holding it in memory: it is read once to hash it for the bearer token, and once more
// for each attempt (seeking back to its start), so body must not change meanwhile.
func (c *Client) SubmitStream(ctx context.Context, body io.ReadSeeker, size int64) (*SubmitResult, error) {
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("client: rewind the export: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(body, size))
	if err != nil {
		return nil, fmt.Errorf("client: hash the export: %w", err)
	}
	if n != size {
		return nil, fmt.Errorf("client: the export has %d bytes, want %d", n, size)
	}
	req := request{method: http.MethodPost, path: "/federation/submit", stream: body, size: size, auth: authOperator}
	h.Sum(req.digest[:0])
	var out SubmitResult
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReceiptsOptions select a page of receipts.
type ReceiptsOptions struct {
	// Since keeps the receipts of anchors whose ID sorts after it; empty: all.
	Since string
	// Limit is the page size, 1 to 1000; 0: the server's default (100).
	Limit int
	// PageToken is the previous page's NextPageToken; empty: the first page.
	PageToken string
}

// Receipts returns one page of the client operator's signed receipts, newest first.
func (c *Client) Receipts(ctx context.Context, opts ReceiptsOptions) (*ReceiptsPage, error) {
	q := url.Values{}
	if opts.Since != "" {
		q.Set("since", opts.Since)
	}
	setPage(q, opts.Limit, opts.PageToken)
	var out ReceiptsPage
	req := request{method: http.MethodGet, path: "/federation/receipts", query: q, auth: authOperator}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Withdraw withdraws the client's operator from the federation: a withdrawal statement
// (protocol.NewWithdrawal) dated by the client's clock, naming the operator's registered
// ID and signed by its current key.
func (c *Client) Withdraw(ctx context.Context) (*Withdrawn, error) {
	if err := c.checkAuth(authOperator); err != nil {
		return nil, err
	}
	key := c.operatorKey()
	w := protocol.NewWithdrawal(key, c.now())
	if w.OperatorID != c.operatorID { // a rotated key: the statement names the first key's ID
		w.OperatorID = c.operatorID
		w.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, protocol.WithdrawalMessage(w.OperatorID, w.At)))
	}
	var out Withdrawn
	if err := c.postJSON(ctx, "/federation/withdraw", w, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RotateKey replaces the client operator's key by newKey (protocol.NewKeyRotation, dated
// by the client's clock). The operator ID does not change; on success the client signs
// its later requests with newKey.
func (c *Client) RotateKey(ctx context.Context, newKey ed25519.PrivateKey) (*Rotated, error) {
	if err := c.checkAuth(authOperator); err != nil {
		return nil, err
	}
	c.keyMu.Lock() // one rotation at a time: each is signed by the key the last one left
	defer c.keyMu.Unlock()
	rot, err := protocol.NewKeyRotation(c.key, newKey, c.now())
	if err != nil {
		return nil, fmt.Errorf("client: make the key rotation: %w", err)
	}
	// The signatures cover the new key and the time, not the ID: name the registered one.
	rot.OperatorID = c.operatorID
	var out Rotated
	if err := c.postJSON(ctx, "/federation/rotate-key", rot, &out); err != nil {
		return nil, err
	}
	c.key = newKey
	return &out, nil
}

// Rename states, signed by the client operator's current key, its organization's name
// and contact (protocol.NewRename, dated by the client's clock, naming the registered
// operator ID); contact may be empty. It answers once the federation has applied and
// logged it: from then on the federation shows these, and only an operator-signed rename
// changes them.
func (c *Client) Rename(ctx context.Context, orgName, contact string) (*Renamed, error) {
	if err := c.checkAuth(authOperator); err != nil {
		return nil, err
	}
	rn, err := protocol.NewRename(c.operatorKey(), c.operatorID, orgName, contact, c.now())
	if err != nil {
		return nil, fmt.Errorf("client: make the rename: %w", err)
	}
	var out Renamed
	if err := c.postJSON(ctx, "/federation/rename", rn, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// postJSON posts v as JSON to path, with no authorization (the body is a signed
// statement), and decodes the answer into out.
func (c *Client) postJSON(ctx context.Context, path string, v any, out any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("client: encode the %s body: %w", path, err)
	}
	return c.do(ctx, request{method: http.MethodPost, path: path, body: body, auth: authNone}, out)
}

// setPage adds the paging parameters to q.
func setPage(q url.Values, limit int, pageToken string) {
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if pageToken != "" {
		q.Set("page_token", pageToken)
	}
}
