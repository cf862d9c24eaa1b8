// Package client is a small typed client of the Cairn federation API, every
// /federation endpoint of the server in webhook/ (docs/OPERATIONS.md, "The federation
// API").
//
// New makes a Client for a base URL; options add an HTTP client, the operator's
// identity (its ID and Ed25519 key, for the endpoints that take an operator bearer
// token), the admin token (POST /federation/anchor), the retry policy and a clock.
// Every call takes a context.
//
// Operator requests carry a bearer token bound to the request body (docs/PROTOCOL.md
// §5): "Bearer " and protocol.SignToken over protocol.BodyNonce(now, body), made afresh
// for each request and for each retry. Registration signs the federation's challenge
// (protocol.SignChallenge, which refuses any nonce without the cairn-challenge: prefix)
// and the proof of possession (protocol.SignRegistration); withdrawals and key
// rotations are the statements of protocol.NewWithdrawal and protocol.NewKeyRotation.
//
// A refusal is an *APIError carrying the server's status, error code, message, extra
// fields and Retry-After; IsCode tests for a code. Answers 429 and 503 are retried with
// exponential backoff, honouring Retry-After (one longer than MaxBackoff is returned at
// once rather than waited for); a GET is also retried after a transport
// failure; no other answer is retried, and a POST never after a transport failure
// (the server may have acted on it). No connection at all (refused, or a host name that
// does not resolve) is an *UnreachableError at once, never retried. WithRetryNotice tells
// the caller of each retry before its wait.
//
// The package imports only the standard library and pkg/protocol: no Kubernetes.
package client
