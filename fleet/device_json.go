package fleet

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// A device's last report is written on every message a device sends, in
// the report's write transaction, which on SQLite is the one writer's
// turn: its JSON is written by hand here, several times faster than
// encoding/json's reflection (and the same JSON, as a test checks).

// MarshalJSON writes the report as the API shows it: reason is null when
// the position was stored.
func (r LastReport) MarshalJSON() ([]byte, error) { return r.appendJSON(make([]byte, 0, 320)) }

// MarshalJSON writes the position as the API shows it: attributes are an
// object, empty when there are none.
func (p DevicePosition) MarshalJSON() ([]byte, error) { return p.appendJSON(make([]byte, 0, 256)) }

func (r LastReport) appendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, `{"received_at":`...)
	if b, err = appendTimeJSON(b, r.ReceivedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"protocol":`...)
	b = appendStringJSON(b, r.Protocol)
	b = append(b, `,"position":`...)
	if b, err = r.Position.appendJSON(b); err != nil {
		return nil, err
	}
	b = append(b, `,"stored":`...)
	b = strconv.AppendBool(b, r.Stored)
	b = append(b, `,"reason":`...)
	if r.Reason == "" {
		b = append(b, "null"...)
	} else {
		b = appendStringJSON(b, r.Reason)
	}
	return append(b, '}'), nil
}

func (p DevicePosition) appendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, `{"latitude":`...)
	if b, err = appendFloatJSON(b, p.Latitude); err != nil {
		return nil, err
	}
	b = append(b, `,"longitude":`...)
	if b, err = appendFloatJSON(b, p.Longitude); err != nil {
		return nil, err
	}
	b = append(b, `,"timestamp":`...)
	if b, err = appendTimeJSON(b, p.Timestamp); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{`,"speed":`, p.Speed}, {`,"heading":`, p.Heading}, {`,"altitude":`, p.Altitude}} {
		b = append(b, f.name...)
		if f.v == nil {
			b = append(b, "null"...)
		} else if b, err = appendFloatJSON(b, *f.v); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"valid":`...)
	b = strconv.AppendBool(b, p.Valid)
	b = append(b, `,"satellites":`...)
	if p.Satellites == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*p.Satellites), 10)
	}
	b = append(b, `,"attributes":{`...)
	attrs := p.Attrs
	if !slices.IsSortedFunc(attrs, cmpAttr) { // in name order, as a map's keys
		attrs = attrs.Clone().Sort()
	}
	for i, x := range attrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStringJSON(b, x.Name)
		b = append(b, ':')
		switch x.Kind {
		case AttrBool:
			b = strconv.AppendBool(b, x.Num != 0)
		case AttrText:
			b = appendStringJSON(b, x.Text)
		default:
			if b, err = appendFloatJSON(b, x.Num); err != nil {
				return nil, err
			}
		}
	}
	return append(b, "}}"...), nil
}

// appendTimeJSON writes t as time.Time's MarshalJSON does.
func appendTimeJSON(b []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		return nil, &json.UnsupportedValueError{Str: "a time outside the years 0 to 9999"}
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

// appendFloatJSON writes f as encoding/json does.
func appendFloatJSON(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	n := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 to e-9, as encoding/json writes it
		if m := len(b) - n; m >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b, nil
}

// appendStringJSON writes s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD (as encoding/json
// does; HTML characters are left for an encoder that escapes them).
func appendStringJSON(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' { // as encoding/json escapes them
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
