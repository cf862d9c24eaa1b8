package protocol

import (
	"crypto/ed25519"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// Rekor v2 (rekor-tiles) records hashedrekord 0.0.2: the same statement as 0.0.1 (the
// SHA-512 digest of the content, Ed25519ph over it, the signer's key) with the digest in
// base64, the key as PKIX DER, and the algorithms named as Sigstore's protobuf specs
// name them.
const (
	hashedRekordV2APIVersion = "0.0.2"
	hashedRekordV2Algorithm  = "SHA2_512"
	// KeyDetailsEd25519ph is the Sigstore key details of an Ed25519ph key: Rekor v2 takes
	// Ed25519 only pre-hashed in hashedrekord, as Rekor v1 does.
	KeyDetailsEd25519ph = "PKIX_ED25519_PH"
)

// hashedRekordV2 is the hashedrekord 0.0.2 statement: the spec of the body and the
// request alike.
type hashedRekordV2 struct {
	Data      hashedRekordV2Data      `json:"data"`
	Signature hashedRekordV2Signature `json:"signature"`
}

type hashedRekordV2Data struct {
	Algorithm string `json:"algorithm"`
	Digest    string `json:"digest"`
}

type hashedRekordV2Signature struct {
	Content  string                 `json:"content"`
	Verifier hashedRekordV2Verifier `json:"verifier"`
}

type hashedRekordV2Verifier struct {
	KeyDetails string                  `json:"keyDetails"`
	PublicKey  hashedRekordV2PublicKey `json:"publicKey"`
}

type hashedRekordV2PublicKey struct {
	RawBytes string `json:"rawBytes"`
}

// HashedRekordV2Request returns the Rekor v2 request (POST /api/v2/log/entries) that logs
// what the hashedrekord 0.0.1 body states, and the 0.0.2 body the log will record for
// it, in RFC 8785 form. The request is
//
//	{"hashedRekordRequestV002": {"digest": b64(SHA-512 digest),
//	  "signature": {"content": b64(Ed25519ph signature),
//	    "verifier": {"publicKey": {"rawBytes": b64(PKIX DER key)}, "keyDetails": "PKIX_ED25519_PH"}}}}
//
// and the body {"apiVersion": "0.0.2", "kind": "hashedrekord", "spec": {"hashedRekordV002":
// {"data": {"algorithm": "SHA2_512", "digest": ...}, "signature": {"content": ...,
// "verifier": {"keyDetails": ..., "publicKey": {"rawBytes": ...}}}}}}.
func HashedRekordV2Request(body []byte) (request, v2Body []byte, err error) {
	h, err := ParseHashedRekord(body)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(h.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	b64 := base64.StdEncoding.EncodeToString
	sig := hashedRekordV2Signature{Content: b64(h.Signature),
		Verifier: hashedRekordV2Verifier{KeyDetails: KeyDetailsEd25519ph, PublicKey: hashedRekordV2PublicKey{RawBytes: b64(der)}}}
	request, err = json.Marshal(map[string]any{"hashedRekordRequestV002": map[string]any{"digest": b64(h.Digest), "signature": sig}})
	if err != nil {
		return nil, nil, err
	}
	v2Body, err = canonical.Marshal(map[string]any{"apiVersion": hashedRekordV2APIVersion, "kind": hashedRekordKind,
		"spec": map[string]any{"hashedRekordV002": hashedRekordV2{Data: hashedRekordV2Data{Algorithm: hashedRekordV2Algorithm, Digest: b64(h.Digest)}, Signature: sig}}})
	return request, v2Body, err
}

// hashedRekordVersion returns the apiVersion of a hashedrekord body, which must be an
// object with a string apiVersion.
func hashedRekordVersion(body []byte) (string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return "", fmt.Errorf("%w: hashedrekord body is not a JSON object", ErrMalformed)
	}
	raw, ok := top["apiVersion"]
	if !ok {
		return "", fmt.Errorf("%w: hashedrekord body has no member \"apiVersion\"", ErrMalformed)
	}
	return jsonString("apiVersion", raw)
}

// decodeHashedRekordV2 decodes a hashedrekord 0.0.2 body strictly: exact member names at
// every level, all present, all strings, algorithm SHA2_512 with a 64-byte digest, key
// details PKIX_ED25519_PH with an Ed25519 PKIX key, a 64-byte signature, every base64
// canonical and padded.
func decodeHashedRekordV2(body []byte) (*HashedRekord, error) {
	if _, err := canonical.Transform(body); err != nil {
		return nil, fmt.Errorf("%w: hashedrekord body: %w", ErrMalformed, err)
	}
	var outer, spec, data, sig, verifier, key map[string]json.RawMessage
	top, err := rekordObject(body, "", "apiVersion", "kind", "spec")
	if err == nil {
		outer, err = rekordObject(top["spec"], "spec", "hashedRekordV002")
	}
	if err == nil {
		spec, err = rekordObject(outer["hashedRekordV002"], "spec.hashedRekordV002", "data", "signature")
	}
	if err == nil {
		data, err = rekordObject(spec["data"], "spec.hashedRekordV002.data", "algorithm", "digest")
	}
	if err == nil {
		sig, err = rekordObject(spec["signature"], "spec.hashedRekordV002.signature", "content", "verifier")
	}
	if err == nil {
		verifier, err = rekordObject(sig["verifier"], "spec.hashedRekordV002.signature.verifier", "keyDetails", "publicKey")
	}
	if err == nil {
		key, err = rekordObject(verifier["publicKey"], "spec.hashedRekordV002.signature.verifier.publicKey", "rawBytes")
	}
	if err != nil {
		return nil, err
	}
	var kind, algorithm, digest, content, details, rawKey string
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *string
	}{
		{"kind", top["kind"], &kind},
		{"data.algorithm", data["algorithm"], &algorithm},
		{"data.digest", data["digest"], &digest},
		{"signature.content", sig["content"], &content},
		{"signature.verifier.keyDetails", verifier["keyDetails"], &details},
		{"signature.verifier.publicKey.rawBytes", key["rawBytes"], &rawKey},
	} {
		if *f.dst, err = jsonString(f.name, f.raw); err != nil {
			return nil, err
		}
	}
	switch {
	case kind != hashedRekordKind:
		return nil, fmt.Errorf("%w: hashedrekord kind %s, want %q", ErrMalformed, Quote(kind), hashedRekordKind)
	case algorithm != hashedRekordV2Algorithm:
		return nil, fmt.Errorf("%w: hashedrekord digest algorithm %s, want %q", ErrMalformed, Quote(algorithm), hashedRekordV2Algorithm)
	case details != KeyDetailsEd25519ph:
		return nil, fmt.Errorf("%w: hashedrekord key details %s, want %q", ErrMalformed, Quote(details), KeyDetailsEd25519ph)
	}
	h := &HashedRekord{APIVersion: hashedRekordV2APIVersion}
	if h.Digest, err = decodeCanonicalBase64("data.digest", digest, sha512.Size); err != nil {
		return nil, err
	}
	if h.Signature, err = decodeCanonicalBase64("signature.content", content, ed25519.SignatureSize); err != nil {
		return nil, err
	}
	der, err := decodeCanonicalBase64("signature.verifier.publicKey.rawBytes", rawKey, -1)
	if err != nil {
		return nil, err
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: signature.verifier.publicKey: %w", ErrMalformed, err)
	}
	var ok bool
	if h.PublicKey, ok = pub.(ed25519.PublicKey); !ok {
		return nil, fmt.Errorf("%w: signature.verifier.publicKey is %T, want Ed25519", ErrMalformed, pub)
	}
	return h, nil
}
