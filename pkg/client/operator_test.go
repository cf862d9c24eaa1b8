package client

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// challengeNonce is a well-formed challenge.
var challengeNonce = "cairn-challenge:" + strings.Repeat("Ab_-", 18) + "xyz"

// TestRegisterSignsTheChallenge checks the posted registration: the server's nonce,
// signed by the key, and the proof of possession over org and fingerprint.
func TestRegisterSignsTheChallenge(t *testing.T) {
	key := testKey(9)
	pub := key.Public().(ed25519.PublicKey)
	f := newFake(t, testKey(1), testID(1), func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method == http.MethodGet {
			writeTestJSON(w, 200, map[string]any{"nonce": challengeNonce})
			return
		}
		var req RegisterRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("register body: %v", err)
		}
		got, err := protocol.ParsePublicKeyPEM([]byte(req.PublicKeyPEM))
		if err != nil || !got.Equal(pub) {
			t.Errorf("public_key_pem %q: %v", req.PublicKeyPEM, err)
		}
		if req.Nonce != challengeNonce {
			t.Errorf("nonce %q, want the server's", req.Nonce)
		}
		if err := protocol.VerifyChallenge(pub, req.Nonce, req.NonceSignature); err != nil {
			t.Errorf("nonce_signature: %v", err)
		}
		if err := protocol.VerifyRegistration(pub, req.OrgName, req.ProofOfPossession); err != nil || req.OrgName != "Example Org" {
			t.Errorf("proof_of_possession for %q: %v", req.OrgName, err)
		}
		if req.ContactEmail != "ops@example.org" {
			t.Errorf("contact_email %q", req.ContactEmail)
		}
		rn := protocol.Rename{OperatorID: protocol.OperatorID(pub), OrgName: req.OrgName, Contact: req.ContactEmail, At: req.RenameAt, Signature: req.RenameSignature}
		if err := rn.Verify(pub, time.Now()); err != nil {
			t.Errorf("the rename signing the contact: %v", err)
		}
		writeTestJSON(w, 200, map[string]any{"operator_id": protocol.OperatorID(pub), "org_name": req.OrgName,
			"registered_at": "2026-11-24T09:00:00Z", "tlog_log_index": 4})
	})
	c, err := New(f.URL)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := c.Register(context.Background(), key, "Example Org", "ops@example.org")
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	if reg.OperatorID != protocol.OperatorID(pub) || reg.TLogLogIndex != 4 || reg.RegisteredAt != "2026-11-24T09:00:00Z" {
		t.Errorf("answer %+v", reg)
	}
	if f.requests("POST /federation/register") != 1 {
		t.Errorf("%d posts, want 1", f.requests("POST /federation/register"))
	}
}

// TestRegisterPendingApproval decodes the 202 of a federation that approves
// registrations.
func TestRegisterPendingApproval(t *testing.T) {
	key := testKey(9)
	pub := key.Public().(ed25519.PublicKey)
	f := newFake(t, testKey(1), testID(1), func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Method == http.MethodGet {
			writeTestJSON(w, 200, map[string]any{"nonce": challengeNonce})
			return
		}
		writeTestJSON(w, http.StatusAccepted, map[string]any{"operator_id": protocol.OperatorID(pub), "org_name": "Example Org",
			"status": "pending_approval", "requested_at": "2026-11-24T09:00:00Z"})
	})
	c, err := New(f.URL)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := c.Register(context.Background(), key, "Example Org", "")
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	if !reg.Pending() || reg.RegisteredAt != "" || reg.RequestedAt != "2026-11-24T09:00:00Z" {
		t.Errorf("answer %+v, want a pending registration", reg)
	}
}

// TestRegisterRefusesANonChallenge answers nonces that are not challenges — a body
// nonce, statements, a bare prefix — and checks the client signs and posts nothing.
func TestRegisterRefusesANonChallenge(t *testing.T) {
	for _, nonce := range []string{
		"1795000000-" + strings.Repeat("ab", 32),
		"withdraw " + testID(9) + " at 2026-11-24T09:00:00Z",
		"-----BEGIN PUBLIC KEY-----",
		"cairn-challenge:",
		"cairn-challenge:short",
		"cairn-challenge:" + strings.Repeat("a", 20) + " spaced",
		"",
	} {
		f := newFake(t, testKey(1), testID(1), func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			writeTestJSON(w, 200, map[string]any{"nonce": nonce})
		})
		c, err := New(f.URL)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Register(context.Background(), testKey(9), "Example Org", ""); err == nil {
			t.Errorf("nonce %q: registered", nonce)
		}
		if n := f.requests("POST /federation/register"); n != 0 {
			t.Errorf("nonce %q: %d posts, want 0", nonce, n)
		}
	}
}

// TestTokenBindsEachRequest checks the server-side verification of the client's tokens
// on both operator routes, and that a token does not pass for another body or an
// operator's other key.
func TestTokenBindsEachRequest(t *testing.T) {
	key, id := testKey(1), testID(1)
	f := newFake(t, key, id, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.URL.Path == "/federation/receipts" {
			if q := r.URL.Query(); q.Get("since") != "anchor-20261124-001" || q.Get("limit") != "2" || q.Get("page_token") != "p2" {
				t.Errorf("query %q", r.URL.RawQuery)
			}
			_, _ = w.Write([]byte(`{"operator_id":"` + id + `","receipts":[{"b":1,  "a":2},{"z":"x"}],"next_page_token":"p3"}`))
			return
		}
		writeTestJSON(w, 200, map[string]any{"submission_id": "sub-1"})
	})
	c := newTestClient(t, f, key, id, nil)
	export := []byte(`{"entries":[]}`)
	if _, err := c.Submit(context.Background(), export); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	page, err := c.Receipts(context.Background(), ReceiptsOptions{Since: "anchor-20261124-001", Limit: 2, PageToken: "p2"})
	if err != nil {
		t.Fatalf("Receipts: %v", err)
	}
	if len(page.Receipts) != 2 || string(page.Receipts[0]) != `{"b":1,  "a":2}` || *page.NextPageToken != "p3" {
		t.Errorf("receipts %q next %v: not the bytes the server sent", page.Receipts, page.NextPageToken)
	}
	if err := f.checkToken(f.tokens[0], export); err != nil {
		t.Errorf("submit token: %v", err)
	}
	if err := f.checkToken(f.tokens[1], nil); err != nil {
		t.Errorf("receipts token (empty body): %v", err)
	}
	// The attacks the server's check stops: another body, another key, a stale clock.
	if err := f.checkToken(f.tokens[0], []byte(`{"entries":[1]}`)); err == nil {
		t.Error("the submit token passed for another body")
	}
	otherKey := &fakeFederation{t: t, pub: testKey(2).Public().(ed25519.PublicKey), opID: id, now: time.Now}
	if err := otherKey.checkToken(f.tokens[0], export); err == nil {
		t.Error("the token verified under another key")
	}
	later := &fakeFederation{t: t, pub: f.pub, opID: id, now: func() time.Time { return time.Now().Add(protocol.TokenMaxAge + time.Minute) }}
	if err := later.checkToken(f.tokens[0], export); err == nil {
		t.Error("the token passed six minutes later")
	}
}

// TestOperatorCallsNeedAnOperator checks operator calls without WithOperator, and
// Anchor without WithAdminToken, fail before sending anything.
func TestOperatorCallsNeedAnOperator(t *testing.T) {
	f := newFake(t, testKey(1), testID(1), func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeTestJSON(w, 200, map[string]any{}) })
	c, err := New(f.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Submit(ctx, []byte("{}")); err == nil {
		t.Error("Submit without an operator")
	}
	if _, err := c.Receipts(ctx, ReceiptsOptions{}); err == nil {
		t.Error("Receipts without an operator")
	}
	if _, err := c.Withdraw(ctx); err == nil {
		t.Error("Withdraw without an operator")
	}
	if _, err := c.RotateKey(ctx, testKey(2)); err == nil {
		t.Error("RotateKey without an operator")
	}
	if _, err := c.Anchor(ctx); err == nil {
		t.Error("Anchor without the admin token")
	}
	if f.total() != 0 {
		t.Errorf("%d requests sent, want 0", f.total())
	}
}

// TestRotateThenWithdraw rotates the key, then submits and withdraws: both carry the
// registered ID, signed by the new key.
func TestRotateThenWithdraw(t *testing.T) {
	oldKey, newKey, id := testKey(1), testKey(2), testID(1)
	oldPub, newPub := oldKey.Public().(ed25519.PublicKey), newKey.Public().(ed25519.PublicKey)
	var f *fakeFederation
	f = newFake(t, oldKey, id, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.URL.Path {
		case "/federation/rotate-key":
			var rot protocol.KeyRotation
			if err := json.Unmarshal(body, &rot); err != nil {
				t.Errorf("rotate body: %v", err)
			}
			got, err := rot.Verify(oldPub, time.Now())
			if err != nil || !got.Equal(newPub) || rot.OperatorID != id {
				t.Errorf("rotation %+v: %v", rot, err)
			}
			f.pub = newPub
			writeTestJSON(w, 200, map[string]any{"operator_id": id, "new_public_key": rot.NewPublicKey, "new_fingerprint": "fp"})
		case "/federation/withdraw":
			var wd protocol.Withdrawal
			if err := json.Unmarshal(body, &wd); err != nil {
				t.Errorf("withdraw body: %v", err)
			}
			if err := wd.VerifyAs(id, newPub, time.Now()); err != nil {
				t.Errorf("withdrawal %+v: %v", wd, err)
			}
			writeTestJSON(w, 200, map[string]any{"operator_id": id, "status": "withdrawn"})
		default:
			writeTestJSON(w, 200, map[string]any{"submission_id": "sub-2"})
		}
	})
	c := newTestClient(t, f, oldKey, id, nil)
	ctx := context.Background()
	rot, err := c.RotateKey(ctx, newKey)
	if err != nil || rot.OperatorID != id || rot.NewFingerprint != "fp" {
		t.Fatalf("RotateKey: %+v, %v", rot, err)
	}
	if _, err := c.Submit(ctx, []byte("{}")); err != nil {
		t.Fatalf("Submit after the rotation: %v", err)
	}
	wd, err := c.Withdraw(ctx)
	if err != nil || wd.Status != "withdrawn" {
		t.Fatalf("Withdraw: %+v, %v", wd, err)
	}
	if c.OperatorID() != id {
		t.Errorf("operator ID %q after the rotation", c.OperatorID())
	}
}

// TestNewRefusesBadOptions checks New's validation.
func TestNewRefusesBadOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		url  string
		opts []Option
	}{
		"relative URL":    {"federation.example.org", nil},
		"ftp URL":         {"ftp://federation.example.org", nil},
		"query":           {"https://federation.example.org/?a=b", nil},
		"short key":       {"https://f.example.org", []Option{WithOperator(testID(1), testKey(1)[:32])}},
		"bad operator ID": {"https://f.example.org", []Option{WithOperator("op_XYZ", testKey(1))}},
		"zero attempts":   {"https://f.example.org", []Option{WithRetry(0, time.Second)}},
		"nil clock":       {"https://f.example.org", []Option{WithClock(nil)}},
		"nil HTTP client": {"https://f.example.org", []Option{WithHTTPClient(nil)}},
		"admin newline":   {"https://f.example.org", []Option{WithAdminToken("a\nb")}},
	} {
		if _, err := New(tc.url, tc.opts...); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c, err := New("https://f.example.org/prefix/", WithHTTPClient(&http.Client{}))
	if err != nil || c.base.String() != "https://f.example.org/prefix" {
		t.Errorf("base %v, %v", c, err)
	}
}

// TestSubmitStreamSendsTheWholeFileEachAttempt: a streamed export is sent whole on every
// attempt (the transport does not close the file, the retry seeks back), with a
// Content-Length, each attempt's token binding the file's bytes.
func TestSubmitStreamSendsTheWholeFileEachAttempt(t *testing.T) {
	key, id := testKey(3), testID(3)
	export := bytes.Repeat([]byte(`{"format":"cairn-chain-v2"}`), 5000)
	attempts := 0
	f := newFake(t, key, id, func(w http.ResponseWriter, r *http.Request, body []byte) {
		attempts++
		if !bytes.Equal(body, export) || r.ContentLength != int64(len(export)) {
			t.Errorf("attempt %d: got %d bytes (Content-Length %d), want the %d-byte export", attempts, len(body), r.ContentLength, len(export))
		}
		answerAfterOneRetry(w, attempts)
	})
	c := newTestClient(t, f, key, id, nil)
	fh := exportFile(t, export)
	res, err := c.SubmitStream(context.Background(), fh, int64(len(export)))
	if err != nil || res.SubmissionID != "sub-1" {
		t.Fatalf("SubmitStream: %+v, %v", res, err)
	}
	if attempts != 2 {
		t.Fatalf("%d attempts, want 2", attempts)
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		t.Fatalf("the file was closed by the transport: %v", err)
	}
	if _, err := c.SubmitStream(context.Background(), fh, int64(len(export))+1); err == nil {
		t.Fatal("SubmitStream of a file shorter than the size it was given: no error")
	}
}

// answerAfterOneRetry answers a submission: 503 with Retry-After on the first attempt,
// accepted as sub-1 on the later ones.
func answerAfterOneRetry(w http.ResponseWriter, attempts int) {
	if attempts == 1 {
		w.Header().Set("Retry-After", "1")
		writeTestJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "api_server_unavailable", "message": "later"})
		return
	}
	writeTestJSON(w, http.StatusOK, map[string]any{"submission_id": "sub-1", "verified": true})
}

// exportFile writes export to a file and opens it, closed when the test ends.
func exportFile(t *testing.T, export []byte) *os.File {
	t.Helper()
	file := filepath.Join(t.TempDir(), "export.json")
	if err := os.WriteFile(file, export, 0o600); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fh.Close() })
	return fh
}

// TestRenameAfterRotation renames an operator that rotated its key: the rename names the
// registered ID and is signed by the current key.
func TestRenameAfterRotation(t *testing.T) {
	newKey, id := testKey(2), testID(1) // testID(1) is the first key's ID
	newPub := newKey.Public().(ed25519.PublicKey)
	f := newFake(t, newKey, id, func(w http.ResponseWriter, _ *http.Request, body []byte) {
		var rn protocol.Rename
		if err := json.Unmarshal(body, &rn); err != nil {
			t.Errorf("rename body: %v", err)
		}
		if err := rn.VerifyAs(id, newPub, time.Now()); err != nil || rn.OrgName != "Acme GmbH" || rn.Contact != "sec@acme.example" {
			t.Errorf("rename %+v: %v", rn, err)
		}
		writeTestJSON(w, 200, map[string]any{"operator_id": id, "org_name": rn.OrgName, "contact": rn.Contact, "renamed_at": rn.At, "tlog_log_index": 9})
	})
	c := newTestClient(t, f, newKey, id, nil)
	got, err := c.Rename(context.Background(), "Acme GmbH", "sec@acme.example")
	if err != nil || got.OrgName != "Acme GmbH" || got.TLogLogIndex != 9 {
		t.Fatalf("Rename: %+v, %v", got, err)
	}
	if f.requests("POST /federation/rename") != 1 {
		t.Errorf("%d posts, want 1", f.requests("POST /federation/rename"))
	}
}
