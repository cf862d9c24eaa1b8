// Package federation holds the federation's rules, which both of its halves apply: the
// controllers (controllers/), which decide, and the HTTP API (webhook/), which answers
// from what they decided. It reads Kubernetes objects and Secrets but writes none.
//
//   - trust: which CrossAnchors the federation made (trust.go, anchorcheck.go), and the
//     bounded memory of checks on inputs that cannot change (verdictcache.go);
//   - indexes: every field index of the manager's cache, registered once for both halves
//     (indexes.go), and what a reader may say of a submission's anchoring (pending.go);
//   - receipts: what each participant gets, and the keys that sign it (receipt.go,
//     receiptkeys.go);
//   - coverage: which submissions an anchor covers (coverage.go);
//   - verdicts: what a Submission records of an export and whether it is accepted
//     (verdict.go, submission_api.go);
//   - keys and Secrets: the federation's signing key, admin token, challenge key and log
//     key (secrets.go, admin.go);
//   - identity: who holds an operator key, and key rotation (identity.go); what the
//     federation's log records of each operator, which outlives its object and rebuilds
//     its verdicts after a restore (loggedrecords.go);
//   - anchor requests, log snapshots, and the labels and lookups both halves share
//     (anchorrequest.go, snapshots.go, records.go).
//
// # The life of a submission
//
// One export, from the HTTP request to the receipt, in six files:
//
//  1. webhook/submit.go: POST /federation/submit checks the bearer token and verifies
//     the export as a stream under the operator's current key, creates the Submission of
//     its header (never its entries) under SubmissionName, and answers the verdict.
//  2. controllers/submission_controller.go: the verdict. The Submission's name, its
//     signed header under the operator's current key, continuity with the operator's head
//     (HeadOf) and the pending bound; one status write, which moves the head.
//  3. internal/federation/verdict.go: the rules of that verdict, which the API and the
//     admission webhook apply too.
//  4. controllers/anchor.go: the anchor run. What every trusted anchor bound (Ledger),
//     then each operator's newest accepted submission above it, signed into CrossAnchors
//     of at most MaxParticipantsPerAnchor operators; nothing waits for another controller.
//  5. controllers/crossanchor_controller.go: the log leg. The record uploaded to the
//     transparency log, its entry and proof kept in the anchor's status, retried on
//     schedule while the log is down.
//  6. internal/federation/receipt.go: the receipt each participant gets (GET /receipts),
//     signed again once the log leg is done, which verifies offline.
package federation
