// Package cache holds package fleet's caches in memory: a bounded map
// (Bounded: keys looked up by hash), the newest version of a value per
// account (Versioned: notification rules), values per account by version
// within a budget of bytes, least recently used first out (LRU: compiled
// alert configurations), and values trusted while fresh, dropped by a
// change (Fresh: devices' routes by identifier). Each is safe for
// concurrent use.
//
// It knows nothing of what the values are: package fleet says what is
// cached, what a version is (the account's configuration version, which a
// change moves in its transaction, so no server serves what another has
// changed since), and how long an entry is trusted.
package cache

import (
	"container/list"
	"sync"
	"time"
)

// Bounded is a map guarded by a lock that starts again empty when a new
// key would take it past its bound: for entries cheap to fetch again.
type Bounded[K comparable, V any] struct {
	mu      sync.RWMutex
	max     int
	entries map[K]V
}

// Init makes the map empty, with room for max entries.
func (c *Bounded[K, V]) Init(max int) {
	c.max = max
	c.entries = make(map[K]V)
}

// Get returns the entry of k.
func (c *Bounded[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	return e, ok
}

// Put keeps v as the entry of k.
func (c *Bounded[K, V]) Put(k K, v V) {
	c.mu.Lock()
	if len(c.entries) > c.max { // bound memory; entries are cheap to refetch
		clear(c.entries)
	}
	c.entries[k] = v
	c.mu.Unlock()
}

// Forget drops the entry of k.
func (c *Bounded[K, V]) Forget(k K) {
	c.mu.Lock()
	delete(c.entries, k)
	c.mu.Unlock()
}

// Len returns how many entries are kept.
func (c *Bounded[K, V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

// Versioned keeps, per key, a value and the version it is of: an entry
// serves only a reader of that version, and an older version never
// replaces a newer one. Past max keys it starts again empty.
type Versioned[V any] struct {
	mu  sync.Mutex
	max int
	m   map[string]versioned[V]
}

type versioned[V any] struct {
	version int64
	v       V
}

// Init makes the cache empty, with room for max keys.
func (c *Versioned[V]) Init(max int) {
	c.mu.Lock()
	c.max = max
	c.m = map[string]versioned[V]{}
	c.mu.Unlock()
}

// Get returns the value of key if the one kept is of version.
func (c *Versioned[V]) Get(key string, version int64) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || e.version != version {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put keeps v as the value of key at version, unless a newer version is
// kept.
func (c *Versioned[V]) Put(key string, version int64, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		c.m = map[string]versioned[V]{}
	}
	if e, ok := c.m[key]; ok && e.version > version {
		return
	}
	c.m[key] = versioned[V]{version, v}
}

// LRU keeps values per key, at most max bytes of them by their sizes,
// dropping the least recently used first; a value larger than max alone
// is not kept. Each value has a version, and an entry serves only a
// reader of its version.
type LRU[V any] struct {
	mu      sync.Mutex
	max     int
	used    int
	m       map[string]*list.Element // key -> entry in lru
	lru     list.List                // of *lruEntry, most recently used first
	version func(V) int64
	size    func(V) int
}

type lruEntry[V any] struct {
	key string
	v   V
}

// Init makes the cache empty, with a budget of max bytes; version and
// size read a value's.
func (c *LRU[V]) Init(max int, version func(V) int64, size func(V) int) {
	c.max = max
	c.m = map[string]*list.Element{}
	c.version, c.size = version, size
}

// Get returns the value of key of version, if kept (the zero V if not).
func (c *LRU[V]) Get(key string, version int64) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[key]
	if e == nil || c.version(e.Value.(*lruEntry[V]).v) != version {
		var zero V
		return zero
	}
	c.lru.MoveToFront(e)
	return e.Value.(*lruEntry[V]).v
}

// Latest returns the value of key of whatever version is kept (the zero V
// if none).
func (c *LRU[V]) Latest(key string) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[key]; e != nil {
		return e.Value.(*lruEntry[V]).v
	}
	var zero V
	return zero
}

// Put keeps v as the value of key unless a newer one is kept, then drops
// the least recently used until the rest fit.
func (c *LRU[V]) Put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[key]; e != nil {
		if c.version(e.Value.(*lruEntry[V]).v) > c.version(v) {
			return
		}
		c.remove(e)
	}
	if c.size(v) > c.max {
		return
	}
	c.m[key] = c.lru.PushFront(&lruEntry[V]{key, v})
	c.used += c.size(v)
	for c.used > c.max {
		c.remove(c.lru.Back())
	}
}

func (c *LRU[V]) remove(e *list.Element) {
	ce := c.lru.Remove(e).(*lruEntry[V])
	delete(c.m, ce.key)
	c.used -= c.size(ce.v)
}

// Stats returns how many values are kept and their bytes by their sizes.
func (c *LRU[V]) Stats() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.used
}

// Fresh keeps values by key for as long as they are fresh (fresh reports
// whether a value may be trusted at a time), at most max of them: past it
// the stale go first, then all. Its generation moves with every Forget, so
// that a value read before a change is not kept after it: Put keeps a
// value only with the generation Get returned before it was read.
type Fresh[V any] struct {
	mu    sync.Mutex
	max   int
	m     map[string]V
	gen   uint64
	fresh func(v V, now time.Time) bool
}

// Init makes the cache empty, with room for max values.
func (c *Fresh[V]) Init(max int, fresh func(v V, now time.Time) bool) {
	c.max = max
	c.m = map[string]V{}
	c.fresh = fresh
}

// Get returns the value of key, the cache's generation, and whether the
// value is kept and fresh at now.
func (c *Fresh[V]) Get(key string, now time.Time) (V, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, c.gen, ok && c.fresh(v, now)
}

// Put keeps v unless the cache changed since gen.
func (c *Fresh[V]) Put(key string, v V, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if len(c.m) >= c.max {
		for k, e := range c.m {
			if !c.fresh(e, now) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= c.max {
			clear(c.m)
		}
	}
	c.m[key] = v
}

// Forget drops the value of key.
func (c *Fresh[V]) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
	c.gen++
}

// ForgetIf drops the values drop reports true for.
func (c *Fresh[V]) ForgetIf(drop func(v V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.m {
		if drop(v) {
			delete(c.m, k)
		}
	}
	c.gen++
}
