package fleethttp

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fleetkit/fleetapi/fleet"
)

// The strict decoder reads a request body once, straight into its Go type,
// and refuses in that one pass what the API refuses: malformed JSON, a
// member given twice in any object, a member the type does not have (names
// are exact: "NAME" is not "name"), and a value of the wrong JSON type. It
// is driven by the type alone (a plan made once per type, by reflection),
// so a new wire type needs nothing here.
//
// When a body has several faults, the one named is chosen as it always
// was, by rank: malformed JSON first (at the byte encoding/json names),
// then the first member given twice, in the order of the text, then the
// first member of the wrong type or unknown, members of an object taken
// in the order of their names, depth first (so that the same fault is
// named every time), then what a type that decodes itself refuses, then
// data after the object.

// maxDepth is how deeply arrays and objects may nest (encoding/json's limit).
const maxDepth = 10000

// planKind is how the decoder reads a Go type.
type planKind uint8

const (
	kindStruct   planKind = iota + 1
	kindPointer           // *T: null leaves it nil
	kindSlice             // []T
	kindMap               // map[string]T
	kindString            // a string
	kindBool              // a boolean
	kindInt               // a whole number of the type's size
	kindFloat             // a number of the type's size
	kindTime              // an RFC 3339 timestamp, decoded by time.Time itself
	kindOptional          // fleet.Optional[T]: Set, and its value read as T
	kindSelf              // a json.Unmarshaler: its own bytes, to itself
	kindOther             // anything else (interfaces, unsigned numbers, arrays...): checked by its kind's shape, decoded by encoding/json
)

// plan is how one Go type is read.
type plan struct {
	kind   planKind
	t      reflect.Type
	elem   *plan             // of a pointer, slice, map, optional; of an array's elements (kindOther)
	fields map[string]*field // a struct's members by JSON name
	bits   int               // of an int or float
	// shape is the JSON type a kindOther value must be ("an array"), or "".
	shape string
	// setIdx and valueIdx are an optional's fields.
	setIdx, valueIdx int
}

// field is a member of a struct: where it is (through embedded structs),
// and the names encoding/json gives its place in an error.
type field struct {
	index []int
	stack []string // the Go names of the embedded structs it is promoted through, then its JSON name
	p     *plan
}

var (
	plans   sync.Map // reflect.Type -> *plan
	plansMu sync.Mutex
)

// planOf returns the plan of t, made once.
func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	plansMu.Lock()
	defer plansMu.Unlock()
	building := map[reflect.Type]*plan{}
	p := buildPlan(t, building)
	for bt, bp := range building {
		plans.LoadOrStore(bt, bp)
	}
	return p
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func buildPlan(t reflect.Type, building map[reflect.Type]*plan) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := building[t]; ok {
		return p // a recursive type: filled in below
	}
	p := &plan{t: t}
	building[t] = p
	if elem, ok := optionalElem(t); ok {
		p.kind, p.elem = kindOptional, buildPlan(elem, building)
		set, _ := t.FieldByName("Set")
		value, _ := t.FieldByName("Value")
		p.setIdx, p.valueIdx = set.Index[0], value.Index[0]
		return p
	}
	switch {
	case t == timeType:
		p.kind = kindTime
		return p
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(jsonUnmarshalerType):
		p.kind = kindSelf
		return p
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshalerType):
		p.kind, p.shape = kindOther, shapeOfKind(t)
		return p
	}
	switch t.Kind() {
	case reflect.Pointer:
		p.kind, p.elem = kindPointer, buildPlan(t.Elem(), building)
	case reflect.Struct:
		p.kind, p.fields = kindStruct, map[string]*field{}
		addFields(p.fields, t, nil, nil, building)
	case reflect.Slice:
		p.kind, p.elem = kindSlice, buildPlan(t.Elem(), building)
	case reflect.Map:
		if t.Key().Kind() == reflect.String && !reflect.PointerTo(t.Key()).Implements(textUnmarshalerType) {
			p.kind, p.elem = kindMap, buildPlan(t.Elem(), building)
		} else {
			p.kind, p.shape, p.elem = kindOther, "an object", buildPlan(t.Elem(), building)
		}
	case reflect.String:
		p.kind = kindString
	case reflect.Bool:
		p.kind = kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.kind, p.bits = kindInt, t.Bits()
	case reflect.Float32, reflect.Float64:
		p.kind, p.bits = kindFloat, t.Bits()
	case reflect.Array:
		p.kind, p.shape, p.elem = kindOther, "an array", buildPlan(t.Elem(), building)
	default:
		p.kind = kindOther
	}
	return p
}

// shapeOfKind is the JSON type a value of t's kind must be, for a type
// that decodes itself from text but is checked by its kind.
func shapeOfKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	}
	return ""
}

// addFields adds the JSON members of struct t, embedded structs flattened
// (a later field of the same name replaces an earlier one).
func addFields(out map[string]*field, t reflect.Type, index []int, stack []string, building map[reflect.Type]*plan) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		idx := append(append([]int(nil), index...), i)
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(out, ft, idx, append(append([]string(nil), stack...), f.Name), building)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = &field{index: idx, stack: append(append([]string(nil), stack...), name), p: buildPlan(f.Type, building)}
	}
}

// pathSeg is one step of the path to the value being read: a member's
// name, as decoded (key) and as the duplicate check compares it (raw), or
// an array index.
type pathSeg struct {
	key, raw []byte
	index    int // -1 for a member
}

// maxScannedNames is how many names of an object are compared one by one
// for a member given twice; beyond it they go into a set.
const maxScannedNames = 32

// strictDecoder reads one body.
type strictDecoder struct {
	b     []byte
	i     int
	depth int
	// syntax: the text is not JSON; dup: the first member given twice.
	syntax bool
	dup    *fleet.Error
	// abort and saved are the type stage's errors: the first error of a
	// type that decodes itself, and the first value encoding/json would
	// refuse and skip.
	abort, saved error
	path         []pathSeg
	stack        []string // encoding/json's field stack: struct members' names
	names        [][]byte // the names of the objects being read, innermost last
}

// decodeStrict decodes body, a JSON object, into v (a pointer's element)
// following p.
func decodeStrict(body []byte, v reflect.Value, p *plan) error {
	d := &strictDecoder{b: body}
	shape := d.value(v, p)
	switch {
	case d.syntax:
		if err := syntaxError(body); err != nil {
			return err
		}
		return fleet.Errorf(fleet.CodeInvalidRequest, "The request body is not valid JSON.")
	case d.dup != nil:
		// Malformed JSON after it still ranks first.
		if err := syntaxError(body); err != nil {
			return err
		}
		return d.dup
	case shape != nil:
		return shape
	case d.abort != nil:
		return decodeError(d.abort)
	case d.saved != nil:
		return decodeError(d.saved)
	}
	d.ws()
	if d.i != len(d.b) {
		return fleet.Errorf(fleet.CodeInvalidRequest, "The request body has data after the JSON object.")
	}
	return nil
}

// syntaxError is the error of a body whose first value is not JSON, as
// encoding/json names it (the byte where it stops, or its end), or nil.
func syntaxError(body []byte) error {
	var raw json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&raw); err != nil {
		return decodeError(err)
	}
	return nil
}

func (d *strictDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// stop records that the text is not JSON; everything unwinds.
func (d *strictDecoder) stop() { d.syntax = true }

// done reports whether reading stops: the text is not JSON, or a member
// was given twice (nothing after it can outrank it but malformed JSON,
// which the error's phrasing then finds).
func (d *strictDecoder) done() bool { return d.syntax || d.dup != nil }

// value reads one value into v (invalid: checked, not kept) following p
// (nil: only read). It returns the shape error that ranks first in it.
func (d *strictDecoder) value(v reflect.Value, p *plan) error {
	d.ws()
	if d.i >= len(d.b) {
		d.stop()
		return nil
	}
	if p == nil {
		d.skip()
		return nil
	}
	c := d.b[d.i]
	if c == 'n' {
		if !d.literal("null") {
			return nil
		}
		return d.null(v, p)
	}
	switch p.kind {
	case kindPointer:
		if v.IsValid() {
			if v.IsNil() {
				v.Set(reflect.New(p.t.Elem()))
			}
			v = v.Elem()
		}
		return d.value(v, p.elem)
	case kindOptional:
		if v.IsValid() {
			v.Field(p.setIdx).SetBool(true)
			v = v.Field(p.valueIdx)
		}
		return d.value(v, p.elem)
	case kindStruct, kindMap:
		if c != '{' {
			d.skip()
			return d.wrongType("an object")
		}
		return d.object(v, p)
	case kindSlice:
		if c != '[' {
			d.skip()
			return d.wrongType("an array")
		}
		return d.array(v, p)
	case kindString:
		if c != '"' {
			d.skip()
			return d.wrongType("a string")
		}
		start := d.i
		if !d.str() {
			return nil
		}
		if v.IsValid() {
			v.SetString(unquote(d.b[start:d.i]))
		}
		return nil
	case kindBool:
		switch {
		case c == 't' && d.literal("true"):
			if v.IsValid() {
				v.SetBool(true)
			}
			return nil
		case c == 'f' && d.literal("false"):
			if v.IsValid() {
				v.SetBool(false)
			}
			return nil
		case c == 't' || c == 'f':
			return nil // not JSON
		}
		d.skip()
		return d.wrongType("a boolean")
	case kindInt, kindFloat:
		if c != '-' && (c < '0' || c > '9') {
			d.skip()
			if p.kind == kindInt {
				return d.wrongType("a whole number")
			}
			return d.wrongType("a number")
		}
		start := d.i
		if !d.number() {
			return nil
		}
		s := string(d.b[start:d.i])
		if p.kind == kindInt {
			n, err := strconv.ParseInt(s, 10, p.bits)
			if err != nil {
				return d.wrongType("a whole number")
			}
			if v.IsValid() {
				v.SetInt(n)
			}
			return nil
		}
		f, err := strconv.ParseFloat(s, p.bits)
		if err != nil {
			return d.wrongType("a number")
		}
		if v.IsValid() {
			v.SetFloat(f)
		}
		return nil
	case kindTime:
		start := d.i
		if c != '"' {
			d.skip()
			return d.wrongType("an RFC 3339 timestamp (2026-11-22T10:15:30Z)")
		}
		if !d.str() {
			return nil
		}
		raw := d.b[start:d.i]
		// What time.Time takes, time.Parse takes too: parsed once when
		// it is well formed.
		var t time.Time
		err := t.UnmarshalJSON(raw)
		if err != nil {
			if _, perr := time.Parse(time.RFC3339Nano, unquote(raw)); perr != nil {
				return d.wrongType("an RFC 3339 timestamp (2026-11-22T10:15:30Z)")
			}
			if d.abort == nil {
				d.abort = d.context(err)
			}
			return nil
		}
		if v.IsValid() {
			v.Set(reflect.ValueOf(t))
		}
		return nil
	case kindSelf:
		start := d.i
		d.skip()
		if v.IsValid() && !d.done() {
			d.self(v, d.b[start:d.i])
		}
		return nil
	}
	// kindOther: its kind's shape, then encoding/json.
	start := d.i
	var shape error
	switch {
	case p.shape == "an array" && c == '[':
		shape = d.array(reflect.Value{}, p)
	case p.shape == "an object" && c == '{':
		shape = d.object(reflect.Value{}, p)
	case p.shape == "a string" && c == '"', p.shape == "a boolean" && (c == 't' || c == 'f'), p.shape == "":
		d.skip()
	default:
		d.skip()
		return d.wrongType(p.shape)
	}
	if shape == nil && v.IsValid() && !d.done() {
		d.other(v, d.b[start:d.i])
	}
	return shape
}

// null reads null into v: a pointer, slice, map or interface becomes nil,
// a type that decodes itself is given it, anything else is left as it is
// (encoding/json's rules).
func (d *strictDecoder) null(v reflect.Value, p *plan) error {
	if !v.IsValid() {
		return nil
	}
	switch p.kind {
	case kindPointer, kindSlice, kindMap:
		v.SetZero()
	case kindOptional:
		v.Field(p.setIdx).SetBool(true)
		v.Field(p.valueIdx).SetZero()
	case kindTime, kindSelf:
		d.self(v, []byte("null"))
	case kindOther:
		d.other(v, []byte("null"))
	}
	return nil
}

// self gives raw to the value's own UnmarshalJSON, as encoding/json would.
func (d *strictDecoder) self(v reflect.Value, raw []byte) {
	u := v.Addr().Interface().(json.Unmarshaler)
	if err := u.UnmarshalJSON(raw); err != nil && d.abort == nil {
		d.abort = d.context(err)
	}
}

// other decodes raw into v with encoding/json: for the types the decoder
// does not read itself. A value of the wrong type there is skipped and
// reported after the rest, as encoding/json does.
func (d *strictDecoder) other(v reflect.Value, raw []byte) {
	err := json.Unmarshal(raw, v.Addr().Interface())
	if err == nil {
		return
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if d.saved == nil {
			d.saved = d.context(err)
		}
		return
	}
	if d.abort == nil {
		d.abort = d.context(err)
	}
}

// context names where err happened as encoding/json does: the struct
// members (not indexes) on the way.
func (d *strictDecoder) context(err error) error {
	if typ, ok := err.(*json.UnmarshalTypeError); ok && len(d.stack) > 0 {
		stack := d.stack
		if typ.Field != "" {
			stack = append(stack[:len(stack):len(stack)], typ.Field)
		}
		typ.Field = strings.Join(stack, ".")
	}
	return err
}

// wrongType is the shape error of the value at the current path.
func (d *strictDecoder) wrongType(want string) error {
	if d.done() {
		return nil
	}
	return wrongType(d.pathString(false), want)
}

// pathString is the path to the current value, as the errors write it;
// raw: with names as the duplicate check compares them.
func (d *strictDecoder) pathString(raw bool) string {
	var sb strings.Builder
	for _, s := range d.path {
		if s.index >= 0 {
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(s.index))
			sb.WriteByte(']')
			continue
		}
		if raw {
			sb.WriteByte('.')
			sb.Write(s.raw)
		} else {
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.Write(s.key)
		}
	}
	if raw {
		// The duplicate check's paths start each name with a dot, and
		// drop the first.
		return strings.TrimPrefix(sb.String(), ".")
	}
	return sb.String()
}

// object reads an object into v following p (a struct or a map): each
// member once, each known. Of its members' shape errors, the one of the
// first name in order is returned.
func (d *strictDecoder) object(v reflect.Value, p *plan) error {
	d.i++ // {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		d.stop()
		return nil
	}
	base := len(d.names)
	defer func() { d.names = d.names[:base] }()
	var many map[string]struct{} // the names once there are many
	var best error
	var bestKey []byte
	if p.kind == kindMap && v.IsValid() && v.IsNil() {
		v.Set(reflect.MakeMap(p.t))
	}
	var elem reflect.Value // a map's value being read
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return nil
	}
	for {
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			d.stop()
			return nil
		}
		start := d.i
		if !d.str() {
			return nil
		}
		tok := d.b[start:d.i]
		name := tok[1 : len(tok)-1]
		key := unquoteBytes(tok)
		if bytes.IndexByte(name, '\\') >= 0 {
			name = key // compared as decoded
		}
		// A member given twice.
		if many != nil {
			if _, seen := many[string(name)]; seen {
				d.given(key, name)
				return nil
			}
			many[string(name)] = struct{}{}
		} else {
			for _, seen := range d.names[base:] {
				if bytes.Equal(seen, name) {
					d.given(key, name)
					return nil
				}
			}
			d.names = append(d.names, name)
			if len(d.names)-base > maxScannedNames {
				many = make(map[string]struct{}, 2*maxScannedNames)
				for _, seen := range d.names[base:] {
					many[string(seen)] = struct{}{}
				}
			}
		}
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			d.stop()
			return nil
		}
		d.i++
		d.path = append(d.path, pathSeg{key: key, raw: name, index: -1})
		var err error
		switch {
		case p.kind == kindStruct:
			f := p.fields[string(key)]
			if f == nil {
				d.skip()
				if !d.done() {
					e := fleet.Errorf(fleet.CodeInvalidRequest, "Unknown or read-only field %q.", d.pathString(false))
					e.Details = []fleet.FieldError{{Field: d.pathString(false), Message: "is not a field that can be set"}}
					err = e
				}
				break
			}
			fv := v
			if fv.IsValid() {
				fv = fieldOf(v, f.index)
			}
			depth := len(d.stack)
			d.stack = append(d.stack, f.stack...)
			err = d.value(fv, f.p)
			d.stack = d.stack[:depth]
		case v.IsValid():
			if !elem.IsValid() {
				elem = reflect.New(p.t.Elem()).Elem()
			} else {
				elem.SetZero()
			}
			err = d.value(elem, p.elem)
			if err == nil && !d.done() {
				v.SetMapIndex(reflect.ValueOf(string(key)).Convert(p.t.Key()), elem)
			}
		default:
			err = d.value(reflect.Value{}, p.elem)
		}
		d.path = d.path[:len(d.path)-1]
		if d.done() {
			return nil
		}
		if err != nil && (best == nil || bytes.Compare(key, bestKey) < 0) {
			best, bestKey = err, key
		}
		if d.next('}') {
			continue
		}
		if d.done() {
			return nil
		}
		return best
	}
}

// given records the member name given twice at the current path.
func (d *strictDecoder) given(key, raw []byte) {
	d.path = append(d.path, pathSeg{key: key, raw: raw, index: -1})
	path := d.pathString(true)
	d.path = d.path[:len(d.path)-1]
	e := fleet.Errorf(fleet.CodeInvalidRequest, "Field %q is given twice in one object.", path)
	e.Details = []fleet.FieldError{{Field: path, Message: "is given twice; give each member once"}}
	d.dup = e
}

// fieldOf is v's field at index, allocating embedded pointers on the way.
func fieldOf(v reflect.Value, index []int) reflect.Value {
	for k, i := range index {
		if k > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{} // an embedded pointer to an unexported struct: read, not kept
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v
}

// array reads an array into v following p (a slice, or the array of a
// kindOther value, checked only). Its first shape error is returned.
func (d *strictDecoder) array(v reflect.Value, p *plan) error {
	d.i++ // [
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		d.stop()
		return nil
	}
	var best error
	n := 0
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		if v.IsValid() {
			v.Set(reflect.MakeSlice(p.t, 0, 0))
		}
		return nil
	}
	for ; ; n++ {
		var ev reflect.Value
		if v.IsValid() {
			if n >= v.Cap() {
				nv := reflect.MakeSlice(p.t, n+1, max(4, 2*n))
				reflect.Copy(nv, v)
				v.Set(nv)
			} else {
				v.SetLen(n + 1)
			}
			ev = v.Index(n)
			ev.SetZero()
		}
		d.path = append(d.path, pathSeg{index: n})
		err := d.value(ev, p.elem)
		d.path = d.path[:len(d.path)-1]
		if d.done() {
			return nil
		}
		if err != nil && best == nil {
			best = err
		}
		if d.next(']') {
			continue
		}
		if d.done() {
			return nil
		}
		if v.IsValid() {
			v.SetLen(n + 1)
		}
		return best
	}
}

// next reads what follows a member or an element: a comma, when more
// follow, or close, the end; anything else is not JSON.
func (d *strictDecoder) next(close byte) (more bool) {
	d.ws()
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case ',':
			d.i++
			return true
		case close:
			d.i++
			return false
		}
	}
	d.stop()
	return false
}

// skip reads any value, checking only that it is JSON and gives no
// member twice.
func (d *strictDecoder) skip() {
	d.ws()
	if d.i >= len(d.b) {
		d.stop()
		return
	}
	switch c := d.b[d.i]; {
	case c == '{':
		d.object(reflect.Value{}, skipPlan)
	case c == '[':
		d.array(reflect.Value{}, skipArrayPlan)
	case c == '"':
		d.str()
	case c == 't':
		d.literal("true")
	case c == 'f':
		d.literal("false")
	case c == 'n':
		d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		d.number()
	default:
		d.stop()
	}
}

// skipPlan reads an object's members without a type: a map of nothing in
// particular; skipArrayPlan, an array's elements.
var (
	skipPlan      = &plan{kind: kindMap}
	skipArrayPlan = &plan{kind: kindSlice}
)

// literal reads the word lit.
func (d *strictDecoder) literal(lit string) bool {
	if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	d.stop()
	return false
}

// str reads a string token in JSON's grammar.
func (d *strictDecoder) str() bool {
	for j := d.i + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return true
		case c < 0x20:
			d.stop()
			return false
		case c == '\\':
			j++
			if j >= len(d.b) {
				d.stop()
				return false
			}
			switch d.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(d.b) {
					d.stop()
					return false
				}
				for _, h := range d.b[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						d.stop()
						return false
					}
				}
				j += 4
			default:
				d.stop()
				return false
			}
		}
	}
	d.stop()
	return false
}

// number reads a number in JSON's grammar.
func (d *strictDecoder) number() bool {
	end, ok := numberEnd(d.b, d.i)
	if !ok {
		d.stop()
		return false
	}
	d.i = end
	return true
}

// numberEnd returns where the number at b[i:] ends, in JSON's grammar,
// and whether there is one.
func numberEnd(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	return i, true
}

// unquoteBytes is unquote without a copy when the token has nothing to
// decode.
func unquoteBytes(tok []byte) []byte {
	s := tok[1 : len(tok)-1]
	for _, c := range s {
		if c == '\\' || c >= utf8.RuneSelf {
			return []byte(unquote(tok))
		}
	}
	return s
}

// unquote decodes a string token as encoding/json does (invalid UTF-8
// becomes U+FFFD).
func unquote(tok []byte) string {
	s := tok[1 : len(tok)-1]
	simple := true
	for _, c := range s {
		if c == '\\' || c >= utf8.RuneSelf {
			simple = false
			break
		}
	}
	if simple || (bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s)) {
		return string(s)
	}
	var out string
	json.Unmarshal(tok, &out) // a valid token
	return out
}
