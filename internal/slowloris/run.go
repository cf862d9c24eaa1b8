package slowloris

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Target is a server under attack and the timeouts it claims.
type Target struct {
	Addr string
	// GetPath is a path served to GET; PostPath one that takes a body of ContentType.
	GetPath, PostPath, ContentType string
	// The server's http.Server timeouts.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// Served checks another client is served; Run calls it while the slow ones trickle.
	Served func() error
}

// Run attacks t with Clients slow-header and as many slow-body connections at once (a
// byte every 100 ms), checks other clients are served meanwhile, that each slow
// connection is cut off after the matching timeout (not before half of it, nor later than
// three times it plus two seconds), and that an idle keep-alive connection is closed
// after IdleTimeout likewise.
func Run(t Target) error {
	const interval = 100 * time.Millisecond
	limit := func(d time.Duration) time.Duration { return 3*d + 2*time.Second }
	var mu sync.Mutex
	var errs []error
	record := func(kind string, want, took time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", kind, err))
		case took < want/2:
			errs = append(errs, fmt.Errorf("%s: cut off after %v, before the timeout %v", kind, took, want))
		}
	}
	var wg sync.WaitGroup
	for range Clients {
		wg.Go(func() {
			took, err := Headers(t.Addr, t.GetPath, interval, limit(t.ReadHeaderTimeout))
			record("slow headers", t.ReadHeaderTimeout, took, err)
		})
		wg.Go(func() {
			took, err := Body(t.Addr, t.PostPath, t.ContentType, interval, limit(t.ReadTimeout))
			record("slow body", t.ReadTimeout, took, err)
		})
	}
	wg.Go(func() {
		took, status, err := Idle(t.Addr, t.GetPath, limit(t.IdleTimeout))
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("GET %s answered %d", t.GetPath, status)
		}
		record("idle connection", t.IdleTimeout, took, err)
	})
	time.Sleep(3 * interval)
	for i := range 3 {
		if err := t.Served(); err != nil {
			record("another client", 0, 0, fmt.Errorf("not served while %d slow clients trickle (try %d): %w", 2*Clients, i+1, err))
		}
		time.Sleep(interval)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Clients is how many slow-header and how many slow-body connections Run opens.
const Clients = 8
