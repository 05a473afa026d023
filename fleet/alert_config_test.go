package fleet

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/matryer/is"
)

// TestAlertCacheEvictsBySize: the cache keeps at most its budget of bytes,
// dropping the least recently used configuration first; one larger than the
// budget alone is not kept; an older version never replaces a newer one.
func TestAlertCacheEvictsBySize(t *testing.T) {
	is := is.New(t)
	var c alertCache
	c.init(1000)
	cfg := func(version int64, size int) *alertConfig { return &alertConfig{version: version, size: size} }
	c.put("a", cfg(1, 400))
	c.put("b", cfg(1, 400))
	is.True(c.get("a", 1) != nil) // a is now the most recently used
	c.put("c", cfg(1, 400))       // 1200 > 1000: b goes
	is.True(c.get("b", 1) == nil)
	is.True(c.get("a", 1) != nil)
	is.True(c.get("c", 1) != nil)
	n, bytes := c.stats()
	is.Equal(n, 2)
	is.Equal(bytes, 800)

	c.put("a", cfg(2, 300)) // a new version replaces the old one
	is.True(c.get("a", 1) == nil)
	is.True(c.get("a", 2) != nil)
	c.put("a", cfg(1, 100)) // an older one does not
	is.True(c.get("a", 2) != nil)
	_, bytes = c.stats()
	is.Equal(bytes, 700)

	c.put("d", cfg(1, 1001)) // larger than the budget alone: not kept, nothing dropped
	is.True(c.get("d", 1) == nil)
	n, bytes = c.stats()
	is.Equal(n, 2)
	is.Equal(bytes, 700)

	c.put("e", cfg(1, 1000)) // the whole budget: everything else goes
	n, bytes = c.stats()
	is.Equal(n, 1)
	is.Equal(bytes, 1000)
	is.True(c.get("e", 1) != nil)
}

// TestAlertConfigSizeEstimate: a compiled configuration's estimated size,
// which the cache budgets by, is near the memory it really takes, for
// geofences of every kind of ring.
func TestAlertConfigSizeEstimate(t *testing.T) {
	is := is.New(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var geos []Geofence
	var rules []AlertRule
	for k := range 60 {
		g := Geofence{ID: NewID(PrefixGeofence), Name: "Zone", Geometry: Geometry{Type: GeometryPolygon}}
		for range 10 {
			var ring [][]float64
			switch k % 3 {
			case 0:
				ring = comb(13, 52, 0.1, 0.1, MaxRingVertices)
			case 1:
				ring = sideways(13, 52, 0.1, 0.1, MaxRingVertices)
			default:
				ring = star(13, 52, 0.05, MaxRingVertices, rng)
			}
			g.Geometry.Rings = append(g.Geometry.Rings, ring)
		}
		geos = append(geos, g)
		rules = append(rules, AlertRule{ID: NewID(PrefixRule), Type: AlertGeofenceEnter, GeofenceID: g.ID, VehicleIDs: []string{}})
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cfg := compileConfig(1, rules, geos)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(geos) // the input is not part of the configuration
	used := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	t.Logf("estimate %d bytes, measured %.0f (%d vertices)", cfg.size, used, 60*10*MaxRingVertices)
	is.True(float64(cfg.size) > 0.7*used)
	is.True(float64(cfg.size) < 1.5*used)
	runtime.KeepAlive(cfg)
}
