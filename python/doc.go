// Package python holds Cairn's replay helpers for Python (the cairn_replay package,
// standard library only) and their example (examples/replay_over_otlp.py). It has no Go
// code: its Go tests run the Python unit tests, compare the Python helpers with
// pkg/chain's on the same inputs byte for byte, and run the example against a real chain
// service.
//
// The tests need python3 on PATH. Without it they are skipped, unless
// CAIRN_REQUIRE_PYTHON=1 (make test sets it) makes that a failure.
package python
