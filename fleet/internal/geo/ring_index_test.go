package geo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetkit/fleetapi/fleet/internal/geo/geotest"
	"github.com/matryer/is"
)

// maxRing is the most positions a geofence's ring may hold
// (fleet.maxRing): the rings the index is tested on are that long.
const maxRing = 1_000

// validRing reports whether a ring is one a geofence may hold (fleet's
// rules): 4 to maxRing positions in range, the last equal to the first.
func validRing(r [][]float64) bool {
	if len(r) < 4 || len(r) > maxRing {
		return false
	}
	for _, p := range r {
		if len(p) != 2 || p[0] < -180 || p[0] > 180 || p[1] < -90 || p[1] > 90 {
			return false
		}
	}
	first, last := r[0], r[len(r)-1]
	return first[0] == last[0] && first[1] == last[1]
}

// probes are positions to test a ring at: every vertex, the middle of every
// edge, positions level with vertices, a few just outside the box's
// latitudes, then (from the index returned on) random ones in and around
// the box.
func probes(r []float64, rng *rand.Rand) ([][2]float64, int) {
	n := len(r) / 2
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for k := range n {
		minX, maxX = math.Min(minX, r[2*k]), math.Max(maxX, r[2*k])
		minY, maxY = math.Min(minY, r[2*k+1]), math.Max(maxY, r[2*k+1])
	}
	w, h := maxX-minX, maxY-minY
	var out [][2]float64
	for k := range n {
		j := (k + n - 1) % n
		out = append(out, [2]float64{r[2*k], r[2*k+1]},
			[2]float64{(r[2*k] + r[2*j]) / 2, (r[2*k+1] + r[2*j+1]) / 2},
			[2]float64{minX - 0.1*w + 1.2*w*rng.Float64(), r[2*k+1]})
	}
	out = append(out, [2]float64{minX, minY - geoEps/2}, [2]float64{maxX, maxY + geoEps/2}, [2]float64{minX + w/2, maxY})
	random := len(out)
	for range 2000 {
		out = append(out, [2]float64{minX - 0.1*w + 1.2*w*rng.Float64(), minY - 0.1*h + 1.2*h*rng.Float64()})
	}
	return out, random
}

// TestRingIndexAgreesWithEveryEdge: the indexed test gives the answer the
// test over every edge gives (inside, and on an edge), for rings of every
// awkward shape, at vertices, on edges, level with vertices and anywhere
// else; and it tests far fewer edges than the ring has where the ring does
// not cross itself: about ten for a comb of a thousand teeth either way.
func TestRingIndexAgreesWithEveryEdge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	rings := map[string][][]float64{
		"comb":      geotest.Comb(13, 52, 0.1, 0.1, maxRing),
		"sideways":  geotest.Sideways(13, 52, 0.1, 0.1, maxRing),
		"star":      geotest.Star(0, 0, 1, maxRing, rng),
		"staircase": geotest.Staircase(maxRing),
		"scribble":  geotest.Scribble(maxRing, rng),
		"small":     geotest.Scribble(40, rng),
		"antimeridian": func() [][]float64 {
			r := geotest.Comb(179.95, 0, 0.2, 0.1, 200)
			for _, p := range r {
				if p[0] > 180 {
					p[0] -= 360
				}
			}
			return r
		}(),
	}
	for name, ring := range rings {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			is.True(validRing(ring)) // a ring a geofence may hold
			s := Polygon([][][]float64{ring})
			r := s.rings[0]
			ix := s.index[0]
			is.True(ix != nil) // long enough to index
			is.True(ix.size() <= 16*len(r)+1024)
			ps, random := probes(r, rng)
			work := 0
			for i, p := range ps {
				if i == random {
					work = 0
				}
				x, y := p[0], p[1]
				in, edge := pointInRing(r, x, y)
				xin, xedge := ix.test(r, x, y, &work)
				if edge != xedge || !edge && in != xin {
					t.Fatalf("at (%v, %v): every edge says inside %v, on edge %v; the index %v, %v", x, y, in, edge, xin, xedge)
				}
			}
			perProbe := float64(work) / float64(len(ps)-random)
			t.Logf("%s: %.1f edges tested a random position, of %d; index %d bytes", name, perProbe, len(r)/2, ix.size())
			switch name {
			case "comb", "sideways", "staircase", "antimeridian":
				is.True(perProbe < 20) // a few edges, not every edge
			case "star":
				is.True(perProbe < float64(len(r)/2)/5) // long spikes: tall bands, still a fraction
			}
		})
	}
}

// BenchmarkGeofenceContains measures one containment test of a position
// inside the box of a geofence of maxRing positions, edge by edge
// and through the index.
func BenchmarkGeofenceContains(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name string
		ring [][]float64
	}{{"comb", geotest.Comb(13, 52, 0.1, 0.1, maxRing)}, {"sideways", geotest.Sideways(13, 52, 0.1, 0.1, maxRing)},
		{"star", geotest.Star(13, 52, 0.05, maxRing, rng)}} {
		s := Polygon([][][]float64{c.ring})
		pts := make([][2]float64, 1024)
		for i := range pts {
			pts[i] = [2]float64{52 - 0.05 + 0.1*rng.Float64(), 13 - 0.05 + 0.1*rng.Float64()}
		}
		for _, indexed := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/indexed=%v", c.name, indexed), func(b *testing.B) {
				s := s
				if !indexed {
					s.index = []*ringIndex{nil}
				}
				work, i := 0, 0
				for b.Loop() {
					p := pts[i%len(pts)]
					s.Contains(p[0], p[1], &work)
					i++
				}
				b.ReportMetric(float64(work)/float64(i), "edges/op")
			})
		}
	}
}
