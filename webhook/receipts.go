package webhook

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
)

// receiptsResponse is the answer of GET /federation/receipts and GET /receipts.
type receiptsResponse struct {
	OperatorID string `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	// Receipts are signed receipts (docs/PROTOCOL.md §7), newest first.
	Receipts      []json.RawMessage `json:"receipts" doc:"One page of the operator's signed receipts (docs/PROTOCOL.md §7), newest first, each exactly as signed."`
	NextPageToken *string           `json:"next_page_token" doc:"Pass as page_token for the next page; null on the last."`
}

// serveReceipts answers GET /federation/receipts and GET /receipts: the receipts of the
// operator whose bearer token verifies (withdrawn or not) for every anchor the
// federation made (federation.TrustAnchor) that binds it, newest first (anchoredAt, then
// anchor ID), ?since=<anchor_id> keeping those whose ID sorts after it, paged as GET
// /federation/operator/{id} pages. Each is signed by the key that signed its anchor
// (federation.Receipt) and carries the log's proof bundle once the log leg is done; a
// receipt is never served weaker than the logged one (receipt).
func (s *Server) serveReceipts(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	auth, err := s.authenticate(ctx, r)
	if err == nil {
		// A GET binds the empty body: a token made for another request's body is refused.
		err = auth.checkBody(sha256.Sum256(nil))
	}
	if err != nil {
		s.fail(ctx, w, "authenticate", err)
		return
	}
	since := r.URL.Query().Get("since")
	if since != "" && !anchorIDPattern.MatchString(since) {
		writeError(w, &apiError{status: http.StatusBadRequest, code: "invalid_anchor_id",
			message: "since must be an anchor ID such as anchor-20261124-001"})
		return
	}
	limit, tok, fed, ok := s.pagedFederation(w, r)
	if !ok {
		return
	}
	res, err := s.receiptsPage(ctx, fed, auth.ID(), since, limit, tok)
	if err != nil {
		s.fail(ctx, w, "sign the receipts", err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// receiptsPage is one page of operator id's receipts.
func (s *Server) receiptsPage(ctx context.Context, fed *fv1.Federation, id, since string, limit int, tok *pageToken) (*receiptsResponse, error) {
	// Only the anchors that bind the operator, through the participant index and uncopied;
	// only the page's are verified (and their verdicts remembered), newest first.
	candidates, err := s.anchorsBinding(ctx, fed, fv1.OperatorID(id), tok.Anchor, limit+1)
	if err != nil {
		return nil, err
	}
	res := &receiptsResponse{OperatorID: id, Receipts: []json.RawMessage{}}
	var bound []*fv1.CrossAnchor
	for _, ca := range candidates {
		if ca.Name <= since || s.verdicts.TrustAnchor(fed, ca) != nil {
			continue // before since, or not the federation's: no receipt
		}
		if len(bound) == limit {
			last := bound[limit-1]
			raw, err := json.Marshal(pageToken{Anchor: &pageKey{At: last.Spec.AnchoredAt, Name: last.Name}})
			if err != nil {
				return nil, err
			}
			t := base64.RawURLEncoding.EncodeToString(raw)
			res.NextPageToken = &t
			break
		}
		bound = append(bound, ca)
	}
	if len(bound) == 0 {
		return res, nil
	}
	keys, err := federation.SigningKeys(ctx, s.client, fed)
	if err != nil {
		return nil, err
	}
	var logKeys []crypto.PublicKey // read once, for the first anchor with a log leg
	for _, ca := range bound {
		if federation.HasLogLeg(ca) && logKeys == nil {
			logKeys = s.receiptLogKeys(ctx, fed)
		}
		raw, err := s.receipt(ctx, fed, ca, fv1.OperatorID(id), keys, logKeys)
		if err != nil {
			return nil, err
		}
		res.Receipts = append(res.Receipts, raw)
	}
	return res, nil
}

// receiptRetry is the Retry-After of a receipt the federation will not serve weaker.
const receiptRetry = time.Minute

// receipt signs ca's receipt with the key that signed ca (federation.ReceiptSigner).
//
// Receipts only get stronger: once ca's status records a log leg, any replica may have
// served ca's logged receipt, so the receipt is the logged one, its log members and proof
// bundle verified under the log key that recorded them (the first of logKeys that
// federation.VerifyLogLeg passes: the log's now, or one the federation moved from), or
// none: 503 receipt_log_unverifiable with Retry-After, never the pending receipt (the
// operator keeps the logged copy it has). Without a log leg in status the receipt is the
// pending one, which is all the federation ever served of ca.
//
// A Merkle-form anchor's receipt is operator's: its leaf and inclusion proof, from the
// anchor's tree checked against the root it states (federation.MerkleAnchors).
func (s *Server) receipt(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor, operator fv1.OperatorID,
	keys map[fv1.PublicKeyPEM]ed25519.PrivateKey, logKeys []crypto.PublicKey,
) (json.RawMessage, error) {
	key, ok := federation.ReceiptSigner(fed, ca, keys)
	if !ok {
		s.log.ErrorContext(ctx, "No signing key Secret holds the key that signed an anchor, or a later one", "anchorID", ca.Name)
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "signing_key_unavailable",
			message: "the federation cannot sign the receipt of " + ca.Name + ": no Secret holds the key that signed it"}
	}
	var logKey crypto.PublicKey
	if federation.HasLogLeg(ca) {
		for _, k := range logKeys {
			if s.verdicts.VerifyLogLeg(ca, k) {
				logKey = k
				break
			}
		}
		if logKey == nil {
			s.log.WarnContext(ctx, "Refused to serve a receipt weaker than the logged one: the anchor's log entry verifies under no log key the federation can read",
				"anchorID", ca.Name, "logKeys", len(logKeys))
			return nil, &apiError{status: http.StatusServiceUnavailable, code: "receipt_log_unverifiable", retryAfter: receiptRetry,
				message: "the log entry of " + ca.Name + " verifies under no log key the federation can read now; it will not serve " +
					"that anchor's receipt without its log proof (a receipt weaker than one it may have served): keep the receipt " +
					"you hold and try again later",
				extra: map[string]any{"anchor_id": ca.Name}}
		}
		if err := federation.VerifyTimestamps(fed, ca, logKey); err != nil {
			s.log.WarnContext(ctx, "Refused to serve a receipt with a timestamp that does not verify", "anchorID", ca.Name, "error", err)
			return nil, &apiError{status: http.StatusServiceUnavailable, code: "receipt_log_unverifiable", retryAfter: receiptRetry,
				message: "a timestamp of the log entry of " + ca.Name + " does not verify under the federation's timestamp authority; " +
					"it will not serve that anchor's receipt: keep the receipt you hold and try again later",
				extra: map[string]any{"anchor_id": ca.Name}}
		}
	}
	var leaf *federation.ReceiptLeaf
	if federation.IsMerkle(ca) {
		tree, err := s.merkle.Tree(ctx, fed, ca)
		if err != nil {
			return nil, err
		}
		var ok bool
		if leaf, ok, err = federation.LeafOf(tree, operator); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("anchor %s binds no leaf of %s", ca.Name, operator)
		}
	}
	raw, err := federation.Receipt(fed, ca, key, logKey, leaf)
	if err != nil {
		return nil, err
	}
	return raw, nil
}

// receiptLogKeys are the log keys a receipt's log leg may verify under: the key of fed's
// log now (receiptLogKey), then those of the logs it moved from (federation.OtherLogKeys).
// The keys that cannot be read now are left out, and said so in the log.
func (s *Server) receiptLogKeys(ctx context.Context, fed *fv1.Federation) []crypto.PublicKey {
	keys := []crypto.PublicKey{}
	if key := s.receiptLogKey(ctx, fed); key != nil {
		keys = append(keys, key)
	}
	others, err := federation.OtherLogKeys(ctx, s.client, fed)
	if err != nil {
		s.log.WarnContext(ctx, "Failed to read the key of a log the federation used before", "error", err)
	}
	return append(keys, others...)
}

// receiptLogKey is the key receipts name for fed's log: the pinned or embedded key
// (logKey), else the key an unpinned Rekor serves, as the controllers use it. nil when
// it cannot be had now: receipts are then served pending.
func (s *Server) receiptLogKey(ctx context.Context, fed *fv1.Federation) crypto.PublicKey {
	key, err := s.logKey(ctx, fed)
	if err == nil {
		return key
	}
	if fed.Spec.TransparencyLog.Type == fv1.TransparencyLogRekor && fed.Spec.TransparencyLog.PublicKeyPEM == "" {
		rekor, rerr := tlog.NewRekor(tlog.RekorOptions{URL: fed.Spec.TransparencyLog.URL, Attempts: 1,
			HTTPClient: &http.Client{Timeout: rekorVerifyTimeout}})
		if rerr == nil {
			if key, err = rekor.PublicKey(ctx); err == nil {
				return key
			}
		}
		err = errors.Join(err, rerr)
	}
	s.log.WarnContext(ctx, "The log's key is unknown: anchors it logged get no receipt until it is", "error", err)
	return nil
}
