package protocol

import (
	"crypto/ed25519"
	"encoding/base64"
	"strconv"
	"testing"
	"time"
)

// The token vectors (docs/PROTOCOL.md §5, §9): an Authorization header, the request body
// it was sent with and the server's clock, and the verdict of a server that reads the
// header with ParseAuthorization, verifies the token under the operator's key (VerifyAs)
// and checks its body nonce (CheckBodyNonce, TokenMaxAge).

// tokenVectorNow is the server's clock of the token vectors.
var tokenVectorNow = time.Unix(1763730000, 0)

// rawToken is the token of nonce signed by key, whatever the nonce: a forger's token.
func rawToken(key ed25519.PrivateKey, nonce string) string {
	t := Token{OperatorID: OperatorID(key.Public().(ed25519.PublicKey)), Nonce: nonce, Signature: ed25519.Sign(key, []byte(nonce))}
	return t.String()
}

// tokenVectors are the token cases, keyed by file name suffix.
func tokenVectors(tb testing.TB) map[string]vector {
	body := []byte(`{"hello":"federation"}`)
	nonce := BodyNonce(tokenVectorNow, body)
	good := rawToken(testKey, nonce)
	secsNonce := func(secs string) string { return secs + nonce[len(strconv.FormatInt(tokenVectorNow.Unix(), 10)):] }
	short := OperatorID(testKey.Public().(ed25519.PublicKey)) + "." + nonce + "." + base64.StdEncoding.EncodeToString(ed25519.Sign(testKey, []byte(nonce))[:63])
	cases := map[string]struct {
		desc, header, body, verdict string
	}{
		"valid":             {"an honest token for the body, sent now", "Bearer " + good, string(body), "ok"},
		"scheme-lowercase":  {"the scheme written bearer: schemes are case-insensitive (RFC 9110 §11.1)", "bearer " + good, string(body), "ok"},
		"scheme-uppercase":  {"the scheme written BEARER", "BEARER " + good, string(body), "ok"},
		"no-scheme":         {"the token alone, without the scheme", good, string(body), "malformed"},
		"scheme-two-spaces": {"two spaces after the scheme", "Bearer  " + good, string(body), "malformed"},
		"scheme-tab":        {"a tab after the scheme", "Bearer\t" + good, string(body), "malformed"},
		"other-body":        {"an honest token sent with another body", "Bearer " + good, `{"hello":"world"}`, "mismatch nonce body hash"},
		"expired":           {"a token signed six minutes before the server's clock", "Bearer " + rawToken(testKey, BodyNonce(tokenVectorNow.Add(-6*time.Minute), body)), string(body), "expired"},
		"time-2p53-minus-1": {"a body nonce whose time is 2^53-1 seconds: of the token's shape, and expired", "Bearer " + rawToken(testKey, secsNonce("9007199254740991")), string(body), "expired"},
		"time-2p53":         {"a body nonce whose time is 2^53 seconds: beyond every integer Cairn reads, malformed", "Bearer " + rawToken(testKey, secsNonce("9007199254740992")), string(body), "malformed"},
		"signature-63-bytes": {"the signature the canonical base64 of 63 bytes: a signature of another length than 64 is malformed, not one that fails",
			"Bearer " + short, string(body), "malformed"},
		"another-key": {"a token naming the operator, signed by another key", "Bearer " + OperatorID(testKey.Public().(ed25519.PublicKey)) + "." + nonce + "." +
			base64.StdEncoding.EncodeToString(ed25519.Sign(otherKey, []byte(nonce))), string(body), "signature"},
	}
	out := map[string]vector{}
	for name, c := range cases {
		out["token-"+name] = vector{
			Desc: c.desc, Kind: "token",
			Inputs: map[string]string{"authorization": c.header, "body": c.body, "now_unix": strconv.FormatInt(tokenVectorNow.Unix(), 10),
				"public_key_pem": string(mustMarshalPEM(tb, testKey))},
			Expected: map[string]string{"server": c.verdict},
		}
	}
	return out
}

// runTokenVector is a server's verdict on a token vector.
func runTokenVector(tb testing.TB, v vector) string {
	tb.Helper()
	pub, err := ParsePublicKeyPEM([]byte(v.Inputs["public_key_pem"]))
	if err != nil {
		tb.Fatal(err)
	}
	secs, err := strconv.ParseInt(v.Inputs["now_unix"], 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := ParseAuthorization(v.Inputs["authorization"])
	if err == nil {
		err = tok.VerifyAs(pub)
	}
	if err == nil {
		err = tok.CheckBodyNonce(time.Unix(secs, 0), []byte(v.Inputs["body"]), TokenMaxAge)
	}
	return verdict(err)
}
