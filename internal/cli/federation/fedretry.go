package federation

import (
	"fmt"
	"io"

	"github.com/cairn-dev/cairn/pkg/client"
)

// sayRetries returns the client option that prints a line on w before each retry, so a
// federation that answers 503 or drops connections does not look like a hung command.
func sayRetries(w io.Writer) client.Option {
	return client.WithRetryNotice(func(n client.RetryNotice) {
		_, _ = fmt.Fprintf(w, "cairn: %s %s failed (%v); retrying in %s (attempt %d of %d)\n",
			n.Method, n.Path, n.Err, n.Wait, n.Attempt+1, n.MaxAttempts)
	})
}
