package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestHostileChallengeBuysNoStatement is issue 14's hole 6: a hostile server hands the
// client, as the "challenge nonce" to sign, the bytes of a withdrawal or of a key rotation.
// The client must refuse, and no signature it could return may verify as that statement.
func TestHostileChallengeBuysNoStatement(t *testing.T) {
	key := stmtTestKey(6)
	pub := stmtPub(key)
	id := OperatorID(pub)
	at := stmtTestNow.Format(time.RFC3339)

	t.Run("withdrawal", func(t *testing.T) {
		nonce := string(WithdrawalMessage(id, at))
		sig, err := SignChallenge(key, nonce)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("SignChallenge(%q) = %q, %v; want ErrMalformed", nonce, sig, err)
		}
		w := Withdrawal{OperatorID: id, At: at, Signature: sig}
		if err := w.Verify(pub, stmtTestNow); err == nil {
			t.Fatalf("a signature over the challenge %q verifies as a withdrawal", nonce)
		}
	})
	t.Run("rotation", func(t *testing.T) {
		// The server holds a key the operator does not: it rotates the operator to it.
		attacker := stmtTestKey(66)
		pemText, err := MarshalPublicKeyPEM(stmtPub(attacker))
		if err != nil {
			t.Fatal(err)
		}
		msg := RotationMessage(string(pemText), at)
		sig, err := SignChallenge(key, string(msg))
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("SignChallenge(%q) = %q, %v; want ErrMalformed", msg, sig, err)
		}
		r := KeyRotation{OperatorID: id, NewPublicKey: string(pemText), RotationAt: at,
			OldKeySignature: sig, NewKeySignature: signB64(attacker, msg)}
		if _, err := r.Verify(pub, stmtTestNow); err == nil {
			t.Fatalf("a signature over the challenge %q verifies as a key rotation", msg)
		}
	})
}

// signedForm is one form an operator key signs: its leading bytes, an honest message of
// the form with its signature, and a reader that tries to verify any bytes as this form,
// choosing the fields as an attacker would so that the form's message equals those bytes.
type signedForm struct {
	name string
	lead string // every message of the form starts with it; "0-9": with a decimal digit
	msg  []byte
	sig  string
	// read verifies msg under pub as this form; errNotThisForm when no message of the form
	// equals msg.
	read func(t *testing.T, pub ed25519.PublicKey, msg []byte, sig string) error
}

var errNotThisForm = errors.New("no message of this form equals these bytes")

// signedForms returns every form key signs, each with an honest message.
func signedForms(t *testing.T, key ed25519.PrivateKey, now time.Time) []signedForm {
	t.Helper()
	pub := stmtPub(key)
	id := OperatorID(pub)
	newKey := stmtTestKey(4)
	challenge, err := NewChallenge("srv-nonce_0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	challengeSig, err := SignChallenge(key, challenge)
	if err != nil {
		t.Fatal(err)
	}
	bodyNonce := BodyNonce(now, []byte(`{"hello":"federation"}`))
	token, err := SignToken(key, bodyNonce)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWithdrawal(key, now)
	rot, err := NewKeyRotation(key, newKey, now)
	if err != nil {
		t.Fatal(err)
	}
	header, headerSig := signedFormsHeader(t, key)
	ren, err := NewRename(key, id, "Acme Research", "ops@acme.example", now)
	if err != nil {
		t.Fatal(err)
	}
	renMsg, err := RenameMessage(ren.OperatorID, ren.OrgName, ren.Contact, ren.At)
	if err != nil {
		t.Fatal(err)
	}

	return []signedForm{
		{"challenge", ChallengePrefix, []byte(challenge), challengeSig,
			func(_ *testing.T, pub ed25519.PublicKey, msg []byte, sig string) error {
				return VerifyChallenge(pub, string(msg), sig)
			}},
		{"body-nonce token", "0-9", []byte(bodyNonce), token[strings.LastIndexByte(token, '.')+1:],
			func(_ *testing.T, pub ed25519.PublicKey, msg []byte, sig string) error {
				raw, err := base64.StdEncoding.DecodeString(sig)
				if err != nil {
					return err
				}
				tok := &Token{OperatorID: OperatorID(pub), Nonce: string(msg), Signature: raw}
				if err := tok.Verify(pub); err != nil {
					return err
				}
				// What the server reads off the wire must be the same token.
				parsed, err := ParseToken(tok.String())
				if err != nil {
					return err
				}
				if err := parsed.Verify(pub); err != nil {
					return err
				}
				if !IsBodyNonce(parsed.Nonce) {
					return errNotThisForm // a challenge: the challenge row reads it
				}
				return nil
			}},
		{"registration proof", "register ", RegistrationMessage("Acme Research", pub), SignRegistration(key, "Acme Research"),
			func(_ *testing.T, pub ed25519.PublicKey, msg []byte, sig string) error {
				org, prefixed := strings.CutPrefix(string(msg), "register ")
				org, suffixed := strings.CutSuffix(org, " "+Fingerprint(pub))
				if !prefixed || !suffixed {
					return errNotThisForm
				}
				return VerifyRegistration(pub, org, sig)
			}},
		{"withdrawal", "withdraw ", WithdrawalMessage(w.OperatorID, w.At), w.Signature,
			func(_ *testing.T, pub ed25519.PublicKey, msg []byte, sig string) error {
				rest, ok := strings.CutPrefix(string(msg), "withdraw "+OperatorID(pub)+" at ")
				if !ok {
					return errNotThisForm
				}
				return Withdrawal{OperatorID: OperatorID(pub), At: rest, Signature: sig}.Verify(pub, now)
			}},
		{"key rotation", rotationLead, RotationMessage(rot.NewPublicKey, rot.RotationAt), rot.OldKeySignature,
			func(_ *testing.T, pub ed25519.PublicKey, msg []byte, sig string) error {
				// Any split of msg into new_public_key ‖ rotation_at; the new key's
				// signature is the attacker's, who holds newKey.
				err := errNotThisForm
				for i := 0; i <= len(msg); i++ {
					r := KeyRotation{OperatorID: id, NewPublicKey: string(msg[:i]), RotationAt: string(msg[i:]),
						OldKeySignature: sig, NewKeySignature: signB64(newKey, msg)}
					if _, e := r.Verify(pub, now); e == nil {
						return nil
					} else if errors.Is(e, ErrSignature) {
						err = e
					}
				}
				return err
			}},
		{"rename", RenameLead, renMsg, ren.Signature,
			func(_ *testing.T, pub ed25519.PublicKey, msg []byte, sig string) error {
				body, ok := bytes.CutPrefix(msg, []byte(RenameLead))
				var st renameStatement
				if !ok || json.Unmarshal(body, &st) != nil {
					return errNotThisForm
				}
				r := Rename{OperatorID: st.OperatorID, OrgName: st.OrgName, Contact: st.Contact, At: st.At, Signature: sig}
				if again, err := RenameMessage(r.OperatorID, r.OrgName, r.Contact, r.At); err != nil || !bytes.Equal(again, msg) {
					return errNotThisForm
				}
				return r.VerifyAs(OperatorID(pub), pub, now)
			}},
		{"export header", "{", header, headerSig,
			func(_ *testing.T, pub ed25519.PublicKey, msg []byte, sig string) error {
				_, err := VerifySignedHeader(msg, sig, pub)
				return err
			}},
	}
}

// signedFormsHeader returns the signed bytes of a one-entry export's header and their
// envelope signature by key.
func signedFormsHeader(t *testing.T, key ed25519.PrivateKey) ([]byte, string) {
	t.Helper()
	secret := bytes.Repeat([]byte{0x5c}, 32)
	e, err := NewEntry(secret, 1, GenesisPrevHash, SpanBody{Name: "chat", Kind: "client", StatusCode: "OK",
		StartTimeNS: 1, EndTimeNS: 2, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewExportWriter(io.Discard, ExportOptions{Secret: secret, Key: key, ExportedAt: stmtTestNow, HeaderOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(e); err != nil {
		t.Fatal(err)
	}
	h, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	signed, err := h.SignedBytes()
	if err != nil {
		t.Fatal(err)
	}
	return signed, base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed))
}

// startsWithLead reports whether msg starts with a form's leading bytes.
func startsWithLead(msg []byte, lead string) bool {
	if lead == "0-9" {
		return len(msg) > 0 && '0' <= msg[0] && msg[0] <= '9'
	}
	return bytes.HasPrefix(msg, []byte(lead))
}

// TestSignedFormsNeverCollide: every form an operator key signs has its own leading bytes,
// none a prefix of another's; each honest message starts with its own and no other; and a
// signature made for one form verifies as that form only, whichever verifier it is tried on.
func TestSignedFormsNeverCollide(t *testing.T) {
	key := stmtTestKey(9)
	pub := stmtPub(key)
	forms := signedForms(t, key, stmtTestNow)
	for _, a := range forms {
		for _, b := range forms {
			if a.name == b.name {
				if !startsWithLead(a.msg, a.lead) {
					t.Errorf("%s message %q does not start with its lead %q", a.name, a.msg, a.lead)
				}
				if err := a.read(t, pub, a.msg, a.sig); err != nil {
					t.Errorf("honest %s does not verify as itself: %v", a.name, err)
				}
				continue
			}
			if startsWithLead([]byte(b.lead), a.lead) || startsWithLead(b.msg, a.lead) {
				t.Errorf("%s starts like %s (lead %q)", b.name, a.name, a.lead)
			}
			if err := b.read(t, pub, a.msg, a.sig); err == nil {
				t.Errorf("a %s signature verifies as a %s: %q", a.name, b.name, a.msg)
			}
		}
	}
}

// TestClientSignsOnlyItsForms: whatever a server sends as a nonce, the client's nonce
// signers refuse any other form's message; one wrapped in the challenge prefix is a
// challenge, and its signature verifies as nothing but a challenge.
func TestClientSignsOnlyItsForms(t *testing.T) {
	key := stmtTestKey(9)
	pub := stmtPub(key)
	forms := signedForms(t, key, stmtTestNow)
	for _, f := range forms {
		if f.name != "challenge" {
			if s, err := SignChallenge(key, string(f.msg)); !errors.Is(err, ErrMalformed) {
				t.Errorf("SignChallenge(the %s %q) = %q, %v; want ErrMalformed", f.name, f.msg, s, err)
			}
		}
		if f.name != "challenge" && f.name != "body-nonce token" {
			if s, err := SignToken(key, string(f.msg)); !errors.Is(err, ErrMalformed) {
				t.Errorf("SignToken(the %s %q) = %q, %v; want ErrMalformed", f.name, f.msg, s, err)
			}
		}
		for _, wrapped := range []string{ChallengePrefix + string(f.msg), ChallengePrefix + base64.RawURLEncoding.EncodeToString(f.msg)} {
			sig, err := SignChallenge(key, wrapped)
			if err != nil {
				continue
			}
			for _, g := range forms {
				if g.name != "challenge" && g.read(t, pub, []byte(wrapped), sig) == nil {
					t.Errorf("the challenge %q verifies as a %s", wrapped, g.name)
				}
			}
		}
	}
}
