// Package witness is the client side of transparency-log witnessing in the C2SP formats:
// cosignatures (tlog-cosignature, "cosignature/v1"), the verifier keys that name a witness
// (signed-note vkeys of algorithm 0x04), the add-checkpoint request of the tlog-witness
// protocol, and k-of-n witness policies in the text format Sigsum and tessera read.
//
// A witness checks that each checkpoint a log shows it extends the last one it cosigned
// for that log, and cosigns it: a timestamped Ed25519 signature line added to the
// checkpoint note. A verifier that requires k cosignatures of n witnesses it trusts need
// not trust the log not to show different trees to different readers (a split view):
// a log would have to convince k witnesses of both trees.
//
// Everything here is written from the C2SP specifications and checked against
// golang.org/x/mod/sumdb/note and github.com/transparency-dev/formats in tests.
package witness
