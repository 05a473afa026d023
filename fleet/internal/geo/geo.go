// Package geo is the geometry of Fleet's geofences: great-circle
// distances, and shapes (polygons with holes, circles) compiled for fast
// point-in-shape tests, with bounding boxes and an index of each ring's
// edges by latitude. It knows nothing of accounts, rules or validation:
// package fleet checks a geofence and compiles it here.
//
// Positions are degrees. A polygon's rings are GeoJSON (RFC 7946) linear
// rings of [longitude, latitude] positions, as a geofence holds them;
// functions that take one position take latitude first.
package geo

import "math"

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

// Shape is a geofence compiled for containment tests: rings as flat
// coordinate arrays with their longitudes unwrapped, each with an index of
// its edges by latitude (see ringIndex), and a bounding box. It is
// read-only once compiled, so goroutines share it.
type Shape struct {
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

// Circle compiles the circle of radiusM metres (above 0) around the
// position (lat, lon).
func Circle(lat, lon, radiusM float64) Shape {
	s := Shape{circle: true, lon: lon, lat: lat, radius: radiusM}
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

// Polygon compiles a polygon: its outer ring, then its holes, each a
// closed ring of at least 4 [longitude, latitude] positions (an altitude
// after them is ignored). A jump of more than 180 degrees of longitude
// between two positions is read as crossing the antimeridian.
func Polygon(rings [][][]float64) Shape {
	s := Shape{minLat: math.Inf(1), maxLat: math.Inf(-1), minLon: math.Inf(1), maxLon: math.Inf(-1)}
	for i, ring := range rings {
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

// Box is a shape's bounding box, in degrees. MinLon..MaxLon may reach past
// ±180 where the shape crosses the antimeridian; AllLon says the box spans
// every longitude (a circle over a pole), and then MinLon and MaxLon mean
// nothing.
type Box struct {
	MinLat, MaxLat, MinLon, MaxLon float64
	AllLon                         bool
}

// Box returns the shape's bounding box.
func (s *Shape) Box() Box {
	return Box{MinLat: s.minLat, MaxLat: s.maxLat, MinLon: s.minLon, MaxLon: s.maxLon, AllLon: s.allLon}
}

// Size estimates the memory of the shape's rings and their indexes, in
// bytes.
func (s *Shape) Size() int {
	n := 0
	for j, r := range s.rings {
		n += 48 + 8*cap(r) + s.index[j].size()
	}
	return n
}

// inBox is the cheap prefilter: false means certainly outside.
func (s *Shape) inBox(lat, lon float64) bool {
	if lat < s.minLat || lat > s.maxLat {
		return false
	}
	if s.allLon {
		return true
	}
	return lon >= s.minLon && lon <= s.maxLon || lon+360 >= s.minLon && lon+360 <= s.maxLon ||
		lon-360 >= s.minLon && lon-360 <= s.maxLon
}

// Contains reports whether a position is inside the shape. The boundary
// counts as inside: a point on an edge or a vertex of the outer ring or of a
// hole is inside the geofence, and so is a point exactly radius_m from a
// circle's centre. It adds to *work the edges it tested (one for a circle).
func (s *Shape) Contains(lat, lon float64, work *int) bool {
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
func (s *Shape) ringTest(i int, lat, lon float64, work *int) (inside, onEdge bool) {
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
