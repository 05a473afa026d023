package geo

import (
	"math"
	"testing"

	"github.com/fleetkit/fleetapi/fleet/internal/geo/geotest"
	"github.com/matryer/is"
)

// polygon compiles the rings, which must be valid (see validRing).
func polygon(t *testing.T, rings ...[][]float64) Shape {
	t.Helper()
	for _, r := range rings {
		if !validRing(r) {
			t.Fatalf("not a valid ring: %v", r)
		}
	}
	return Polygon(rings)
}

// circle compiles a circle given as GeoJSON gives it: centre longitude
// first.
func circle(lon, lat, r float64) Shape { return Circle(lat, lon, r) }

// square 0..10 x 0..10 with a hole 4..6 x 4..6, and a ring over the
// antimeridian.
var (
	outer   = geotest.Square()
	hole    = geotest.Hole()
	wrapped = geotest.Wrapped()
)

// TestGeofenceContains: inside, outside, on edges and vertices of the
// outer ring and of holes, rays through vertices, rings over the
// antimeridian, circles over it and over the poles.
func TestGeofenceContains(t *testing.T) {
	cases := []struct {
		name     string
		s        Shape
		lat, lon float64
		want     bool
	}{
		{"inside", polygon(t, outer), 2, 2, true},
		{"outside east", polygon(t, outer), 5, 11, false},
		{"outside below", polygon(t, outer), -0.0001, 5, false},
		{"on bottom edge", polygon(t, outer), 0, 5, true},
		{"on right edge", polygon(t, outer), 5, 10, true},
		{"on top edge", polygon(t, outer), 10, 3, true},
		{"on vertex", polygon(t, outer), 10, 10, true},
		{"on origin vertex", polygon(t, outer), 0, 0, true},
		{"just outside a vertex", polygon(t, outer), 10.000001, 10.000001, false},
		{"in the hole", polygon(t, outer, hole), 5, 5, false},
		{"on the hole's edge", polygon(t, outer, hole), 4, 5, true},
		{"on the hole's vertex", polygon(t, outer, hole), 6, 6, true},
		{"between hole and outer edge", polygon(t, outer, hole), 5, 8, true},
		{"ray through a vertex, inside", polygon(t, [][]float64{{0, 0}, {5, 5}, {10, 0}, {10, 10}, {0, 10}, {0, 0}}), 5, 2, true},
		{"ray through a vertex, outside", polygon(t, [][]float64{{0, 0}, {5, 5}, {10, 0}, {10, 10}, {0, 10}, {0, 0}}), 2, 5, false},
		{"concave notch", polygon(t, [][]float64{{0, 0}, {10, 0}, {10, 10}, {5, 3}, {0, 10}, {0, 0}}), 8, 5, false},
		{"antimeridian: east side", polygon(t, wrapped), 0, 175, true},
		{"antimeridian: west side", polygon(t, wrapped), 0, -175, true},
		{"antimeridian: on 180", polygon(t, wrapped), 0, 180, true},
		{"antimeridian: on -180", polygon(t, wrapped), 5, -180, true},
		{"antimeridian: outside, west", polygon(t, wrapped), 0, -160, false},
		{"antimeridian: outside, east", polygon(t, wrapped), 0, 160, false},
		{"antimeridian: prime meridian is outside", polygon(t, wrapped), 0, 0, false},
		{"near the antimeridian, not crossing", polygon(t, [][]float64{{175, 0}, {180, 0}, {180, 5}, {175, 5}, {175, 0}}), 2, 179.9, true},
		{"near the antimeridian, point beyond", polygon(t, [][]float64{{175, 0}, {180, 0}, {180, 5}, {175, 5}, {175, 0}}), 2, -179.9, false},
		{"circle centre", circle(13.4, 52.5, 1000), 52.5, 13.4, true},
		{"circle: 900 m north", circle(13.4, 52.5, 1000), 52.5 + 900/111195.0, 13.4, true},
		{"circle: 1100 m north", circle(13.4, 52.5, 1000), 52.5 + 1100/111195.0, 13.4, false},
		{"circle: 990 m east at 52.5N", circle(13.4, 52.5, 1000), 52.5, 13.4 + 990/(111195.0*math.Cos(52.5*math.Pi/180)), true},
		{"circle: 1010 m east at 52.5N", circle(13.4, 52.5, 1000), 52.5, 13.4 + 1010/(111195.0*math.Cos(52.5*math.Pi/180)), false},
		{"circle over the antimeridian: west of it", circle(179.99, 0, 5000), 0, -179.99, true},
		{"circle over the antimeridian: too far west", circle(179.99, 0, 5000), 0, -179.9, false},
		{"circle at the north pole: any longitude", circle(0, 89.99, 5000), 89.99, 180, true},
		{"circle at the north pole: other side", circle(0, 89.99, 5000), 89.995, -120, true},
		{"circle at the north pole: too far", circle(0, 89.99, 5000), 89.9, 180, false},
		{"circle at the south pole", circle(0, -90, 10000), -89.95, 77, true},
		{"circle near a pole: wide in longitude", circle(0, 85, 50000), 85.1, 4, true},
		{"circle near a pole: outside in longitude", circle(0, 85, 50000), 85, 6, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			var work int
			is.Equal(c.s.Contains(c.lat, c.lon, &work), c.want)
		})
	}
}

func TestDistanceM(t *testing.T) {
	is := is.New(t)
	// One degree of latitude is about 111.2 km.
	is.True(math.Abs(DistanceM(0, 0, 1, 0)-111195) < 1)
	// Across the antimeridian: 0.02 degrees at the equator, not 359.98.
	is.True(math.Abs(DistanceM(0, 179.99, 0, -179.99)-2224) < 1)
	// Near the pole, longitude hardly matters.
	is.True(DistanceM(89.999, 0, 89.999, 180) < 250)
}

// TestBox: a polygon's box is its outer ring's, past ±180 where the ring
// crosses the antimeridian; a circle's holds the circle, and spans every
// longitude over a pole.
func TestBox(t *testing.T) {
	is := is.New(t)
	box := func(s Shape) Box { return s.Box() }
	is.Equal(box(polygon(t, outer, hole)), Box{MinLat: 0, MaxLat: 10, MinLon: 0, MaxLon: 10})
	is.Equal(box(polygon(t, wrapped)), Box{MinLat: -10, MaxLat: 10, MinLon: 170, MaxLon: 190})
	b := box(circle(13.4, 52.5, 1000))
	is.True(!b.AllLon)
	for _, p := range [][2]float64{{b.MinLat, 13.4}, {b.MaxLat, 13.4}, {52.5, b.MinLon}, {52.5, b.MaxLon}} {
		d := DistanceM(52.5, 13.4, p[0], p[1])
		is.True(d >= 1000 && d < 1001) // each side just outside the circle
	}
	is.True(box(circle(0, 89.99, 5000)).AllLon)
}
