package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// endpoint is one client call and the request it makes, for the error tables.
type endpoint struct {
	key  string // "METHOD path" the server counts
	call func(ctx context.Context, c *Client) error
}

// endpoints are the client's calls, by the route they reach.
var endpoints = map[string]endpoint{
	"challenge": {"GET /federation/register/challenge", func(ctx context.Context, c *Client) error { _, err := c.Challenge(ctx); return err }},
	"register": {"POST /federation/register", func(ctx context.Context, c *Client) error {
		_, err := c.Register(ctx, testKey(9), "Example Org", "ops@example.org")
		return err
	}},
	"submit": {"POST /federation/submit", func(ctx context.Context, c *Client) error {
		_, err := c.Submit(ctx, []byte(`{"format":"x"}`))
		return err
	}},
	"status":   {"GET /federation/status", func(ctx context.Context, c *Client) error { _, err := c.Status(ctx); return err }},
	"withdraw": {"POST /federation/withdraw", func(ctx context.Context, c *Client) error { _, err := c.Withdraw(ctx); return err }},
	"rotate":   {"POST /federation/rotate-key", func(ctx context.Context, c *Client) error { _, err := c.RotateKey(ctx, testKey(2)); return err }},
	"anchor":   {"POST /federation/anchor", func(ctx context.Context, c *Client) error { _, err := c.Anchor(ctx); return err }},
	"record": {"GET /federation/anchor/anchor-20261124-001", func(ctx context.Context, c *Client) error {
		_, err := c.AnchorRecord(ctx, "anchor-20261124-001")
		return err
	}},
	"verify": {"GET /federation/verify/anchor-20261124-001", func(ctx context.Context, c *Client) error {
		_, err := c.VerifyAnchor(ctx, "anchor-20261124-001")
		return err
	}},
	"receipts": {"GET /federation/receipts", func(ctx context.Context, c *Client) error {
		_, err := c.Receipts(ctx, ReceiptsOptions{Since: "anchor-20261124-001"})
		return err
	}},
	"operator": {"GET /federation/operator/" + testID(1), func(ctx context.Context, c *Client) error {
		_, err := c.Operator(ctx, testID(1), PageOptions{Limit: 5})
		return err
	}},
	"snapshots":  {"GET /federation/log/snapshots", func(ctx context.Context, c *Client) error { _, err := c.LogSnapshots(ctx); return err }},
	"snapshot":   {"GET /federation/log/snapshots/2026-W48", func(ctx context.Context, c *Client) error { _, err := c.LogSnapshot(ctx, "2026-W48"); return err }},
	"checkpoint": {"GET /federation/log/checkpoint", func(ctx context.Context, c *Client) error { _, err := c.LogCheckpoint(ctx); return err }},
	"tile":       {"GET /federation/log/tile/0/000", func(ctx context.Context, c *Client) error { _, err := c.LogTile(ctx, "0/000"); return err }},
}

// errorCase is one documented refusal of one route.
type errorCase struct {
	route  string
	status int
	code   string
	extra  map[string]any
}

// documentedErrors are the refusals of webhook/routes.go, each with the extra fields
// the server adds.
var documentedErrors = []errorCase{
	{"register", 400, "missing_fields", map[string]any{"fields": []any{"nonce", "org_name"}}},
	{"register", 400, "invalid_public_key", nil},
	{"register", 400, "invalid_field", map[string]any{"field": "org_name"}},
	{"register", 400, "invalid_proof_of_possession", nil},
	{"register", 401, "invalid_challenge", nil},
	{"register", 401, "challenge_expired", nil},
	{"register", 401, "challenge_replayed", nil},
	{"register", 401, "invalid_signature", nil},
	{"register", 400, "registration_rejected", map[string]any{"reason": "InvalidKey"}},
	{"register", 409, "key_already_registered", map[string]any{"operator_id": testID(9)}},
	{"register", 504, "registration_pending", nil},
	{"register", 400, "malformed_json", nil},
	{"register", 413, "body_too_large", nil},
	{"submit", 401, "missing_token", nil},
	{"submit", 401, "invalid_token", nil},
	{"submit", 401, "unknown_operator", nil},
	{"submit", 401, "token_expired", nil},
	{"submit", 401, "token_replayed", nil},
	{"submit", 403, "operator_withdrawn", map[string]any{"operator_id": testID(1)}},
	{"submit", 403, "operator_suspended", map[string]any{"operator_id": testID(1)}},
	{"submit", 422, "export_verification_failed", map[string]any{"reason": "entry 3: hmac_hash mismatch"}},
	{"submit", 422, "continuity_violation", map[string]any{
		"expected_first_prev_hash": strings.Repeat("a", 64), "got_first_prev_hash": strings.Repeat("b", 64),
		"previous_submission_id": "sub-0123456789abcdef-1", "hint": "export from the last accepted seq",
		"expected_first_seq": json.Number("11"), "got_first_seq": json.Number("12"),
	}},
	{"submit", 422, "continuity_violation", map[string]any{
		"expected_first_prev_hash": nil, "previous_submission_id": nil, "got_first_seq": json.Number("5"),
		"conflicting_submission_id": "sub-0123456789abcdef-5",
	}},
	{"submit", 422, "entry_count_regression", map[string]any{"previous_entry_count": json.Number("10")}},
	{"submit", 422, "submission_rejected", map[string]any{"reason": "SignatureInvalid"}},
	{"submit", 429, "pending_limit_exceeded", nil},
	{"submit", 429, "rate_limited", nil},
	{"submit", 504, "submission_pending", map[string]any{"submission_id": "sub-0123456789abcdef-1"}},
	{"submit", 413, "body_too_large", nil},
	{"submit", 503, "api_server_unavailable", nil},
	{"submit", 500, "internal", nil},
	{"status", 503, "federation_not_ready", nil},
	{"status", 405, "method_not_allowed", nil},
	{"challenge", 500, "internal", nil},
	{"withdraw", 400, "missing_fields", map[string]any{"fields": []any{"at"}}},
	{"withdraw", 400, "invalid_time", map[string]any{"field": "at"}},
	{"withdraw", 400, "time_out_of_window", map[string]any{"field": "at"}},
	{"withdraw", 400, "invalid_field", nil},
	{"withdraw", 401, "invalid_signature", nil},
	{"withdraw", 404, "operator_not_found", map[string]any{"operator_id": testID(1)}},
	{"withdraw", 403, "operator_withdrawn", map[string]any{"operator_id": testID(1)}},
	{"withdraw", 409, "conflict", nil},
	{"withdraw", 400, "withdrawal_rejected", map[string]any{"reason": "NotLogged"}},
	{"withdraw", 504, "withdrawal_pending", nil},
	{"rotate", 400, "missing_fields", map[string]any{"fields": []any{"rotation_at"}}},
	{"rotate", 400, "invalid_time", map[string]any{"field": "rotation_at"}},
	{"rotate", 400, "time_out_of_window", map[string]any{"field": "rotation_at"}},
	{"rotate", 400, "invalid_public_key", nil},
	{"rotate", 400, "invalid_field", nil},
	{"rotate", 401, "invalid_signature", nil},
	{"rotate", 404, "operator_not_found", map[string]any{"operator_id": testID(1)}},
	{"rotate", 403, "operator_withdrawn", map[string]any{"operator_id": testID(1)}},
	{"rotate", 409, "key_already_registered", map[string]any{"operator_id": testID(2)}},
	{"rotate", 409, "conflict", nil},
	{"rotate", 400, "rotation_rejected", map[string]any{"reason": "KeyInUse"}},
	{"rotate", 504, "rotation_pending", nil},
	{"anchor", 401, "missing_token", nil},
	{"anchor", 401, "invalid_admin_token", nil},
	{"anchor", 503, "federation_not_ready", nil},
	{"anchor", 503, "admin_token_not_configured", nil},
	{"anchor", 504, "anchor_pending", map[string]any{"request_id": "req-1"}},
	{"record", 400, "invalid_anchor_id", nil},
	{"record", 404, "anchor_not_found", nil},
	{"record", 503, "federation_not_ready", nil},
	{"verify", 400, "invalid_anchor_id", nil},
	{"verify", 404, "anchor_not_found", nil},
	{"verify", 503, "federation_not_ready", nil},
	{"receipts", 400, "invalid_anchor_id", nil},
	{"receipts", 400, "invalid_limit", nil},
	{"receipts", 400, "invalid_page_token", nil},
	{"receipts", 401, "unknown_operator", nil},
	{"receipts", 503, "signing_key_unavailable", nil},
	{"operator", 400, "invalid_operator_id", nil},
	{"operator", 400, "invalid_limit", nil},
	{"operator", 400, "invalid_page_token", nil},
	{"operator", 404, "operator_not_found", nil},
	{"operator", 503, "federation_not_ready", nil},
	{"snapshots", 503, "federation_not_ready", nil},
	{"snapshot", 400, "invalid_week", nil},
	{"snapshot", 404, "snapshot_not_found", nil},
	{"checkpoint", 404, "log_not_served", nil},
	{"checkpoint", 404, "not_found", nil},
	{"tile", 404, "not_found", nil},
	{"tile", 503, "federation_not_ready", nil},
}

// TestEveryErrorParses answers each documented refusal and checks the client returns it
// as an *APIError with its status, code, message and extra fields, and that it sent the
// request once unless the status is 429 or 503 (then up to its 3 attempts).
func TestEveryErrorParses(t *testing.T) {
	key, id := testKey(1), testID(1)
	for _, tc := range documentedErrors {
		ep, ok := endpoints[tc.route]
		if !ok {
			t.Fatalf("no endpoint %q", tc.route)
		}
		t.Run(tc.route+"/"+tc.code, func(t *testing.T) {
			msg := "the server's words about " + tc.code
			f := newFake(t, key, id, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				if r.URL.Path == "/federation/register/challenge" && tc.route != "challenge" {
					writeTestJSON(w, 200, map[string]any{"nonce": "cairn-challenge:" + strings.Repeat("x", 75)})
					return
				}
				body := map[string]any{"error": tc.code, "message": msg}
				for k, v := range tc.extra {
					body[k] = v
				}
				writeTestJSON(w, tc.status, body)
			})
			var waits []time.Duration
			c := newTestClient(t, f, key, id, &waits)
			err := ep.call(context.Background(), c)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v (%T), want *APIError", err, err)
			}
			if ae.Status != tc.status || ae.Code != tc.code || ae.Message != msg {
				t.Errorf("got %d %q %q, want %d %q %q", ae.Status, ae.Code, ae.Message, tc.status, tc.code, msg)
			}
			want := tc.extra
			if len(want) == 0 {
				want = nil
			}
			if !reflect.DeepEqual(ae.Fields, want) {
				t.Errorf("fields %#v, want %#v", ae.Fields, want)
			}
			if !IsCode(err, tc.code) || IsCode(err, tc.code+"_not") || StatusOf(err) != tc.status {
				t.Errorf("IsCode/StatusOf disagree with %v", err)
			}
			wantN := 1
			if tc.status == 429 || tc.status == 503 {
				wantN = 3
			}
			if n := f.requests(ep.key); n != wantN {
				t.Errorf("%s sent %d times, want %d", ep.key, n, wantN)
			}
		})
	}
}

// TestContinuityFields reads a continuity violation's fields as a caller would.
func TestContinuityFields(t *testing.T) {
	key, id := testKey(1), testID(1)
	f := newFake(t, key, id, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeTestJSON(w, 422, map[string]any{"error": "continuity_violation", "message": "does not continue",
			"expected_first_prev_hash": "aa", "got_first_prev_hash": "bb", "hint": "re-export", "expected_first_seq": 11})
	})
	_, err := newTestClient(t, f, key, id, nil).Submit(context.Background(), []byte("{}"))
	var ae *APIError
	if !errors.As(err, &ae) || !IsCode(err, "continuity_violation") {
		t.Fatalf("error %v, want continuity_violation", err)
	}
	if got, _ := ae.Field("expected_first_prev_hash"); got != "aa" {
		t.Errorf("expected_first_prev_hash %q", got)
	}
	if got, _ := ae.Field("got_first_prev_hash"); got != "bb" {
		t.Errorf("got_first_prev_hash %q", got)
	}
	if n, ok := ae.Fields["expected_first_seq"].(json.Number); !ok || n.String() != "11" {
		t.Errorf("expected_first_seq %#v", ae.Fields["expected_first_seq"])
	}
	if !strings.Contains(err.Error(), "422") || !strings.Contains(err.Error(), "continuity_violation") {
		t.Errorf("message %q names neither status nor code", err)
	}
}

// TestNonJSONErrorBody checks a body that is not the error shape gives an APIError with
// the status, no code and a message quoting the body.
func TestNonJSONErrorBody(t *testing.T) {
	for body, quoted := range map[string]string{"<html>Bad Gateway</html>": "Bad Gateway", "": "empty error body",
		`{"message":"no code"}`: "no code", `["error"]`: "error"} {
		f := newFake(t, testKey(1), testID(1), func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte(body))
		})
		_, err := newTestClient(t, f, testKey(1), testID(1), nil).Status(context.Background())
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != 502 || ae.Code != "" {
			t.Fatalf("body %q: error %#v, want a 502 APIError without code", body, err)
		}
		if !strings.Contains(err.Error(), "502") || !strings.Contains(ae.Message, "not the federation API's JSON error") {
			t.Errorf("body %q: message %q", body, err)
		}
		if !strings.Contains(ae.Message, quoted) {
			t.Errorf("body %q: message %q does not quote it", body, ae.Message)
		}
		if f.total() != 1 {
			t.Errorf("body %q: %d requests, want 1", body, f.total())
		}
	}
}
