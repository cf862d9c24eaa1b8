// Package store keeps an operator's HMAC chain in a SQLite file: sealing, verification and
// export.
//
// The chain is one table, chain, with a row per entry (docs/PROTOCOL.md §2). Rows are only
// ever appended, by Seal, in a transaction that takes SQLite's write lock before it reads
// the last row (BEGIN IMMEDIATE), so writers in any number of processes append one after
// another and the chain cannot fork. Verify and Export read in one transaction each, so
// they see a consistent snapshot while writers go on appending.
//
// The file is opened with these settings, applied to every connection:
//
//   - journal_mode=WAL: readers (Verify, Export, Stats) do not block the writer, nor it them.
//   - synchronous=FULL: each committed Seal is fsynced to the WAL before Seal returns. With
//     NORMAL, a power cut could roll back entries a caller was already told were sealed,
//     and the next Seal would then reuse their seq with different content: a fork of what
//     was handed out. One fsync per Seal is cheap next to the work of a batch.
//   - busy_timeout=10000: a writer waits up to 10 s for another process's transaction.
//   - foreign_keys=ON: the schema has no foreign keys today; any added later are enforced.
//
// The table is STRICT, so every column holds the type the schema gives it. New files are
// created with mode 0600 (SQLite gives the -wal and -shm files the same mode): the file is
// an operator's record, and readable by no one else.
//
// SealOnce seals each span once: a span whose trace_id and span_id the chain holds with the
// same content is skipped, one it holds with other content refused (sealonce.go).
//
// Checks reuse pkg/protocol: protocol.NewEntry seals, protocol.CheckEntry checks an entry
// on its own (shape, body hash, columns, HMAC) and the store checks seq and links in
// order, the way protocol.VerifyExport does for an export.
package store
