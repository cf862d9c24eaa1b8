// Package seedclient is a federation client written from the seed's endpoint table alone
// (ARCHITECTURE.md, "The federation's HTTP contract"): it uses the Go standard library and
// nothing of Cairn, builds each request and reads each answer into its own types, under
// the seed's member names and types, strictly. Run plays an operator's whole story
// against a running federation: registration, submission (idempotence and the continuity
// refusal included), anchor, status, the operator's record, receipts, live verify, key
// rotation and withdrawal. Its only inputs are what an operator holds: key files and the
// exports its chain service wrote.
package seedclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"
)

// Operator is what one operator holds.
type Operator struct {
	OrgName, ContactEmail string
	// PrivateKeyPEM (PKCS #8) and PublicKeyPEM (SPKI) are the operator's key files.
	PrivateKeyPEM, PublicKeyPEM []byte
	// Export is a signed export of the chain from seq 1.
	Export []byte
}

// Story is what Run needs.
type Story struct {
	// Base is the federation's URL, without /federation.
	Base string
	// AdminToken is the federation's admin token (POST /federation/anchor).
	AdminToken string
	// A and B register and submit; the anchor binds both.
	A, B Operator
	// BGap is an export of B's chain that skips an entry after B.Export: refused 422.
	BGap []byte
	// ANewPrivateKeyPEM, ANewPublicKeyPEM are the key A rotates to; AAfterRotation is an
	// export continuing A.Export, signed by that key.
	ANewPrivateKeyPEM, ANewPublicKeyPEM []byte
	AAfterRotation                      []byte
	// Now is the clock the statements are dated by (nil: time.Now).
	Now func() time.Time
	// Logf reports progress (nil: nothing).
	Logf func(format string, args ...any)
}

// The seed's answers, under its names and types.
type (
	challengeAnswer struct {
		Nonce string `json:"nonce"`
	}
	registerAnswer struct {
		OperatorID   string `json:"operator_id"`
		RegisteredAt string `json:"registered_at"`
		TLogLogIndex int64  `json:"tlog_log_index"`
	}
	submitAnswer struct {
		SubmissionID       string `json:"submission_id"`
		OperatorID         string `json:"operator_id"`
		Verified           bool   `json:"verified"`
		EntryCount         int64  `json:"entry_count"`
		FirstSeq           int64  `json:"first_seq"`
		LastSeq            int64  `json:"last_seq"`
		ContinuityVerified bool   `json:"continuity_verified"`
		SubmittedAt        string `json:"submitted_at"`
		PendingAnchor      bool   `json:"pending_anchor"`
	}
	continuityAnswer struct {
		Error                 string `json:"error"`
		ExpectedFirstPrevHash string `json:"expected_first_prev_hash"`
		GotFirstPrevHash      string `json:"got_first_prev_hash"`
		PreviousSubmissionID  string `json:"previous_submission_id"`
		Hint                  string `json:"hint"`
	}
	anchorAnswer struct {
		AnchorID               string   `json:"anchor_id"`
		CrossAnchorHash        string   `json:"cross_anchor_hash"`
		ParticipatingOperators []string `json:"participating_operators"`
		TLogLogIndex           *int64   `json:"tlog_log_index"`
		TLogURL                *string  `json:"tlog_url"`
		SubmissionsAnchored    int      `json:"submissions_anchored"`
	}
	statusAnswer struct {
		FederationPublicKey string      `json:"federation_public_key"`
		OperatorsActive     int         `json:"operators_active"`
		OperatorsTotal      int         `json:"operators_total"`
		SubmissionsLast24h  int         `json:"submissions_last_24h"`
		LastAnchor          *lastAnchor `json:"last_anchor"`
		UptimeSeconds       int64       `json:"uptime_seconds"`
	}
	lastAnchor struct {
		AnchorID     string `json:"anchor_id"`
		AnchoredAt   string `json:"anchored_at"`
		Participants int    `json:"participants"`
	}
	operatorAnswer struct {
		OperatorID   string `json:"operator_id"`
		PublicKeyPEM string `json:"public_key_pem"`
		OrgName      string `json:"org_name"`
		RegisteredAt string `json:"registered_at"`
		Status       string `json:"status"`
		Submissions  []struct {
			SubmissionID string `json:"submission_id"`
			SubmittedAt  string `json:"submitted_at"`
			EntryCount   int64  `json:"entry_count"`
		} `json:"submissions"`
		Anchors []struct {
			AnchorID     string `json:"anchor_id"`
			TLogLogIndex *int64 `json:"tlog_log_index"`
		} `json:"anchors"`
	}
	anchorRecord struct {
		AnchorID        string `json:"anchor_id"`
		CrossAnchorHash string `json:"cross_anchor_hash"`
	}
	verifyAnswer struct {
		AnchorID   string `json:"anchor_id"`
		Valid      bool   `json:"valid"`
		VerifiedAt string `json:"verified_at"`
		Checks     struct {
			CrossAnchorHashRecomputed   bool     `json:"cross_anchor_hash_recomputed"`
			FederationSignatureVerified bool     `json:"federation_signature_verified"`
			TLogEntryPresent            bool     `json:"tlog_entry_present"`
			TLogInclusionProofValid     bool     `json:"tlog_inclusion_proof_valid"`
			OperatorSignaturesVerified  []string `json:"operator_signatures_verified"`
		} `json:"checks"`
	}
	// receipt is the client receipt form: participants as objects.
	receipt struct {
		AnchorID               string `json:"anchor_id"`
		AnchoredAt             string `json:"anchored_at"`
		CrossAnchorHash        string `json:"cross_anchor_hash"`
		FederationSignature    string `json:"federation_signature"`
		ParticipatingOperators []struct {
			OperatorID     string `json:"operator_id"`
			ChainSignature string `json:"chain_signature"`
		} `json:"participating_operators"`
	}
	receiptsAnswer struct {
		Receipts []json.RawMessage `json:"receipts"`
	}
)

// The members each answer must carry, as the seed's table states them.
var (
	challengeMembers  = required("nonce")
	registerMembers   = required("operator_id", "registered_at", "tlog_log_index")
	submitMembers     = required("submission_id", "operator_id", "verified", "entry_count", "first_seq", "last_seq", "continuity_verified", "submitted_at", "pending_anchor")
	continuityMembers = required("error", "expected_first_prev_hash", "got_first_prev_hash", "previous_submission_id", "hint")
	anchorMembers     = required("anchor_id", "cross_anchor_hash", "participating_operators", "tlog_log_index?", "tlog_url?", "submissions_anchored")
	statusMembers     = required("federation_public_key", "operators_active", "operators_total", "submissions_last_24h", "last_anchor?", "uptime_seconds")
	operatorMembers   = required("operator_id", "public_key_pem", "org_name", "registered_at", "status", "submissions", "anchors")
	verifyMembers     = required("anchor_id", "valid", "verified_at", "checks")
	checkMembers      = required("cross_anchor_hash_recomputed", "federation_signature_verified", "tlog_entry_present", "tlog_inclusion_proof_valid", "operator_signatures_verified")
	receiptMembers    = required("anchor_id", "anchored_at", "cross_anchor_hash", "participating_operators", "federation_signature")
)

// Run plays the story against s.Base and returns the first step that did not go as the
// seed's table says.
func Run(ctx context.Context, s Story) error {
	r, err := newRun(s)
	if err != nil {
		return err
	}
	for _, step := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"registration", r.register},
		{"submission", r.submit},
		{"anchor", r.anchor},
		{"status and records", r.records},
		{"receipts", r.receipts},
		{"live verify", r.verify},
		{"key rotation", r.rotate},
		{"withdrawal", r.withdraw},
	} {
		if err := step.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
		r.logf("seed client: %s passed", step.name)
	}
	return nil
}

// run is one play of the story.
type run struct {
	Story
	c            *client
	a, b, aNew   *key
	aID, bID     string
	aSubmission  string
	anchorID     string
	anchorHash   string
	participants []string
}

func newRun(s Story) (*run, error) {
	r := &run{Story: s, c: &client{base: s.Base, hc: &http.Client{Timeout: 2 * time.Minute}}}
	var err error
	if r.a, err = parseKey(s.A.PrivateKeyPEM, s.A.PublicKeyPEM); err != nil {
		return nil, fmt.Errorf("A's key: %w", err)
	}
	if r.b, err = parseKey(s.B.PrivateKeyPEM, s.B.PublicKeyPEM); err != nil {
		return nil, fmt.Errorf("B's key: %w", err)
	}
	if r.aNew, err = parseKey(s.ANewPrivateKeyPEM, s.ANewPublicKeyPEM); err != nil {
		return nil, fmt.Errorf("A's new key: %w", err)
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	r.aID, r.bID = r.a.operatorID(), r.b.operatorID()
	r.participants = []string{r.aID, r.bID}
	sort.Strings(r.participants)
	return r, nil
}

func (r *run) logf(format string, args ...any) {
	if r.Logf != nil {
		r.Logf(format, args...)
	}
}

// register registers A and B with the seed's body alone, and checks that a challenge
// serves once.
func (r *run) register(ctx context.Context) error {
	for _, o := range []struct {
		k   *key
		op  Operator
		id  string
		who string
	}{{r.a, r.A, r.aID, "A"}, {r.b, r.B, r.bID, "B"}} {
		var ch challengeAnswer
		if err := r.c.call(ctx, http.MethodGet, "/federation/register/challenge", nil, "", http.StatusOK, challengeMembers, &ch); err != nil {
			return err
		}
		body, err := json.Marshal(map[string]string{"public_key_pem": o.k.pemText, "org_name": o.op.OrgName,
			"contact_email": o.op.ContactEmail, "nonce": ch.Nonce, "nonce_signature": o.k.sign(ch.Nonce)})
		if err != nil {
			return err
		}
		var reg registerAnswer
		if err := r.c.call(ctx, http.MethodPost, "/federation/register", body, "", http.StatusOK, registerMembers, &reg); err != nil {
			return fmt.Errorf("%s: %w", o.who, err)
		}
		if reg.OperatorID != o.id || reg.RegisteredAt == "" {
			return fmt.Errorf("%s registered as %q at %q, want %s", o.who, reg.OperatorID, reg.RegisteredAt, o.id)
		}
		// The same challenge again: one-shot.
		if a, err := r.c.do(ctx, http.MethodPost, "/federation/register", body, ""); err != nil {
			return err
		} else if a.status != http.StatusUnauthorized && a.status != http.StatusConflict {
			return fmt.Errorf("a used challenge sent again: HTTP %d, want 401 or 409: %s", a.status, clip(a.body))
		}
	}
	return nil
}

// submit sends A's and B's exports, A's again (the same submission), and B's export
// that skips an entry (422 continuity_violation).
func (r *run) submit(ctx context.Context) error {
	var first submitAnswer
	for i, o := range []struct {
		k      *key
		id     string
		export []byte
	}{{r.a, r.aID, r.A.Export}, {r.b, r.bID, r.B.Export}, {r.a, r.aID, r.A.Export}} {
		var sub submitAnswer
		if err := r.c.call(ctx, http.MethodPost, "/federation/submit", o.export, o.k.token(o.id, o.export, r.Now()),
			http.StatusOK, submitMembers, &sub); err != nil {
			return err
		}
		if sub.OperatorID != o.id || !sub.Verified || !sub.ContinuityVerified || sub.FirstSeq != 1 || sub.LastSeq < 1 {
			return fmt.Errorf("submission %d: %+v", i, sub)
		}
		switch i {
		case 0:
			first, r.aSubmission = sub, sub.SubmissionID
		case 2:
			if sub.SubmissionID != first.SubmissionID {
				return fmt.Errorf("the same export again answered %s, want %s", sub.SubmissionID, first.SubmissionID)
			}
		}
	}
	a, err := r.c.do(ctx, http.MethodPost, "/federation/submit", r.BGap, r.b.token(r.bID, r.BGap, r.Now()))
	if err != nil {
		return err
	}
	if a.status != http.StatusUnprocessableEntity {
		return fmt.Errorf("an export that skips an entry: HTTP %d, want 422: %s", a.status, clip(a.body))
	}
	var cv continuityAnswer
	if err := decodeStrict("the 422", a.body, continuityMembers, &cv); err != nil {
		return err
	}
	if cv.Error != "continuity_violation" || cv.ExpectedFirstPrevHash == "" || cv.PreviousSubmissionID == "" || cv.Hint == "" {
		return fmt.Errorf("the 422: %+v", cv)
	}
	return nil
}

// anchor asks for an anchor with the admin token: it binds A and B.
func (r *run) anchor(ctx context.Context) error {
	var an anchorAnswer
	if err := r.c.call(ctx, http.MethodPost, "/federation/anchor", nil, "Bearer "+r.AdminToken, http.StatusOK, anchorMembers, &an); err != nil {
		return err
	}
	got := slices.Clone(an.ParticipatingOperators)
	sort.Strings(got)
	if an.AnchorID == "" || len(an.CrossAnchorHash) != 64 || !slices.Equal(got, r.participants) || an.SubmissionsAnchored != 2 {
		return fmt.Errorf("POST /federation/anchor: %+v, want %v and 2 submissions", an, r.participants)
	}
	r.anchorID, r.anchorHash = an.AnchorID, an.CrossAnchorHash
	return nil
}

// records reads the status, A's record and the stored anchor.
func (r *run) records(ctx context.Context) error {
	var st statusAnswer
	if err := r.c.call(ctx, http.MethodGet, "/federation/status", nil, "", http.StatusOK, statusMembers, &st); err != nil {
		return err
	}
	if st.FederationPublicKey == "" || st.OperatorsActive != 2 || st.OperatorsTotal != 2 || st.SubmissionsLast24h != 2 ||
		st.LastAnchor == nil || st.LastAnchor.AnchorID != r.anchorID || st.LastAnchor.Participants != 2 || st.LastAnchor.AnchoredAt == "" {
		return fmt.Errorf("GET /federation/status: %+v", st)
	}
	var op operatorAnswer
	if err := r.c.call(ctx, http.MethodGet, "/federation/operator/"+r.aID, nil, "", http.StatusOK, operatorMembers, &op); err != nil {
		return err
	}
	if op.OperatorID != r.aID || op.PublicKeyPEM != r.a.pemText || op.OrgName != r.A.OrgName || op.Status != "active" ||
		len(op.Submissions) != 1 || op.Submissions[0].SubmissionID != r.aSubmission || len(op.Anchors) != 1 || op.Anchors[0].AnchorID != r.anchorID {
		return fmt.Errorf("GET /federation/operator/%s: %+v", r.aID, op)
	}
	var rec anchorRecord
	if err := r.c.call(ctx, http.MethodGet, "/federation/anchor/"+r.anchorID, nil, "", http.StatusOK, required("anchor_id", "cross_anchor_hash"), &rec); err != nil {
		return err
	}
	if rec.AnchorID != r.anchorID || rec.CrossAnchorHash != r.anchorHash {
		return fmt.Errorf("GET /federation/anchor/%s: %+v", r.anchorID, rec)
	}
	return nil
}

// receipts fetches A's receipts and recomputes the anchor's hash from its receipt.
func (r *run) receipts(ctx context.Context) error {
	var page receiptsAnswer
	if err := r.c.call(ctx, http.MethodGet, "/receipts", nil, r.a.token(r.aID, nil, r.Now()), http.StatusOK, required("receipts"), &page); err != nil {
		return err
	}
	for _, raw := range page.Receipts {
		var rc receipt
		if err := decodeStrict("a receipt", raw, receiptMembers, &rc); err != nil {
			return err
		}
		if rc.AnchorID != r.anchorID {
			continue
		}
		var ids, sigs []string
		for _, p := range rc.ParticipatingOperators {
			ids, sigs = append(ids, p.OperatorID), append(sigs, p.ChainSignature)
		}
		if !slices.IsSorted(ids) || !slices.Equal(ids, r.participants) {
			return fmt.Errorf("the receipt binds %v, want %v in operator ID order", ids, r.participants)
		}
		if got := crossAnchorHash(sigs, rc.AnchoredAt); got != rc.CrossAnchorHash || got != r.anchorHash {
			return fmt.Errorf("the receipt's hash does not recompute: %s", got)
		}
		return nil
	}
	return fmt.Errorf("no receipt of %s among %d", r.anchorID, len(page.Receipts))
}

// verify asks for a live check of the anchor until its log leg is done; every check holds.
func (r *run) verify(ctx context.Context) error {
	for {
		var v verifyAnswer
		a, err := r.c.do(ctx, http.MethodGet, "/federation/verify/"+r.anchorID, nil, "")
		if err != nil {
			return err
		}
		if a.status != http.StatusOK {
			return fmt.Errorf("GET /federation/verify/%s: HTTP %d: %s", r.anchorID, a.status, clip(a.body))
		}
		if err := decodeStrict("GET /federation/verify", a.body, verifyMembers, &v); err != nil {
			return err
		}
		var checks map[string]json.RawMessage
		if err := json.Unmarshal(a.body, &struct {
			Checks *map[string]json.RawMessage `json:"checks"`
		}{&checks}); err != nil {
			return err
		}
		raw, _ := json.Marshal(checks)
		if err := decodeStrict("checks", raw, checkMembers, &v.Checks); err != nil {
			return err
		}
		c := v.Checks
		got := slices.Clone(c.OperatorSignaturesVerified)
		sort.Strings(got)
		if v.Valid && c.CrossAnchorHashRecomputed && c.FederationSignatureVerified && c.TLogEntryPresent && c.TLogInclusionProofValid &&
			slices.Equal(got, r.participants) && v.AnchorID == r.anchorID && v.VerifiedAt != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("GET /federation/verify/%s never held every check: %s", r.anchorID, clip(a.body))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// rotate moves A to its new key with the documented POST /federation/rotate-key, then
// submits the export the new key signed.
func (r *run) rotate(ctx context.Context) error {
	at := r.Now().UTC().Format(time.RFC3339)
	msg := r.aNew.pemText + at
	body, err := json.Marshal(map[string]string{"operator_id": r.aID, "new_public_key": r.aNew.pemText, "rotation_at": at,
		"old_key_signature": r.a.sign(msg), "new_key_signature": r.aNew.sign(msg)})
	if err != nil {
		return err
	}
	var rot struct {
		OperatorID   string `json:"operator_id"`
		NewPublicKey string `json:"new_public_key"`
	}
	if err := r.c.call(ctx, http.MethodPost, "/federation/rotate-key", body, "", http.StatusOK, required("operator_id", "new_public_key"), &rot); err != nil {
		return err
	}
	if rot.OperatorID != r.aID || rot.NewPublicKey != r.aNew.pemText {
		return fmt.Errorf("POST /federation/rotate-key: %+v", rot)
	}
	// The old key no longer submits; the new one does, under the same operator ID.
	if a, err := r.c.do(ctx, http.MethodPost, "/federation/submit", r.AAfterRotation, r.a.token(r.aID, r.AAfterRotation, r.Now())); err != nil {
		return err
	} else if a.status != http.StatusUnauthorized {
		return fmt.Errorf("a token of the rotated-out key: HTTP %d, want 401: %s", a.status, clip(a.body))
	}
	var sub submitAnswer
	if err := r.c.call(ctx, http.MethodPost, "/federation/submit", r.AAfterRotation, r.aNew.token(r.aID, r.AAfterRotation, r.Now()),
		http.StatusOK, submitMembers, &sub); err != nil {
		return err
	}
	if sub.OperatorID != r.aID || !sub.Verified || !sub.ContinuityVerified || sub.FirstSeq < 2 {
		return fmt.Errorf("the submission after the rotation: %+v", sub)
	}
	return nil
}

// withdraw withdraws A with its current key; A's submissions are refused 403 after.
func (r *run) withdraw(ctx context.Context) error {
	at := r.Now().UTC().Format(time.RFC3339)
	body, err := json.Marshal(map[string]string{"operator_id": r.aID, "at": at,
		"signature": r.aNew.sign("withdraw " + r.aID + " at " + at)})
	if err != nil {
		return err
	}
	var w struct {
		OperatorID string `json:"operator_id"`
	}
	if err := r.c.call(ctx, http.MethodPost, "/federation/withdraw", body, "", http.StatusOK, required("operator_id"), &w); err != nil {
		return err
	}
	if w.OperatorID != r.aID {
		return fmt.Errorf("POST /federation/withdraw: %+v", w)
	}
	var op operatorAnswer
	if err := r.c.call(ctx, http.MethodGet, "/federation/operator/"+r.aID, nil, "", http.StatusOK, operatorMembers, &op); err != nil {
		return err
	}
	if op.Status != "withdrawn" {
		return fmt.Errorf("GET /federation/operator/%s after the withdrawal: status %q, want withdrawn", r.aID, op.Status)
	}
	a, err := r.c.do(ctx, http.MethodPost, "/federation/submit", r.AAfterRotation, r.aNew.token(r.aID, r.AAfterRotation, r.Now()))
	if err != nil {
		return err
	}
	if a.status != http.StatusForbidden {
		return fmt.Errorf("a withdrawn operator's submission: HTTP %d, want 403: %s", a.status, clip(a.body))
	}
	return nil
}
