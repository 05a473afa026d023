package fleethttp

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Location batches are the largest bodies the API takes (up to 10,000
// points, 8 MiB) and decoding them with reflection costs more than storing
// them. decodeBatchFast reads the common shape directly:
//
//	{"locations":[{"vehicle_id":"...","latitude":1.5,"longitude":2,"timestamp":"...","speed":3,...}, ...]}
//
// A point's attributes, {"ignition":true,"power_v":12.6,"alarm":"sos"}, are
// read there too, as fleet.Attributes.UnmarshalJSON reads them (what the
// strict decoder calls): each value a number, a boolean or a string, in the
// body's order, so that the service judges them, and names the point and
// the attribute it refuses, whichever path read the batch.
//
// It accepts only what the strict decoder accepts and gives the same result;
// on anything else (an escape in a string, an unknown member, a member given
// twice, a wrong type, malformed JSON, text that is not UTF-8) it reports
// ok=false and the caller decodes strictly, so that every error message
// comes from one place.

// rawPoint is a decoded point with what was present.
type rawPoint struct {
	p                           fleet.Point
	hasVehicle, hasLat, hasLon  bool
	hasTS                       bool
	speed, heading, odo         float64
	hasSpeed, hasHeading, hasOd bool
}

type batchScanner struct {
	b []byte
	i int
	// The batch's attributes share blocks of memory (attrs, each point's
	// part of capacity its length) and their names one string each
	// (names); scratch holds a point's while they are read.
	attrs, scratch fleet.Attributes
	names          map[string]string
}

// attrsBlock is how many attributes the fast path allocates at a time.
const attrsBlock = 1024

func (s *batchScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *batchScanner) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes and returns its bytes (without quotes).
func (s *batchScanner) str() ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// null reads a JSON null.
func (s *batchScanner) null() bool {
	s.ws()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// num reads a number in JSON's grammar.
func (s *batchScanner) num() (float64, bool) {
	s.ws()
	end, ok := numberEnd(s.b, s.i)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(s.b[s.i:end]), 64)
	if err != nil {
		return 0, false
	}
	s.i = end
	return f, true
}

// optNum reads a number or null.
func (s *batchScanner) optNum() (float64, bool, bool) {
	if s.null() {
		return 0, false, true
	}
	f, ok := s.num()
	return f, ok, ok
}

func decodeBatchFast(body []byte) ([]rawPoint, bool) {
	s := &batchScanner{b: body}
	if !s.eat('{') {
		return nil, false
	}
	if k, ok := s.str(); !ok || string(k) != "locations" || !s.eat(':') || !s.eat('[') {
		return nil, false
	}
	out := make([]rawPoint, 0, len(body)/100)
	if !s.eat(']') {
		for {
			rp, ok := s.point()
			if !ok {
				return nil, false
			}
			out = append(out, rp)
			if s.eat(',') {
				continue
			}
			if s.eat(']') {
				break
			}
			return nil, false
		}
	}
	if !s.eat('}') {
		return nil, false
	}
	s.ws()
	if s.i != len(s.b) {
		return nil, false
	}
	return out, true
}

// The members of a point, as bits: a member seen twice is left to the
// strict decoder, which refuses it.
const (
	memVehicle = 1 << iota
	memLat
	memLon
	memSpeed
	memHeading
	memOdometer
	memTimestamp
	memAttributes
)

func (s *batchScanner) point() (rawPoint, bool) {
	var rp rawPoint
	if !s.eat('{') {
		return rp, false
	}
	if s.eat('}') {
		return rp, true
	}
	var seen uint8
	for {
		k, ok := s.str()
		if !ok || !s.eat(':') {
			return rp, false
		}
		var m uint8
		switch string(k) {
		case "vehicle_id":
			m = memVehicle
		case "latitude":
			m = memLat
		case "longitude":
			m = memLon
		case "speed":
			m = memSpeed
		case "heading":
			m = memHeading
		case "odometer_km":
			m = memOdometer
		case "timestamp":
			m = memTimestamp
		case "attributes":
			m = memAttributes
		default:
			return rp, false
		}
		if seen&m != 0 {
			return rp, false
		}
		seen |= m
		switch m {
		case memVehicle:
			if s.null() {
				rp.hasVehicle = false
				break
			}
			v, ok := s.str()
			if !ok {
				return rp, false
			}
			rp.p.VehicleID, rp.hasVehicle = string(v), true
		case memLat:
			if rp.p.Latitude, rp.hasLat, ok = s.optNum(); !ok {
				return rp, false
			}
		case memLon:
			if rp.p.Longitude, rp.hasLon, ok = s.optNum(); !ok {
				return rp, false
			}
		case memSpeed:
			if rp.speed, rp.hasSpeed, ok = s.optNum(); !ok {
				return rp, false
			}
		case memHeading:
			if rp.heading, rp.hasHeading, ok = s.optNum(); !ok {
				return rp, false
			}
		case memOdometer:
			if rp.odo, rp.hasOd, ok = s.optNum(); !ok {
				return rp, false
			}
		case memTimestamp:
			if s.null() {
				rp.hasTS = false
				break
			}
			start := s.i
			if _, ok := s.str(); !ok {
				return rp, false
			}
			// The strict decoder's own parser, on the quoted bytes.
			var t time.Time
			s.ws()
			if err := t.UnmarshalJSON(trimLeftWS(s.b[start:s.i])); err != nil {
				return rp, false
			}
			rp.p.Timestamp, rp.hasTS = t, true
		case memAttributes:
			if s.null() {
				rp.p.Attributes = nil
				break
			}
			if rp.p.Attributes, ok = s.attributes(); !ok {
				return rp, false
			}
		}
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return rp, true
		}
		return rp, false
	}
}

// attributes reads a point's attributes object.
func (s *batchScanner) attributes() (fleet.Attributes, bool) {
	if !s.eat('{') {
		return nil, false
	}
	a := s.scratch[:0]
	if !s.eat('}') {
		for {
			k, ok := s.str()
			if !ok || !utf8.Valid(k) || !s.eat(':') {
				return nil, false
			}
			// A name given twice is the strict decoder's to refuse; past
			// the most a point may hold the service refuses the count, and
			// the strict decoder reads them.
			if len(a) == fleet.MaxPointAttributes {
				return nil, false
			}
			for i := range a {
				if a[i].Name == string(k) {
					return nil, false
				}
			}
			x := fleet.Attribute{Name: s.name(k)}
			s.ws()
			if s.i >= len(s.b) {
				return nil, false
			}
			switch c := s.b[s.i]; {
			case c == '"':
				v, ok := s.str()
				if !ok || !utf8.Valid(v) {
					return nil, false
				}
				x.Kind, x.Text = fleet.AttrText, string(v)
			case c == 't' || c == 'f':
				v, ok := s.boolean()
				if !ok {
					return nil, false
				}
				x = fleet.BoolAttr(x.Name, v)
			default:
				f, ok := s.num()
				if !ok {
					return nil, false
				}
				x.Kind, x.Num = fleet.AttrNumber, f
			}
			a = append(a, x)
			if s.eat(',') {
				continue
			}
			if s.eat('}') {
				break
			}
			return nil, false
		}
	}
	s.scratch = a
	if len(a) == 0 {
		return fleet.Attributes{}, true // as the strict decoder reads {}
	}
	if cap(s.attrs)-len(s.attrs) < len(a) {
		s.attrs = make(fleet.Attributes, 0, max(attrsBlock, len(a)))
	}
	start := len(s.attrs)
	s.attrs = append(s.attrs, a...)
	return s.attrs[start:len(s.attrs):len(s.attrs)], true
}

// name returns k as a string, one string for each name of the batch.
func (s *batchScanner) name(k []byte) string {
	if n, ok := s.names[string(k)]; ok {
		return n
	}
	if s.names == nil {
		s.names = map[string]string{}
	}
	n := string(k)
	s.names[n] = n
	return n
}

// boolean reads true or false.
func (s *batchScanner) boolean() (bool, bool) {
	rest := s.b[s.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		s.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}

func trimLeftWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// decodeBatch decodes a location batch: the fast path when it applies,
// the strict decoder otherwise.
func decodeBatch(body []byte) ([]rawPoint, error) {
	if body != nil {
		if rps, ok := decodeBatchFast(body); ok {
			return rps, nil
		}
	}
	return decodeBatchStrict(body)
}

// decodeBatchStrict decodes a location batch with the strict decoder.
func decodeBatchStrict(body []byte) ([]rawPoint, error) {
	req, err := decode[fleetwire.LocationBatch](body, false)
	if err != nil {
		return nil, err
	}
	rps := make([]rawPoint, len(req.Locations))
	for i, p := range req.Locations {
		rp := &rps[i]
		if p.VehicleID != nil {
			rp.p.VehicleID, rp.hasVehicle = *p.VehicleID, true
		}
		if p.Latitude != nil {
			rp.p.Latitude, rp.hasLat = *p.Latitude, true
		}
		if p.Longitude != nil {
			rp.p.Longitude, rp.hasLon = *p.Longitude, true
		}
		if p.Timestamp != nil {
			rp.p.Timestamp, rp.hasTS = *p.Timestamp, true
		}
		if p.Speed != nil {
			rp.speed, rp.hasSpeed = *p.Speed, true
		}
		if p.Heading != nil {
			rp.heading, rp.hasHeading = *p.Heading, true
		}
		if p.OdometerKm != nil {
			rp.odo, rp.hasOd = *p.OdometerKm, true
		}
		rp.p.Attributes = p.Attributes
	}
	return rps, nil
}
