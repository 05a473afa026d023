package fleethttp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/fleetkit/fleetapi/fleet"
)

// A JSON object that gives a member twice is refused, at any depth of a
// request body: encoding/json keeps the last, and a check that read the
// first ({"permissions":["vehicles:read"],"permissions":["*"]}) would be
// fooled. Names are compared as decoded: "a" and "\u0061" are one name.

// duplicateMemberError returns the error of a body whose objects give a
// member twice, naming its path ("locations[2].latitude"), or nil. body
// must start with a valid JSON value (the decoder has read it).
func duplicateMemberError(body []byte) error {
	d := memberScanner{batchScanner: batchScanner{b: body}}
	path, found := d.value()
	if !found {
		return nil
	}
	if len(path) > 0 && path[0] == '.' {
		path = path[1:]
	}
	e := fleet.Errorf(fleet.CodeInvalidRequest, "Field %q is given twice in one object.", path)
	e.Details = []fleet.FieldError{{Field: path, Message: "is given twice; give each member once"}}
	return e
}

// maxScannedNames is how many names of an object are compared one by one;
// beyond it they go into a set.
const maxScannedNames = 32

// memberScanner walks a valid JSON value looking for a member given twice.
type memberScanner struct {
	batchScanner          // its bytes, where it is, and ws
	names        [][]byte // the names of the objects being read, innermost last
}

// name reads a string and returns it as decoded.
func (d *memberScanner) name() []byte {
	start, esc := d.i+1, false
	for j := start; j < len(d.b); j++ {
		switch d.b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			d.i = j + 1
			if !esc {
				return d.b[start:j]
			}
			var s string
			json.Unmarshal(d.b[start-1:j+1], &s)
			return []byte(s)
		}
	}
	d.i = len(d.b)
	return nil
}

// value reads one value; when an object in it gives a member twice, it
// returns the member's path relative to the value (".name", "[3].name").
func (d *memberScanner) value() (string, bool) {
	d.ws()
	if d.i >= len(d.b) {
		return "", false
	}
	switch d.b[d.i] {
	case '{':
		d.i++
		base := len(d.names)
		defer func() { d.names = d.names[:base] }()
		var many map[string]struct{} // the names once there are many
		for {
			d.ws()
			if d.i >= len(d.b) {
				return "", false
			}
			switch d.b[d.i] {
			case '}':
				d.i++
				return "", false
			case ',':
				d.i++
				d.ws()
			}
			if d.i >= len(d.b) || d.b[d.i] != '"' {
				return "", false
			}
			n := d.name()
			if many != nil {
				if _, seen := many[string(n)]; seen {
					return "." + string(n), true
				}
				many[string(n)] = struct{}{}
			} else {
				for _, seen := range d.names[base:] {
					if bytes.Equal(seen, n) {
						return "." + string(n), true
					}
				}
				d.names = append(d.names, n)
				if len(d.names)-base > maxScannedNames {
					// A large object: a set, not a scan for each name.
					many = make(map[string]struct{}, 2*maxScannedNames)
					for _, seen := range d.names[base:] {
						many[string(seen)] = struct{}{}
					}
				}
			}
			d.ws()
			d.i++ // the colon
			at := d.i
			if p, found := d.value(); found {
				return "." + string(n) + p, true
			}
			if d.i == at {
				return "", false // not JSON: nothing more to find
			}
		}
	case '[':
		d.i++
		for k := 0; ; k++ {
			d.ws()
			if d.i >= len(d.b) {
				return "", false
			}
			switch d.b[d.i] {
			case ']':
				d.i++
				return "", false
			case ',':
				d.i++
			}
			at := d.i
			if p, found := d.value(); found {
				return "[" + strconv.Itoa(k) + "]" + p, true
			}
			if d.i == at {
				return "", false // not JSON: nothing more to find
			}
		}
	case '"':
		d.name()
	default: // a number, true, false or null
		for d.i < len(d.b) {
			switch d.b[d.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return "", false
			}
			d.i++
		}
	}
	return "", false
}
