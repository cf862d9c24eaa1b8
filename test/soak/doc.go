// Package soak runs `cairn serve` as a subprocess for a long time (SOAK_DURATION, 30
// minutes by default) while a client sends it OTLP spans at a steady rate, and fails when
// the server's memory or open file descriptors grow. `make soak` runs it; plain `go test`
// skips it (CAIRN_SOAK unset), so it is not part of `make test`.
package soak
