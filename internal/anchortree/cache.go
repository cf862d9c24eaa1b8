package anchortree

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Key names one Merkle-form anchor: the scope it belongs to (its Federation), its ID,
// and the size and root its signed record states.
type Key struct {
	Scope    string
	AnchorID string
	Size     uint64
	Root     Hash
}

// Load reads an anchor's stored leaves, in tree order, unchecked.
type Load func(context.Context) ([]protocol.MerkleLeaf, error)

// Cache keeps the checked trees of the anchors read last, so that a tree is rebuilt from
// its stored leaves once, not on every receipt or verify: at most maxBytes of trees (an
// anchor larger than that alone is checked on every Get and not kept). A failed check is
// kept as well, so that stored leaves that do not make their anchor's tree cost one
// rebuild, not one per request; a store mended since is read again after a restart. One
// tree is built at a time, whoever asks: concurrent Gets of one key share its build, and
// builds of other keys wait their turn, so that requests can make the process hold no
// more than one tree under construction besides the cache.
type Cache struct {
	maxBytes uint64
	builds   chan struct{}
	group    singleflight.Group

	mu      sync.Mutex
	entries map[Key]*list.Element // of *cached, newest at the front of order
	order   list.List
	total   uint64
}

// cached is one anchor's verdict: its tree, or why its leaves are not its tree.
type cached struct {
	key    Key
	anchor *Anchor
	err    error
	bytes  uint64
}

// NewCache makes a cache that keeps at most maxBytes of trees.
func NewCache(maxBytes uint64) *Cache {
	return &Cache{maxBytes: maxBytes, builds: make(chan struct{}, 1), entries: map[Key]*list.Element{}}
}

// Get returns the checked tree of the anchor key, reading its leaves with load when the
// cache does not hold it (Verify checks them against key's size and root). A load that
// fails (the store is down, ctx ended) is not kept.
func (c *Cache) Get(ctx context.Context, key Key, load Load) (*Anchor, error) {
	if v, ok := c.lookup(key); ok {
		return v.anchor, v.err
	}
	ch := c.group.DoChan(c.flightKey(key), func() (any, error) {
		if v, ok := c.lookup(key); ok {
			return v, nil
		}
		// The build is shared: a caller that goes away does not end it for the others, who
		// may wait longer; each caller stops waiting when its own context ends.
		c.builds <- struct{}{}
		defer func() { <-c.builds }()
		leaves, err := load(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		v := &cached{key: key}
		if v.anchor, v.err = Verify(leaves, key.Size, key.Root); v.anchor != nil {
			v.bytes = v.anchor.bytes()
		}
		c.keep(v)
		return v, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		v := res.Val.(*cached)
		return v.anchor, v.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Add keeps a as the tree of the anchor key, as Get would after checking it: for the
// tree an anchor run built from its own leaves, which later readers in the process then
// need not read back.
func (c *Cache) Add(key Key, a *Anchor) {
	c.keep(&cached{key: key, anchor: a, bytes: a.bytes()})
}

// flightKey is key as a string, for the singleflight group.
func (c *Cache) flightKey(key Key) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%x", key.Scope, key.AnchorID, key.Size, key.Root)
}

// lookup returns key's verdict, if kept, and marks it used.
func (c *Cache) lookup(key Key) (*cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached), true
}

// keep adds v, evicting the verdicts used longest ago past maxBytes. A tree larger than
// maxBytes alone is not kept.
func (c *Cache) keep(v *cached) {
	if v.bytes > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[v.key]; ok {
		return
	}
	c.entries[v.key] = c.order.PushFront(v)
	c.total += v.bytes
	for c.total > c.maxBytes || c.order.Len() > maxCachedVerdicts {
		old := c.order.Back()
		o := old.Value.(*cached)
		c.order.Remove(old)
		delete(c.entries, o.key)
		c.total -= o.bytes
	}
}

// maxCachedVerdicts bounds the kept verdicts of any size, failures included.
const maxCachedVerdicts = 1024
