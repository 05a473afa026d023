package fleet

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleetkit/fleetapi/fleet/internal/geo"
)

// Geofence is an area that vehicles enter and leave: a GeoJSON (RFC 7946)
// Polygon, holes allowed, or a circle given as a Point with RadiusM.
type Geofence struct {
	ID        string    `json:"geofence_id"`
	AccountID string    `json:"-"`
	Name      string    `json:"name"`
	Geometry  Geometry  `json:"geometry"`
	RadiusM   *float64  `json:"radius_m"` // circles only
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// MarshalJSON writes the geofence as the API shows it.
func (g Geofence) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID        string    `json:"geofence_id"`
		Name      string    `json:"name"`
		Geometry  Geometry  `json:"geometry"`
		RadiusM   *float64  `json:"radius_m"`
		CreatedAt time.Time `json:"created_at"`
		UpdatedAt time.Time `json:"updated_at"`
	}{g.ID, g.Name, g.Geometry, g.RadiusM, g.CreatedAt, g.UpdatedAt})
}

// Geometry types a geofence takes.
const (
	GeometryPolygon = "Polygon"
	GeometryPoint   = "Point"
)

// Limits on geofences. Every location report of an account is judged
// against its geofences, so their size is bounded: a ring of at most
// MaxRingVertices positions, a polygon of at most MaxGeofenceVertices over
// all its rings.
const (
	MaxRingVertices     = 1_000     // positions of one linear ring
	MaxGeofenceVertices = 10_000    // positions over all rings of a polygon
	MaxRadiusM          = 1_000_000 // 1,000 km
)

// Geometry is a GeoJSON geometry: a Polygon (Rings: the outer ring, then
// holes; each a closed list of [lon, lat] positions) or a Point (Point:
// [lon, lat]). Positions may carry an altitude, which is ignored.
type Geometry struct {
	Type  string
	Point []float64
	Rings [][][]float64
}

// MarshalJSON writes the geometry as GeoJSON.
func (g Geometry) MarshalJSON() ([]byte, error) {
	var coords any = g.Rings
	if g.Type == GeometryPoint {
		coords = g.Point
	}
	return json.Marshal(struct {
		Type        string `json:"type"`
		Coordinates any    `json:"coordinates"`
	}{g.Type, coords})
}

// UnmarshalJSON reads a GeoJSON geometry object. Coordinates of the wrong
// shape for the type are a validation_error naming geometry.coordinates;
// members other than type, coordinates and bbox are refused.
func (g *Geometry) UnmarshalJSON(b []byte) error {
	var raw struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
		BBox        json.RawMessage `json:"bbox"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return geometryError("geometry", "must be a GeoJSON object with type and coordinates")
	}
	*g = Geometry{Type: raw.Type}
	var err error
	switch raw.Type {
	case GeometryPolygon:
		err = json.Unmarshal(raw.Coordinates, &g.Rings)
	case GeometryPoint:
		err = json.Unmarshal(raw.Coordinates, &g.Point)
	default:
		return geometryError("geometry.type", "must be Polygon or Point")
	}
	if err != nil || len(raw.Coordinates) == 0 || string(raw.Coordinates) == "null" {
		what := "an array of linear rings, each an array of [longitude, latitude] positions"
		if raw.Type == GeometryPoint {
			what = "one [longitude, latitude] position"
		}
		return geometryError("geometry.coordinates", "must be "+what)
	}
	return nil
}

func geometryError(field, msg string) error {
	var v Validator
	v.Add(field, "%s", msg)
	return v.Err()
}

// Validate checks the geofence, naming every bad field.
func (g *Geofence) Validate() error {
	var val Validator
	g.validate(&val)
	return val.Err()
}

// validate checks the geofence into val, once its positions hold no -0
// (unsignedZero).
func (g *Geofence) validate(val *Validator) {
	g.RadiusM = unsignedZeroPtr(g.RadiusM)
	val.Check(strings.TrimSpace(g.Name) != "" && utf8.RuneCountInString(g.Name) <= MaxGeofenceName, "name", "is required, 1 to %d characters", MaxGeofenceName)
	val.Text("name", g.Name)
	pos := func(field string, p []float64) {
		if len(p) < 2 || len(p) > 3 {
			val.Add(field, "must be [longitude, latitude] (an altitude may follow)")
			return
		}
		for k, x := range p {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				val.Add(field, "must hold finite numbers")
				return
			}
			p[k] = unsignedZero(x)
		}
		val.Check(p[0] >= -180 && p[0] <= 180, field, "longitude must be between -180 and 180")
		val.Check(p[1] >= -90 && p[1] <= 90, field, "latitude must be between -90 and 90")
	}
	switch g.Geometry.Type {
	case GeometryPoint:
		pos("geometry.coordinates", g.Geometry.Point)
		switch r := g.RadiusM; {
		case r == nil:
			val.Add("radius_m", "is required for a circle (a Point geometry)")
		case math.IsNaN(*r) || *r <= 0 || *r > MaxRadiusM:
			val.Add("radius_m", "must be above 0 and at most %d", MaxRadiusM)
		}
	case GeometryPolygon:
		val.Check(g.RadiusM == nil, "radius_m", "applies only to a circle (a Point geometry)")
		rings := g.Geometry.Rings
		if len(rings) == 0 || len(rings) > MaxGeofenceRings {
			val.Add("geometry.coordinates", "must hold an outer ring and at most %d holes", MaxGeofenceRings-1)
			return
		}
		total := 0
		for _, r := range rings {
			total += len(r)
		}
		if total > MaxGeofenceVertices {
			val.Add("geometry.coordinates", "must hold at most %d positions in all", MaxGeofenceVertices)
			return
		}
		for i, ring := range rings {
			field := "geometry.coordinates[" + itoa(i) + "]"
			if len(ring) < 4 {
				val.Add(field, "a linear ring must hold at least 4 positions")
				continue
			}
			if len(ring) > MaxRingVertices {
				val.Add(field, "a linear ring must hold at most %d positions", MaxRingVertices)
				continue
			}
			before := val.Len()
			for j, p := range ring {
				pos(field+"["+itoa(j)+"]", p)
			}
			if val.Len() > before {
				continue
			}
			first, last := ring[0], ring[len(ring)-1]
			val.Check(first[0] == last[0] && first[1] == last[1], field, "a linear ring must be closed: its last position must equal its first")
		}
	default:
		val.Add("geometry.type", "must be Polygon or Point")
	}
}

// EarthRadiusM is the mean Earth radius the circle test uses.
const EarthRadiusM = geo.EarthRadiusM

// DistanceM returns the great-circle (haversine) distance in metres between
// two positions.
func DistanceM(lat1, lon1, lat2, lon2 float64) float64 { return geo.DistanceM(lat1, lon1, lat2, lon2) }

// compile prepares a valid geofence for containment tests.
func compile(g *Geofence) geo.Shape {
	if g.Geometry.Type == GeometryPoint {
		return geo.Circle(g.Geometry.Point[1], g.Geometry.Point[0], *g.RadiusM)
	}
	return geo.Polygon(g.Geometry.Rings)
}

// Contains reports whether the position (lat, lon) is inside a valid
// geofence, boundary included.
func (g *Geofence) Contains(lat, lon float64) bool {
	s := compile(g)
	var work int
	return s.Contains(lat, lon, &work)
}
