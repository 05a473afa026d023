package fleethttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// This file is the machinery of the OpenAPI generator: an ordered JSON
// object, and schemas built by reflection from the wire types. What the
// document says (descriptions, limits, operations) is in openapi_spec.go.

// obj is a JSON object that keeps its members in the order they were set,
// so the document reads in a sensible order and diffs stay small.
type obj struct {
	keys []string
	vals map[string]any
}

// o builds an obj from key, value pairs.
func o(kv ...any) *obj {
	m := &obj{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		m.set(kv[i].(string), kv[i+1])
	}
	return m
}

func (m *obj) set(k string, v any) *obj {
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
	return m
}

func (m *obj) get(k string) any { return m.vals[k] }

func (m *obj) has(k string) bool { _, ok := m.vals[k]; return ok }

func (m *obj) del(k string) {
	if _, ok := m.vals[k]; ok {
		delete(m.vals, k)
		m.keys = slices.DeleteFunc(m.keys, func(x string) bool { return x == k })
	}
}

// clone copies m deeply (nested objs and slices of them), so that a schema
// can be reused as the start of another.
func (m *obj) clone() *obj {
	c := &obj{keys: slices.Clone(m.keys), vals: make(map[string]any, len(m.vals))}
	for k, v := range m.vals {
		c.vals[k] = cloneValue(v)
	}
	return c
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case *obj:
		return x.clone()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	}
	return v
}

func (m *obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := marshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalNoEscape(m.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalNoEscape encodes v as JSON without HTML escaping (the document is
// read by people: "<" stays "<").
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ref is a reference to a component schema.
func ref(name string) *obj { return o("$ref", "#/components/schemas/"+name) }

// nullable returns s widened to accept null: a type list gains "null", a
// reference or composite becomes oneOf [s, null].
func nullable(s *obj) *obj {
	if t, ok := s.get("type").(string); ok && !s.has("$ref") {
		c := s.clone()
		c.set("type", []string{t, "null"})
		return c
	}
	if ts, ok := s.get("type").([]string); ok && slices.Contains(ts, "null") {
		return s
	}
	return o("oneOf", []any{s, o("type", "null")})
}

// single is the schema of a member that always holds one value: its
// `const` with its type. A bare `const` is typed as anything by generators
// (Go's interface{}); with its type, a string becomes a typed constant (a
// literal type in TypeScript), and a boolean a plain bool in Go (x-go-type)
// rather than a type named after its member.
func single(v any) *obj {
	switch v := v.(type) {
	case bool:
		return o("type", "boolean", "const", v, "x-go-type", "bool")
	case string:
		return o("type", "string", "const", v)
	}
	panic(fmt.Sprintf("openapi: single of %T", v))
}

// schemaKind says how a struct's schema is built: an output shape has
// every member required (the server always writes each, null when unset);
// an input shape requires only what its notes say, and takes null for any
// pointer member (null reads as absent).
type schemaKind int

const (
	output schemaKind = iota
	input
)

// component is a named schema built from a Go type (or written out whole,
// when typ is nil), with notes that add what reflection cannot know.
type component struct {
	name  string
	typ   reflect.Type
	kind  schemaKind
	notes func(*shape)
	whole func() *obj // a schema written out whole, for types that encode themselves
}

// shape is a struct schema under construction, for notes to refine.
type shape struct {
	*obj
	props    *obj
	required []string
	gen      *generator
	name     string
}

// prop returns a member's schema; naming one the type lacks is a generator
// error, so notes cannot drift from the type.
func (s *shape) prop(name string) *obj {
	p, ok := s.props.get(name).(*obj)
	if !ok {
		s.gen.fail("schema %s has no member %q", s.name, name)
		return o()
	}
	return p
}

// with sets keyword, value pairs on each named member.
func (s *shape) with(names string, kv ...any) *shape {
	for n := range strings.FieldsSeq(names) {
		p := s.prop(n)
		for i := 0; i+1 < len(kv); i += 2 {
			p.set(kv[i].(string), kv[i+1])
		}
	}
	return s
}

// replace sets a member's whole schema.
func (s *shape) replace(name string, schema *obj) *shape {
	s.prop(name)
	s.props.set(name, schema)
	return s
}

// null makes the named members nullable (output shapes whose Go type is
// not a pointer, such as text fields that are null when empty).
func (s *shape) null(names string) *shape {
	for n := range strings.FieldsSeq(names) {
		s.props.set(n, nullable(s.prop(n)))
	}
	return s
}

// nonNull takes null out of the named members' types (members an input
// must carry with a value).
func (s *shape) nonNull(names string) *shape {
	for n := range strings.FieldsSeq(names) {
		p := s.prop(n)
		if ts, ok := p.get("type").([]string); ok {
			ts = slices.DeleteFunc(slices.Clone(ts), func(t string) bool { return t == "null" })
			if len(ts) == 1 {
				p.set("type", ts[0])
			} else {
				p.set("type", ts)
			}
		}
	}
	return s
}

// require lists the members an input must carry.
func (s *shape) require(names string) *shape {
	for n := range strings.FieldsSeq(names) {
		s.prop(n)
		if !slices.Contains(s.required, n) {
			s.required = append(s.required, n)
		}
	}
	return s
}

// drop removes members (from a shape derived from another).
func (s *shape) drop(names string) *shape {
	for n := range strings.FieldsSeq(names) {
		s.prop(n)
		s.props.del(n)
		s.required = slices.DeleteFunc(s.required, func(x string) bool { return x == n })
	}
	return s
}

func (s *shape) describe(d string) *shape { s.set("description", d); return s }

// finish writes the required list and the properties into the schema
// (required first, as people read it).
func (s *shape) finish() *obj {
	if len(s.required) > 0 {
		s.set("required", s.required)
	}
	s.set("properties", s.props)
	return s.obj
}

// generator builds the document's component schemas from wire types.
type generator struct {
	components []component
	byType     map[reflect.Type]string
	built      *obj
	errs       []string
	titled     []string // components that are branches of a union: they carry a title
	ex         *examples
}

// title marks a component as a branch of a union: its schema gets a title,
// the name generators give a branch that is not a reference.
func (g *generator) title(name string) {
	if !slices.Contains(g.titled, name) {
		g.titled = append(g.titled, name)
	}
}

func (g *generator) fail(format string, args ...any) {
	g.errs = append(g.errs, fmt.Sprintf(format, args...))
}

// add registers a component; its type (if any) is then referenced by name
// wherever it appears.
func (g *generator) add(c component) {
	if c.typ != nil {
		if _, dup := g.byType[c.typ]; !dup {
			g.byType[c.typ] = c.name
		}
	}
	g.components = append(g.components, c)
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
)

// schemaOf returns the schema of a Go type as it appears inside another:
// a reference for component types, else written in place.
func (g *generator) schemaOf(t reflect.Type, kind schemaKind) *obj {
	if name, ok := g.byType[t]; ok {
		return ref(name)
	}
	switch {
	case t == timeType:
		return o("type", "string", "format", "date-time")
	case t == rawMessageType:
		return o()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.schemaOf(t.Elem(), kind))
	case reflect.String:
		return o("type", "string")
	case reflect.Bool:
		return o("type", "boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return o("type", "integer")
	case reflect.Float32, reflect.Float64:
		return o("type", "number", "format", "double")
	case reflect.Slice, reflect.Array:
		if kind == input && t.Kind() == reflect.Slice {
			// null decodes into an empty slice.
			return o("type", []string{"array", "null"}, "items", g.schemaOf(t.Elem(), kind))
		}
		return o("type", "array", "items", g.schemaOf(t.Elem(), kind))
	case reflect.Map:
		return o("type", "object", "additionalProperties", g.schemaOf(t.Elem(), kind))
	case reflect.Interface:
		return o()
	case reflect.Struct:
		if opt, ok := optionalElem(t); ok {
			return g.schemaOf(opt, kind)
		}
		if t.Implements(jsonMarshalerType) && t.PkgPath() != "" {
			g.fail("type %s encodes itself: register it as a component", t)
		}
		return g.structShape(t, kind, t.String()).finish()
	}
	g.fail("no schema for Go type %s", t)
	return o()
}

// optionalElem reports whether t is fleet.Optional[T], and T.
func optionalElem(t reflect.Type) (reflect.Type, bool) {
	if t.PkgPath() != reflect.TypeFor[fleet.Optional[int]]().PkgPath() || !strings.HasPrefix(t.Name(), "Optional[") {
		return nil, false
	}
	f, ok := t.FieldByName("Value")
	if !ok {
		return nil, false
	}
	return f.Type, true
}

// structShape builds an object schema from a struct's JSON members, in
// field order, embedded structs flattened.
func (g *generator) structShape(t reflect.Type, kind schemaKind, name string) *shape {
	s := &shape{obj: o("type", "object", "additionalProperties", false), props: o(), gen: g, name: name}
	g.addFields(s, t, kind)
	return s
}

func (g *generator) addFields(s *shape, t reflect.Type, kind schemaKind) {
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				g.addFields(s, ft, kind)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		s.props.set(name, g.schemaOf(f.Type, kind))
		omitted := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		if kind == output && !omitted {
			s.required = append(s.required, name)
		}
	}
}

// build makes every registered component's schema.
func (g *generator) build() *obj {
	g.built = o()
	for _, c := range g.components {
		if c.whole != nil {
			g.built.set(c.name, c.whole())
			continue
		}
		var s *shape
		if c.typ.Kind() == reflect.Struct {
			s = g.structShape(c.typ, c.kind, c.name)
		} else {
			g.fail("component %s: only struct types are built by reflection", c.name)
			continue
		}
		if c.notes != nil {
			c.notes(s)
		}
		if isPatch(c.typ) {
			g.nullableInGo(s)
		}
		g.built.set(c.name, s.finish())
	}
	// The examples of the schemas whose types have one (ExampleValues).
	for _, c := range g.components {
		if c.typ == nil || g.ex == nil {
			continue
		}
		if b, ok := g.ex.of(c.typ); ok {
			g.built.get(c.name).(*obj).set("examples", []any{b})
		}
	}
	for _, name := range g.titled {
		if s, ok := g.built.get(name).(*obj); ok && !s.has("title") {
			s.keys = append([]string{"title"}, s.keys...)
			s.vals["title"] = name
		}
	}
	return g.built
}

// isPatch reports whether t is a JSON merge patch: a struct of
// fleet.Optional members, where an absent member and a null one differ.
func isPatch(t reflect.Type) bool {
	for f := range t.Fields() {
		if _, ok := optionalElem(f.Type); ok {
			return true
		}
	}
	return false
}

// nullableGo is the Go type oapi-codegen gives a member that can be absent,
// null or a value (its nullable.Nullable), and where it comes from.
const nullableGo = "github.com/oapi-codegen/nullable"

// nullableInGo marks each nullable member of a merge patch for Go
// generators: with its default settings oapi-codegen makes such a member a
// pointer with omitempty, which cannot send the null that clears a field;
// x-go-type gives it nullable.Nullable[T] (unset, null, or a value), the
// type its nullable-type option gives. Other generators ignore the
// extension (TypeScript's `T | null` already says it).
func (g *generator) nullableInGo(s *shape) {
	for _, name := range s.props.keys {
		p := s.props.get(name).(*obj)
		inner, ok := nonNullOf(p)
		if !ok {
			continue
		}
		t := g.goTypeOf(inner, s.name+"."+name)
		p.set("x-go-type", "nullable.Nullable["+t+"]").
			set("x-go-type-import", o("path", nullableGo)).
			set("x-go-type-skip-optional-pointer", true)
	}
}

// nonNullOf returns what a nullable schema holds besides null, and whether
// it is nullable at all.
func nonNullOf(s *obj) (*obj, bool) {
	if ts, ok := s.get("type").([]string); ok && slices.Contains(ts, "null") {
		c := s.clone()
		ts = slices.DeleteFunc(slices.Clone(ts), func(t string) bool { return t == "null" })
		if len(ts) != 1 {
			return nil, false
		}
		c.set("type", ts[0])
		return c, true
	}
	if branches, ok := s.get("oneOf").([]any); ok && len(branches) == 2 {
		for i, b := range branches {
			if b, ok := b.(*obj); ok && b.get("type") == "null" {
				return branches[1-i].(*obj), true
			}
		}
	}
	return nil, false
}

// goTypeOf is the Go type oapi-codegen gives a schema (the shapes patch
// members take); at names the member for the error of one it cannot name.
func (g *generator) goTypeOf(s *obj, at string) string {
	if r, ok := s.get("$ref").(string); ok {
		return strings.TrimPrefix(r, "#/components/schemas/")
	}
	switch s.get("type") {
	case "string":
		switch s.get("format") {
		case "date":
			return "openapi_types.Date"
		case "date-time":
			return "time.Time"
		}
		if !s.has("enum") {
			return "string"
		}
	case "integer":
		return "int"
	case "number":
		return "float64"
	case "boolean":
		return "bool"
	case "array":
		if items, ok := s.get("items").(*obj); ok {
			return "[]" + g.goTypeOf(items, at+"[]")
		}
	}
	g.fail("%s: no Go type for a nullable patch member of this shape", at)
	return "interface{}"
}

// enum is the schema of a string enumeration.
func enum[T ~string](values []T, desc string) *obj {
	vs := make([]string, len(values))
	for i, v := range values {
		vs[i] = string(v)
	}
	s := o("type", "string", "enum", vs)
	if desc != "" {
		s.set("description", desc)
	}
	return s
}

// num writes a whole number with thousands separators: 10000 -> "10,000".
func num[T ~int | ~int64](n T) string {
	s := fmt.Sprint(int64(n))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
