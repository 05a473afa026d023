package fleethttp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/matryer/is"
)

// The document the handler serves is the one the generator makes from the
// code: `go generate ./...` was run after the last change.
func TestOpenAPIDocumentIsGenerated(t *testing.T) {
	is := is.New(t)
	doc, err := fleethttp.GenerateOpenAPI()
	is.NoErr(err)
	if !bytes.Equal(doc, fleethttp.OpenAPI) {
		t.Fatal("fleethttp/openapi.json is not what the generator makes: run `go generate ./...` and commit the result")
	}
}

// Every route of the table has its operation in the document, with the
// permission the route needs, and the document has no other operations.
func TestOpenAPIDocumentCoversTheRouteTable(t *testing.T) {
	is := is.New(t)
	e := newEnv(t) // loads the document too
	ops := map[string]*openapi3.Operation{}
	for path, item := range docData.Paths.Map() {
		for method, op := range item.Operations() {
			ops[method+" "+path] = op
		}
	}
	for _, rt := range e.h.Routes() {
		key := rt.Method + " " + strings.TrimPrefix(rt.Pattern, "/v1")
		op, ok := ops[key]
		if !ok {
			t.Errorf("%s is not in the document", key)
			continue
		}
		delete(ops, key)
		if rt.Permission != "" {
			is.True(strings.Contains(op.Description, "Permission: `"+rt.Permission+"`.")) // the permission is documented
		}
	}
	for key := range ops {
		switch key {
		case "GET /openapi.json", "GET /healthz", "GET /readyz":
		default:
			t.Errorf("%s is documented but no route serves it", key)
		}
	}
}

// Hand-written responses, as the contract (API.md) shows them, match the
// document, and the server answers in the same shape: the generated
// document is checked against something it was not generated from.
func TestGoldenResponses(t *testing.T) {
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.do("POST", "/v1/vehicles", key, map[string]any{"name": "Truck 7", "vin": "1HGBH41JXMN109186", "make": "Volvo",
		"model": "FH16", "year": 2024, "external_id": "erp-7", "tags": []string{"north"}, "odometer_km": 9600})
	vid := veh.data()["vehicle_id"].(string)
	now := e.clock.Now()
	e.do("POST", "/v1/vehicles/"+vid+"/locations", key, map[string]any{"locations": []any{
		map[string]any{"latitude": 52.521, "longitude": 13.409, "timestamp": now.Add(-time.Minute), "speed": 44, "heading": 92}}})
	wo := e.do("POST", "/v1/maintenance/work_orders", key, map[string]any{"vehicle_id": vid, "title": "Brakes"}).data()
	e.do("PATCH", "/v1/maintenance/work_orders/"+wo["work_order_id"].(string), key, map[string]any{"status": "completed"})

	real := map[string]*response{
		"getAccount.200": e.do("GET", "/v1/account", key, nil),
		"createApiKey.201": e.do("POST", "/v1/api_keys", key, map[string]any{"name": "Gateway A",
			"permissions": []string{"locations:write"}, "expires_at": now.Add(90 * 24 * time.Hour)}),
		"createVehicle.201": veh,
		"listLocations.200": e.do("GET", "/v1/vehicles/locations", key, nil),
		"ingestLocations.422": e.do("POST", "/v1/vehicles/"+vid+"/locations", key, map[string]any{"locations": []any{
			map[string]any{"latitude": 52.5, "longitude": 13.4, "timestamp": now},
			map[string]any{"latitude": 91, "longitude": 13.4, "timestamp": now}}}),
		"updateWorkOrder.409": e.do("PATCH", "/v1/maintenance/work_orders/"+wo["work_order_id"].(string), key, map[string]any{"status": "open"}),
	}
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil || len(files) != len(real) {
		t.Fatalf("golden files %v (%v): want one per case", files, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			b, err := os.ReadFile(f)
			is.NoErr(err)
			var golden any
			is.NoErr(json.Unmarshal(b, &golden))
			opID, status, _ := strings.Cut(name, ".")
			schema := responseSchema(t, opID, status)
			if err := schema.VisitJSON(golden, openapi3.EnableJSONSchema2020()); err != nil {
				t.Fatalf("the hand-written %s does not match the document: %v", name, err)
			}
			r, ok := real[name]
			is.True(ok) // a request for each golden response
			is.Equal(fmt.Sprint(r.status), status)
			var got any
			is.NoErr(json.Unmarshal(r.body, &got))
			is.Equal(shape(got), shape(golden)) // the server answers in the contract's shape
		})
	}
}

// responseSchema finds the schema of an operation's response.
func responseSchema(t *testing.T, opID, status string) *openapi3.Schema {
	t.Helper()
	for _, item := range docData.Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID != opID {
				continue
			}
			r := op.Responses.Value(status)
			if r == nil || r.Value == nil {
				t.Fatalf("%s has no %s response", opID, status)
			}
			return r.Value.Content.Get("application/json").Schema.Value
		}
	}
	t.Fatalf("no operation %s", opID)
	return nil
}

// shape describes a JSON value by its member names and value kinds, not
// its values.
func shape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + shape(x[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		return "[" + shape(x[0]) + "]"
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return fmt.Sprintf("%T", v)
}

// The HTTP adapter judges no values: every rule on input is the service's
// (fleet), so a program calling the service gets the same rules. The
// adapter refuses only what is not well-formed HTTP and JSON (400, 413,
// 415); a validation_error (422) always comes from package fleet.
func TestAdapterJudgesNoValues(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "fleet.Validator") || (strings.Contains(line, "fleet.CodeValidation") &&
				!strings.Contains(line, "http.StatusUnprocessableEntity") && !strings.Contains(line, "codeValidation =") &&
				!strings.Contains(line, `"ValidationError"`) && !strings.HasPrefix(strings.TrimSpace(line), "//")) {
				t.Errorf("%s:%d makes a validation error of its own: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// Every number schema names its format (double), so that generated
// clients do not make coordinates float32 and lose up to half a metre.
func TestOpenAPINumbersNameTheirFormat(t *testing.T) {
	var doc any
	if err := json.Unmarshal(fleethttp.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			number := v["type"] == "number"
			if types, ok := v["type"].([]any); ok {
				number = slices.Contains(types, any("number"))
			}
			if number && v["format"] != "double" {
				t.Errorf("%s: a number without format double", at)
			}
			for k, m := range v {
				walk(m, at+"/"+k)
			}
		case []any:
			for i, m := range v {
				walk(m, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "#")
}

// Rules the server enforces are in the schemas too, so that validators
// generated from the document refuse what the server refuses: `*` alone
// in a webhook's events, currency with cost_cents.
func TestOpenAPISchemasCarryTheRules(t *testing.T) {
	is := is.New(t)
	doc, err := openapi3.NewLoader().LoadFromData(fleethttp.OpenAPI)
	is.NoErr(err)
	events := doc.Components.Schemas["WebhookInput"].Value.Properties["events"].Value
	for _, c := range []struct {
		events []any
		ok     bool
	}{
		{[]any{"*"}, true},
		{[]any{"vehicle.created", "alert.created"}, true},
		{[]any{"*", "vehicle.created"}, false},
		{[]any{"*", "*"}, false},
		{[]any{}, false},
		{[]any{"vehicle.created", "vehicle.created"}, false},
	} {
		err := events.VisitJSON(c.events, openapi3.EnableJSONSchema2020())
		is.Equal(err == nil, c.ok) // events
	}
	var raw map[string]any
	is.NoErr(json.Unmarshal(fleethttp.OpenAPI, &raw))
	wo := raw["components"].(map[string]any)["schemas"].(map[string]any)["WorkOrderInput"].(map[string]any)
	is.Equal(wo["dependentRequired"], map[string]any{"cost_cents": []any{"currency"}})
}

// The document is shaped for the generators client developers use
// (oapi-codegen, openapi-typescript; CI generates and compiles both, see
// CONTRIBUTING.md): an array says what it holds; an object says what it
// holds (properties, or additionalProperties when it is free-form); a
// const says its type (a bare const is typed as anything); each branch of a
// union is a reference or has a title (generators name branches by them);
// a request body has one media type (a generator makes a method per media
// type, named after it); and a nullable member of a merge patch says how
// Go sends its null.
func TestOpenAPIShapesForGenerators(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(fleethttp.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	has := func(m map[string]any, keys ...string) bool {
		for _, k := range keys {
			if _, ok := m[k]; ok {
				return true
			}
		}
		return false
	}
	isType := func(m map[string]any, want string) bool {
		switch ty := m["type"].(type) {
		case string:
			return ty == want
		case []any:
			return slices.Contains(ty, any(want))
		}
		return false
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if isType(v, "array") && !has(v, "items") {
				t.Errorf("%s: an array without items", at)
			}
			if isType(v, "object") && !has(v, "properties", "additionalProperties", "oneOf", "anyOf", "allOf") {
				t.Errorf("%s: an object that says nothing of what it holds", at)
			}
			if has(v, "const") && !has(v, "type") {
				t.Errorf("%s: a const without its type", at)
			}
			for _, union := range []string{"oneOf", "anyOf"} {
				branches, _ := v[union].([]any)
				for i, b := range branches {
					b, _ := b.(map[string]any)
					if !has(b, "$ref", "title") && b["type"] != "null" {
						t.Errorf("%s/%s/%d: a branch that is neither a reference nor titled", at, union, i)
					}
				}
			}
			if rb, ok := v["requestBody"].(map[string]any); ok {
				if content, _ := rb["content"].(map[string]any); len(content) != 1 {
					t.Errorf("%s: a request body with %d media types", at, len(content))
				}
			}
			for k, m := range v {
				if k == "example" || k == "examples" {
					continue // data, not schemas
				}
				walk(m, at+"/"+k)
			}
		case []any:
			for i, m := range v {
				walk(m, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "#")
	// Every nullable member of a merge patch tells Go generators to send
	// its null (nullable.Nullable), not to leave it out.
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	patches := 0
	for name, s := range schemas {
		if !strings.HasSuffix(name, "Patch") {
			continue
		}
		patches++
		for member, p := range s.(map[string]any)["properties"].(map[string]any) {
			p := p.(map[string]any)
			nullable := false
			if ts, ok := p["type"].([]any); ok {
				nullable = slices.Contains(ts, any("null"))
			}
			if branches, ok := p["oneOf"].([]any); ok { // a nullable reference: oneOf [{$ref}, {type: null}]
				for _, b := range branches {
					if b, ok := b.(map[string]any); ok && b["type"] == "null" {
						nullable = true
					}
				}
			}
			if goType, _ := p["x-go-type"].(string); nullable != strings.HasPrefix(goType, "nullable.Nullable[") {
				t.Errorf("%s.%s: nullable %v, x-go-type %q", name, member, nullable, goType)
			}
		}
	}
	if patches < 7 {
		t.Errorf("%d patch schemas, want at least 7", patches)
	}
}
