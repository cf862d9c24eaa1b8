// Package webhook serves the federation's HTTP API (/federation/*) on every replica of the
// manager, and the validating admission webhooks of FederationOperators and Submissions
// (admission.go), which refuse at kubectl apply what the controllers would reject. It
// reads and writes the federation.cairn.dev objects through the manager's client; the
// rules (who holds a key, which anchors count) are internal/federation's, which the
// controllers apply too, and the controllers still decide: the API creates an object and
// answers once its controller has given a verdict. It imports no controller.
//
// Served: GET /federation/register/challenge (challenge.go), POST /federation/register
// (register.go), POST /federation/submit (submit*.go), POST /federation/anchor
// (anchornow*.go), GET /federation/status, GET /federation/anchor/{id} (anchorrecord.go),
// GET /federation/operator/{id} (operatorsummary.go), GET /federation/verify/{id}
// (verify*.go), GET /federation/receipts and GET /receipts (receipts.go), POST
// /federation/withdraw, POST /federation/rotate-key, the embedded log's tiles and the
// weekly log snapshots under GET /federation/log/ (logtiles.go, logsnapshots.go), GET
// /federation/openapi.json, and the public page GET / with its assets GET /assets/{name}
// (publicpage*.go, page/): HTML rendered from verified state only, both tables paged on
// the server, and a receipt box that verifies a receipt in the browser. Operators authenticate with bearer tokens (token.go), the
// admin with the admin token (anchornow.go). One route table (routes.go) builds both the
// mux and the
// OpenAPI document. Every error answer has one JSON shape,
// {"error": "<code>", "message": "<text>", ...extra members}; docs/OPERATIONS.md lists the
// codes.
//
// # Challenges
//
// A challenge nonce is "cairn-challenge:" and the unpadded base64url of
// random(16) ‖ expiry(8, big-endian Unix seconds) ‖ HMAC-SHA256(key, "cairn-challenge-v1:" ‖
// random ‖ expiry): 75 characters of [A-Za-z0-9_-], the grammar docs/PROTOCOL.md §6 gives
// challenge bodies. The key is the Federation's challenge key (its admin Secret, which the
// Federation controller makes, see federation.ChallengeKey), so any replica checks any replica's
// challenge without shared memory, and the MAC is compared with hmac.Equal. A challenge
// lives five minutes.
//
// A challenge is accepted once. Using one creates a ConfigMap named from the SHA-256 of
// the nonce in the Federation's namespace, labelled as a used challenge and annotated with
// its expiry and, for a registration, the FederationOperator and org name it was used for: Create is atomic across replicas, so a second use meets AlreadyExists and is
// refused 401 challenge_replayed. Records past their expiry are deleted by every
// replica's collector (a used nonce that expired fails its expiry check anyway).
//
// # Registration proof
//
// The FederationOperator controller registers only a spec whose proof of possession
// verifies under its key. The API writes the proof into the spec it creates: the client's
// proof_of_possession (the GitOps form, the key's signature over "register <org_name>
// <fingerprint>") when it sent one, else the challenge and its nonce_signature
// (spec.challengeProof), so that the seed's body alone registers. The controller checks a
// challenge proof itself rather than take this server's word: the signature under the
// spec key, and, when it decides the registration, the challenge's MAC under the
// challenge key, that the object was created before the challenge expired, and that the
// used-challenge record names the object and the org name (federation.CheckChallengeUse).
// A kubectl-applied challengeProof has no such record and is rejected.
//
// # Reads
//
// No request lists or copies the store: every read goes through the manager's cache
// uncopied and selects through federation.RegisterIndexes' indexes, the status counts are
// kept from the cache's events (kept.go), and the checks of immutable anchors and
// submissions are remembered, bounded (federation.VerdictCache). docs/OPERATIONS.md,
// "What a read costs", lists what each route reads.
//
// The server reads the federation's objects and Secrets through the manager's cache and
// creates FederationOperators (the controllers' RBAC covers both); it also keeps the
// used-challenge records:
//
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;create;delete
package webhook
