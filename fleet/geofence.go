package fleet

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"time"
	"unicode/utf8"
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
const EarthRadiusM = 6_371_008.8

// DistanceM returns the great-circle (haversine) distance in metres between
// two positions.
func DistanceM(lat1, lon1, lat2, lon2 float64) float64 {
	const rad = math.Pi / 180
	dLat := (lat2 - lat1) * rad
	dLon := (lon2 - lon1) * rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * EarthRadiusM * math.Asin(math.Min(1, math.Sqrt(a)))
}

// shape is a geofence compiled for containment tests: rings as flat
// coordinate arrays with their longitudes unwrapped, each with an index of
// its edges by latitude (see ringIndex), and a bounding box.
type shape struct {
	circle   bool
	lat, lon float64 // circle centre
	radius   float64
	rings    [][]float64  // x0, y0, x1, y1, ... (closed)
	ringLon  [][2]float64 // each ring's longitude range, unwrapped
	index    []*ringIndex // each ring's edge index; nil for a short ring
	// Bounding box; minLon..maxLon may reach past ±180 after unwrapping.
	// allLon: the box spans every longitude (a circle over a pole).
	minLat, maxLat, minLon, maxLon float64
	allLon                         bool
}

// compile prepares a valid geofence for contains.
func compile(g *Geofence) shape {
	if g.Geometry.Type == GeometryPoint {
		s := shape{circle: true, lon: g.Geometry.Point[0], lat: g.Geometry.Point[1], radius: *g.RadiusM}
		dLat := s.radius / EarthRadiusM * 180 / math.Pi
		s.minLat, s.maxLat = s.lat-dLat, s.lat+dLat
		if s.maxLat >= 90 || s.minLat <= -90 {
			s.allLon = true
		} else {
			// The widest longitude reach is at the latitude of the box edge
			// nearest a pole; a small margin covers rounding.
			edge := math.Max(math.Abs(s.minLat), math.Abs(s.maxLat)) * math.Pi / 180
			dLon := dLat/math.Cos(edge)*1.0001 + 1e-9
			if dLon >= 180 {
				s.allLon = true
			}
			s.minLon, s.maxLon = s.lon-dLon, s.lon+dLon
		}
		return s
	}
	s := shape{minLat: math.Inf(1), maxLat: math.Inf(-1), minLon: math.Inf(1), maxLon: math.Inf(-1)}
	for i, ring := range g.Geometry.Rings {
		flat := make([]float64, 0, 2*len(ring))
		prev := 0.0
		for j, p := range ring {
			x := p[0]
			if j > 0 {
				// A jump of more than 180 degrees is read as crossing the
				// antimeridian: the ring goes on past ±180 instead.
				for x-prev > 180 {
					x -= 360
				}
				for prev-x > 180 {
					x += 360
				}
			}
			prev = x
			flat = append(flat, x, p[1])
			if i == 0 {
				s.minLon, s.maxLon = math.Min(s.minLon, x), math.Max(s.maxLon, x)
				s.minLat, s.maxLat = math.Min(s.minLat, p[1]), math.Max(s.maxLat, p[1])
			}
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for k := 0; k < len(flat); k += 2 {
			lo, hi = math.Min(lo, flat[k]), math.Max(hi, flat[k])
		}
		s.rings = append(s.rings, flat)
		s.ringLon = append(s.ringLon, [2]float64{lo - geoEps, hi + geoEps})
		s.index = append(s.index, indexRing(flat))
	}
	return s
}

// inBox is the cheap prefilter: false means certainly outside.
func (s *shape) inBox(lat, lon float64) bool {
	if lat < s.minLat || lat > s.maxLat {
		return false
	}
	if s.allLon {
		return true
	}
	return lon >= s.minLon && lon <= s.maxLon || lon+360 >= s.minLon && lon+360 <= s.maxLon ||
		lon-360 >= s.minLon && lon-360 <= s.maxLon
}

// contains reports whether a position is inside the shape. The boundary
// counts as inside: a point on an edge or a vertex of the outer ring or of a
// hole is inside the geofence, and so is a point exactly radius_m from a
// circle's centre. It adds to *work the edges it tested (one for a circle).
func (s *shape) contains(lat, lon float64, work *int) bool {
	if !s.inBox(lat, lon) {
		return false
	}
	if s.circle {
		*work++
		return DistanceM(s.lat, s.lon, lat, lon) <= s.radius
	}
	inOuter, onEdge := s.ringTest(0, lat, lon, work)
	if onEdge {
		return true
	}
	if !inOuter {
		return false
	}
	for i := 1; i < len(s.rings); i++ {
		in, edge := s.ringTest(i, lat, lon, work)
		if edge {
			return true
		}
		if in {
			return false
		}
	}
	return true
}

// ringTest tests a position against unwrapped ring i at its longitude and
// the longitude one turn east or west, so that rings reaching past ±180 are
// met. Edges are straight lines in longitude and latitude, as RFC 7946 has
// them.
func (s *shape) ringTest(i int, lat, lon float64, work *int) (inside, onEdge bool) {
	span := s.ringLon[i]
	for _, x := range [3]float64{lon, lon + 360, lon - 360} {
		if x < span[0] || x > span[1] {
			continue
		}
		var in, edge bool
		if ix := s.index[i]; ix != nil {
			in, edge = ix.test(s.rings[i], x, lat, work)
		} else {
			*work += len(s.rings[i]) / 2
			in, edge = pointInRing(s.rings[i], x, lat)
		}
		if edge {
			return false, true
		}
		if in {
			inside = true
		}
	}
	return inside, false
}

// pointInRing is the even-odd crossing test with an explicit on-edge test,
// over every edge of the ring.
func pointInRing(r []float64, x, y float64) (inside, onEdge bool) {
	n := len(r) / 2
	for k := range n {
		cross, edge := edgeTest(r, k, x, y)
		if edge {
			return false, true
		}
		if cross {
			inside = !inside
		}
	}
	return inside, false
}

// edgeTest tests a position against edge k of a ring, the one from
// position k-1 (position n-1 for k = 0) to position k: whether the ray
// from the position towards growing x crosses it, and whether the position
// is on it. Every containment test, indexed or not, decides each edge here,
// so they agree.
func edgeTest(r []float64, k int, x, y float64) (cross, onEdge bool) {
	j := k - 1
	if k == 0 {
		j = len(r)/2 - 1
	}
	xi, yi, xj, yj := r[2*k], r[2*k+1], r[2*j], r[2*j+1]
	lo, hi := yi, yj
	if lo > hi {
		lo, hi = hi, lo
	}
	if y < lo-geoEps || y > hi+geoEps {
		return false, false // the edge neither holds the point nor crosses its ray
	}
	if onSegment(x, y, xi, yi, xj, yj) {
		return false, true
	}
	return (yi > y) != (yj > y) && x < edgeX(xi, yi, xj, yj, y), false
}

// edgeX is the longitude at which the line through an edge meets latitude y.
func edgeX(xi, yi, xj, yj, y float64) float64 { return (xj-xi)*(y-yi)/(yj-yi) + xi }

func onSegment(x, y, x1, y1, x2, y2 float64) bool {
	xlo, xhi := x1, x2
	if xlo > xhi {
		xlo, xhi = xhi, xlo
	}
	if x < xlo-geoEps || x > xhi+geoEps {
		return false
	}
	cross := (x2-x1)*(y-y1) - (y2-y1)*(x-x1)
	length := math.Hypot(x2-x1, y2-y1)
	return math.Abs(cross) <= geoEps*math.Max(length, 1)
}

// geoEps is the tolerance of the boundary test, in degrees (about 0.1 mm).
const geoEps = 1e-9

// Contains reports whether the position (lat, lon) is inside a valid
// geofence, boundary included.
func (g *Geofence) Contains(lat, lon float64) bool {
	s := compile(g)
	var work int
	return s.contains(lat, lon, &work)
}
