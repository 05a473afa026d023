package fleet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/matryer/is"
)

// Rings of the shapes that stress an edge index: combs whose teeth run
// north-south (every edge spans almost every latitude) or east-west (each
// edge spans a sliver), stars (long spikes meeting near the centre), a
// staircase of axis-parallel edges (many vertices at each latitude), and
// random, self-crossing rings.

// comb is a closed ring of about n positions: a base along the south of the
// box (clon±w/2, clat±h/2) with teeth reaching north, so every tooth edge
// spans 90% of the box's latitudes.
func comb(clon, clat, w, h float64, n int) [][]float64 {
	teeth := (n - 3) / 2
	ring := make([][]float64, 0, n)
	for i := range teeth {
		x := clon - w/2 + w*float64(i)/float64(teeth)
		y := clat + h/2
		if i%2 == 1 {
			y = clat - h/2 + h*0.1
		}
		ring = append(ring, []float64{x, y}, []float64{x + w/float64(teeth)/2, y})
	}
	ring = append(ring, []float64{clon + w/2, clat - h/2}, []float64{clon - w/2, clat - h/2})
	return append(ring, ring[0])
}

// sideways is comb turned a quarter: teeth reaching east, edges short in
// latitude.
func sideways(clon, clat, w, h float64, n int) [][]float64 {
	r := comb(clat, clon, h, w, n)
	out := make([][]float64, len(r))
	for i, p := range r {
		out[len(r)-1-i] = []float64{p[1], p[0]}
	}
	return out
}

func star(clon, clat, rad float64, n int, rng *rand.Rand) [][]float64 {
	ring := make([][]float64, 0, n)
	for i := range n - 1 {
		a := 2 * math.Pi * float64(i) / float64(n-1)
		r := rad
		if i%2 == 1 {
			r = rad * (0.01 + 0.05*rng.Float64())
		}
		ring = append(ring, []float64{clon + r*math.Cos(a), clat + r*math.Sin(a)})
	}
	return append(ring, ring[0])
}

func staircase(n int) [][]float64 {
	steps := (n - 3) / 2
	ring := [][]float64{{0, 0}}
	for i := range steps {
		ring = append(ring, []float64{0.1 * float64(i+1), 0.1 * float64(i)}, []float64{0.1 * float64(i+1), 0.1 * float64(i+1)})
	}
	ring = append(ring, []float64{0, 0.1 * float64(steps)})
	return append(ring, ring[0])
}

func scribble(n int, rng *rand.Rand) [][]float64 {
	ring := make([][]float64, 0, n)
	for range n - 1 {
		// Coarse coordinates: many vertices share a latitude.
		ring = append(ring, []float64{math.Round(rng.Float64()*40) / 4, math.Round(rng.Float64()*40) / 4})
	}
	return append(ring, ring[0])
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
		"comb":      comb(13, 52, 0.1, 0.1, MaxRingVertices),
		"sideways":  sideways(13, 52, 0.1, 0.1, MaxRingVertices),
		"star":      star(0, 0, 1, MaxRingVertices, rng),
		"staircase": staircase(MaxRingVertices),
		"scribble":  scribble(MaxRingVertices, rng),
		"small":     scribble(40, rng),
		"antimeridian": func() [][]float64 {
			r := comb(179.95, 0, 0.2, 0.1, 200)
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
			g := Geofence{Name: "g", Geometry: Geometry{Type: GeometryPolygon, Rings: [][][]float64{ring}}}
			is.NoErr(g.Validate())
			s := compile(&g)
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
// inside the box of a geofence of MaxRingVertices positions, edge by edge
// and through the index.
func BenchmarkGeofenceContains(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name string
		ring [][]float64
	}{{"comb", comb(13, 52, 0.1, 0.1, MaxRingVertices)}, {"sideways", sideways(13, 52, 0.1, 0.1, MaxRingVertices)},
		{"star", star(13, 52, 0.05, MaxRingVertices, rng)}} {
		g := Geofence{Name: "g", Geometry: Geometry{Type: GeometryPolygon, Rings: [][][]float64{c.ring}}}
		s := compile(&g)
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
					s.contains(p[0], p[1], &work)
					i++
				}
				b.ReportMetric(float64(work)/float64(i), "edges/op")
			})
		}
	}
}
