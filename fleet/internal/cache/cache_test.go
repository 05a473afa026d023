package cache

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

// A map past its bound starts again empty with the new key; Forget drops
// one key.
func TestBoundedStartsAgainPastItsBound(t *testing.T) {
	is := is.New(t)
	var c Bounded[int, string]
	c.Init(3)
	for k := range 4 {
		c.Put(k, "v")
	}
	is.Equal(c.Len(), 4) // up to one past the bound
	c.Put(9, "nine")     // past it: only the new one is kept
	is.Equal(c.Len(), 1)
	v, ok := c.Get(9)
	is.True(ok)
	is.Equal(v, "nine")
	_, ok = c.Get(0)
	is.True(!ok)
	c.Forget(9)
	_, ok = c.Get(9)
	is.True(!ok)
}

// An entry serves only its version; an older version never replaces a
// newer one; past max keys the cache starts again.
func TestVersionedServesItsVersionOnly(t *testing.T) {
	is := is.New(t)
	var c Versioned[string]
	c.Init(2)
	c.Put("a", 2, "two")
	_, ok := c.Get("a", 1)
	is.True(!ok) // another version
	v, ok := c.Get("a", 2)
	is.True(ok)
	is.Equal(v, "two")
	c.Put("a", 1, "one") // older: not kept
	v, _ = c.Get("a", 2)
	is.Equal(v, "two")
	c.Put("a", 3, "three")
	v, ok = c.Get("a", 3)
	is.True(ok)
	is.Equal(v, "three")
	c.Put("b", 1, "b")
	c.Put("c", 1, "c") // a third key: the others go
	_, ok = c.Get("a", 3)
	is.True(!ok)
	_, ok = c.Get("c", 1)
	is.True(ok)
}

type cfg struct {
	version int64
	size    int
}

// TestLRUEvictsBySize: the cache keeps at most its budget of bytes,
// dropping the least recently used value first; one larger than the
// budget alone is not kept; an older version never replaces a newer one.
func TestLRUEvictsBySize(t *testing.T) {
	is := is.New(t)
	var c LRU[*cfg]
	c.Init(1000, func(c *cfg) int64 { return c.version }, func(c *cfg) int { return c.size })
	mk := func(version int64, size int) *cfg { return &cfg{version: version, size: size} }
	c.Put("a", mk(1, 400))
	c.Put("b", mk(1, 400))
	is.True(c.Get("a", 1) != nil) // a is now the most recently used
	c.Put("c", mk(1, 400))        // 1200 > 1000: b goes
	is.True(c.Get("b", 1) == nil)
	is.True(c.Get("a", 1) != nil)
	is.True(c.Get("c", 1) != nil)
	n, bytes := c.Stats()
	is.Equal(n, 2)
	is.Equal(bytes, 800)

	c.Put("a", mk(2, 300)) // a new version replaces the old one
	is.True(c.Get("a", 1) == nil)
	is.True(c.Get("a", 2) != nil)
	c.Put("a", mk(1, 100)) // an older one does not
	is.True(c.Get("a", 2) != nil)
	is.Equal(c.Latest("a").version, int64(2))
	is.True(c.Latest("zz") == nil)
	_, bytes = c.Stats()
	is.Equal(bytes, 700)

	c.Put("d", mk(1, 1001)) // larger than the budget alone: not kept, nothing dropped
	is.True(c.Get("d", 1) == nil)
	n, bytes = c.Stats()
	is.Equal(n, 2)
	is.Equal(bytes, 700)

	c.Put("e", mk(1, 1000)) // the whole budget: everything else goes
	n, bytes = c.Stats()
	is.Equal(n, 1)
	is.Equal(bytes, 1000)
	is.True(c.Get("e", 1) != nil)
}

// A value serves while fresh; a Forget between Get and Put keeps the value
// read before it out; past max values the stale go first, then all;
// ForgetIf drops what it picks.
func TestFreshForgetsAndBounds(t *testing.T) {
	is := is.New(t)
	t0 := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	type route struct {
		vehicle string
		fetched time.Time
	}
	var c Fresh[route]
	c.Init(3, func(r route, now time.Time) bool { return now.Sub(r.fetched) < time.Minute && !now.Before(r.fetched) })
	_, gen, ok := c.Get("a", t0)
	is.True(!ok)
	c.Put("a", route{"v1", t0}, gen, t0)
	r, _, ok := c.Get("a", t0.Add(30*time.Second))
	is.True(ok)
	is.Equal(r.vehicle, "v1")
	_, _, ok = c.Get("a", t0.Add(time.Minute)) // stale
	is.True(!ok)

	_, gen, _ = c.Get("b", t0)
	c.Forget("x")                        // a change while b was read
	c.Put("b", route{"v1", t0}, gen, t0) // not kept
	_, _, ok = c.Get("b", t0)
	is.True(!ok)

	_, gen, _ = c.Get("b", t0)
	later := t0.Add(2 * time.Minute)
	c.Put("b", route{"v2", later}, gen, later)
	c.Put("c", route{"v2", later}, gen, later) // a (stale), b, c
	c.Put("d", route{"v3", later}, gen, later) // full: a, stale, goes
	_, _, ok = c.Get("b", later)
	is.True(ok)
	_, _, ok = c.Get("d", later)
	is.True(ok)
	c.Put("e", route{"v3", later}, gen, later) // full of fresh ones: all go
	_, _, ok = c.Get("b", later)
	is.True(!ok)
	_, _, ok = c.Get("e", later)
	is.True(ok)

	c.Put("f", route{"v4", later}, gen, later)
	_, gen, _ = c.Get("f", later)
	c.ForgetIf(func(r route) bool { return r.vehicle == "v3" })
	_, _, ok = c.Get("e", later)
	is.True(!ok)
	_, gen2, ok := c.Get("f", later)
	is.True(ok)
	is.True(gen2 != gen) // the generation moved
}
