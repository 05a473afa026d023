package fleethttp

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// oracleDecode is how request bodies were decoded before the strict
// decoder (decodeStrict): the body read four times, into any, by the
// duplicate-member scan, by the shape check, then by encoding/json into a
// new value of type t. It is the reference the strict decoder is fuzzed
// against (FuzzStrictDecoderMatchesOracle): the same outcome, the same
// error, the same value.
func oracleDecode(body []byte, t reflect.Type, optional bool) (reflect.Value, error) {
	v := reflect.New(t)
	if body == nil {
		if optional {
			return v.Elem(), nil
		}
		return v.Elem(), fleet.Errorf(fleet.CodeInvalidRequest, "A JSON object request body is required.")
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return v.Elem(), fleet.Errorf(fleet.CodeInvalidRequest, "The request body must be a JSON object.")
	}
	// The keys and value types are checked first, so that the error names
	// the whole path of what is wrong (and names are exact: "NAME" is an
	// unknown field, though encoding/json would take it for "name").
	var raw any
	rd := json.NewDecoder(bytes.NewReader(body))
	rd.UseNumber() // ranges are the typed decoder's to judge
	if err := rd.Decode(&raw); err != nil {
		return v.Elem(), decodeError(err)
	}
	if err := duplicateMemberError(body); err != nil {
		return v.Elem(), err
	}
	if err := checkShape(raw, t, ""); err != nil {
		return v.Elem(), err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Interface()); err != nil {
		return v.Elem(), decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return v.Elem(), fleet.Errorf(fleet.CodeInvalidRequest, "The request body has data after the JSON object.")
	}
	return v.Elem(), nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkShape checks a decoded JSON value against the Go type it is to be
// decoded into, before the typed decoder runs, so that what is wrong is named
// by its whole path ("locations[1].timestamp"): every key of an object names
// a field of the struct, spelled exactly as its json tag (encoding/json
// would match it without regard to case), and every value has the JSON type
// its field takes. null is taken anywhere (absent, or cleared, for the
// service to judge). Types that decode themselves check themselves, but a
// merge patch member (fleet.Optional) is checked as its value.
func checkShape(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil
	}
	if elem, ok := optionalElem(t); ok {
		return checkShape(v, elem, path)
	}
	switch {
	case t == timeType:
		s, ok := v.(string)
		if !ok {
			return wrongType(path, "an RFC 3339 timestamp (2026-11-22T10:15:30Z)")
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return wrongType(path, "an RFC 3339 timestamp (2026-11-22T10:15:30Z)")
		}
		return nil
	case t == rawMessageType, t.Implements(unmarshalerType), reflect.PointerTo(t).Implements(unmarshalerType):
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return wrongType(path, "an object")
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the first problem named is the same every time
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				e := fleet.Errorf(fleet.CodeInvalidRequest, "Unknown or read-only field %q.", join(path, k))
				e.Details = []fleet.FieldError{{Field: join(path, k), Message: "is not a field that can be set"}}
				return e
			}
			if err := checkShape(m[k], ft, join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		a, ok := v.([]any)
		if !ok {
			return wrongType(path, "an array")
		}
		for i, x := range a {
			if err := checkShape(x, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return wrongType(path, "an object")
		}
		for k, x := range m {
			if err := checkShape(x, t.Elem(), join(path, k)); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return wrongType(path, "a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return wrongType(path, "a boolean")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return wrongType(path, "a whole number")
		}
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			return wrongType(path, "a whole number")
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return wrongType(path, "a number")
		}
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			return wrongType(path, "a number")
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonFields maps the JSON names of a struct's fields, embedded ones
// included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

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
