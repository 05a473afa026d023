package fleet

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet/internal/geo/geotest"
	"github.com/matryer/is"
)

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
				ring = geotest.Comb(13, 52, 0.1, 0.1, MaxRingVertices)
			case 1:
				ring = geotest.Sideways(13, 52, 0.1, 0.1, MaxRingVertices)
			default:
				ring = geotest.Star(13, 52, 0.05, MaxRingVertices, rng)
			}
			g.Geometry.Rings = append(g.Geometry.Rings, ring)
		}
		geos = append(geos, g)
		rules = append(rules, AlertRule{ID: NewID(PrefixRule), Type: AlertGeofenceEnter, GeofenceID: g.ID, VehicleIDs: []string{}})
	}
	cfg, used := compileMeasured(rules, geos)
	t.Logf("estimate %d bytes, measured %.0f (%d vertices)", cfg.size, used, 60*10*MaxRingVertices)
	is.True(float64(cfg.size) > 0.7*used)
	is.True(float64(cfg.size) < 1.5*used)
	runtime.KeepAlive(cfg)
}

// compileMeasured compiles a configuration and returns it with the heap it
// takes (its input, kept alive, is not part of it).
func compileMeasured(rules []AlertRule, geos []Geofence) (*alertConfig, float64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cfg := compileConfig(1, rules, geos)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(geos)
	return cfg, float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// BenchmarkFenceLookup measures finding the geofences that hold a point
// (insideSet), with the memory of the compiled geofences and their index:
// 1,000 small geofences spread over 9 x 10 degrees; 1,000 of 3 x 3
// degrees spread over the globe; 100 stacked on one 0.1-degree square,
// each of 10 comb rings of 1,000 positions, the points inside the square.
func BenchmarkFenceLookup(b *testing.B) {
	square := func(clon, clat, w float64) [][]float64 {
		return [][]float64{{clon, clat}, {clon + w, clat}, {clon + w, clat + w}, {clon, clat + w}, {clon, clat}}
	}
	cases := []struct {
		name  string
		fence func(k int) [][][]float64
		point func(r *rand.Rand) (lat, lon float64)
		n     int
	}{
		{"spread small", func(k int) [][][]float64 {
			return [][][]float64{geotest.Comb(10+0.3*float64(k%30), 50+0.3*float64(k/30), 0.1, 0.1, 100)}
		}, func(r *rand.Rand) (float64, float64) { return 50 + 10*r.Float64(), 10 + 9*r.Float64() }, 1000},
		{"spread 3 degrees", func(k int) [][][]float64 {
			return [][][]float64{square(-170+10*float64(k%34), -80+5*float64(k/34), 3)}
		}, func(r *rand.Rand) (float64, float64) { return -80 + 160*r.Float64(), -170 + 340*r.Float64() }, 1000},
		{"100 stacked, 10 rings of 1000", func(k int) [][][]float64 {
			rings := [][][]float64{geotest.Comb(13.05, 52.05, 0.1, 0.1, MaxRingVertices)}
			for h := 1; h < 10; h++ {
				rings = append(rings, geotest.Sideways(13.05, 52.05, 0.1, 0.1, MaxRingVertices))
			}
			return rings
		}, func(r *rand.Rand) (float64, float64) { return 52 + 0.1*r.Float64(), 13 + 0.1*r.Float64() }, 100},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var geos []Geofence
			var rules []AlertRule
			for k := range c.n {
				g := Geofence{ID: NewID(PrefixGeofence), Name: "g", Geometry: Geometry{Type: GeometryPolygon, Rings: c.fence(k)}}
				geos = append(geos, g)
				rules = append(rules, AlertRule{ID: NewID(PrefixRule), Type: AlertGeofenceEnter, GeofenceID: g.ID})
			}
			cfg, used := compileMeasured(rules, geos)
			j := newJudge(cfg, time.Time{}, false, 0)
			r := rand.New(rand.NewPCG(1, 2))
			var buf []int32
			for b.Loop() {
				lat, lon := c.point(r)
				buf = j.insideSet(lat, lon, buf)
			}
			b.ReportMetric(float64(j.work)/float64(b.N), "edges/op")
			b.ReportMetric(used/1e6, "MB")
			b.ReportMetric(float64(cfg.index.entries+len(cfg.index.world)), "entries")
		})
	}
}
