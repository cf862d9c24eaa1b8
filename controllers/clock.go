package controllers

import "time"

// clock is a reconciler's time source: Now, or time.Now when Now is nil.
type clock struct {
	// Now replaces time.Now, for tests that need a fixed time.
	Now func() time.Time
}

func (c clock) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
