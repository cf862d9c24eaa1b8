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
//     key (secrets.go, admin_token.go);
//   - identity: who holds an operator key, and key rotation (identity.go);
//   - anchor requests, log snapshots, and the labels and lookups both halves share
//     (anchorrequest.go, snapshots.go, records.go).
package federation
