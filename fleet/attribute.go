package fleet

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Attributes are what a report says besides where the vehicle is (API.md
// §14): ignition, power, odometer, fuel, the driver's key, alarms... Every
// stored point keeps those its report carried, API client's and device's
// alike.
//
// Attributes is a small slice sorted by name (names unique), not a map:
// a point's attributes cost one allocation whatever their number, compare
// and encode in a fixed order, and a store writes them as they are. On the
// wire it is a JSON object, {"ignition": true, "power_v": 12.6}, omitted
// from a point when empty.

// AttrKind is the type of an attribute's value.
type AttrKind uint8

const (
	AttrNumber AttrKind = iota // a finite number
	AttrBool                   // true or false (Num 1 or 0)
	AttrText                   // single-line text
)

// Attribute is one named value of a point.
type Attribute struct {
	Name string
	Kind AttrKind
	Num  float64 // AttrNumber; AttrBool: 1 or 0
	Text string  // AttrText
}

// NumberAttr, BoolAttr and TextAttr make attributes of each kind.
func NumberAttr(name string, v float64) Attribute {
	return Attribute{Name: name, Kind: AttrNumber, Num: v}
}
func TextAttr(name, v string) Attribute { return Attribute{Name: name, Kind: AttrText, Text: v} }
func BoolAttr(name string, v bool) Attribute {
	a := Attribute{Name: name, Kind: AttrBool}
	if v {
		a.Num = 1
	}
	return a
}

// Value is the attribute's value as JSON shows it: float64, bool or string.
func (a Attribute) Value() any {
	switch a.Kind {
	case AttrBool:
		return a.Num != 0
	case AttrText:
		return a.Text
	}
	return a.Num
}

// Attributes are a point's attributes, sorted by name, each name once
// (Sort makes them so).
type Attributes []Attribute

// Limits of a point's attributes (API.md §14).
const (
	MaxPointAttributes = 64 // attributes of one point
	MaxAttrName        = 32 // bytes of a name: ^[a-z][a-z0-9_]{0,31}$
	MaxAttrText        = 64 // characters of a text value
)

// Names of the common vocabulary (API.md §14) that the domain reads.
const (
	AttrIgnition         = "ignition"
	AttrMotion           = "motion"
	AttrAlarm            = "alarm"
	AttrPowerV           = "power_v"
	AttrOdometerKm       = "odometer_km"
	AttrEngineHours      = "engine_hours"
	AttrFuelLevel        = "fuel_level"
	AttrFuelL            = "fuel_l"
	AttrDriverIdentifier = "driver_identifier"
)

// Sort puts a in name order; of attributes with the same name the first
// stays and the others are dropped. It returns the result, which shares
// a's memory.
func (a Attributes) Sort() Attributes {
	if len(a) < 2 {
		return a
	}
	if !slices.IsSortedFunc(a, cmpAttr) {
		slices.SortStableFunc(a, cmpAttr)
	}
	return slices.CompactFunc(a, func(x, y Attribute) bool { return x.Name == y.Name })
}

func cmpAttr(x, y Attribute) int { return strings.Compare(x.Name, y.Name) }

// Get returns the attribute named name.
func (a Attributes) Get(name string) (Attribute, bool) {
	if len(a) <= 8 { // a scan beats a search on few
		for _, x := range a {
			if x.Name == name {
				return x, true
			}
		}
		return Attribute{}, false
	}
	i, ok := slices.BinarySearchFunc(a, name, func(x Attribute, n string) int { return strings.Compare(x.Name, n) })
	if !ok {
		return Attribute{}, false
	}
	return a[i], true
}

// Number returns the number named name; ok is false when there is none
// (or it is not a number).
func (a Attributes) Number(name string) (float64, bool) {
	x, ok := a.Get(name)
	if !ok || x.Kind != AttrNumber {
		return 0, false
	}
	return x.Num, true
}

// Bool returns the boolean named name; ok is false when there is none (or
// it is not a boolean).
func (a Attributes) Bool(name string) (v, ok bool) {
	x, ok := a.Get(name)
	if !ok || x.Kind != AttrBool {
		return false, false
	}
	return x.Num != 0, true
}

// Text returns the text named name; ok is false when there is none (or it
// is not text).
func (a Attributes) Text(name string) (string, bool) {
	x, ok := a.Get(name)
	if !ok || x.Kind != AttrText {
		return "", false
	}
	return x.Text, true
}

// Clone returns a copy of a that shares no memory with it (nil for none).
func (a Attributes) Clone() Attributes {
	if len(a) == 0 {
		return nil
	}
	return slices.Clone(a)
}

// Map returns the attributes as a map of their JSON values.
func (a Attributes) Map() map[string]any {
	m := make(map[string]any, len(a))
	for _, x := range a {
		m[x.Name] = x.Value()
	}
	return m
}

// validAttrName reports whether s matches ^[a-z][a-z0-9_]{0,31}$.
func validAttrName(s string) bool {
	if len(s) == 0 || len(s) > MaxAttrName || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// problem says what is wrong with x ("" when nothing).
func (x Attribute) problem() string {
	if !validAttrName(x.Name) {
		return "is not a valid attribute name: a lower-case letter, then at most 31 lower-case letters, digits and '_'"
	}
	switch x.Kind {
	case AttrNumber:
		if math.IsNaN(x.Num) || math.IsInf(x.Num, 0) {
			return "must be a finite number"
		}
	case AttrBool:
		if x.Num != 0 && x.Num != 1 {
			return "must be true or false"
		}
	case AttrText:
		if !utf8.ValidString(x.Text) {
			return "must be valid UTF-8 text"
		}
		if n := utf8.RuneCountInString(x.Text); n > MaxAttrText {
			return "must be at most 64 characters"
		}
		if c, bad := controlChar(x.Text, false); bad {
			return "must not contain control characters (found U+" + strings.ToUpper(strconv.FormatInt(int64(c)+0x10000, 16)[1:]) + ")"
		}
	default:
		return "must be a number, a boolean or a string"
	}
	return ""
}

// attrField is how a validation error names attribute name of a point: the
// name itself when it is a valid one, else quoted (and cut), so that what
// a client sent cannot pass for another field.
func attrField(name string) string {
	if validAttrName(name) {
		return "attributes." + name
	}
	if len(name) > 2*MaxAttrName {
		name = name[:2*MaxAttrName]
		for !utf8.ValidString(name) {
			name = name[:len(name)-1]
		}
	}
	return "attributes[" + strconv.QuoteToASCII(name) + "]"
}

// validate checks a point's attributes into v (whose prefix names the
// point), naming each bad one: at most MaxPointAttributes, each name once,
// names of the rule, finite numbers, text of at most MaxAttrText
// characters without control characters. It sorts a in place first.
func (a *Attributes) validate(v *Validator) {
	if len(*a) == 0 {
		return
	}
	if len(*a) > MaxPointAttributes {
		v.Add("attributes", "must hold at most %d attributes (it holds %d)", MaxPointAttributes, len(*a))
		return
	}
	s := *a
	if !slices.IsSortedFunc(s, cmpAttr) {
		slices.SortStableFunc(s, cmpAttr)
	}
	for i, x := range s {
		if i > 0 && s[i-1].Name == x.Name {
			if i < 2 || s[i-2].Name != x.Name {
				v.Add(attrField(x.Name), "is given more than once")
			}
			continue
		}
		if p := x.problem(); p != "" {
			v.Add(attrField(x.Name), "%s", p)
		}
	}
}

// clean returns a's attributes that pass the rules, in name order, each
// name once, at most MaxPointAttributes of them (the first in name order),
// and how many it dropped: what a device's report keeps, as a device
// cannot be told that one is bad. It sorts a in place and reuses its
// memory.
func (a Attributes) clean() (Attributes, int) {
	if len(a) == 0 {
		return nil, 0
	}
	n := len(a)
	a = a.Sort()
	dropped := n - len(a)
	out := a[:0]
	for _, x := range a {
		if len(out) == MaxPointAttributes || x.problem() != "" {
			dropped++
			continue
		}
		out = append(out, x)
	}
	clear(a[len(out):]) // no string kept alive past the slice's length
	return out, dropped
}

// MarshalJSON writes the attributes as one JSON object in name order.
func (a Attributes) MarshalJSON() ([]byte, error) {
	return a.AppendJSON(make([]byte, 0, 16+24*len(a))), nil
}

// AppendJSON appends the attributes as a JSON object to b.
func (a Attributes) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, x := range a {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, x.Name)
		b = append(b, ':')
		switch x.Kind {
		case AttrBool:
			b = strconv.AppendBool(b, x.Num != 0)
		case AttrText:
			b = appendJSONString(b, x.Text)
		default:
			b = appendJSONNumber(b, x.Num)
		}
	}
	return append(b, '}')
}

// appendJSONNumber appends f as encoding/json writes a float64 (a value
// JSON cannot hold as 0, which validation never lets through).
//
// encoding/json writes the shortest decimal that reads back as f. When a
// decimal of at most 15 significant digits reads back as f, that one is
// it (two such decimals never read back as the same float64), and it is
// found with one multiplication and written from an integer: the usual
// reading (a count, a voltage, a percentage, a coordinate) takes no
// general float formatting.
func appendJSONNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	abs := math.Abs(f)
	if abs < 1e15 && f == math.Trunc(f) {
		return strconv.AppendInt(b, int64(f), 10)
	}
	if abs < 1e12 {
		// Most readings (a count, a voltage, a percentage) have at most
		// three decimals: f*1000, rounded, is then their digits.
		if r := math.Round(f * 1000); r/1000 == f {
			return appendDecimal(b, int64(r), 3)
		}
	}
	if abs >= 1e-6 && abs < 1e15 {
		// The most decimals d such that abs*10^d < 1e15: f*10^d, rounded,
		// is then the decimal's digits whenever there is one (a coordinate
		// of six or seven decimals).
		i, found := slices.BinarySearch(pow10Steps[:], abs)
		if found {
			i++ // now pow10Steps[i-1] <= abs < pow10Steps[i]
		}
		d := len(pow10Steps) - i
		if r := math.Round(f * exactPow10[d]); r/exactPow10[d] == f {
			return appendDecimal(b, int64(r), d)
		}
	}
	format := byte('f')
	if abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 -> e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// exactPow10 are the powers of ten a float64 holds exactly, up to 10^21,
// and pow10Steps the powers from 10^-6 to 10^14: abs*10^(21-i) < 1e15
// when abs < pow10Steps[i].
var (
	exactPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
		1e17, 1e18, 1e19, 1e20, 1e21}
	pow10Steps = [...]float64{1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
		1e11, 1e12, 1e13, 1e14}
)

// appendDecimal appends n/10^d in decimal without trailing zeros in its
// fraction (none when it has no fraction).
func appendDecimal(b []byte, n int64, d int) []byte {
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	for d > 0 && n%10 == 0 {
		n, d = n/10, d-1
	}
	if d == 0 {
		return strconv.AppendInt(b, n, 10)
	}
	var digits [24]byte
	s := strconv.AppendInt(digits[:0], n, 10)
	if k := len(s) - d; k > 0 {
		b = append(b, s[:k]...)
		b = append(b, '.')
		return append(b, s[k:]...)
	}
	b = append(b, '0', '.')
	for range d - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}

// jsonPlain holds the bytes a JSON string shows as they are: printable
// ASCII but for the quote and the backslash.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !jsonPlain[s[i]] {
			q, _ := json.Marshal(s) // the rare escaped text
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// UnmarshalJSON reads a JSON object of attributes: each value a number, a
// boolean or a string (anything else is an error: a wrong type). It judges
// nothing else: names, counts and values are the service's to refuse.
func (a *Attributes) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		*a = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return attrTypeError("attributes", "must be an object")
	}
	out := Attributes{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		if tok, err = dec.Token(); err != nil {
			return err
		}
		switch v := tok.(type) {
		case bool:
			out = append(out, BoolAttr(name, v))
		case string:
			out = append(out, TextAttr(name, v))
		case json.Number:
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return attrTypeError(attrField(name), "must be a number a float64 holds")
			}
			out = append(out, NumberAttr(name, f))
		default:
			return attrTypeError(attrField(name), "must be a number, a boolean or a string")
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*a = out
	return nil
}

// attrTypeError is the refusal of an attributes object whose shape is
// wrong: a wrong type, as for any member (API.md §1).
func attrTypeError(field, msg string) *Error {
	e := Errorf(CodeInvalidRequest, "Field %q %s.", field, msg)
	e.Details = []FieldError{{Field: field, Message: msg}}
	return e
}
