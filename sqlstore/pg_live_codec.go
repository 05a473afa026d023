package sqlstore

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// The live feed's rows hold their reports as the JSON array encoding/json
// writes of []liveItem. Every report of every server is written once and
// read by every server (an API batch of 1,000 points is 1,000 reports), so
// both ways are written out here rather than by reflection: appendLiveItems
// writes the bytes encoding/json writes, and parseLiveItems reads that form
// directly, leaving anything else (a string with an escape or beyond ASCII,
// a field it does not know) to encoding/json, which has the last word. The
// rows of servers of other versions read the same either way.

// appendLiveItems appends items as encoding/json writes []liveItem.
func appendLiveItems(b []byte, items []fleet.StreamItem) []byte {
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		it := &items[i]
		r := &it.Record
		b = appendJSONText(append(b, `{"v":`...), it.VehicleID)
		b = appendJSONText(append(b, `,"r":{"vehicle_id":`...), r.VehicleID)
		b = appendJSONText(append(b, `,"name":`...), r.Name)
		b = appendFloatJSON(append(b, `,"location":{"latitude":`...), r.Location.Latitude)
		b = appendFloatJSON(append(b, `,"longitude":`...), r.Location.Longitude)
		b = appendJSONTime(append(b, `,"timestamp":`...), r.Location.Timestamp)
		b = appendJSONText(append(b, `},"status":`...), string(r.Status))
		b = appendOptionalJSON(append(b, `,"speed":`...), r.Speed)
		b = appendOptionalJSON(append(b, `,"heading":`...), r.Heading)
		if len(r.Attributes) > 0 {
			b = appendAttributesJSON(append(b, `,"attributes":`...), r.Attributes)
		}
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

// appendFloatJSON appends f as encoding/json writes a float64.
func appendFloatJSON(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 -> e-9, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func appendOptionalJSON(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return appendFloatJSON(b, *f)
}

// appendAttributesJSON appends a as encoding/json writes it: its own JSON
// (fleet.Attributes.MarshalJSON), with <, >, & and the line separators
// escaped as encoding/json escapes what a MarshalJSON returns.
func appendAttributesJSON(b []byte, a fleet.Attributes) []byte {
	start := len(b)
	b = a.AppendJSON(b)
	if bytes.ContainsAny(b[start:], "<>&\u2028\u2029") {
		var esc bytes.Buffer
		json.HTMLEscape(&esc, b[start:])
		b = append(b[:start], esc.Bytes()...)
	}
	return b
}

// parseLiveItems reads what appendLiveItems (or encoding/json) wrote.
func parseLiveItems(s string) ([]liveItem, error) {
	if li, ok := parseLiveItemsFast(s); ok {
		return li, nil
	}
	var li []liveItem
	err := json.Unmarshal([]byte(s), &li)
	return li, err
}

// parseLiveItemsFast reads the form appendLiveItems writes, reporting
// false for anything else.
func parseLiveItemsFast(s string) ([]liveItem, bool) {
	p := jsonScan{s: s}
	if !p.byte('[') {
		return nil, false
	}
	out := make([]liveItem, 0, strings.Count(s, `{"v":`))
	if p.byte(']') {
		return out, p.done()
	}
	for {
		var it liveItem
		if !p.object(func(k string) (ok bool) {
			switch k {
			case "v":
				it.VehicleID, ok = p.text()
			case "r":
				ok = p.record(&it.Record)
			}
			return ok
		}) {
			return nil, false
		}
		out = append(out, it)
		if p.byte(']') {
			return out, p.done()
		}
		if !p.byte(',') {
			return nil, false
		}
	}
}

// record reads a fleet.LocationRecord.
func (p *jsonScan) record(r *fleet.LocationRecord) bool {
	return p.object(func(k string) (ok bool) {
		switch k {
		case "vehicle_id":
			r.VehicleID, ok = p.text()
		case "name":
			r.Name, ok = p.text()
		case "status":
			var st string
			st, ok = p.text()
			r.Status = fleet.VehicleStatus(st)
		case "speed":
			r.Speed, ok = p.optionalNumber()
		case "heading":
			r.Heading, ok = p.optionalNumber()
		case "location":
			ok = p.object(func(k string) (ok bool) {
				switch k {
				case "latitude":
					r.Location.Latitude, ok = p.number()
				case "longitude":
					r.Location.Longitude, ok = p.number()
				case "timestamp":
					r.Location.Timestamp, ok = p.time()
				}
				return ok
			})
		case "attributes":
			ok = p.attributes(&r.Attributes)
		}
		return ok
	})
}

// number reads a JSON number as encoding/json reads it into a float64.
func (p *jsonScan) number() (float64, bool) {
	i := 0
	for i < len(p.s) && strings.IndexByte("0123456789+-.eE", p.s[i]) >= 0 {
		i++
	}
	if i == 0 || !validJSONNumber(p.s[:i]) {
		return 0, false
	}
	f, err := strconv.ParseFloat(p.s[:i], 64)
	if err != nil {
		return 0, false
	}
	p.s = p.s[i:]
	return f, true
}

// validJSONNumber reports whether s is a number as JSON writes it
// (ParseFloat takes more: "+1", ".5", "1.", "Inf", hex, underscores...):
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validJSONNumber(s string) bool {
	digits := func(i int) int { // the end of the digits from i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func (p *jsonScan) optionalNumber() (*float64, bool) {
	if strings.HasPrefix(p.s, "null") {
		p.s = p.s[4:]
		return nil, true
	}
	f, ok := p.number()
	if !ok {
		return nil, false
	}
	return &f, true
}

// attributes reads a JSON object of attributes, as
// fleet.Attributes.UnmarshalJSON reads one: in its order, each value a
// boolean, a string or a number (a float64).
func (p *jsonScan) attributes(a *fleet.Attributes) bool {
	out := fleet.Attributes{}
	if !p.object(func(name string) bool {
		switch {
		case strings.HasPrefix(p.s, "true"):
			p.s = p.s[4:]
			out = append(out, fleet.BoolAttr(name, true))
		case strings.HasPrefix(p.s, "false"):
			p.s = p.s[5:]
			out = append(out, fleet.BoolAttr(name, false))
		case strings.HasPrefix(p.s, `"`):
			t, ok := p.text()
			if !ok {
				return false
			}
			out = append(out, fleet.TextAttr(name, t))
		default:
			f, ok := p.number()
			if !ok {
				return false
			}
			out = append(out, fleet.NumberAttr(name, f))
		}
		return true
	}) {
		return false
	}
	*a = out
	return true
}
