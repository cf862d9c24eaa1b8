// Package tlog records Cairn's statements in a transparency log and proves they are
// there: one interface, Log, with three backends. Rekor talks to a Sigstore Rekor v1
// server (the public instance by default); RekorV2 to a Sigstore Rekor v2 (rekor-tiles)
// log, with an RFC 3161 timestamp authority for the time its entries do not carry;
// Embedded is an append-only log on tessera's POSIX storage, served read-only as C2SP
// tlog-tiles. All take the same hashedrekord bodies (protocol.NewHashedRekord; Rekor v2
// records them as hashedrekord 0.0.2) and return the same proof bundle
// (protocol.LogBundle), which protocol.VerifyLogBundle checks offline for any of them.
//
// Errors say whether to retry: an *UnavailableError (ErrUnavailable) means the log could
// not be reached or asked to come back later, and nothing was recorded that a retry would
// duplicate; a *RefusedError (ErrRefused) means the log will never take this entry.
// Uploading a body the log already holds returns the entry it has, so a retry after a
// crash never records twice.
package tlog

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Log is a transparency log.
type Log interface {
	// Upload records a hashedrekord body (protocol.NewHashedRekord) and returns its entry.
	// A body the log already holds returns the existing entry.
	Upload(ctx context.Context, body []byte) (*Entry, error)
	// Entry returns the entry at index, with a proof against the log's latest checkpoint.
	// An index the log does not have is ErrNotFound.
	Entry(ctx context.Context, index int64) (*Entry, error)
	// PublicKey returns the key the log signs checkpoints (and entry timestamps) with.
	PublicKey(ctx context.Context) (crypto.PublicKey, error)
	// Verify checks a bundle offline against the log's key (see protocol.VerifyLogBundle)
	// and returns the entry body.
	Verify(ctx context.Context, b *protocol.LogBundle) ([]byte, error)
	// Reachable returns nil when the log answers, or an *UnavailableError.
	Reachable(ctx context.Context) error
}

// Entry is an entry of a log.
type Entry struct {
	// Index is the entry's log index.
	Index int64
	// UUID is the log's name for the entry.
	UUID string
	// URL is where the entry can be read: Rekor's entry URL, or the embedded log's
	// tlog-tiles base URL.
	URL string
	// IntegratedTime is when the log integrated the entry (whole seconds).
	IntegratedTime time.Time
	// Bundle is the self-verifying proof bundle, checked before it is returned.
	Bundle protocol.LogBundle
}

var (
	// ErrUnavailable means the log could not be reached, timed out, or asked to be retried
	// later. Nothing was half-recorded: upload again.
	ErrUnavailable = errors.New("transparency log unavailable")
	// ErrRefused means the log answered that it will not record the entry (a 4xx other
	// than 408, 409 and 429). Retrying the same body will not help.
	ErrRefused = errors.New("transparency log refused the entry")
	// ErrNotFound means the log has no entry at that index or UUID.
	ErrNotFound = errors.New("no such log entry")
)

// UnavailableError is an ErrUnavailable with what was tried.
type UnavailableError struct {
	// Op is what was being done, e.g. "upload".
	Op string
	// Err is the last failure.
	Err error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("transparency log unavailable: %s: %v", e.Op, e.Err)
}

// Unwrap makes errors.Is(err, ErrUnavailable) true, and exposes the cause.
func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// RefusedError is an ErrRefused with the log's answer.
type RefusedError struct {
	// Status is the HTTP status (0 for the embedded log).
	Status int
	// Message is the log's explanation.
	Message string
}

func (e *RefusedError) Error() string {
	if e.Status == 0 {
		return "transparency log refused the entry: " + e.Message
	}
	return fmt.Sprintf("transparency log refused the entry: HTTP %d: %s", e.Status, e.Message)
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }
