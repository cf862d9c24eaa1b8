// Package bijotel reads and verifies the formats of the original product, BIJOTEL 2.16 and
// bijotel-federation 0.3.0: its chain rows, its bijotel-chain-v1 and -v2 exports and its
// cross-anchor receipts, by that product's rules (../shared/LEGACY-BIJOTEL.md in the
// design, docs/OPERATIONS.md "Migrating from BIJOTEL" for users).
//
// It is as strict as the original everywhere and stricter where the original is weak, and
// it says what each check proves: a v2 export checked with the public key alone proves
// only that the key signed a chain_signature, not which entries it covers, and is reported
// as such, never as valid.
//
// Nothing here is Cairn's own protocol (pkg/protocol); the two share only the HMAC rules,
// which are the same: hmac_hash = HMAC-SHA256(secret, prev_hash ‖ canonical_hash) over the
// 128 hex characters, and chain_signature = HMAC-SHA256(secret, "chain:" ‖ head ‖ ":" ‖
// count).
package bijotel
