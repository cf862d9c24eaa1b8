package client

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// UnreachableError says that no connection to the federation could be made: nothing
// listens at its address, or its host name does not resolve. It is returned at once, not
// retried: waiting seconds does not start a server.
type UnreachableError struct {
	// URL is the federation's base URL.
	URL string
	// Err is the transport's error.
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the federation at %s: %s", e.URL, unreachableReason(e.Err))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// unreachable reports whether err, a transport error, shows that no connection was made
// because nothing answers at the address or the name does not resolve.
func unreachable(err error) bool {
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &dns) && dns.IsNotFound)
}

// unreachableReason is what unreachable found, in a few words.
func unreachableReason(err error) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns) && dns.IsNotFound:
		return "no such host " + dns.Name
	}
	return err.Error()
}

// RetryNotice describes a retry about to happen, for WithRetryNotice.
type RetryNotice struct {
	// Method and Path are the request's.
	Method, Path string
	// Attempt is the attempt that failed (1 for the first), of MaxAttempts.
	Attempt, MaxAttempts int
	// Wait is how long the client waits before the next attempt.
	Wait time.Duration
	// Err is why the attempt failed.
	Err error
}

// WithRetryNotice makes the client call notice before each wait between attempts, so a
// command can say it is retrying instead of staying silent.
func WithRetryNotice(notice func(RetryNotice)) Option {
	return func(c *Client) error {
		c.retryNotice = notice
		return nil
	}
}
