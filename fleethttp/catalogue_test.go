package fleethttp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/matryer/is"
)

// The bad-input catalogue: every route with a body or parameters gets
// malformed and ill-typed bodies, unknown and read-only fields, values out
// of the ranges the OpenAPI document states, overlong strings, invalid
// UTF-8, huge bodies, the wrong content type, bad ids, bad cursors and bad
// query parameters. Each gets its contract error (never a 5xx) and the
// account's data is the same afterwards. The cases come from routeCases (a
// valid body for each route) and from the OpenAPI document (the ranges and
// types of every field and parameter), so a new route is covered as soon as
// it has its routeCase and its documentation.

// badInput is one request of the catalogue and the answer it must get.
type badInput struct {
	name   string
	body   any      // as e.do sends it
	hdr    []string // extra headers
	path   string   // when not the route's own
	status int
	codes  []string // acceptable error codes
	field  string   // when set, a detail of the error must name this field
}

// withControl is a string with a control character, U+0000 (which
// PostgreSQL refuses in text), between two letters.
const withControl = "a\x00b"

const invalidUTF8 = "\xff\xfe"

// operation returns the documented operation of a route.
func operation(t *testing.T, method, pattern string) *openapi3.Operation {
	t.Helper()
	item := docData.Paths.Find(strings.TrimPrefix(pattern, "/v1"))
	if item == nil {
		t.Fatalf("%s %s is not in the OpenAPI document", method, pattern)
	}
	op := item.GetOperation(method)
	if op == nil {
		t.Fatalf("%s %s is not in the OpenAPI document", method, pattern)
	}
	return op
}

// bodySchema returns the JSON schema of an operation's request body.
func bodySchema(op *openapi3.Operation) *openapi3.Schema {
	if op.RequestBody == nil || op.RequestBody.Value == nil {
		return nil
	}
	mt := op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Value
}

// wrongValue is a JSON value whose type the schema does not permit.
func wrongValue(s *openapi3.Schema) any {
	for _, v := range []any{map[string]any{"x": 1}, []any{1}, 42.5, "text", true} {
		if !permits(s, v) {
			return v
		}
	}
	return nil
}

func permits(s *openapi3.Schema, v any) bool {
	if s.Type == nil || s.Type.IsEmpty() {
		return true // any type (e.g. oneOf without a type of its own)
	}
	switch v.(type) {
	case map[string]any:
		return s.Type.Includes("object")
	case []any:
		return s.Type.Includes("array")
	case float64:
		return s.Type.Includes("number")
	case string:
		return s.Type.Includes("string")
	case bool:
		return s.Type.Includes("boolean")
	}
	return true
}

// fieldCases returns the bad variants of body (a valid object) that the
// schema's field constraints imply. at names the field for case names.
func fieldCases(at string, schema *openapi3.Schema, body map[string]any, set func(map[string]any) any) []badInput {
	var cases []badInput
	with := func(name string, v any) map[string]any {
		m := make(map[string]any, len(body)+1)
		for k, x := range body {
			m[k] = x
		}
		m[name] = v
		return m
	}
	invalid := []string{"invalid_request"}
	validation := []string{"validation_error"}
	// Unknown and read-only fields.
	for _, f := range []string{"no_such_field", "account_id", "created_at"} {
		if _, documented := schema.Properties[f]; !documented {
			cases = append(cases, badInput{name: at + f + " is not accepted", body: set(with(f, "x")), status: 400, codes: invalid})
		}
	}
	// Field names are exact: another case is an unknown field.
	for name, v := range body {
		if up := strings.ToUpper(name); up != name {
			m := with(up, v)
			delete(m, name)
			cases = append(cases, badInput{name: at + up + " (another case)", body: set(m), status: 400, codes: invalid})
		}
	}
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		ref := schema.Properties[name]
		if ref == nil || ref.Value == nil || ref.Value.ReadOnly {
			continue
		}
		p := ref.Value
		if v := wrongValue(p); v != nil {
			cases = append(cases, badInput{name: fmt.Sprintf("%s%s of the wrong type", at, name), body: set(with(name, v)), status: 400, codes: invalid})
		}
		if p.Max != nil && permits(p, 1.0) {
			v := *p.Max + 1
			if p.Type.Includes("number") {
				v = *p.Max * 1.5
			}
			if *p.Max == 0 {
				v = 1
			}
			cases = append(cases, badInput{name: fmt.Sprintf("%s%s above its maximum", at, name), body: set(with(name, v)), status: 422, codes: validation})
			cases = append(cases, badInput{name: fmt.Sprintf("%s%s beyond float64", at, name), body: set(with(name, json.RawMessage("1e999"))), status: 400, codes: invalid})
		}
		if min := p.Min; min != nil && permits(p, 1.0) {
			cases = append(cases, badInput{name: fmt.Sprintf("%s%s below its minimum", at, name), body: set(with(name, *min-1)), status: 422, codes: validation})
		} else if x := p.ExclusiveMin.Value; x != nil && permits(p, 1.0) {
			cases = append(cases, badInput{name: fmt.Sprintf("%s%s at its exclusive minimum", at, name), body: set(with(name, *x)), status: 422, codes: validation})
		}
		if p.MaxLength != nil && permits(p, "") {
			cases = append(cases, badInput{name: fmt.Sprintf("%s%s overlong", at, name), body: set(with(name, strings.Repeat("a", int(*p.MaxLength)+1))), status: 422, codes: validation})
		}
		if len(p.Enum) > 0 && permits(p, "") {
			cases = append(cases, badInput{name: fmt.Sprintf("%s%s not one of its values", at, name), body: set(with(name, "no-such-value")), status: 422, codes: validation})
		}
		if permits(p, "") && (p.Type.IsSingle() || p.Type.IncludesNull()) {
			// Overlong strings without a documented limit still get an answer.
			cases = append(cases, badInput{name: fmt.Sprintf("%s%s of 100,000 characters", at, name), body: set(with(name, strings.Repeat("z", 100_000))), status: -1})
			cases = append(cases, badInput{name: fmt.Sprintf("%s%s not UTF-8", at, name), body: set(with(name, "@@UTF8@@")), status: 400, codes: invalid})
		}
		cases = append(cases, controlCases(at, name, p, func(v any) any { return set(with(name, v)) })...)
		if p.Items != nil && p.Items.Value != nil && permits(p, []any{}) {
			if wrong := wrongValue(p.Items.Value); wrong != nil {
				cases = append(cases, badInput{name: fmt.Sprintf("%s%s with an item of the wrong type", at, name), body: set(with(name, []any{wrong})), status: 400, codes: invalid})
			}
			// The first item of an array of objects gets the same treatment.
			if items, ok := body[name].([]any); ok && len(items) > 0 {
				if first, ok := items[0].(map[string]any); ok && len(p.Items.Value.Properties) > 0 {
					cases = append(cases, fieldCases(fmt.Sprintf("%s%s[0].", at, name), p.Items.Value, first, func(m map[string]any) any {
						return set(with(name, append([]any{m}, items[1:]...)))
					})...)
				}
			}
		}
	}
	return cases
}

// objectOrNull reports whether p is a oneOf whose branches take no string.
func objectOrNull(p *openapi3.Schema) bool {
	if (p.Type != nil && !p.Type.IsEmpty()) || len(p.OneOf) == 0 {
		return false
	}
	for _, b := range p.OneOf {
		if b.Value == nil || b.Value.Type == nil || b.Value.Type.IsEmpty() || b.Value.Type.Includes("string") {
			return false
		}
	}
	return true
}

// controlCases puts a control character into every string a field can
// hold: the field itself, the first item of an array of strings, a member
// of a free-form object and its name. Each is 422 naming where it is (a
// timestamp is no string to the decoder: 400), on every store.
func controlCases(at, name string, p *openapi3.Schema, set func(any) any) []badInput {
	validation := []string{"validation_error"}
	var cases []badInput
	switch {
	case objectOrNull(p):
		// a nullable object (oneOf of a reference and null): a string is
		// of the wrong type, a case of its own
	case permits(p, "") && p.Format == "date-time":
		cases = append(cases, badInput{name: fmt.Sprintf("%s%s with U+0000", at, name), body: set(withControl), status: 400, codes: []string{"invalid_request"}})
	case permits(p, ""):
		cases = append(cases, badInput{name: fmt.Sprintf("%s%s with U+0000", at, name), body: set(withControl), status: 422, codes: validation, field: at + name})
	}
	if p.Items != nil && p.Items.Value != nil && permits(p, []any{}) && permits(p.Items.Value, "") {
		cases = append(cases, badInput{name: fmt.Sprintf("%s%s with U+0000 in an item", at, name), body: set([]any{withControl}),
			status: 422, codes: validation, field: at + name + "[0]"})
	}
	if permits(p, map[string]any{}) && len(p.Properties) == 0 && p.OneOf == nil {
		cases = append(cases,
			badInput{name: fmt.Sprintf("%s%s with U+0000 in a member", at, name), body: set(map[string]any{"note": []any{1, withControl}}),
				status: 422, codes: validation, field: at + name + ".note[1]"},
			badInput{name: fmt.Sprintf("%s%s with U+0000 in a member name", at, name), body: set(map[string]any{"x": map[string]any{withControl: 1}}),
				status: 422, codes: validation, field: at + name + ".x"})
	}
	return cases
}

// bodyCases is the catalogue of a route that takes a body.
func bodyCases(t *testing.T, op *openapi3.Operation, valid any) []badInput {
	invalid := []string{"invalid_request"}
	cases := []badInput{
		{name: "malformed", body: `{"a":`, status: 400, codes: invalid},
		{name: "not an object", body: `[{}]`, status: 400, codes: invalid},
		{name: "a string", body: `"x"`, status: 400, codes: invalid},
		{name: "null", body: `null`, status: 400, codes: invalid},
		{name: "empty", body: ``, status: 400, codes: invalid},
		{name: "trailing data", body: string(mustJSON(t, valid)) + ` {}`, status: 400, codes: invalid},
		{name: "raw invalid UTF-8", body: "{\"" + invalidUTF8 + "\":1}", status: 400, codes: invalid},
		{name: "wrong content type", body: string(mustJSON(t, valid)), hdr: []string{"Content-Type", "text/plain"}, status: 415, codes: []string{"unsupported_media_type"}},
		{name: "form content type", body: string(mustJSON(t, valid)), hdr: []string{"Content-Type", "application/x-www-form-urlencoded"}, status: 415, codes: []string{"unsupported_media_type"}},
		{name: "9 MiB", body: `{"x":"` + strings.Repeat("a", 9<<20) + `"}`, status: 413, codes: []string{"payload_too_large"}},
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil && !op.RequestBody.Value.Required {
		cases = slices.DeleteFunc(cases, func(c badInput) bool { return c.name == "empty" }) // no body is a valid one
	}
	m, ok := valid.(map[string]any)
	if !ok {
		t.Fatalf("the routeCase body is not a JSON object")
	}
	if s := bodySchema(op); s != nil {
		cases = append(cases, fieldCases("", s, m, func(m map[string]any) any { return m })...)
	} else {
		t.Errorf("the OpenAPI document has no JSON request body for this route")
	}
	return append(cases, duplicateCases(t, m)...)
}

// twice is a JSON object whose first member (in name order) is written
// twice, the second time with the same value.
type twice map[string]any

func (m twice) MarshalJSON() ([]byte, error) {
	keys := slices.Sorted(maps.Keys(m))
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range append(keys[:1:1], keys...) {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(m[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// duplicateCases gives every object of a valid body, at any depth, a
// member twice: each is 400 invalid_request naming the member's path (a
// parser that kept the last would let {"permissions":["vehicles:read"],
// "permissions":["*"]} through a check of the first).
func duplicateCases(t *testing.T, valid map[string]any) []badInput {
	var body any
	dec := json.NewDecoder(bytes.NewReader(mustJSON(t, valid)))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		t.Fatal(err)
	}
	var cases []badInput
	var walk func(v any, path string, set func(any) any)
	walk = func(v any, path string, set func(any) any) {
		switch x := v.(type) {
		case map[string]any:
			keys := slices.Sorted(maps.Keys(x))
			if len(keys) > 0 {
				field := keys[0]
				if path != "" {
					field = path + "." + keys[0]
				}
				cases = append(cases, badInput{name: "member given twice: " + field, body: set(twice(x)), status: 400,
					codes: []string{"invalid_request"}, field: field})
			}
			for _, k := range keys {
				sub := k
				if path != "" {
					sub = path + "." + k
				}
				walk(x[k], sub, func(nv any) any { c := maps.Clone(x); c[k] = nv; return set(c) })
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s[%d]", path, i), func(nv any) any { c := slices.Clone(x); c[i] = nv; return set(c) })
			}
		}
	}
	walk(body, "", func(v any) any { return v })
	return cases
}

// queryCases is the catalogue of a route's query parameters.
func queryCases(op *openapi3.Operation) []badInput {
	invalid := []string{"invalid_request"}
	// A parameter the route does not take, and one misspelt, are refused
	// like unknown body fields.
	cases := []badInput{
		{name: "?unknown=1", path: "unknown=1", status: 400, codes: invalid},
		{name: "?LIMIT=5", path: "LIMIT=5", status: 400, codes: invalid},
	}
	for _, ref := range op.Parameters {
		p := ref.Value
		if p == nil || p.In != "query" || p.Schema == nil || p.Schema.Value == nil {
			continue
		}
		s := p.Schema.Value
		var bad []string
		switch {
		case p.Name == "cursor":
			bad = []string{"garbage", "c1:!!!", "c1:" + strings.Repeat("A", 400), "%ff"}
		case s.Type.Includes("integer") || s.Type.Includes("number"):
			bad = []string{"abc", "1.5e", ""}
			if s.Type.Includes("integer") {
				bad = append(bad, "2.5")
			}
			if s.Min != nil {
				bad = append(bad, fmt.Sprint(*s.Min-1))
			}
			if s.Max != nil {
				bad = append(bad, fmt.Sprint(*s.Max+1))
			}
			bad = slices.DeleteFunc(bad, func(v string) bool { return v == "" })
		case s.Format == "date-time":
			bad = []string{"yesterday", "2026-11-22", "2026-13-45T00:00:00Z"}
		case s.Format == "date":
			bad = []string{"2026-13-45", "soon"}
		case len(s.Enum) > 0:
			bad = []string{"no-such-value"}
		}
		for _, v := range bad {
			cases = append(cases, badInput{name: fmt.Sprintf("?%s=%s", p.Name, v), path: p.Name + "=" + url.QueryEscape(v), status: 400, codes: invalid})
		}
		// Whatever the parameter, a control character is refused by name
		// before anything reaches a store.
		cases = append(cases, badInput{name: fmt.Sprintf("?%s with U+0000", p.Name), path: p.Name + "=" + url.QueryEscape(withControl),
			status: 400, codes: invalid, field: p.Name})
		// A parameter that takes one value, given twice, is refused by
		// name (neither value is taken); a repeatable one is an array.
		if !s.Type.Includes("array") {
			v := url.QueryEscape(oneValue(s))
			cases = append(cases, badInput{name: fmt.Sprintf("?%s given twice", p.Name), path: p.Name + "=" + v + "&" + p.Name + "=" + v,
				status: 400, codes: invalid, field: p.Name})
		}
	}
	return cases
}

// oneValue is a value a parameter takes on its own.
func oneValue(s *openapi3.Schema) string {
	switch {
	case len(s.Enum) > 0:
		return fmt.Sprint(s.Enum[0])
	case s.Default != nil:
		return fmt.Sprint(s.Default)
	case s.Format == "date-time":
		return T0.Format(time.RFC3339)
	case s.Format == "date":
		return T0.Format(time.DateOnly)
	case s.Min != nil:
		return fmt.Sprint(*s.Min)
	}
	return "x"
}

var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// idCases replaces each id of a route's path with ids that name nothing.
func idCases(pattern string, tn *tenant, spare bool) []badInput {
	var cases []badInput
	for _, param := range pathParam.FindAllString(pattern, -1) {
		prefix := strings.TrimSuffix(strings.Trim(param, "{}"), "_id")
		for _, bad := range []string{"nope", prefix + "_" + strings.Repeat("0", 300), "%00", "x%2Fy", "..", url.PathEscape(invalidUTF8), "%20"} {
			p := strings.Replace(pattern, param, bad, 1)
			cases = append(cases, badInput{name: param + "=" + bad, path: fill(p, tn, spare), status: 404, codes: []string{"not_found"}})
		}
	}
	return cases
}

func mustJSON(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// encode turns a case's body into what goes on the wire: a raw 1e999 stays
// raw, and the UTF-8 marker becomes invalid bytes.
func encode(t *testing.T, body any) any {
	if body == nil {
		return nil
	}
	if s, ok := body.(string); ok {
		return s
	}
	b := []byte(mustJSON(t, body))
	return bytes.ReplaceAll(b, []byte("@@UTF8@@"), []byte(invalidUTF8))
}

// accountState is everything the tenant's key can read, bar the usage
// counters that every request moves.
func (e *env) accountState(tn *tenant) string {
	e.t.Helper()
	var b strings.Builder
	for _, rt := range routeList(e.t, e) {
		if rt.Method != "GET" || strings.HasSuffix(rt.Pattern, "/stream") || strings.HasSuffix(rt.Pattern, "/usage") {
			continue
		}
		path := fill(rt.Pattern, tn, false)
		if takesLimit(rt) {
			path += "?limit=500"
		}
		r := e.do("GET", path, tn.key, nil)
		fmt.Fprintf(&b, "%s %d ", path, r.status)
		b.Write(lastUsed.ReplaceAll(r.body, nil))
		b.WriteByte('\n')
	}
	return b.String()
}

// takesLimit reports whether the document gives a route a limit parameter.
func takesLimit(rt fleethttp.RouteInfo) bool {
	op := docData.Paths.Find(strings.TrimPrefix(rt.Pattern, "/v1")).GetOperation(rt.Method)
	return op.Parameters.GetByInAndName("query", "limit") != nil
}

var lastUsed = regexp.MustCompile(`"last_used_at":("[^"]*"|null)`)

// namesField reports whether one of an error's details names field.
func namesField(r *response, field string) bool {
	details, _ := r.json()["error"].(map[string]any)["details"].([]any)
	for _, d := range details {
		if d.(map[string]any)["field"] == field {
			return true
		}
	}
	return false
}

// TestBadInputCatalogue runs the catalogue on every store: what one
// database refuses and another stores (U+0000, say) must get the same
// contract error on all of them, never a 500.
func TestBadInputCatalogue(t *testing.T) {
	onEachStore(t, testBadInputCatalogue)
}

func testBadInputCatalogue(t *testing.T, e *env) {
	tn := e.tenant()
	now := e.clock.Now()
	before := e.accountState(tn)
	total := 0
	for _, rt := range routeList(t, e) {
		if strings.HasSuffix(rt.Pattern, "/stream") {
			continue // its query is checked in its own tests; it answers with a stream
		}
		c := routeCases[rt.Method+" "+rt.Pattern]
		op := operation(t, rt.Method, rt.Pattern)
		var cases []badInput
		if c.body != nil {
			cases = append(cases, bodyCases(t, op, c.body(tn, now))...)
		}
		cases = append(cases, queryCases(op)...)
		cases = append(cases, idCases(rt.Pattern, tn, c.spare)...)
		if len(cases) == 0 {
			continue
		}
		t.Run(rt.Method+" "+rt.Pattern, func(t *testing.T) {
			t.Logf("%d cases", len(cases))
			for _, bc := range cases {
				total++
				path := fill(rt.Pattern, tn, c.spare)
				switch {
				case strings.HasPrefix(bc.path, "/"):
					path = bc.path
				case bc.path != "":
					path += "?" + bc.path
				}
				var body any
				if rt.Method != "GET" && rt.Method != "DELETE" {
					body = bc.body
					if body == nil && c.body != nil {
						body = c.body(tn, now)
					}
				}
				r := e.do(rt.Method, path, tn.key, encode(t, body), bc.hdr...)
				if r.status >= 500 {
					t.Errorf("%s: %d %s", bc.name, r.status, r.body)
					continue
				}
				if bc.status == -1 { // any client error
					if r.status < 400 {
						t.Errorf("%s: accepted with %d", bc.name, r.status)
					}
					continue
				}
				if r.status != bc.status || !slices.Contains(bc.codes, r.errCode()) {
					t.Errorf("%s: got %d %s, want %d %v", bc.name, r.status, r.body, bc.status, bc.codes)
					continue
				}
				if bc.field != "" && !namesField(r, bc.field) {
					t.Errorf("%s: the error does not name %s: %s", bc.name, bc.field, r.body)
				}
				if msg := r.errMessage(); strings.Contains(msg, "json:") || strings.Contains(msg, "strconv") || strings.Contains(msg, ".go") {
					t.Errorf("%s: the message shows internals: %q", bc.name, msg)
				}
			}
		})
	}
	is := is.New(t)
	is.True(total > 300)                 // the catalogue is not empty by accident
	is.Equal(e.accountState(tn), before) // nothing changed
}
