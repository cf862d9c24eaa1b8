package seedclient

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// This file is the client's wire: requests as the seed's table states them, and answers
// read strictly into the seed's types.

// member is one member the seed's table states for an answer: its name, and whether the
// table lets it be null (a log index while the log leg is pending).
type member struct {
	name     string
	nullable bool
}

// required lists members; a name ending in "?" may be null.
func required(names ...string) []member {
	out := make([]member, len(names))
	for i, n := range names {
		out[i] = member{name: strings.TrimSuffix(n, "?"), nullable: strings.HasSuffix(n, "?")}
	}
	return out
}

// decodeStrict reads body into out, an object whose fields carry the seed's names and
// types. Every member of want must be present, and null only where the table allows it;
// a member of another JSON type than out's field fails (encoding/json refuses a string
// where a number or an array of strings where objects are stated, and the reverse).
// Members the seed does not name are allowed: a service may add members.
func decodeStrict(what string, body []byte, want []member, out any) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return fmt.Errorf("%s: the answer is not a JSON object: %w", what, err)
	}
	for _, m := range want {
		v, ok := raw[m.name]
		if !ok {
			return fmt.Errorf("%s: the seed's member %q is missing", what, m.name)
		}
		if !m.nullable && bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return fmt.Errorf("%s: the seed's member %q is null", what, m.name)
		}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s: a member has another type than the seed's: %w", what, err)
	}
	return nil
}

// client talks to one federation.
type client struct {
	base string
	hc   *http.Client
}

// answer is an HTTP answer.
type answer struct {
	status int
	body   []byte
}

// do sends method path with body (nil: none) and the Authorization header auth ("" for
// none), and returns the answer.
func (c *client) do(ctx context.Context, method, path string, body []byte, auth string) (*answer, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return &answer{status: resp.StatusCode, body: b}, nil
}

// call sends the request, requires status and reads the answer strictly into out (nil:
// the answer is not read).
func (c *client) call(ctx context.Context, method, path string, body []byte, auth string, status int, want []member, out any) error {
	a, err := c.do(ctx, method, path, body, auth)
	if err != nil {
		return err
	}
	what := method + " " + path
	if a.status != status {
		return fmt.Errorf("%s: HTTP %d, want %d: %s", what, a.status, status, clip(a.body))
	}
	if out == nil {
		return nil
	}
	return decodeStrict(what, a.body, want, out)
}

// clip is at most 400 bytes of b, for an error message.
func clip(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// key is an operator's Ed25519 key pair, with its public key's PEM text exactly as read.
type key struct {
	private ed25519.PrivateKey
	pemText string
}

// parseKey reads a PKCS #8 private key PEM and its SPKI public key PEM text.
func parseKey(privatePEM, publicPEM []byte) (*key, error) {
	block, _ := pem.Decode(privatePEM)
	if block == nil {
		return nil, errors.New("the private key is not PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New("the private key is not Ed25519")
	}
	pb, _ := pem.Decode(publicPEM)
	if pb == nil {
		return nil, errors.New("the public key is not PEM")
	}
	pub, err := x509.ParsePKIXPublicKey(pb.Bytes)
	if err != nil {
		return nil, err
	}
	if p, ok := pub.(ed25519.PublicKey); !ok || !p.Equal(priv.Public()) {
		return nil, errors.New("the public key is not the private key's")
	}
	return &key{private: priv, pemText: string(publicPEM)}, nil
}

// operatorID is "op_" and the first 16 hex of SHA-256 of the raw public key.
func (k *key) operatorID() string {
	sum := sha256.Sum256(k.private.Public().(ed25519.PublicKey))
	return "op_" + hex.EncodeToString(sum[:])[:16]
}

// sign is the base64 Ed25519 signature of msg.
func (k *key) sign(msg string) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(k.private, []byte(msg)))
}

// token is the Authorization header of operator id for body, signed by k: the nonce is
// "<unix seconds>-<hex SHA-256 of the body>".
func (k *key) token(id string, body []byte, now time.Time) string {
	sum := sha256.Sum256(body)
	nonce := strconv.FormatInt(now.Unix(), 10) + "-" + hex.EncodeToString(sum[:])
	return "Bearer " + id + "." + nonce + "." + k.sign(nonce)
}

// crossAnchorHash is hex SHA-256 of the chain signatures in operator ID order, then
// anchoredAt, as the seed computes it.
func crossAnchorHash(chainSignatures []string, anchoredAt string) string {
	sum := sha256.Sum256([]byte(strings.Join(chainSignatures, "") + anchoredAt))
	return hex.EncodeToString(sum[:])
}
