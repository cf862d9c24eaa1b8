package webhook

import (
	"net/http"
)

// route is one operation: what the mux matches, what it does, and how the OpenAPI
// document describes it.
type route struct {
	method, path         string
	summary, description string
	handler              http.Handler
	// request is the JSON body's Go type (nil: no body); response the 200 answer's;
	// accepted, when not nil, a 202 answer's.
	request, response, accepted any
	// params are the path's {parameters} (every one must be listed) and the query's.
	params []paramDoc
	// errors are the error answers the operation documents, beyond those of every route.
	errors []errorDoc
	// page marks a route of the public page (publicpage.go): HTML and its assets, served
	// and answered 404/405 like every route but left out of the OpenAPI document.
	page bool
}

// paramDoc documents one parameter: in "path" or "query".
type paramDoc struct {
	in, name, description string
	integer               bool
}

// errorDoc documents one error answer: its status, its codes and when.
type errorDoc struct {
	status      int
	codes       []string
	description string
}

// commonErrors are the answers every route can give.
var commonErrors = []errorDoc{
	{http.StatusTooManyRequests, []string{"rate_limited"}, "Past the per-address rate limit; the Retry-After header says how many seconds to wait."},
	{http.StatusServiceUnavailable, []string{"api_server_unavailable"}, "The federation cannot reach its Kubernetes API server."},
	{http.StatusInternalServerError, []string{"internal"}, "An unexpected failure, logged by the server."},
	{http.StatusMethodNotAllowed, []string{"method_not_allowed"}, "The path is served for other methods, which the Allow header lists."},
}

// bodyErrors are the answers of every route that reads a JSON body.
var bodyErrors = []errorDoc{
	{http.StatusBadRequest, []string{"malformed_json"}, "The body is not one JSON object of the documented shape."},
	{http.StatusRequestEntityTooLarge, []string{"body_too_large"}, "The body is over the server's limit (256 MiB unless configured)."},
}

// routes is the route table: the mux and the OpenAPI document are both built from it.
func (s *Server) routes() []route {
	return []route{
		{
			method: http.MethodGet, path: "/federation/register/challenge",
			summary: "Get a registration challenge",
			description: "A nonce to sign with the registering key: cairn-challenge: and 75 characters of [A-Za-z0-9_-]. " +
				"Any replica accepts it for five minutes, once.",
			handler: http.HandlerFunc(s.serveChallenge), response: challengeResponse{},
		},
		{
			method: http.MethodPost, path: "/federation/register",
			summary: "Register an operator",
			description: "Verifies the challenge (issued by this federation, unexpired, unused) and its signature, refuses a key any " +
				"operator holds or held, creates the FederationOperator and answers once the controller has registered and logged it. " +
				"One client address (an IPv6 /64) may register 10 operators an hour unless configured. Under the Federation's " +
				"spec.registration: approval, a registration not approved yet is answered 202 Accepted with {operator_id, org_name, " +
				"public_key_pem, contact_email, status: pending_approval, requested_at}: the operator is Pending, logged and able to " +
				"submit only once an administrator approves it (POST /federation/operator/{id}/approve or spec.approvedOperators).",
			handler: http.HandlerFunc(s.serveRegister), request: registerRequest{}, response: registerResponse{}, accepted: pendingRegistration{},
			errors: append([]errorDoc{
				{http.StatusTooManyRequests, []string{"registration_rate_limited"}, "This client address made its registrations of the window (10 an hour unless configured); the Retry-After header says how many seconds until the oldest leaves the window."},
				{http.StatusServiceUnavailable, []string{"too_many_pending_registrations", "federation_not_ready"}, "Under registration: approval, as many registrations as the federation holds await approval (1000 unless configured); or the Federation is not ready."},
				{http.StatusBadRequest, []string{"missing_fields", "invalid_public_key", "invalid_field", "invalid_proof_of_possession", "invalid_rename", "invalid_time", "time_out_of_window"}, "A field is missing or malformed (missing_fields adds \"fields\", the sorted names), or the rename sent with the registration does not verify or rename_at is more than five minutes from the federation's clock."},
				{http.StatusUnauthorized, []string{"invalid_challenge", "challenge_expired", "challenge_replayed", "invalid_signature"}, "The nonce is not a challenge this federation issued, is older than five minutes or was used, or nonce_signature does not verify."},
				{http.StatusBadRequest, []string{"registration_rejected"}, "The controller refused the operator; adds \"reason\", its condition reason."},
				{http.StatusConflict, []string{"key_already_registered"}, "An operator holds or once held this key; adds \"operator_id\"."},
				{http.StatusForbidden, []string{"operator_withdrawn", "operator_suspended"}, "The controller found the key's operator in the transparency log withdrawn or suspended (a federation restored without its objects): it comes back so; adds \"operator_id\" (and \"reason\")."},
				{http.StatusGatewayTimeout, []string{"registration_pending"}, "The controller did not register and log the operator in time; it may still do so."},
			}, bodyErrors...),
		},
		{
			method: http.MethodPost, path: "/federation/submit",
			summary: "Submit a chain export",
			description: "The body is a cairn-chain-v2 export (docs/PROTOCOL.md §3), read as a stream and verified under the operator's " +
				"current key (entries, header against entries, envelope signature) without being held; only its header is kept. " +
				"Auth: Authorization: Bearer <operator_id>.<nonce>.<signature>, the nonce <unix_seconds>-<hex SHA-256 of the body> " +
				"(five minutes) or a challenge. The API creates the Submission sub-<16 hex of the operator ID>-<first_seq> and answers " +
				"once the Submission controller has accepted it; a refused export is not kept. Re-sending an accepted export answers " +
				"the same submission. Up to 8 attestation sidecars (at most 1 MiB each) may come with the export: as " +
				"multipart/form-data (a part named export, parts named sidecar with their Content-Type and filename) or as JSON " +
				"{\"export\": <export>, \"sidecars\": [{\"media_type\", \"name\", \"content_b64\"}]}; the token's hash covers the " +
				"whole body as sent. They are stored by SHA-256 and listed on the operator's summary; a re-sent export must carry " +
				"the same sidecars.",
			handler: http.HandlerFunc(s.serveSubmit), request: exportBody{}, response: submitResponse{},
			errors: submitErrors,
		},
		{
			method: http.MethodGet, path: "/federation/status",
			summary: "The federation's state",
			description: "Keys, operator counts, verified submissions of the last 24 hours and the last anchor the federation made " +
				"(its signature verified under the Federation's key history).",
			handler: http.HandlerFunc(s.serveStatus), response: statusResponse{},
			errors: []errorDoc{{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist or has no key yet."}},
		},
		{
			method: http.MethodGet, path: "/federation/openapi.json",
			summary:     "This document",
			description: "The OpenAPI 3.0 description of every route, built from the server's route table.",
			handler:     http.HandlerFunc(s.serveOpenAPI),
		},
		{
			method: http.MethodPost, path: "/federation/withdraw",
			summary: "Withdraw an operator",
			description: "Verifies the signature over \"withdraw <operator_id> at <at>\" under the operator's current key (at within " +
				"five minutes), writes the withdrawal into the FederationOperator and answers once the controller has withdrawn " +
				"and logged it; the operator's later submissions get 403.",
			handler: http.HandlerFunc(s.serveWithdraw), request: withdrawRequest{}, response: withdrawResponse{},
			errors: append([]errorDoc{
				{http.StatusBadRequest, []string{"missing_fields", "invalid_time", "time_out_of_window", "invalid_field"}, "A field is missing, at is not RFC 3339 UTC, or at is more than five minutes from the federation's clock; the time codes add \"field\"."},
				{http.StatusUnauthorized, []string{"invalid_signature"}, "signature is missing or does not verify under the operator's current key."},
				{http.StatusNotFound, []string{"operator_not_found"}, "No operator with this ID is registered; adds \"operator_id\"."},
				{http.StatusForbidden, []string{"operator_withdrawn"}, "The operator has already withdrawn; adds \"operator_id\"."},
				{http.StatusConflict, []string{"conflict"}, "The operator changed, five times, while the withdrawal was checked; send it again."},
				{http.StatusBadRequest, []string{"withdrawal_rejected"}, "The controller refused the withdrawal; adds \"reason\", its condition reason."},
				{http.StatusGatewayTimeout, []string{"withdrawal_pending"}, "The controller did not withdraw and log the operator in time; it may still do so."},
			}, bodyErrors...),
		},
		{
			method: http.MethodPost, path: "/federation/operator/{id}/suspend",
			summary: "Suspend an operator",
			description: "Admin token. Adds the operator to the Federation's status.apiSuspensions (GitOps owns spec.suspendedOperators; " +
				"either suspends) and answers once the controller has made it Suspended and logged the record. Its submissions " +
				"get 403 operator_suspended and anchor runs leave it out; idempotent while the API suspends it.",
			handler: http.HandlerFunc(s.serveSuspend), request: suspendRequest{}, response: suspensionResponse{},
			params: []paramDoc{{in: "path", name: "id", description: "The operator ID, such as op_34750f98bd59fcfc."}},
			errors: suspensionErrors,
		},
		{
			method: http.MethodPost, path: "/federation/operator/{id}/resume",
			summary: "Resume a suspended operator",
			description: "Admin token, no body. Removes the API's suspension; when spec.suspendedOperators does not name the operator " +
				"it is Active again, its head unchanged, once the controller has logged the record.",
			handler: http.HandlerFunc(s.serveResume), response: suspensionResponse{},
			params: []paramDoc{{in: "path", name: "id", description: "The operator ID, such as op_34750f98bd59fcfc."}},
			errors: suspensionErrors,
		},
		{
			method: http.MethodPost, path: "/federation/operator/{id}/approve",
			summary: "Approve a Pending operator",
			description: "Admin token; no body, or {\"note\"}. Under the Federation's spec.registration: approval, adds the Pending " +
				"operator to status.apiApprovals (GitOps owns spec.approvedOperators; either approves) and answers, as a registration " +
				"does, once the controller has registered it and logged its registration record. Idempotent while the operator is Pending.",
			handler: http.HandlerFunc(s.serveApprove), request: approveRequest{}, response: registerResponse{},
			params: []paramDoc{{in: "path", name: "id", description: "The operator ID, such as op_34750f98bd59fcfc."}},
			errors: approvalErrors,
		},
		{
			method: http.MethodPost, path: "/federation/rotate-key",
			summary: "Rotate an operator's key",
			description: "Verifies both signatures over new_public_key ‖ rotation_at (the current key's authorises, the new key's " +
				"proves possession; rotation_at within five minutes), refuses a key any operator holds or held, writes publicKeyPEM " +
				"and keyRotation into the FederationOperator in one update and answers once the controller has rotated and logged it. " +
				"The operator ID does not change.",
			handler: http.HandlerFunc(s.serveRotateKey), request: rotateKeyRequest{}, response: rotateKeyResponse{},
			errors: append([]errorDoc{
				{http.StatusBadRequest, []string{"missing_fields", "invalid_time", "time_out_of_window", "invalid_public_key", "invalid_field"}, "A field is missing, rotation_at is not RFC 3339 UTC or is more than five minutes from the federation's clock (adds \"field\"), or new_public_key is not an Ed25519 PEM key other than the current one."},
				{http.StatusUnauthorized, []string{"invalid_signature"}, "old_key_signature or new_key_signature is missing or does not verify; the message names which."},
				{http.StatusNotFound, []string{"operator_not_found"}, "No operator with this ID is registered; adds \"operator_id\"."},
				{http.StatusForbidden, []string{"operator_withdrawn"}, "The operator has withdrawn; adds \"operator_id\"."},
				{http.StatusConflict, []string{"key_already_registered", "conflict"}, "An operator (this one included) holds or once held the new key (adds \"operator_id\", the new key's ID), or the operator changed, five times, while the rotation was checked."},
				{http.StatusBadRequest, []string{"rotation_rejected"}, "The controller refused the rotation; adds \"reason\", its condition reason."},
				{http.StatusGatewayTimeout, []string{"rotation_pending"}, "The controller did not rotate and log the key in time; it may still do so."},
			}, bodyErrors...),
		},
		{
			method: http.MethodPost, path: "/federation/rename",
			summary: "Rename an operator's organization",
			description: "Verifies the signature, by the operator's current key, over \"rename \" and the RFC 8785 JSON of {at, contact, " +
				"operator_id, org_name} (at within five minutes, and later than the rename in force), writes it into the " +
				"FederationOperator's spec.rename and answers once the controller has applied and logged it (a rename record). " +
				"The name and contact shown (GET /federation/operator/{id}, the public page) are only ever those the operator signed.",
			handler: http.HandlerFunc(s.serveRename), request: renameRequest{}, response: renameResponse{},
			errors: renameErrors,
		},
		{
			method: http.MethodPost, path: "/federation/anchor",
			summary: "Run an anchor now",
			description: "Admin only (Authorization: Bearer <admin token>, compared in constant time with the token in the Federation's " +
				"admin Secret). Writes an anchor request into the Federation (or joins the one not yet handled: concurrent calls " +
				"coalesce into one run), which the elected leader runs at once whatever the schedule, and answers once the " +
				"Federation's status.anchorRequest records it: the anchor (one the federation made; the log members null while the " +
				"log leg is pending), or {\"status\": \"no-op\", \"reason\": \"not enough participants\"} as the seed did (also 200). No body.",
			handler: http.HandlerFunc(s.serveAnchorNow), response: anchorNowResponse{},
			errors: []errorDoc{
				{http.StatusUnauthorized, []string{"missing_token", "invalid_admin_token"}, "The Authorization header is absent, or is not exactly Bearer and this federation's admin token."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready", "admin_token_not_configured"}, "The Federation or its admin Secret does not exist yet, or the Secret holds no token."},
				{http.StatusGatewayTimeout, []string{"anchor_pending"}, "The leader did not run the request in time; it still will. Adds \"request_id\"."},
			},
		},
		{
			method: http.MethodGet, path: "/federation/anchor/{id}",
			summary: "An anchor's record",
			description: "The stored record of an anchor the federation made (its hash recomputes and its signature verifies under a key " +
				"of the Federation's key history), under the seed's names, with the log entry once the log recorded it.",
			handler: http.HandlerFunc(s.serveAnchor), response: anchorRecord{},
			params: []paramDoc{{in: "path", name: "id", description: "The anchor ID, such as anchor-20261124-001."}},
			errors: []errorDoc{
				{http.StatusBadRequest, []string{"invalid_anchor_id"}, "The ID is not of the form anchor-YYYYMMDD-NNN."},
				{http.StatusNotFound, []string{"anchor_not_found"}, "No anchor of that ID that the federation made (an untrusted record is not shown)."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist."},
			},
		},
		{
			method: http.MethodGet, path: "/federation/anchor/{id}/sigstore-bundle",
			summary: "An anchor's log leg as a Sigstore bundle",
			description: "The log entry of an anchor the federation made, once its proof verifies under one of the federation's log keys, " +
				"as a Sigstore bundle (application/vnd.dev.sigstore.bundle.v0.3+json): the message signature is the federation's Ed25519ph " +
				"signature over the SHA-512 of the anchor's 32 raw cross_anchor_hash bytes; the verification material holds the log entry " +
				"with its inclusion proof and checkpoint and, for Rekor v2, the RFC 3161 timestamps. Sigstore's tools verify it with the " +
				"federation's key and GET /federation/log/trusted-root (docs/AUDITORS.md).",
			handler: http.HandlerFunc(s.serveSigstoreBundle),
			params:  []paramDoc{{in: "path", name: "id", description: "The anchor ID, such as anchor-20261124-001."}},
			errors: []errorDoc{
				{http.StatusBadRequest, []string{"invalid_anchor_id"}, "The ID is not of the form anchor-YYYYMMDD-NNN."},
				{http.StatusNotFound, []string{"anchor_not_found", "anchor_not_logged"}, "No anchor of that ID that the federation made; or the log has not recorded it, or its proof does not verify."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist."},
			},
		},
		{
			method: http.MethodGet, path: "/federation/verify/{id}",
			summary: "Verify an anchor now",
			description: "A live check trusting nothing stored: recomputes the hash, verifies the signature under the anchor's own key " +
				"and that key against the Federation's key history, fetches the log entry again and verifies its inclusion proof " +
				"against a checkpoint read now under the log's key, and re-verifies each participant's covered submission under the " +
				"key its operator held when it was accepted. A check that fails, a stored anchor the federation did not make, or a " +
				"log that cannot be reached (reason \"log unreachable\") is answered 200 with valid false.",
			handler: http.HandlerFunc(s.serveVerify), response: verifyResponse{},
			params: []paramDoc{{in: "path", name: "id", description: "The anchor ID, such as anchor-20261124-001."}},
			errors: []errorDoc{
				{http.StatusBadRequest, []string{"invalid_anchor_id"}, "The ID is not of the form anchor-YYYYMMDD-NNN."},
				{http.StatusNotFound, []string{"anchor_not_found"}, "No anchor of that ID is stored."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist."},
			},
		},
		{
			method: http.MethodGet, path: "/", page: true,
			summary: "The federation's public page",
			handler: http.HandlerFunc(s.servePublicPage),
		},
		{
			method: http.MethodGet, path: "/assets/{name}", page: true,
			summary: "The public page's stylesheet and script",
			handler: http.HandlerFunc(servePageAsset),
		},
		{
			method: http.MethodGet, path: "/federation/submission/{id}/sidecar/{sha256}",
			summary: "An attestation sidecar, under the submission that named it",
			description: "The content of a sidecar that submission {id}, accepted, carries, checked against its SHA-256 as it is " +
				"read, under the name and media type that submission recorded (the operator summary's url), as an attachment no " +
				"browser renders: X-Content-Type-Options: nosniff, Content-Security-Policy: default-src 'none'; sandbox, and a type " +
				"a browser could render as a document (HTML, XML, SVG, script) sent as application/octet-stream. Another " +
				"submission carrying the same bytes under another label never changes the answer, so it is cached as immutable. " +
				"The federation does not verify what a sidecar says.",
			handler: http.HandlerFunc(s.serveSubmissionSidecar),
			params: []paramDoc{
				{in: "path", name: "id", description: "The submission ID, such as sub-34750f98bd59fcfc-1."},
				{in: "path", name: "sha256", description: "The sidecar's SHA-256, 64 lowercase hex digits."},
			},
			errors: []errorDoc{
				{http.StatusBadRequest, []string{"invalid_digest"}, "The digest is not 64 lowercase hex digits."},
				{http.StatusNotFound, []string{"sidecar_not_found"}, "This federation has no accepted submission of that ID, or it carries no sidecar of this digest; adds \"sha256\" and \"submission_id\"."},
			},
		},
		{
			method: http.MethodGet, path: "/federation/sidecar/{sha256}",
			summary: "An attestation sidecar, by digest",
			description: "As GET /federation/submission/{id}/sidecar/{sha256}, under the name and media type of the oldest accepted " +
				"submission that carries the digest (by creation time, then ID), so a later submission carrying the same bytes " +
				"cannot re-label them. Cached for five minutes: an older submission still being verified may change the label " +
				"once accepted. Prefer the per-submission url of the operator summary.",
			handler: http.HandlerFunc(s.serveSidecar),
			params:  []paramDoc{{in: "path", name: "sha256", description: "The sidecar's SHA-256, 64 lowercase hex digits."}},
			errors: []errorDoc{
				{http.StatusBadRequest, []string{"invalid_digest"}, "The digest is not 64 lowercase hex digits."},
				{http.StatusNotFound, []string{"sidecar_not_found"}, "No accepted submission of this federation carries a sidecar of this digest; adds \"sha256\"."},
			},
		},
		receiptsRoute(s, "/federation/receipts"),
		receiptsRoute(s, "/receipts"),
		{
			method: http.MethodGet, path: "/federation/operator/{id}",
			summary: "An operator's summary",
			description: "The seed's record of a registered operator, with one page of its accepted submissions and of the anchors " +
				"the federation made that bind it, newest first. Both lists page together: pass next_page_token as page_token.",
			handler: http.HandlerFunc(s.serveOperator), response: operatorSummary{},
			params: []paramDoc{
				{in: "path", name: "id", description: "The operator ID, such as op_34750f98bd59fcfc."},
				{in: "query", name: "limit", description: "Items of each list per page, 1 to 1000; 100 when absent.", integer: true},
				{in: "query", name: "page_token", description: "The next_page_token of the previous page."},
				{in: "query", name: "after", description: "An alias of page_token."},
			},
			errors: []errorDoc{
				{http.StatusBadRequest, []string{"invalid_operator_id", "invalid_limit", "invalid_page_token"}, "The ID is not op_ and 16 lowercase hex, limit is not 1 to 1000, or page_token is not one this API gave."},
				{http.StatusNotFound, []string{"operator_not_found"}, "No operator of that ID that the controller registered."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist."},
			},
		},
		{
			method: http.MethodGet, path: "/federation/operator/{id}/keys",
			summary: "An operator's key history",
			description: "The keys a registered operator held, oldest first, each rotation with the key_rotation record the federation " +
				"logged (its RFC 8785 JSON's SHA-512 is the data hash of the log entry at tlog_log_index, signed by the federation key) " +
				"and, for the last rotation, the operator's signed statement. An auditor checks them against the log to tie an export " +
				"signed by a rotated key to its operator (cairn federation audit --fetch-records).",
			handler: http.HandlerFunc(s.serveOperatorKeys), response: operatorKeys{},
			params: []paramDoc{{in: "path", name: "id", description: "The operator ID, such as op_34750f98bd59fcfc."}},
			errors: []errorDoc{
				{http.StatusBadRequest, []string{"invalid_operator_id"}, "The ID is not op_ and 16 lowercase hex."},
				{http.StatusNotFound, []string{"operator_not_found"}, "No operator of that ID that the controller registered."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist."},
			},
		},
		{
			method: http.MethodGet, path: logPrefix + "/checkpoint",
			summary: "The embedded log's checkpoint",
			description: "The embedded transparency log's latest signed checkpoint (C2SP tlog-checkpoint, a signed note), text/plain, " +
				"with the cosignatures (C2SP tlog-cosignature) of the Federation's witnesses that cosigned it so far, after the log's signature.",
			handler: http.HandlerFunc(s.serveLog),
			errors: []errorDoc{
				{http.StatusNotFound, []string{"log_not_served", "not_found"}, "The Federation's log is a Rekor log or this replica has no log directory; or the log has no checkpoint yet."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist."},
			},
		},
		{
			method: http.MethodGet, path: logPrefix + "/witnesses",
			summary: "The log's witnesses",
			description: "The embedded log's verifier key (what a member's witness is configured with), the Federation's witness policy " +
				"in the text form verifiers read, and the latest checkpoint with the cosignatures of the policy's witnesses it has, " +
				"each verified under its witness's key: who witnessed it, and whether they meet the policy.",
			handler: http.HandlerFunc(s.serveWitnesses), response: witnessesResponse{},
			errors: []errorDoc{
				{http.StatusNotFound, []string{"log_not_served"}, "The Federation's log is a Rekor log or this replica has no log directory."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist."},
			},
		},
		{
			method: http.MethodGet, path: logPrefix + "/trusted-root",
			summary: "The log's Sigstore trusted root",
			description: "The Sigstore trusted root (application/vnd.dev.sigstore.trustedroot+json;version=0.1) of the federation's Rekor " +
				"log and, for Rekor v2, its RFC 3161 timestamp authority: the log's key and, for Rekor v2, the key ID its checkpoints " +
				"name it by (the origin read from its latest checkpoint, verified under the key). With the federation's key, " +
				"Sigstore's tools verify the bundles of GET /federation/anchor/{id}/sigstore-bundle.",
			handler: http.HandlerFunc(s.serveTrustedRoot),
			errors: []errorDoc{
				{http.StatusNotFound, []string{"log_not_served"}, "The Federation's log is its embedded log."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready", "log_key_unavailable", "log_unreachable"}, "The Federation does not exist; its log key is not pinned; or the log's checkpoint could not be read and verified."},
			},
		},
		{
			method: http.MethodGet, path: logPrefix + "/snapshots",
			summary: "The log's weekly snapshots",
			description: "One checkpoint of the federation's transparency log a week, taken by the leader and verified under the " +
				"log key the federation names: an auditor who kept an earlier one can ask the log to prove the later one extends it.",
			handler: http.HandlerFunc(s.serveLogSnapshots), response: logSnapshotsResponse{},
			errors: []errorDoc{{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist."}},
		},
		{
			method: http.MethodGet, path: logPrefix + "/snapshots/{week}",
			summary:     "One weekly snapshot",
			description: "The checkpoint of one ISO week, text/plain, exactly as the log signed it.",
			handler:     http.HandlerFunc(s.serveLogSnapshot),
			params:      []paramDoc{{in: "path", name: "week", description: "The ISO week, such as 2026-W48."}},
			errors: []errorDoc{
				{http.StatusBadRequest, []string{"invalid_week"}, "The week is not of the form 2026-W48."},
				{http.StatusNotFound, []string{"snapshot_not_found"}, "No snapshot that verifies was taken that week."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist."},
			},
		},
		{
			method: http.MethodGet, path: logPrefix + "/tile/",
			summary: "The embedded log's tiles",
			description: "Every path under tile/ of C2SP tlog-tiles: hash tiles tile/<L>/<N>[.p/<W>] and entry bundles " +
				"tile/entries/<N>[.p/<W>], application/octet-stream; a full tile is immutable, a partial one is not cached.",
			handler: http.HandlerFunc(s.serveLog),
			errors: []errorDoc{
				{http.StatusNotFound, []string{"log_not_served", "not_found"}, "The Federation's log is a Rekor log or this replica has no log directory; or the log has no such tile."},
				{http.StatusServiceUnavailable, []string{"federation_not_ready"}, "The Federation does not exist."},
			},
		},
	}
}

// receiptsRoute is GET path of the operator's receipts: /federation/receipts and the
// seed's /receipts are the same operation.
func receiptsRoute(s *Server, path string) route {
	return route{
		method: http.MethodGet, path: path,
		summary: "The operator's receipts",
		description: "The signed receipts of every anchor the federation made that binds the operator whose bearer token " +
			"verifies (a withdrawn operator's too), newest first; each signed by the key that signed its anchor and carrying the " +
			"log's proof bundle (tlog_entry) once the log recorded the anchor and its proof verifies. The token binds the empty " +
			"body (or is a challenge token).",
		handler: http.HandlerFunc(s.serveReceipts), response: receiptsResponse{},
		params: []paramDoc{
			{in: "query", name: "since", description: "An anchor ID: only receipts of anchors whose ID sorts after it (made later)."},
			{in: "query", name: "limit", description: "Receipts per page, 1 to 1000; 100 when absent.", integer: true},
			{in: "query", name: "page_token", description: "The next_page_token of the previous page."},
			{in: "query", name: "after", description: "An alias of page_token."},
		},
		errors: append([]errorDoc{
			{http.StatusBadRequest, []string{"invalid_anchor_id", "invalid_limit", "invalid_page_token"}, "since is not an anchor ID, limit is not 1 to 1000, or page_token is not one this API gave."},
			{http.StatusServiceUnavailable, []string{"federation_not_ready", "signing_key_unavailable"}, "The Federation does not exist, or no Secret holds the key that signed an anchor of the page (nor a later key of the key history)."},
		}, tokenErrors...),
	}
}

// serveOpenAPI answers GET /federation/openapi.json.
func (s *Server) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(s.openAPIJSON)
}
