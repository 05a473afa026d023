package fleet_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func polygon(rings ...[][]float64) fleet.Geofence {
	rs := make([][][]float64, len(rings))
	copy(rs, rings)
	return fleet.Geofence{Name: "g", Geometry: fleet.Geometry{Type: fleet.GeometryPolygon, Rings: rs}}
}

func circle(lon, lat, r float64) fleet.Geofence {
	return fleet.Geofence{Name: "c", Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{lon, lat}}, RadiusM: &r}
}

// square 0..10 x 0..10 with a hole 4..6 x 4..6.
var (
	outer = [][]float64{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}}
	hole  = [][]float64{{4, 4}, {4, 6}, {6, 6}, {6, 4}, {4, 4}}
	// A ring crossing the antimeridian, written as RFC 7946 forbids but
	// clients send: longitudes jump from 170 to -170.
	wrapped = [][]float64{{170, -10}, {-170, -10}, {-170, 10}, {170, 10}, {170, -10}}
)

func TestGeofenceContains(t *testing.T) {
	cases := []struct {
		name     string
		g        fleet.Geofence
		lat, lon float64
		want     bool
	}{
		{"inside", polygon(outer), 2, 2, true},
		{"outside east", polygon(outer), 5, 11, false},
		{"outside below", polygon(outer), -0.0001, 5, false},
		{"on bottom edge", polygon(outer), 0, 5, true},
		{"on right edge", polygon(outer), 5, 10, true},
		{"on top edge", polygon(outer), 10, 3, true},
		{"on vertex", polygon(outer), 10, 10, true},
		{"on origin vertex", polygon(outer), 0, 0, true},
		{"just outside a vertex", polygon(outer), 10.000001, 10.000001, false},
		{"in the hole", polygon(outer, hole), 5, 5, false},
		{"on the hole's edge", polygon(outer, hole), 4, 5, true},
		{"on the hole's vertex", polygon(outer, hole), 6, 6, true},
		{"between hole and outer edge", polygon(outer, hole), 5, 8, true},
		{"ray through a vertex, inside", polygon([][]float64{{0, 0}, {5, 5}, {10, 0}, {10, 10}, {0, 10}, {0, 0}}), 5, 2, true},
		{"ray through a vertex, outside", polygon([][]float64{{0, 0}, {5, 5}, {10, 0}, {10, 10}, {0, 10}, {0, 0}}), 2, 5, false},
		{"concave notch", polygon([][]float64{{0, 0}, {10, 0}, {10, 10}, {5, 3}, {0, 10}, {0, 0}}), 8, 5, false},
		{"antimeridian: east side", polygon(wrapped), 0, 175, true},
		{"antimeridian: west side", polygon(wrapped), 0, -175, true},
		{"antimeridian: on 180", polygon(wrapped), 0, 180, true},
		{"antimeridian: on -180", polygon(wrapped), 5, -180, true},
		{"antimeridian: outside, west", polygon(wrapped), 0, -160, false},
		{"antimeridian: outside, east", polygon(wrapped), 0, 160, false},
		{"antimeridian: prime meridian is outside", polygon(wrapped), 0, 0, false},
		{"near the antimeridian, not crossing", polygon([][]float64{{175, 0}, {180, 0}, {180, 5}, {175, 5}, {175, 0}}), 2, 179.9, true},
		{"near the antimeridian, point beyond", polygon([][]float64{{175, 0}, {180, 0}, {180, 5}, {175, 5}, {175, 0}}), 2, -179.9, false},
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
			is.NoErr(c.g.Validate())
			is.Equal(c.g.Contains(c.lat, c.lon), c.want)
		})
	}
}

func TestDistanceM(t *testing.T) {
	is := is.New(t)
	// One degree of latitude is about 111.2 km.
	is.True(math.Abs(fleet.DistanceM(0, 0, 1, 0)-111195) < 1)
	// Across the antimeridian: 0.02 degrees at the equator, not 359.98.
	is.True(math.Abs(fleet.DistanceM(0, 179.99, 0, -179.99)-2224) < 1)
	// Near the pole, longitude hardly matters.
	is.True(fleet.DistanceM(89.999, 0, 89.999, 180) < 250)
}

func TestGeofenceValidate(t *testing.T) {
	r := func(v float64) *float64 { return &v }
	cases := []struct {
		name   string
		g      fleet.Geofence
		fields []string
	}{
		{"ring of 3 positions", polygon([][]float64{{0, 0}, {1, 0}, {0, 0}}), []string{"geometry.coordinates[0]"}},
		{"ring not closed", polygon([][]float64{{0, 0}, {1, 0}, {1, 1}, {0, 1}}), []string{"geometry.coordinates[0]"}},
		{"longitude out of range", polygon([][]float64{{0, 0}, {181, 0}, {1, 1}, {0, 0}}), []string{"geometry.coordinates[0][1]"}},
		{"latitude out of range", polygon([][]float64{{0, 0}, {1, -91}, {1, 1}, {0, 0}}), []string{"geometry.coordinates[0][1]"}},
		{"NaN", polygon([][]float64{{0, 0}, {1, math.NaN()}, {1, 1}, {0, 0}}), []string{"geometry.coordinates[0][1]"}},
		{"infinity", polygon([][]float64{{0, 0}, {math.Inf(1), 1}, {1, 1}, {0, 0}}), []string{"geometry.coordinates[0][1]"}},
		{"position of one number", polygon([][]float64{{0, 0}, {1}, {1, 1}, {0, 0}}), []string{"geometry.coordinates[0][1]"}},
		{"bad hole", polygon(outer, [][]float64{{1, 1}, {2, 2}}), []string{"geometry.coordinates[1]"}},
		{"no rings", polygon(), []string{"geometry.coordinates"}},
		{"radius on a polygon", func() fleet.Geofence { g := polygon(outer); g.RadiusM = r(5); return g }(), []string{"radius_m"}},
		{"circle without radius", func() fleet.Geofence { g := circle(0, 0, 1); g.RadiusM = nil; return g }(), []string{"radius_m"}},
		{"circle radius 0", circle(0, 0, 0), []string{"radius_m"}},
		{"circle radius negative", circle(0, 0, -5), []string{"radius_m"}},
		{"circle centre out of range", circle(200, 0, 5), []string{"geometry.coordinates"}},
		{"unknown type", fleet.Geofence{Name: "x", Geometry: fleet.Geometry{Type: "LineString"}}, []string{"geometry.type"}},
		{"no name", func() fleet.Geofence { g := polygon(outer); g.Name = " "; return g }(), []string{"name"}},
	}
	big := make([][]float64, fleet.MaxGeofenceVertices+1)
	for i := range big {
		a := 2 * math.Pi * float64(i) / float64(len(big)-1)
		big[i] = []float64{math.Cos(a), math.Sin(a)}
	}
	big[len(big)-1] = big[0]
	// Rings of MaxRingVertices positions, up to MaxGeofenceVertices in all,
	// are valid; one position more is not.
	ring := func(n int, x0 float64) [][]float64 {
		r := make([][]float64, n)
		for i := range n - 1 {
			a := 2 * math.Pi * float64(i) / float64(n-1)
			r[i] = []float64{x0 + math.Cos(a), math.Sin(a)}
		}
		r[n-1] = r[0]
		return r
	}
	full := polygon(ring(fleet.MaxRingVertices, 0))
	for range fleet.MaxGeofenceVertices/fleet.MaxRingVertices - 1 {
		full.Geometry.Rings = append(full.Geometry.Rings, ring(fleet.MaxRingVertices, 0))
	}
	if err := full.Validate(); err != nil {
		t.Fatalf("%d rings of %d positions: %v", len(full.Geometry.Rings), fleet.MaxRingVertices, err)
	}
	overfull := polygon(append(full.Geometry.Rings, ring(4, 0))...)
	cases = append(cases, []struct {
		name   string
		g      fleet.Geofence
		fields []string
	}{
		{"too many vertices", polygon(big), []string{"geometry.coordinates"}},
		{"too many vertices over all rings", overfull, []string{"geometry.coordinates"}},
		{"outer ring too long", polygon(ring(fleet.MaxRingVertices+1, 0)), []string{"geometry.coordinates[0]"}},
		{"hole too long", polygon(ring(4, 0), ring(fleet.MaxRingVertices+1, 0), ring(5, 0)), []string{"geometry.coordinates[1]"}},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			err := c.g.Validate()
			is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
			var fe *fleet.Error
			is.True(asError(err, &fe))
			var got []string
			for _, d := range fe.Details {
				got = append(got, d.Field)
			}
			is.Equal(got, c.fields)
		})
	}
}

func asError(err error, fe **fleet.Error) bool {
	e, ok := err.(*fleet.Error)
	*fe = e
	return ok
}

func TestGeometryJSON(t *testing.T) {
	is := is.New(t)
	var g fleet.Geometry
	is.NoErr(json.Unmarshal([]byte(`{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}`), &g))
	is.Equal(len(g.Rings[0]), 4)
	b, err := json.Marshal(g)
	is.NoErr(err)
	is.Equal(string(b), `{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}`)
	is.NoErr(json.Unmarshal([]byte(`{"type":"Point","coordinates":[13.4,52.5]}`), &g))
	is.Equal(g.Point, []float64{13.4, 52.5})
	for _, bad := range []string{
		`{"type":"Polygon","coordinates":[0,1]}`, `{"type":"Point","coordinates":[[0,1]]}`, `{"type":"Point"}`,
		`{"type":"Circle","coordinates":[0,1]}`, `{"type":"Point","coordinates":[0,1],"radius":3}`, `[]`,
	} {
		err := json.Unmarshal([]byte(bad), &g)
		is.Equal(fleet.ErrorCode(err), fleet.CodeValidation) // fmt.Sprint(bad)
	}
	_ = fmt.Sprint
}

// FuzzGeofence: any well-formed geometry JSON decodes or is a
// validation_error; any
// valid geofence answers containment without panicking, and a point it
// contains is within its radius or inside its rings' range. Run longer with
// go test -run XXX -fuzz FuzzGeofence ./fleet/
func FuzzGeofence(f *testing.F) {
	for _, s := range []string{`{"type":"Polygon","coordinates":[[[170,-10],[-170,-10],[-170,10],[170,10],[170,-10]]]}`,
		`{"type":"Point","coordinates":[179.99,89.99]}`, `{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}`, `{}`, `[`, `{"type":"Point","coordinates":[1e999,0]}`} {
		f.Add([]byte(s), 1000.0, 0.5, 0.5)
	}
	f.Fuzz(func(t *testing.T, b []byte, radius, lat, lon float64) {
		var g fleet.Geofence
		if !json.Valid(b) {
			return // refused by the JSON decoder before the geometry sees it
		}
		if err := json.Unmarshal(b, &g.Geometry); err != nil {
			if code := fleet.ErrorCode(err); code != fleet.CodeValidation {
				t.Fatalf("decoding %q: code %s", b, code)
			}
			return
		}
		g.Name = "f"
		if g.Geometry.Type == fleet.GeometryPoint {
			g.RadiusM = &radius
		}
		if g.Validate() != nil || math.IsNaN(lat) || math.IsNaN(lon) {
			return
		}
		if g.Contains(lat, lon) && g.Geometry.Type == fleet.GeometryPoint {
			if d := fleet.DistanceM(g.Geometry.Point[1], g.Geometry.Point[0], lat, lon); d > radius*1.000001+1e-6 {
				t.Fatalf("contains a point %f m from the centre of a circle of %f m", d, radius)
			}
		}
	})
}
