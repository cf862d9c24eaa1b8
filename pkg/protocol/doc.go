// Package protocol holds the byte formats that operators, the federation and auditors
// share, and the offline checks over them: chain entries, the cairn-chain-v2 export
// envelope, operator identity and bearer tokens, signed statements (withdrawal, key
// rotation), cross-anchor hashes, receipts, and the hashedrekord log body.
//
// Everything here is pure: no network, no Kubernetes, no logging, no global state. Every
// function that verifies says what it checks and what the caller must still check, returns
// errors that wrap the sentinels in errors.go (test with errors.Is and errors.As), and
// never panics on malformed input. docs/PROTOCOL.md states the same rules in prose, with
// worked examples that the tests check.
//
// Every JSON text the package reads — exports as streams, span bodies, receipts, the
// input of the canonical forms — is read by one tokenizer (internal/jsonread), which
// applies docs/PROTOCOL.md §1's rules: strict UTF-8, no lone surrogates, no repeated
// member names, bounded nesting. (The receipt and log-bundle code still decodes some
// members with encoding/json, after the tokenizer or a canonical form has checked them.)
package protocol
