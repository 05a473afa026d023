package fleethttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/matryer/is"
)

// loadDoc loads the served document as the tests read it.
func loadDoc(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(fleethttp.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// Every request body and every success response of every operation (and
// what each webhook receives) has an example, and each example is valid
// against its schema; so is the example of each component schema that has
// one. The examples are the Go values of exampleValues, encoded as the
// server encodes its answers.
func TestOpenAPIExamples(t *testing.T) {
	doc := loadDoc(t)
	check := func(at string, schema *openapi3.SchemaRef, example any) {
		t.Helper()
		if example == nil {
			t.Errorf("%s has no example", at)
			return
		}
		if err := schema.Value.VisitJSON(example, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s: the example does not match its schema: %v", at, err)
		}
	}
	ops, bodies, successes := 0, 0, 0
	operations := func(prefix string, items map[string]*openapi3.PathItem) {
		for path, item := range items {
			for method, op := range item.Operations() {
				ops++
				at := prefix + method + " " + path
				if rb := op.RequestBody; rb != nil {
					bodies++
					for mt, c := range rb.Value.Content {
						check(at+" request "+mt, c.Schema, c.Example)
					}
				}
				for status, r := range op.Responses.Map() {
					if !strings.HasPrefix(status, "2") || r.Value == nil {
						continue
					}
					successes++
					for mt, c := range r.Value.Content {
						if mt == "text/csv" {
							continue // the CSV form of a JSON answer: the JSON one has the example
						}
						check(at+" "+status+" "+mt, c.Schema, c.Example)
					}
				}
			}
		}
	}
	operations("", doc.Paths.Map())
	operations("webhook ", doc.Webhooks)
	if ops < 60 || bodies < 20 || successes < 55 {
		t.Fatalf("only %d operations, %d bodies and %d success responses were checked", ops, bodies, successes)
	}
	withExamples := 0
	for name, s := range doc.Components.Schemas {
		for _, ex := range s.Value.Examples {
			withExamples++
			check("components.schemas."+name, s, ex)
		}
	}
	for _, name := range []string{"Account", "Vehicle", "VehicleInput", "LocationRecord", "WorkOrder", "Schedule", "Alert", "AlertRule",
		"Geofence", "Event", "Webhook", "Delivery", "Trip", "Device"} {
		if len(doc.Components.Schemas[name].Value.Examples) == 0 {
			t.Errorf("the schema %s has no example", name)
		}
	}
	t.Logf("%d operations, %d request bodies, %d success responses, %d schema examples", ops, bodies, successes, withExamples)
}

// The request examples of the document work: sent in the order of the
// route table to a server whose clock is at the examples' time, each is
// answered with its operation's success status. The ids an example names
// are those of what the examples before it created (the example ids are
// replaced with the real ones), and the webhook endpoint is a server on
// loopback.
func TestOpenAPIExampleRequestsAreAccepted(t *testing.T) {
	e := newEnv(t)
	e.clock.Set(fleethttp.ExampleTime)
	a, key := e.account(fleet.PlanPro)
	// The person the notification examples address by e-mail.
	if _, _, err := e.svc.Operator().CreateUser(context.Background(), a.ID, fleet.UserParams{Email: "ana.lima@example.com", Name: "Ana Lima", Role: fleet.RoleAdmin}, ""); err != nil {
		t.Fatal(err)
	}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(receiver.Close)

	doc := loadDoc(t)
	exampleIDs := map[string]bool{}
	for _, id := range fleethttp.ExampleIDs {
		exampleIDs[id] = true
	}
	real := map[string]string{fleethttp.ExampleWebhookURL: receiver.URL + "/hooks"} // example id -> id the server gave
	// learn maps the ids of an operation's example answer to those of the
	// server's answer, member by member.
	var learn func(ex, got any)
	learn = func(ex, got any) {
		switch ex := ex.(type) {
		case map[string]any:
			g, _ := got.(map[string]any)
			for k, v := range ex {
				learn(v, g[k])
			}
		case []any:
			g, _ := got.([]any)
			for i, v := range ex {
				if i < len(g) {
					learn(v, g[i])
				}
			}
		case string:
			if g, ok := got.(string); ok && exampleIDs[ex] && real[ex] == "" {
				real[ex] = g
			}
		}
	}
	sent := 0
	for _, rt := range e.h.Routes() {
		if rt.Method != http.MethodPost && rt.Method != http.MethodPatch {
			continue
		}
		path := strings.TrimPrefix(rt.Pattern, "/v1")
		op := doc.Paths.Find(path).GetOperation(rt.Method)
		if op == nil || op.RequestBody == nil {
			t.Fatalf("%s %s: no operation with a body in the document", rt.Method, path)
		}
		t.Run(op.OperationID, func(t *testing.T) {
			is := is.New(t)
			body, err := json.Marshal(op.RequestBody.Value.Content.Get("application/json").Example)
			is.NoErr(err)
			text := string(body)
			for ex, id := range real {
				text = strings.ReplaceAll(text, ex, id)
			}
			url := rt.Pattern
			for name, ex := range fleethttp.ExampleIDs {
				if strings.Contains(url, "{"+name+"}") {
					id, ok := real[ex]
					if !ok {
						t.Fatalf("no %s made by an earlier example for %s", name, rt.Pattern)
					}
					url = strings.ReplaceAll(url, "{"+name+"}", id)
				}
			}
			for name := range fleethttp.ExampleIDs {
				is.True(!strings.Contains(url, "{"+name+"}")) // every path parameter has its id
			}
			r := e.do(rt.Method, url, key, text)
			var want string
			for status := range op.Responses.Map() {
				if strings.HasPrefix(status, "2") {
					want = status
				}
			}
			if fmt.Sprint(r.status) != want {
				t.Fatalf("%s %s with the example %s: %d, want %s: %s", rt.Method, url, text, r.status, want, r.body)
			}
			var got map[string]any
			is.NoErr(json.Unmarshal(r.body, &got))
			exAnswer, _ := op.Responses.Value(want).Value.Content.Get("application/json").Example.(map[string]any)
			learn(exAnswer["data"], got["data"])
			sent++
		})
	}
	if sent < 20 {
		t.Fatalf("only %d request examples were sent", sent)
	}
	// The examples' vehicle is the one they made, and it now has the
	// examples' locations.
	is := is.New(t)
	veh := e.do("GET", "/v1/vehicles/"+real[fleethttp.ExampleIDs["vehicle_id"]], key, nil)
	is.Equal(veh.status, http.StatusOK)
	is.True(veh.data()["last_location"] != nil)
	is.True(slices.Contains([]string{"moving", "idle", "stopped"}, veh.data()["status"].(string)))
}
