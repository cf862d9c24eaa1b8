package webhook

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxAddresses bounds the buckets an addressLimiter holds. Past it, the bucket seen
// longest ago goes: its client, if it comes back, starts from a full bucket. So a flood of
// new addresses can at worst loosen the limit of clients that have been quiet longest,
// never refuse anyone, and it costs the same constant time per request as any other.
const maxAddresses = 10000

// addressLimiter is a token bucket per key (a client address's addressKey, or an
// operator ID), holding at most maxAddresses buckets, least recently seen first out.
type addressLimiter struct {
	perSecond rate.Limit
	burst     int
	now       func() time.Time

	mu      sync.Mutex
	buckets map[string]*list.Element // of *bucket
	seen    list.List                // of *bucket, most recently seen at the front
}

type bucket struct {
	key     string
	limiter *rate.Limiter
}

func newAddressLimiter(perSecond float64, burst int, now func() time.Time) *addressLimiter {
	return &addressLimiter{perSecond: rate.Limit(perSecond), burst: burst, now: now, buckets: map[string]*list.Element{}}
}

// allow takes a token of key's bucket; when there is none it returns how long until one.
func (l *addressLimiter) allow(key string) (time.Duration, bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.buckets[key]
	if e == nil {
		if l.seen.Len() >= maxAddresses {
			delete(l.buckets, l.seen.Remove(l.seen.Back()).(*bucket).key)
		}
		e = l.seen.PushFront(&bucket{key: key, limiter: rate.NewLimiter(l.perSecond, l.burst)})
		l.buckets[key] = e
	} else {
		l.seen.MoveToFront(e)
	}
	res := e.Value.(*bucket).limiter.ReserveN(now, 1)
	if delay := res.DelayFrom(now); delay > 0 {
		res.CancelAt(now)
		return delay, false
	}
	return 0, true
}

// len is how many buckets l holds.
func (l *addressLimiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
