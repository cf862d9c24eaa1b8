// Package rfc3161 asks an RFC 3161 timestamp authority to timestamp a message and
// verifies its answer against the authority's certificate chain, as Sigstore clients do
// for Rekor v2 entries, which carry no time of their own: the message is the signature
// being timestamped, hashed with SHA-256 into the request's message imprint.
//
// A timestamp is kept as the authority's whole DER TimeStampResp (status and token), the
// form a Sigstore bundle's rfc3161Timestamps[].signedTimestamp holds.
package rfc3161

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"time"

	"github.com/digitorus/pkcs7"
	"github.com/digitorus/timestamp"
)

// MaxResponseBytes bounds an authority's answer: a response with a chain of a few
// certificates is a few KiB.
const MaxResponseBytes = 64 << 10

// Content types of RFC 3161 over HTTP.
const (
	queryContentType = "application/timestamp-query"
	replyContentType = "application/timestamp-reply"
)

// ErrInvalid means a timestamp does not verify: malformed, not signed by a certificate
// that chains to the trusted root for timestamping, or over another message.
var ErrInvalid = errors.New("invalid RFC 3161 timestamp")

// Request asks the authority at url to timestamp message (SHA-256 imprint, with a random
// nonce and the signing certificate requested), checks the answer against chain (see
// Verify) and returns it with the time it states. hc sends the request (nil: a client
// with a 30 s timeout).
func Request(ctx context.Context, hc *http.Client, url string, message []byte, chain []*x509.Certificate) ([]byte, time.Time, error) {
	nonce, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return nil, time.Time{}, err
	}
	query, err := timestamp.CreateRequest(bytes.NewReader(message), &timestamp.RequestOptions{Hash: crypto.SHA256, Certificates: true, Nonce: nonce})
	if err != nil {
		return nil, time.Time{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(query))
	if err != nil {
		return nil, time.Time{}, err
	}
	req.Header.Set("Content-Type", queryContentType)
	req.Header.Set("Accept", replyContentType)
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	switch {
	case err != nil:
		return nil, time.Time{}, fmt.Errorf("timestamp authority: %w", err)
	case len(body) > MaxResponseBytes:
		return nil, time.Time{}, fmt.Errorf("timestamp authority: answer over %d bytes", MaxResponseBytes)
	case resp.StatusCode != http.StatusOK:
		return nil, time.Time{}, &StatusError{Status: resp.StatusCode, Message: string(bytes.TrimSpace(body[:min(len(body), 200)]))}
	}
	ts, err := verify(body, message, chain)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("timestamp authority's answer: %w", err)
	}
	if ts.Nonce == nil || ts.Nonce.Cmp(nonce) != 0 {
		return nil, time.Time{}, fmt.Errorf("timestamp authority's answer: %w: the nonce is not the request's", ErrInvalid)
	}
	return body, ts.Time, nil
}

// StatusError is an authority's answer other than 200.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("timestamp authority: HTTP %d: %s", e.Status, e.Message)
}

// Verify checks that response (a DER TimeStampResp) is a granted timestamp over message
// (imprint SHA-256, SHA-384 or SHA-512 of it), signed by a certificate for timestamping
// that chains to the last certificate of chain (the root; certificates between are
// intermediates) and was valid at the time the timestamp states, and returns that time.
// Any failure is ErrInvalid.
func Verify(response, message []byte, chain []*x509.Certificate) (time.Time, error) {
	ts, err := verify(response, message, chain)
	if err != nil {
		return time.Time{}, err
	}
	return ts.Time, nil
}

func verify(response, message []byte, chain []*x509.Certificate) (*timestamp.Timestamp, error) {
	if len(chain) == 0 {
		return nil, fmt.Errorf("%w: no certificate chain of the authority to verify it with", ErrInvalid)
	}
	ts, err := timestamp.ParseResponse(response)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	switch ts.HashAlgorithm {
	case crypto.SHA256, crypto.SHA384, crypto.SHA512:
	default:
		return nil, fmt.Errorf("%w: message imprint hash %v", ErrInvalid, ts.HashAlgorithm)
	}
	h := ts.HashAlgorithm.New()
	h.Write(message)
	if !bytes.Equal(h.Sum(nil), ts.HashedMessage) {
		return nil, fmt.Errorf("%w: it timestamps another message", ErrInvalid)
	}
	p7, err := pkcs7.Parse(ts.RawToken)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(p7.Certificates) == 0 { // the authority left its certificate out: take the chain's leaf
		p7.Certificates = chain[:1]
	}
	if err := p7.Verify(); err != nil {
		return nil, fmt.Errorf("%w: signature: %w", ErrInvalid, err)
	}
	signer := p7.GetOnlySigner()
	if signer == nil {
		return nil, fmt.Errorf("%w: not one signer", ErrInvalid)
	}
	roots, intermediates := x509.NewCertPool(), x509.NewCertPool()
	roots.AddCert(chain[len(chain)-1])
	for _, c := range chain[:len(chain)-1] {
		intermediates.AddCert(c)
	}
	if _, err := signer.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}, CurrentTime: ts.Time}); err != nil {
		return nil, fmt.Errorf("%w: signing certificate: %w", ErrInvalid, err)
	}
	if err := checkTimestampingOnly(signer); err != nil {
		return nil, fmt.Errorf("%w: signing certificate: %w", ErrInvalid, err)
	}
	return ts, nil
}

// oidExtKeyUsage is the extended key usage extension's identifier.
var oidExtKeyUsage = asn1.ObjectIdentifier{2, 5, 29, 37}

// checkTimestampingOnly requires what RFC 3161 §2.3 does of a TSA's certificate: one
// extended key usage, timestamping, in a critical extension; and, as Sigstore's verifier
// does, no CA certificate (crypto/x509 lets a certificate without the extension do
// anything).
func checkTimestampingOnly(c *x509.Certificate) error {
	if c.IsCA {
		return errors.New("a CA certificate signs no timestamps")
	}
	if len(c.ExtKeyUsage) != 1 || c.ExtKeyUsage[0] != x509.ExtKeyUsageTimeStamping || len(c.UnknownExtKeyUsage) != 0 {
		return errors.New("its extended key usage is not timestamping alone")
	}
	for _, ext := range c.Extensions {
		if ext.Id.Equal(oidExtKeyUsage) && ext.Critical {
			return nil
		}
	}
	return errors.New("its extended key usage is not critical")
}

// ParseChainPEM parses an authority's certificate chain: PEM CERTIFICATE blocks, the
// signing certificate first and the root last. Anything else in the text is an error.
func ParseChainPEM(text []byte) ([]*x509.Certificate, error) {
	var chain []*x509.Certificate
	for rest := bytes.TrimSpace(text); len(rest) > 0; rest = bytes.TrimSpace(rest) {
		if !bytes.HasPrefix(rest, []byte("-----BEGIN ")) { // pem.Decode skips text before a block
			return nil, errors.New("certificate chain: want only PEM CERTIFICATE blocks")
		}
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil || block.Type != "CERTIFICATE" {
			return nil, errors.New("certificate chain: want only PEM CERTIFICATE blocks")
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate chain: %w", err)
		}
		chain = append(chain, c)
	}
	if len(chain) == 0 {
		return nil, errors.New("certificate chain: no certificate")
	}
	return chain, nil
}
