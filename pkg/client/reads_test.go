package client

import (
	"context"
	"net/http"
	"testing"
)

// TestReadsDecode answers each read with the server's JSON names and checks the typed
// answers, the paths (under a base path) and the admin token.
func TestReadsDecode(t *testing.T) {
	answers := map[string]string{
		"/api/federation/status": `{"federation_public_key":"FK","tlog_public_key":"LK","operators_active":2,"operators_total":3,` +
			`"submissions_last_24h":5,"last_anchor":{"anchor_id":"anchor-20261124-001","anchored_at":"2026-11-24T09:00:00Z","participants":3},` +
			`"uptime_seconds":60,"version":"v1.2"}`,
		"/api/federation/anchor/anchor-20261124-001": `{"anchor_id":"anchor-20261124-001","cross_anchor_hash":"h","participating_operators":` +
			`[{"operator_id":"op_1","chain_signature":"cs","last_seq":9}],"rekor_log_index":4,"federation_signature":"sig","phase":"Anchored","participants":1}`,
		"/api/federation/verify/anchor-20261124-001": `{"anchor_id":"anchor-20261124-001","valid":false,"reason":"log unreachable",` +
			`"checks":{"signature_verified":true,"tlog_inclusion_verified":false},"failed_participants":["op_2"]}`,
		"/api/federation/operator/" + testID(1): `{"operator_id":"` + testID(1) + `","phase":"Active","submissions":[{"submission_id":"sub-1",` +
			`"last_seq":9,"anchor_id":null}],"anchors":[{"anchor_id":"anchor-20261124-001","participants":3}],"next_page_token":null}`,
		"/api/federation/log/snapshots":          `{"tlog_public_key":"LK","snapshots":[{"week":"2026-W48","tree_size":12,"checkpoint":"note\n"}]}`,
		"/api/federation/log/snapshots/2026-W48": "origin\n12\nroot\n\n— sig\n",
		"/api/federation/anchor":                 `{"status":"no-op","reason":"not enough participants","message":"m","request_id":"r1"}`,
	}
	var escaped []string
	f := newFake(t, testKey(1), testID(1), func(w http.ResponseWriter, r *http.Request, _ []byte) {
		escaped = append(escaped, r.URL.EscapedPath())
		if r.URL.Path == "/api/federation/anchor" && r.Header.Get("Authorization") != "Bearer admin-secret" {
			writeTestJSON(w, 401, map[string]any{"error": "invalid_admin_token", "message": "no"})
			return
		}
		a, ok := answers[r.URL.Path]
		if !ok {
			writeTestJSON(w, 404, map[string]any{"error": "not_found", "message": r.URL.Path})
			return
		}
		_, _ = w.Write([]byte(a))
	})
	c, err := New(f.URL+"/api/", WithAdminToken("admin-secret"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := c.Status(ctx)
	if err != nil || st.OperatorsTotal != 3 || st.LastAnchor == nil || st.LastAnchor.Participants != 3 || st.Version != "v1.2" || st.SubmissionsLast24h != 5 {
		t.Errorf("Status: %+v, %v", st, err)
	}
	rec, err := c.AnchorRecord(ctx, "anchor-20261124-001")
	if err != nil || rec.Phase != "Anchored" || *rec.RekorLogIndex != 4 || rec.ParticipatingOperators[0].LastSeq != 9 || rec.TLogURL != nil {
		t.Errorf("AnchorRecord: %+v, %v", rec, err)
	}
	v, err := c.VerifyAnchor(ctx, "anchor-20261124-001")
	if err != nil || v.Valid || *v.Reason != "log unreachable" || !v.Checks.SignatureVerified || v.FailedParticipants[0] != "op_2" {
		t.Errorf("VerifyAnchor: %+v, %v", v, err)
	}
	op, err := c.Operator(ctx, testID(1), PageOptions{})
	if err != nil || op.Phase != "Active" || op.Submissions[0].AnchorID != nil || op.Anchors[0].Participants != 3 || op.NextPageToken != nil {
		t.Errorf("Operator: %+v, %v", op, err)
	}
	snaps, err := c.LogSnapshots(ctx)
	if err != nil || snaps.Snapshots[0].TreeSize != 12 || snaps.Snapshots[0].Checkpoint != "note\n" {
		t.Errorf("LogSnapshots: %+v, %v", snaps, err)
	}
	note, err := c.LogSnapshot(ctx, "2026-W48")
	if err != nil || string(note) != answers["/api/federation/log/snapshots/2026-W48"] {
		t.Errorf("LogSnapshot: %q, %v", note, err)
	}
	an, err := c.Anchor(ctx)
	if err != nil || !an.NoOp() || an.Reason != "not enough participants" || an.RequestID != "r1" {
		t.Errorf("Anchor: %+v, %v", an, err)
	}
	if _, err := c.AnchorRecord(ctx, "../status"); !IsCode(err, "not_found") {
		t.Errorf("an ID with a slash: %v", err)
	}
	if last := escaped[len(escaped)-1]; last != "/api/federation/anchor/..%2Fstatus" {
		t.Errorf("an ID with a slash was sent as %q, not one escaped segment", last)
	}
}
