package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

var stmtTestNow = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// stmtTestKey returns a deterministic Ed25519 key derived from n.
func stmtTestKey(n byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
}

func stmtPub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// stmtFlip returns sigB64 with one bit of the decoded signature flipped.
func stmtFlip(t *testing.T, sigB64 string) string {
	t.Helper()
	sig, err := base64.StdEncoding.DecodeString(sigB64)
	if err != nil {
		t.Fatal(err)
	}
	sig[5] ^= 0x40
	return base64.StdEncoding.EncodeToString(sig)
}

// stmtCheck fails unless err wraps want (nil means success) and, for a non-nil want,
// mentions each of mention.
func stmtCheck(t *testing.T, err, want error, mention ...string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	for _, m := range mention {
		if !strings.Contains(err.Error(), m) {
			t.Fatalf("err = %q, want it to mention %q", err, m)
		}
	}
}

func TestRegistrationMessage(t *testing.T) {
	pub := stmtPub(stmtTestKey(1))
	got := string(RegistrationMessage(" Acme  Corp", pub))
	if want := "register  Acme  Corp " + Fingerprint(pub); got != want {
		t.Fatalf("RegistrationMessage = %q, want %q (org name verbatim)", got, want)
	}
}

func TestRegistration(t *testing.T) {
	key := stmtTestKey(1)
	sig := SignRegistration(key, "acme")
	if len(sig) != 88 {
		t.Fatalf("SignRegistration = %q, want 88 base64 characters", sig)
	}
	cases := map[string]struct {
		pub  ed25519.PublicKey
		org  string
		sig  string
		want error
	}{
		"round trip":       {stmtPub(key), "acme", sig, nil},
		"other org":        {stmtPub(key), "acme2", sig, ErrSignature},
		"org case":         {stmtPub(key), "Acme", sig, ErrSignature},
		"org with space":   {stmtPub(key), "acme ", sig, ErrSignature},
		"other key":        {stmtPub(stmtTestKey(2)), "acme", sig, ErrSignature},
		"tampered sig":     {stmtPub(key), "acme", stmtFlip(t, sig), ErrSignature},
		"empty sig":        {stmtPub(key), "acme", "", ErrMalformed},
		"unpadded sig":     {stmtPub(key), "acme", strings.TrimRight(sig, "="), ErrMalformed},
		"short public key": {stmtPub(key)[:16], "acme", sig, ErrMalformed},
		"bad key signs":    {stmtPub(key), "acme", SignRegistration(key[:10], "acme"), ErrMalformed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stmtCheck(t, VerifyRegistration(tc.pub, tc.org, tc.sig), tc.want)
		})
	}
}

func TestChallenge(t *testing.T) {
	key := stmtTestKey(1)
	nonce := "cairn-challenge:srv-nonce_0123456789abcdef"
	sig, err := SignChallenge(key, nonce)
	if err != nil {
		t.Fatalf("SignChallenge: %v", err)
	}
	otherKey, _ := SignChallenge(stmtTestKey(2), nonce)
	cases := map[string]struct {
		pub   ed25519.PublicKey
		nonce string
		sig   string
		want  error
	}{
		"round trip":      {stmtPub(key), nonce, sig, nil},
		"other nonce":     {stmtPub(key), nonce + "x", sig, ErrSignature},
		"other key":       {stmtPub(stmtTestKey(2)), nonce, sig, ErrSignature},
		"signed by other": {stmtPub(key), nonce, otherKey, ErrSignature},
		"tampered sig":    {stmtPub(key), nonce, stmtFlip(t, sig), ErrSignature},
		"URL-safe sig":    {stmtPub(key), nonce, base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xff}, 64)), ErrMalformed},
		"nil key":         {nil, nonce, sig, ErrMalformed},
		"no prefix":       {stmtPub(key), strings.TrimPrefix(nonce, ChallengePrefix), sig, ErrMalformed},
		"short body":      {stmtPub(key), ChallengePrefix + "0123456789abcde", sig, ErrMalformed},
		"long body":       {stmtPub(key), ChallengePrefix + strings.Repeat("a", 257), sig, ErrMalformed},
		"space in body":   {stmtPub(key), ChallengePrefix + "0123456789 abcdef", sig, ErrMalformed},
		"upper prefix":    {stmtPub(key), strings.ToUpper(ChallengePrefix) + "srv-nonce_0123456789abcdef", sig, ErrMalformed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stmtCheck(t, VerifyChallenge(tc.pub, tc.nonce, tc.sig), tc.want)
		})
	}
	refuse := map[string]struct {
		key   ed25519.PrivateKey
		nonce string
	}{
		"bad key":      {key[:10], nonce},
		"nil key":      {nil, nonce},
		"no prefix":    {key, "srv-nonce_0123456789abcdef"},
		"withdrawal":   {key, string(WithdrawalMessage(OperatorID(stmtPub(key)), "2026-01-02T15:04:05Z"))},
		"registration": {key, string(RegistrationMessage("acme", stmtPub(key)))},
		"body nonce":   {key, BodyNonce(stmtTestNow, nil)},
		"prefix only":  {key, ChallengePrefix},
		"prefix twice": {key, ChallengePrefix + ChallengePrefix + "0123456789abcdef"},
	}
	for name, tc := range refuse {
		t.Run("sign "+name, func(t *testing.T) {
			if s, err := SignChallenge(tc.key, tc.nonce); !errors.Is(err, ErrMalformed) || s != "" {
				t.Fatalf("SignChallenge(%q) = %q, %v; want \"\", ErrMalformed", tc.nonce, s, err)
			}
		})
	}
	if c, err := NewChallenge("srv-nonce_0123456789abcdef"); err != nil || c != nonce {
		t.Fatalf("NewChallenge = %q, %v; want %q", c, err, nonce)
	}
	if c, err := NewChallenge("withdraw op_x at now"); !errors.Is(err, ErrMalformed) {
		t.Fatalf("NewChallenge(statement) = %q, %v; want ErrMalformed", c, err)
	}
}

func TestWithdrawal(t *testing.T) {
	key := stmtTestKey(1)
	pub := stmtPub(key)
	w := NewWithdrawal(key, stmtTestNow.In(time.FixedZone("X", 3600)).Add(500*time.Millisecond))
	if w.At != "2026-01-02T15:04:05Z" || w.OperatorID != OperatorID(pub) {
		t.Fatalf("NewWithdrawal = %+v, want at 2026-01-02T15:04:05Z and operator %s", w, OperatorID(pub))
	}
	if got, want := string(WithdrawalMessage(w.OperatorID, w.At)), "withdraw "+OperatorID(pub)+" at 2026-01-02T15:04:05Z"; got != want {
		t.Fatalf("WithdrawalMessage = %q, want %q", got, want)
	}
	with := func(f func(*Withdrawal)) Withdrawal { c := w; f(&c); return c }
	cases := map[string]struct {
		w    Withdrawal
		pub  ed25519.PublicKey
		now  time.Time
		want error
	}{
		"round trip":          {w, pub, stmtTestNow, nil},
		"exactly 5 min later": {w, pub, stmtTestNow.Add(StatementMaxAge), nil},
		"exactly 5 min early": {w, pub, stmtTestNow.Add(-StatementMaxAge), nil},
		"5 min 1 s later":     {w, pub, stmtTestNow.Add(StatementMaxAge + time.Second), ErrExpired},
		"5 min 1 s early":     {w, pub, stmtTestNow.Add(-StatementMaxAge - time.Second), ErrExpired},
		"other key":           {w, stmtPub(stmtTestKey(2)), stmtTestNow, ErrKeyNotTrusted},
		"other operator id":   {with(func(c *Withdrawal) { c.OperatorID = OperatorID(stmtPub(stmtTestKey(2))) }), pub, stmtTestNow, ErrKeyNotTrusted},
		"at rewritten":        {with(func(c *Withdrawal) { c.At = "2026-01-02T15:04:06Z" }), pub, stmtTestNow, ErrSignature},
		"same time new zone":  {with(func(c *Withdrawal) { c.At = "2026-01-02T16:04:05+01:00" }), pub, stmtTestNow, ErrSignature},
		"at not RFC 3339":     {with(func(c *Withdrawal) { c.At = "2026-01-02 15:04:05" }), pub, stmtTestNow, ErrMalformed},
		"at empty":            {with(func(c *Withdrawal) { c.At = "" }), pub, stmtTestNow, ErrMalformed},
		"tampered signature":  {with(func(c *Withdrawal) { c.Signature = stmtFlip(t, c.Signature) }), pub, stmtTestNow, ErrSignature},
		"missing signature":   {with(func(c *Withdrawal) { c.Signature = "" }), pub, stmtTestNow, ErrMalformed},
		"short key":           {w, pub[:31], stmtTestNow, ErrMalformed},
		"bad signing key":     {NewWithdrawal(key[:63], stmtTestNow), pub, stmtTestNow, ErrKeyNotTrusted},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stmtCheck(t, tc.w.Verify(tc.pub, tc.now), tc.want)
		})
	}

	// A client may send fractional seconds or an offset; the signature covers at as sent.
	frac := Withdrawal{OperatorID: OperatorID(pub), At: "2026-01-02T16:04:05.25+01:00"}
	frac.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, WithdrawalMessage(frac.OperatorID, frac.At)))
	stmtCheck(t, frac.Verify(pub, stmtTestNow), nil)
}

func TestKeyRotation(t *testing.T) {
	oldKey, newKey := stmtTestKey(1), stmtTestKey(2)
	oldPub, newPub := stmtPub(oldKey), stmtPub(newKey)
	r, err := NewKeyRotation(oldKey, newKey, stmtTestNow)
	if err != nil {
		t.Fatal(err)
	}
	if r.OperatorID != OperatorID(oldPub) || r.RotationAt != "2026-01-02T15:04:05Z" || !strings.HasPrefix(r.NewPublicKey, "-----BEGIN PUBLIC KEY-----\n") {
		t.Fatalf("NewKeyRotation = %+v", r)
	}
	if got := string(RotationMessage(r.NewPublicKey, r.RotationAt)); got != r.NewPublicKey+"2026-01-02T15:04:05Z" {
		t.Fatalf("RotationMessage = %q", got)
	}
	thirdPEM, err := MarshalPublicKeyPEM(stmtPub(stmtTestKey(3)))
	if err != nil {
		t.Fatal(err)
	}
	oldPEM, err := MarshalPublicKeyPEM(oldPub)
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(*KeyRotation)) KeyRotation { c := r; f(&c); return c }
	// resign keeps both signatures valid for a changed body, to reach the later checks.
	resign := func(c KeyRotation) KeyRotation {
		msg := RotationMessage(c.NewPublicKey, c.RotationAt)
		c.OldKeySignature = base64.StdEncoding.EncodeToString(ed25519.Sign(oldKey, msg))
		c.NewKeySignature = base64.StdEncoding.EncodeToString(ed25519.Sign(newKey, msg))
		return c
	}
	cases := map[string]struct {
		r       KeyRotation
		pub     ed25519.PublicKey
		now     time.Time
		want    error
		mention string
	}{
		"round trip":          {r, oldPub, stmtTestNow, nil, ""},
		"exactly 5 min later": {r, oldPub, stmtTestNow.Add(StatementMaxAge), nil, ""},
		"exactly 5 min early": {r, oldPub, stmtTestNow.Add(-StatementMaxAge), nil, ""},
		"5 min 1 s later":     {r, oldPub, stmtTestNow.Add(StatementMaxAge + time.Second), ErrExpired, "rotation_at"},
		"5 min 1 s early":     {r, oldPub, stmtTestNow.Add(-StatementMaxAge - time.Second), ErrExpired, "rotation_at"},
		"wrong current key":   {r, stmtPub(stmtTestKey(3)), stmtTestNow, ErrKeyNotTrusted, ""},
		"presented new key":   {r, newPub, stmtTestNow, ErrKeyNotTrusted, ""},
		"operator id changed": {with(func(c *KeyRotation) { c.OperatorID = OperatorID(newPub) }), oldPub, stmtTestNow, ErrKeyNotTrusted, ""},
		"new key swapped":     {with(func(c *KeyRotation) { c.NewPublicKey = string(thirdPEM) }), oldPub, stmtTestNow, ErrSignature, "old_key_signature"},
		"PEM re-wrapped":      {with(func(c *KeyRotation) { c.NewPublicKey = strings.ReplaceAll(c.NewPublicKey, "\n", "\r\n") }), oldPub, stmtTestNow, ErrMalformed, "new_public_key"},
		"rotation_at changed": {with(func(c *KeyRotation) { c.RotationAt = "2026-01-02T15:04:06Z" }), oldPub, stmtTestNow, ErrSignature, "old_key_signature"},
		"old sig tampered":    {with(func(c *KeyRotation) { c.OldKeySignature = stmtFlip(t, c.OldKeySignature) }), oldPub, stmtTestNow, ErrSignature, "old_key_signature"},
		"new sig tampered":    {with(func(c *KeyRotation) { c.NewKeySignature = stmtFlip(t, c.NewKeySignature) }), oldPub, stmtTestNow, ErrSignature, "new_key_signature"},
		"new sig by old key":  {with(func(c *KeyRotation) { c.NewKeySignature = c.OldKeySignature }), oldPub, stmtTestNow, ErrSignature, "new_key_signature"},
		"new sig missing":     {with(func(c *KeyRotation) { c.NewKeySignature = "" }), oldPub, stmtTestNow, ErrMalformed, "new_key_signature"},
		"old sig missing":     {with(func(c *KeyRotation) { c.OldKeySignature = "" }), oldPub, stmtTestNow, ErrMalformed, "old_key_signature"},
		"new sig not base64":  {with(func(c *KeyRotation) { c.NewKeySignature = "!" + c.NewKeySignature[1:] }), oldPub, stmtTestNow, ErrMalformed, "new_key_signature"},
		"new key not PEM":     {with(func(c *KeyRotation) { c.NewPublicKey = "not a key" }), oldPub, stmtTestNow, ErrMalformed, "new_public_key"},
		"new key empty":       {with(func(c *KeyRotation) { c.NewPublicKey = "" }), oldPub, stmtTestNow, ErrMalformed, "new_public_key"},
		"new key is current":  {resign(with(func(c *KeyRotation) { c.NewPublicKey = string(oldPEM) })), oldPub, stmtTestNow, ErrMalformed, "current key"},
		"rotation_at bad":     {resign(with(func(c *KeyRotation) { c.RotationAt = "yesterday" })), oldPub, stmtTestNow, ErrMalformed, "rotation_at"},
		"short current key":   {r, oldPub[:31], stmtTestNow, ErrMalformed, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.r.Verify(tc.pub, tc.now)
			stmtCheck(t, err, tc.want, tc.mention)
			if tc.want == nil && !got.Equal(newPub) {
				t.Fatalf("Verify returned key %x, want %x", got, newPub)
			}
			if tc.want != nil && got != nil {
				t.Fatalf("Verify returned key %x with error %v", got, err)
			}
		})
	}
}

func TestNewKeyRotationRejects(t *testing.T) {
	cases := map[string]struct{ oldKey, newKey ed25519.PrivateKey }{
		"same key":      {stmtTestKey(1), stmtTestKey(1)},
		"short old key": {stmtTestKey(1)[:32], stmtTestKey(2)},
		"nil new key":   {stmtTestKey(1), nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := NewKeyRotation(tc.oldKey, tc.newKey, stmtTestNow); !errors.Is(err, ErrMalformed) {
				t.Fatalf("NewKeyRotation = %v, want ErrMalformed", err)
			}
		})
	}
}

// After a key rotation the operator keeps the ID of its first key; its withdrawal names
// that ID and is signed by the current key.
func TestWithdrawalVerifyAs(t *testing.T) {
	first := ed25519.NewKeyFromSeed(append(make([]byte, 31), 7))
	current := ed25519.NewKeyFromSeed(append(make([]byte, 31), 8))
	id := OperatorID(first.Public().(ed25519.PublicKey))
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	at := now.Format(time.RFC3339)
	w := Withdrawal{OperatorID: id, At: at, Signature: signB64(current, WithdrawalMessage(id, at))}
	pub := current.Public().(ed25519.PublicKey)
	if err := w.VerifyAs(id, pub, now); err != nil {
		t.Fatalf("VerifyAs: %v", err)
	}
	if err := w.Verify(pub, now); !errors.Is(err, ErrKeyNotTrusted) {
		t.Errorf("Verify with the rotated key: %v, want ErrKeyNotTrusted", err)
	}
	if err := w.VerifyAs(OperatorID(pub), pub, now); !errors.Is(err, ErrKeyNotTrusted) {
		t.Errorf("VerifyAs another ID: %v, want ErrKeyNotTrusted", err)
	}
	if err := w.VerifyAs(id, first.Public().(ed25519.PublicKey), now); !errors.Is(err, ErrSignature) {
		t.Errorf("VerifyAs with the old key: %v, want ErrSignature", err)
	}
}
