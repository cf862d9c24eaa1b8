package sigstorebundle

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
)

// TrustedRootMediaType is the media type of the trusted roots NewTrustedRoot makes.
const TrustedRootMediaType = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"

// Log is a transparency log a trusted root vouches for.
type Log struct {
	// BaseURL is the log's URL.
	BaseURL string
	// Origin is the origin line of its checkpoints: for an Ed25519 key, part of the key
	// ID a Rekor v2 entry names the log by. Empty for a Rekor v1 log.
	Origin string
	// Key is the log's public key: Ed25519 or ECDSA P-256.
	Key crypto.PublicKey
	// Since is when the federation began to use it.
	Since time.Time
}

// Authority is an RFC 3161 timestamp authority a trusted root vouches for.
type Authority struct {
	// URI is its timestamp endpoint.
	URI string
	// Chain is its certificate chain, signing certificate first, root last.
	Chain []*x509.Certificate
	// Since is when the federation began to use it.
	Since time.Time
}

// TrustedRoot is Sigstore's TrustedRoot in protobuf JSON: the logs and timestamp
// authorities a verifier trusts. It has no certificate authorities (the federation signs
// with a key, not a Fulcio certificate) and no certificate transparency logs.
type TrustedRoot struct {
	MediaType              string                 `json:"mediaType"`
	Tlogs                  []TransparencyLog      `json:"tlogs"`
	CertificateAuthorities []json.RawMessage      `json:"certificateAuthorities"`
	Ctlogs                 []json.RawMessage      `json:"ctlogs"`
	TimestampAuthorities   []CertificateAuthority `json:"timestampAuthorities"`
}

// TransparencyLog is a log instance of a trusted root.
type TransparencyLog struct {
	BaseURL         string    `json:"baseUrl"`
	HashAlgorithm   string    `json:"hashAlgorithm"`
	PublicKey       PublicKey `json:"publicKey"`
	LogID           KeyID     `json:"logId"`
	CheckpointKeyID *KeyID    `json:"checkpointKeyId,omitempty"`
}

// PublicKey is a key with its type and validity.
type PublicKey struct {
	RawBytes   string   `json:"rawBytes"`
	KeyDetails string   `json:"keyDetails"`
	ValidFor   ValidFor `json:"validFor"`
}

// ValidFor is a validity period; an open end is omitted.
type ValidFor struct {
	Start string `json:"start"`
}

// CertificateAuthority is a timestamp authority of a trusted root.
type CertificateAuthority struct {
	Subject   Subject   `json:"subject"`
	URI       string    `json:"uri"`
	CertChain CertChain `json:"certChain"`
	ValidFor  ValidFor  `json:"validFor"`
}

// Subject names an authority.
type Subject struct {
	Organization string `json:"organization"`
	CommonName   string `json:"commonName"`
}

// CertChain is a certificate chain, DER, leaf first.
type CertChain struct {
	Certificates []RawCertificate `json:"certificates"`
}

// RawCertificate is one DER certificate, standard base64.
type RawCertificate struct {
	RawBytes string `json:"rawBytes"`
}

// NewTrustedRoot returns the trusted root of logs and authorities.
func NewTrustedRoot(logs []Log, authorities []Authority) (*TrustedRoot, error) {
	tr := &TrustedRoot{MediaType: TrustedRootMediaType, Tlogs: []TransparencyLog{},
		CertificateAuthorities: []json.RawMessage{}, Ctlogs: []json.RawMessage{}, TimestampAuthorities: []CertificateAuthority{}}
	b64 := base64.StdEncoding.EncodeToString
	for _, l := range logs {
		der, err := x509.MarshalPKIXPublicKey(l.Key)
		if err != nil {
			return nil, fmt.Errorf("log %s: %w", l.BaseURL, err)
		}
		t := TransparencyLog{BaseURL: l.BaseURL, HashAlgorithm: "SHA2_256",
			PublicKey: PublicKey{RawBytes: b64(der), ValidFor: ValidFor{Start: rfc3339(l.Since)}}}
		digest := sha256.Sum256(der)
		t.LogID = KeyID{KeyID: b64(digest[:])}
		switch k := l.Key.(type) {
		case ed25519.PublicKey:
			t.PublicKey.KeyDetails = "PKIX_ED25519"
			if l.Origin != "" { // a Rekor v2 log: named by its checkpoint key ID
				id := KeyID{KeyID: b64(CheckpointKeyID(l.Origin, k))}
				t.LogID, t.CheckpointKeyID = id, &id
			}
		case *ecdsa.PublicKey:
			if k.Curve != elliptic.P256() {
				return nil, fmt.Errorf("log %s: ECDSA key on %s, want P-256", l.BaseURL, k.Curve.Params().Name)
			}
			t.PublicKey.KeyDetails = "PKIX_ECDSA_P256_SHA_256"
			if l.Origin != "" {
				t.CheckpointKeyID = &t.LogID
			}
		default:
			return nil, fmt.Errorf("log %s: key is %T, want Ed25519 or ECDSA P-256", l.BaseURL, l.Key)
		}
		tr.Tlogs = append(tr.Tlogs, t)
	}
	for _, a := range authorities {
		if len(a.Chain) == 0 {
			return nil, fmt.Errorf("timestamp authority %s: no certificate chain", a.URI)
		}
		ca := CertificateAuthority{URI: a.URI, ValidFor: ValidFor{Start: rfc3339(a.Since)},
			Subject: Subject{CommonName: a.Chain[0].Subject.CommonName}}
		if org := a.Chain[0].Subject.Organization; len(org) > 0 {
			ca.Subject.Organization = org[0]
		}
		for _, c := range a.Chain {
			ca.CertChain.Certificates = append(ca.CertChain.Certificates, RawCertificate{RawBytes: b64(c.Raw)})
		}
		tr.TimestampAuthorities = append(tr.TimestampAuthorities, ca)
	}
	return tr, nil
}

// Marshal returns the trusted root's JSON.
func (t *TrustedRoot) Marshal() ([]byte, error) { return json.MarshalIndent(t, "", "  ") }

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// LogKeys returns the public keys of the trusted root's logs, as a verifier would read
// them: a caller checks them against the keys it trusts before it passes the root on.
func (t *TrustedRoot) LogKeys() ([]crypto.PublicKey, error) {
	keys := make([]crypto.PublicKey, 0, len(t.Tlogs))
	for i, l := range t.Tlogs {
		der, err := base64.StdEncoding.DecodeString(l.PublicKey.RawBytes)
		if err != nil {
			return nil, fmt.Errorf("tlogs[%d].publicKey: %w", i, err)
		}
		key, err := x509.ParsePKIXPublicKey(der)
		if err != nil {
			return nil, fmt.Errorf("tlogs[%d].publicKey: %w", i, err)
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// ParseTrustedRoot decodes a trusted root's JSON, which must have the media type
// NewTrustedRoot writes.
func ParseTrustedRoot(raw []byte) (*TrustedRoot, error) {
	var t TrustedRoot
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("trusted root: %w", err)
	}
	if t.MediaType != TrustedRootMediaType {
		return nil, fmt.Errorf("trusted root: media type %q, want %q", t.MediaType, TrustedRootMediaType)
	}
	return &t, nil
}
