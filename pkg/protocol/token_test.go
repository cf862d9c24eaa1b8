package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

var tokenTestNow = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// tokenTestKey returns a deterministic Ed25519 key derived from n.
func tokenTestKey(n byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
}

func tokenMustSign(t testing.TB, key ed25519.PrivateKey, nonce string) string {
	t.Helper()
	s, err := SignToken(key, nonce)
	if err != nil {
		t.Fatalf("SignToken: %v", err)
	}
	return s
}

func TestBodyNonceShape(t *testing.T) {
	n := BodyNonce(tokenTestNow, []byte("hello"))
	want := "1767366245-2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	if n != want {
		t.Fatalf("BodyNonce = %s, want %s", n, want)
	}
	cases := map[string]struct {
		nonce string
		want  bool
	}{
		"generated":       {n, true},
		"zero seconds":    {"0-" + strings.Repeat("a", 64), true},
		"leading zero":    {"01-" + strings.Repeat("a", 64), false},
		"negative":        {"-1-" + strings.Repeat("a", 64), false},
		"uppercase hex":   {"1767366245-" + strings.Repeat("A", 64), false},
		"short hash":      {"1767366245-" + strings.Repeat("a", 63), false},
		"long hash":       {"1767366245-" + strings.Repeat("a", 65), false},
		"no seconds":      {"-" + strings.Repeat("a", 64), false},
		"int64 overflow":  {"9223372036854775808-" + strings.Repeat("a", 64), false},
		"int64 max":       {"9223372036854775807-" + strings.Repeat("a", 64), false}, // above 2^53-1
		"2^53":            {"9007199254740992-" + strings.Repeat("a", 64), false},
		"2^53-1":          {"9007199254740991-" + strings.Repeat("a", 64), true},
		"challenge":       {"cairn-challenge:abcdefghijklmnopqrstuvwxyz", false},
		"old challenge":   {"abcdefghijklmnopqrstuvwxyz", false},
		"letters in time": {"17673x6245-" + strings.Repeat("a", 64), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsBodyNonce(tc.nonce); got != tc.want {
				t.Fatalf("IsBodyNonce(%q) = %v, want %v", tc.nonce, got, tc.want)
			}
		})
	}
}

func TestTokenRoundTrip(t *testing.T) {
	key := tokenTestKey(1)
	pub := key.Public().(ed25519.PublicKey)
	body := []byte(`{"entries":[]}`)
	s := tokenMustSign(t, key, BodyNonce(tokenTestNow, body))
	if !regexp.MustCompile(`^op_[0-9a-f]{16}\.[0-9]+-[0-9a-f]{64}\.[A-Za-z0-9+/]{86}==$`).MatchString(s) {
		t.Fatalf("SignToken = %q, not of the token's shape", s)
	}
	for name, in := range map[string]string{"bare": s, "Bearer": "Bearer " + s, "bearer": "bearer " + s} {
		t.Run(name, func(t *testing.T) {
			tok, err := ParseToken(in)
			if err != nil {
				t.Fatalf("ParseToken: %v", err)
			}
			if tok.OperatorID != OperatorID(pub) || tok.String() != s {
				t.Fatalf("ParseToken = %+v, want operator %s and String %s", tok, OperatorID(pub), s)
			}
			if err := tok.Verify(pub); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if err := tok.CheckBodyNonce(tokenTestNow, body, TokenMaxAge); err != nil {
				t.Fatalf("CheckBodyNonce: %v", err)
			}
		})
	}

	challenge := "cairn-challenge:srv_challenge-0123456789ABCDEFabcdef"
	tok, err := ParseToken(tokenMustSign(t, key, challenge))
	if err != nil {
		t.Fatalf("ParseToken(challenge token): %v", err)
	}
	if err := tok.Verify(pub); err != nil {
		t.Fatalf("Verify(challenge token): %v", err)
	}
	if err := tok.CheckBodyNonce(tokenTestNow, body, TokenMaxAge); !errors.Is(err, ErrMalformed) {
		t.Fatalf("CheckBodyNonce(challenge) = %v, want ErrMalformed", err)
	}
}

func TestTokenVerifyRejects(t *testing.T) {
	key := tokenTestKey(1)
	pub := key.Public().(ed25519.PublicKey)
	other := tokenTestKey(2).Public().(ed25519.PublicKey)
	good, err := ParseToken(tokenMustSign(t, key, BodyNonce(tokenTestNow, nil)))
	if err != nil {
		t.Fatal(err)
	}
	flipped := *good
	flipped.Signature = append([]byte{}, good.Signature...)
	flipped.Signature[10] ^= 1
	otherNonce := *good
	otherNonce.Nonce = BodyNonce(tokenTestNow.Add(time.Second), nil)
	forged := *good // names the other operator but carries key's signature
	forged.OperatorID = OperatorID(other)
	short := *good
	short.Signature = good.Signature[:63]
	cases := map[string]struct {
		tok  *Token
		pub  ed25519.PublicKey
		want error
	}{
		"another key":         {good, other, ErrKeyNotTrusted},
		"claims other op":     {&forged, other, ErrSignature},
		"flipped signature":   {&flipped, pub, ErrSignature},
		"nonce changed":       {&otherNonce, pub, ErrSignature},
		"short public key":    {good, pub[:31], ErrMalformed},
		"nil public key":      {good, nil, ErrMalformed},
		"63-byte signature":   {&short, pub, ErrMalformed},
		"nil token":           {nil, pub, ErrMalformed},
		"empty token":         {&Token{}, pub, ErrMalformed},
		"private key as pub":  {good, ed25519.PublicKey(key), ErrMalformed},
		"uppercase op in tok": {&Token{OperatorID: strings.ToUpper(good.OperatorID), Nonce: good.Nonce, Signature: good.Signature}, pub, ErrMalformed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := tc.tok.Verify(tc.pub); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// VerifyAs is the server's check after the key is looked up by the token's ID: a rotated
// operator's token names its first key's ID and is signed by its current key.
func TestTokenVerifyAsRotatedOperator(t *testing.T) {
	first, current := tokenTestKey(1), tokenTestKey(2)
	curPub := current.Public().(ed25519.PublicKey)
	nonce := BodyNonce(tokenTestNow, nil)
	rotated := &Token{OperatorID: OperatorID(first.Public().(ed25519.PublicKey)), Nonce: nonce, Signature: ed25519.Sign(current, []byte(nonce))}
	if err := rotated.VerifyAs(curPub); err != nil {
		t.Fatalf("VerifyAs of the rotated operator's token: %v", err)
	}
	if err := rotated.Verify(curPub); !errors.Is(err, ErrKeyNotTrusted) {
		t.Errorf("Verify still requires the key's own ID: %v", err)
	}
	byOld := &Token{OperatorID: rotated.OperatorID, Nonce: nonce, Signature: ed25519.Sign(first, []byte(nonce))}
	if err := byOld.VerifyAs(curPub); !errors.Is(err, ErrSignature) {
		t.Errorf("VerifyAs of a token the old key signed = %v, want ErrSignature", err)
	}
	if err := (&Token{OperatorID: "OP_X", Nonce: nonce, Signature: rotated.Signature}).VerifyAs(curPub); !errors.Is(err, ErrMalformed) {
		t.Errorf("VerifyAs of a malformed ID = %v, want ErrMalformed", err)
	}
}

func TestTokenCheckBodyNonce(t *testing.T) {
	key := tokenTestKey(1)
	body := []byte(`{"n":1}`)
	at := func(d time.Duration, b []byte) *Token {
		tok, err := ParseToken(tokenMustSign(t, key, BodyNonce(tokenTestNow.Add(d), b)))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	upper := at(0, body)
	upper.Nonce = strings.ToUpper(upper.Nonce)
	cases := map[string]struct {
		tok  *Token
		body []byte
		want error
	}{
		"now":                 {at(0, body), body, nil},
		"exactly max age old": {at(-TokenMaxAge, body), body, nil},
		"exactly max ahead":   {at(TokenMaxAge, body), body, nil},
		"expired":             {at(-TokenMaxAge-time.Second, body), body, ErrExpired},
		"future":              {at(TokenMaxAge+time.Second, body), body, ErrExpired},
		"tampered body":       {at(0, body), []byte(`{"n":2}`), ErrMismatch},
		"empty body":          {at(0, body), nil, ErrMismatch},
		"uppercase hash":      {upper, body, ErrMalformed},
		"nil token":           {nil, body, ErrMalformed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.tok.CheckBodyNonce(tokenTestNow, tc.body, TokenMaxAge)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckBodyNonce = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("CheckBodyNonce = %v, want %v", err, tc.want)
			}
			var mm *MismatchError
			if errors.Is(tc.want, ErrMismatch) && (!errors.As(err, &mm) || mm.Field != "nonce body hash") {
				t.Fatalf("CheckBodyNonce = %#v, want *MismatchError for nonce body hash", err)
			}
		})
	}

	// The latest time a body nonce can state is far in the future, not in the window; one
	// second later is no body nonce at all.
	maxSecs := &Token{Nonce: "9007199254740991-" + BodyNonce(tokenTestNow, body)[len("1767366245-"):]}
	if err := maxSecs.CheckBodyNonce(tokenTestNow, body, TokenMaxAge); !errors.Is(err, ErrExpired) {
		t.Fatalf("CheckBodyNonce(2^53-1 seconds) = %v, want ErrExpired", err)
	}
	beyond := &Token{Nonce: "9007199254740992-" + BodyNonce(tokenTestNow, body)[len("1767366245-"):]}
	if err := beyond.CheckBodyNonce(tokenTestNow, body, TokenMaxAge); !errors.Is(err, ErrMalformed) {
		t.Fatalf("CheckBodyNonce(2^53 seconds) = %v, want ErrMalformed", err)
	}
	zero := &Token{Nonce: "0-" + BodyNonce(tokenTestNow, body)[len("1767366245-"):]}
	if err := zero.CheckBodyNonce(tokenTestNow, body, TokenMaxAge); !errors.Is(err, ErrExpired) {
		t.Fatalf("CheckBodyNonce(0 seconds) = %v, want ErrExpired", err)
	}
}

func TestParseTokenRejects(t *testing.T) {
	key := tokenTestKey(1)
	good := tokenMustSign(t, key, BodyNonce(tokenTestNow, nil))
	p := strings.Split(good, ".")
	op, nonce, sig := p[0], p[1], p[2]
	raw, _ := base64.StdEncoding.DecodeString(sig)
	allOnes := bytes.Repeat([]byte{0xff}, ed25519.SignatureSize)
	join := func(parts ...string) string { return strings.Join(parts, ".") }
	cases := map[string]string{
		"empty":                "",
		"Bearer only":          "Bearer ",
		"two parts":            join(op, nonce),
		"four parts":           join(op, nonce, sig, "x"),
		"trailing dot":         good + ".",
		"empty operator":       join("", nonce, sig),
		"empty nonce":          join(op, "", sig),
		"empty signature":      join(op, nonce, ""),
		"uppercase operator":   join(strings.ToUpper(op), nonce, sig),
		"uppercase hex op":     join("op_"+strings.ToUpper(op[3:]), nonce, sig),
		"short operator":       join(op[:len(op)-1], nonce, sig),
		"long operator":        join(op+"0", nonce, sig),
		"wrong op prefix":      join("ob_"+op[3:], nonce, sig),
		"nonce too short":      join(op, "abcdefghijklmno", sig),
		"nonce too long":       join(op, strings.Repeat("a", 257), sig),
		"unprefixed challenge": join(op, "abcdefghijklmnopqrstuvwxyz", sig),
		"challenge too short":  join(op, ChallengePrefix+"abcdefghijklmno", sig),
		"challenge too long":   join(op, ChallengePrefix+strings.Repeat("a", 257), sig),
		"challenge colon body": join(op, ChallengePrefix+"abcdefgh:ijklmnop", sig),
		"statement nonce":      join(op, "withdraw_op_0123456789abcdef_at_x", sig),
		"nonce with space":     join(op, "abcdefgh ijklmnop", sig),
		"nonce with plus":      join(op, "abcdefgh+ijklmnop", sig),
		"63-byte signature":    join(op, nonce, base64.StdEncoding.EncodeToString(raw[:63])),
		"65-byte signature":    join(op, nonce, base64.StdEncoding.EncodeToString(append(raw, 0))),
		"URL-safe base64":      join(op, nonce, base64.URLEncoding.EncodeToString(allOnes)),
		"unpadded base64":      join(op, nonce, base64.RawStdEncoding.EncodeToString(raw)),
		"newline in signature": join(op, nonce, sig[:40]+"\n"+sig[40:len(sig)-1]),
		"non-zero pad bits":    join(op, nonce, sig[:85]+"B=="),
		"double space Bearer":  "Bearer  " + good,
		"Basic scheme":         "Basic " + good,
		"too long":             join(op, nonce, sig) + strings.Repeat("=", 1024),
		"leading space":        " " + good,
		"trailing newline":     good + "\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			tok, err := ParseToken(in)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParseToken(%q) = %+v, %v; want ErrMalformed", in, tok, err)
			}
		})
	}
}

func TestSignTokenRejects(t *testing.T) {
	cases := map[string]struct {
		key   ed25519.PrivateKey
		nonce string
	}{
		"short key":       {tokenTestKey(1)[:63], BodyNonce(tokenTestNow, nil)},
		"nil key":         {nil, BodyNonce(tokenTestNow, nil)},
		"short nonce":     {tokenTestKey(1), "abc"},
		"no prefix":       {tokenTestKey(1), "abcdefghijklmnopqrstuvwxyz"},
		"withdrawal":      {tokenTestKey(1), "withdraw op_0123456789abcdef at 2026-01-02T15:04:05Z"},
		"dot in nonce":    {tokenTestKey(1), "abcdefgh.ijklmnop"},
		"non-ASCII nonce": {tokenTestKey(1), "abcdefghijklmnopé"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if s, err := SignToken(tc.key, tc.nonce); !errors.Is(err, ErrMalformed) {
				t.Fatalf("SignToken = %q, %v; want ErrMalformed", s, err)
			}
		})
	}
}

func FuzzParseToken(f *testing.F) {
	key := tokenTestKey(7)
	body := BodyNonce(tokenTestNow, []byte("body"))
	for _, s := range []string{
		tokenMustSign(f, key, body),
		"Bearer " + tokenMustSign(f, key, body),
		tokenMustSign(f, key, "cairn-challenge:challenge_0123456789-ABC"),
		tokenMustSign(f, key, ChallengePrefix+strings.Repeat("z", 256)),
		"op_0123456789abcdef.abcdefghijklmnop." + strings.Repeat("A", 86) + "==",
		"", "...", "Bearer ", "op_.x.y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := ParseToken(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParseToken error %v does not wrap ErrMalformed", err)
			}
			return
		}
		again, err := ParseToken(tok.String())
		if err != nil {
			t.Fatalf("ParseToken(%q) failed on its own String %q: %v", s, tok.String(), err)
		}
		if !reflect.DeepEqual(tok, again) || again.String() != tok.String() {
			t.Fatalf("round trip changed token: %+v then %+v", tok, again)
		}
		// Verify and CheckBodyNonce must not panic on any parsed token.
		_ = tok.Verify(key.Public().(ed25519.PublicKey))
		_ = tok.CheckBodyNonce(tokenTestNow, []byte("body"), TokenMaxAge)
	})
}

func BenchmarkVerifyToken(b *testing.B) {
	key := tokenTestKey(1)
	pub := key.Public().(ed25519.PublicKey)
	body := bytes.Repeat([]byte("x"), 1024)
	s := "Bearer " + tokenMustSign(b, key, BodyNonce(tokenTestNow, body))
	for b.Loop() {
		tok, err := ParseToken(s)
		if err != nil {
			b.Fatal(err)
		}
		if err := tok.Verify(pub); err != nil {
			b.Fatal(err)
		}
		if err := tok.CheckBodyNonce(tokenTestNow, body, TokenMaxAge); err != nil {
			b.Fatal(err)
		}
	}
}
