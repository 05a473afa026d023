package fleet_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/internal/geo"
	"github.com/fleetkit/fleetapi/fleet/internal/geo/geotest"
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

// square 0..10 x 0..10 with a hole 4..6 x 4..6, and a ring over the
// antimeridian.
var (
	outer   = geotest.Square()
	hole    = geotest.Hole()
	wrapped = geotest.Wrapped()
)

// Contains judges a geofence as it is given: GeoJSON positions
// [longitude, latitude], holes after the outer ring, a circle's centre and
// radius_m (the geometry itself is tested in internal/geo).
func TestGeofenceContains(t *testing.T) {
	cases := []struct {
		name     string
		g        fleet.Geofence
		lat, lon float64
		want     bool
	}{
		{"inside", polygon(outer), 2, 2, true},
		{"outside east", polygon(outer), 5, 11, false},
		{"on right edge", polygon(outer), 5, 10, true},
		{"in the hole", polygon(outer, hole), 5, 5, false},
		{"between hole and outer edge", polygon(outer, hole), 5, 8, true},
		{"longitude first", polygon([][]float64{{10, 50}, {11, 50}, {11, 51}, {10, 51}, {10, 50}}), 50.5, 10.5, true},
		{"longitude first, swapped", polygon([][]float64{{10, 50}, {11, 50}, {11, 51}, {10, 51}, {10, 50}}), 10.5, 50.5, false},
		{"antimeridian: west side", polygon(wrapped), 0, -175, true},
		{"circle: 900 m north", circle(13.4, 52.5, 1000), 52.5 + 900/111195.0, 13.4, true},
		{"circle: 1100 m north", circle(13.4, 52.5, 1000), 52.5 + 1100/111195.0, 13.4, false},
		{"circle: 990 m east at 52.5N", circle(13.4, 52.5, 1000), 52.5, 13.4 + 990/(111195.0*math.Cos(52.5*math.Pi/180)), true},
		{"circle: 1010 m east at 52.5N", circle(13.4, 52.5, 1000), 52.5, 13.4 + 1010/(111195.0*math.Cos(52.5*math.Pi/180)), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			is.NoErr(c.g.Validate())
			is.Equal(c.g.Contains(c.lat, c.lon), c.want)
		})
	}
}

// DistanceM and EarthRadiusM are those of the geometry.
func TestDistanceM(t *testing.T) {
	is := is.New(t)
	is.Equal(fleet.EarthRadiusM, geo.EarthRadiusM)
	is.Equal(fleet.DistanceM(52.5, 13.4, 48.1, 11.6), geo.DistanceM(52.5, 13.4, 48.1, 11.6))
	is.True(math.Abs(fleet.DistanceM(0, 0, 1, 0)-111195) < 1) // latitude first: one degree north
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
