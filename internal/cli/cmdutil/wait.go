package cmdutil

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// WaitReady polls url until it answers 200, the server fails (managerDone), or ctx ends.
func WaitReady(ctx context.Context, url string, managerDone <-chan error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-managerDone:
			return fmt.Errorf("manager stopped before it was ready: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
