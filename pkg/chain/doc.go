// Package chain seals spans (LLM calls) into a Cairn HMAC chain from Go programs: a
// recorder, an OpenTelemetry span exporter, and replay helpers.
//
// The chain itself lives behind a [Sealer], an interface this package defines and a store
// (such as Cairn's SQLite store) satisfies: it appends span bodies as consecutive entries,
// atomically. Three ways in:
//
//   - [Recorder] seals one [protocol.SpanBody] at a time, after checking it is well formed.
//   - [SpanExporter] is an OpenTelemetry SDK span exporter: plug it into a
//     TracerProvider through a span processor and every generative-AI span (one carrying a
//     "gen_ai." or "bijotel.mcp." attribute, by default) is converted to a SpanBody and sealed, one Seal call
//     per exported batch.
//   - [RecordReplayContext] builds the attributes that let a call be replayed later, and
//     [VerifyReplay] compares a replayed output against what a sealed entry recorded.
//
// The package does no I/O of its own and never logs: every problem is returned as an
// error (or, for VerifyReplay, as a reason in its result). Entries sealed here are
// verified like any other, with the checks in package protocol.
package chain
