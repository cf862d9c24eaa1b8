package protocol

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// renameVectorDir holds the rename vectors (docs/PROTOCOL.md §6): inputs, the message
// the signature covers and the verdict, one file each.
const renameVectorDir = "testdata/rename"

// renameVector is one file of testdata/rename.
type renameVector struct {
	Desc string `json:"desc"`
	// Inputs: public_key_pem (the operator's current key), operator_id (its registered
	// ID), now (the verifier's clock), and the rename as sent.
	Inputs struct {
		PublicKeyPEM string `json:"public_key_pem"`
		OperatorID   string `json:"operator_id"`
		Now          string `json:"now"`
		Rename       Rename `json:"rename"`
	} `json:"inputs"`
	// Message is the bytes the signature covers, as RenameMessage builds them.
	Message string `json:"message"`
	// Expected is "ok", or the verdict of §9 (malformed, signature, key_not_trusted) or
	// "expired".
	Expected string `json:"expected"`
}

// renameVectors builds the rename vectors from fixed keys and times.
func renameVectors(tb testing.TB) map[string]renameVector {
	key, other := stmtTestKey(1), stmtTestKey(7)
	pub := stmtPub(key)
	pemText, err := MarshalPublicKeyPEM(pub)
	if err != nil {
		tb.Fatal(err)
	}
	id := OperatorID(pub)
	now := time.Date(2026, 11, 21, 16, 0, 0, 0, time.UTC)
	honest, err := NewRename(key, id, "Acme Research GmbH", "security@acme.example", now)
	if err != nil {
		tb.Fatal(err)
	}
	resign := func(r Rename) Rename {
		msg, err := RenameMessage(r.OperatorID, r.OrgName, r.Contact, r.At)
		if err != nil {
			tb.Fatal(err)
		}
		r.Signature = signB64(key, msg)
		return r
	}
	cases := map[string]struct {
		desc   string
		rename Rename
		want   string
	}{
		"valid": {"An honest rename: the name and contact the operator's current key signs", honest, "ok"},
		"no-contact": {"A rename that gives no contact: contact is the empty string, signed as such",
			resign(Rename{OperatorID: id, OrgName: "Acme Research", At: honest.At}), "ok"},
		"unicode": {"A name outside ASCII and with JSON's special characters: the message is RFC 8785, one reading only",
			resign(Rename{OperatorID: id, OrgName: "Ærø \"Quoted\" \\ Org\u2028", Contact: "ops@ærø.example", At: honest.At}), "ok"},
		"name-changed": {"The org name changed after signing: a rename no signature covers",
			func() Rename { r := honest; r.OrgName = "Evil Corp"; return r }(), "signature"},
		"contact-changed": {"The contact changed after signing",
			func() Rename { r := honest; r.Contact = "evil@example.org"; return r }(), "signature"},
		"other-key": {"Signed by a key that is not the operator's current key",
			func() Rename {
				r := honest
				msg, _ := RenameMessage(r.OperatorID, r.OrgName, r.Contact, r.At)
				r.Signature = signB64(other, msg)
				return r
			}(), "signature"},
		"other-operator": {"Names another operator: a statement signed for one operator is not another's",
			resign(Rename{OperatorID: OperatorID(stmtPub(other)), OrgName: honest.OrgName, At: honest.At}), "key_not_trusted"},
		"future": {"Dated more than five minutes after the verifier's clock",
			resign(Rename{OperatorID: id, OrgName: honest.OrgName, At: now.Add(StatementMaxAge + time.Second).Format(time.RFC3339)}), "expired"},
		"empty-name": {"An empty org name", resign(Rename{OperatorID: id, OrgName: "", At: honest.At}), "malformed"},
		"long-contact": {"A contact over 320 characters",
			resign(Rename{OperatorID: id, OrgName: "Acme", Contact: strings.Repeat("c", ContactMaxLen+1), At: honest.At}), "malformed"},
		"bad-time": {"at is not RFC 3339", resign(Rename{OperatorID: id, OrgName: "Acme", At: "yesterday"}), "malformed"},
	}
	out := map[string]renameVector{}
	for name, c := range cases {
		var v renameVector
		v.Desc, v.Expected = c.desc, c.want
		v.Inputs.PublicKeyPEM, v.Inputs.OperatorID, v.Inputs.Now, v.Inputs.Rename = string(pemText), id, now.Format(time.RFC3339), c.rename
		msg, err := RenameMessage(c.rename.OperatorID, c.rename.OrgName, c.rename.Contact, c.rename.At)
		if err != nil {
			tb.Fatal(err)
		}
		v.Message = string(msg)
		out[name] = v
	}
	return out
}

// renameVerdict names err as the vectors do.
func renameVerdict(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrExpired):
		return "expired"
	case errors.Is(err, ErrKeyNotTrusted):
		return "key_not_trusted"
	case errors.Is(err, ErrSignature):
		return "signature"
	case errors.Is(err, ErrMalformed):
		return "malformed"
	}
	return "unexpected: " + err.Error()
}

// TestRenameVectors keeps testdata/rename equal to what renameVectors builds (-update
// rewrites it) and checks each committed file: its message is RenameMessage of its inputs
// and Rename.VerifyAs gives its verdict.
func TestRenameVectors(t *testing.T) {
	want := renameVectors(t)
	if *update {
		if err := os.RemoveAll(renameVectorDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(renameVectorDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range want {
			raw, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(renameVectorDir, "rename-"+name+".json"), append(raw, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(renameVectorDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, path := range files {
		names = append(names, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "rename-"), ".json"))
	}
	var wantNames []string
	for name := range want {
		wantNames = append(wantNames, name)
	}
	slices.Sort(names)
	slices.Sort(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Fatalf("testdata/rename holds %v, the generator %v (go test ./pkg/protocol -run RenameVectors -update)", names, wantNames)
	}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v renameVector
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			pub, err := ParsePublicKeyPEM([]byte(v.Inputs.PublicKeyPEM))
			if err != nil {
				t.Fatal(err)
			}
			now, err := time.Parse(time.RFC3339, v.Inputs.Now)
			if err != nil {
				t.Fatal(err)
			}
			r := v.Inputs.Rename
			msg, err := RenameMessage(r.OperatorID, r.OrgName, r.Contact, r.At)
			if err != nil || string(msg) != v.Message {
				t.Errorf("RenameMessage = %q, %v; the vector says %q", msg, err, v.Message)
			}
			if got := renameVerdict(r.VerifyAs(v.Inputs.OperatorID, pub, now)); got != v.Expected {
				t.Errorf("%s: VerifyAs = %s, want %s", v.Desc, got, v.Expected)
			}
		})
	}
}

// TestRenameMessageIsOneReading: two renames that differ in any field never sign the same
// bytes, even when a name holds what a naive "name contact" join would split on.
func TestRenameMessageIsOneReading(t *testing.T) {
	id := OperatorID(stmtPub(stmtTestKey(1)))
	at := "2026-11-21T16:00:00Z"
	pairs := [][2]Rename{
		{{OperatorID: id, OrgName: "Acme ops@x", Contact: "", At: at}, {OperatorID: id, OrgName: "Acme", Contact: "ops@x", At: at}},
		{{OperatorID: id, OrgName: `Acme","contact":"x`, At: at}, {OperatorID: id, OrgName: "Acme", Contact: "x", At: at}},
	}
	for _, p := range pairs {
		a, errA := RenameMessage(p[0].OperatorID, p[0].OrgName, p[0].Contact, p[0].At)
		b, errB := RenameMessage(p[1].OperatorID, p[1].OrgName, p[1].Contact, p[1].At)
		if errA != nil || errB != nil || string(a) == string(b) {
			t.Errorf("%+v and %+v sign %q and %q (%v, %v)", p[0], p[1], a, b, errA, errB)
		}
	}
	if _, err := RenameMessage(id, "Acme\xff", "", at); !errors.Is(err, ErrMalformed) {
		t.Errorf("RenameMessage of invalid UTF-8 = %v, want ErrMalformed", err)
	}
	if _, err := NewRename(stmtTestKey(1)[:10], id, "Acme", "", time.Now()); !errors.Is(err, ErrMalformed) {
		t.Errorf("NewRename with a short key = %v, want ErrMalformed", err)
	}
}

// renameExample is docs/PROTOCOL.md §6's rename: the export example's operator names its
// organization and contact.
func renameExample(tb testing.TB, key ed25519.PrivateKey) docExample {
	tb.Helper()
	rn, err := NewRename(key, OperatorID(stmtPub(key)), "Acme Research GmbH", "security@acme.example", time.Date(2026, 11, 21, 16, 0, 0, 0, time.UTC))
	if err != nil {
		tb.Fatal(err)
	}
	msg, err := RenameMessage(rn.OperatorID, rn.OrgName, rn.Contact, rn.At)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := json.Marshal(rn)
	if err != nil {
		tb.Fatal(err)
	}
	return docExample{"rename", [][2]string{{"message", string(msg)}, {"signature", rn.Signature}, {"body", string(body)}}}
}
