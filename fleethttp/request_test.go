package fleethttp_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func TestBadRequestBodies(t *testing.T) {
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	cases := []struct {
		name   string
		body   any
		hdr    []string
		status int
		code   string
	}{
		{"malformed", `{"name":`, nil, 400, "invalid_request"},
		{"not an object", `["a"]`, nil, 400, "invalid_request"},
		{"null", `null`, nil, 400, "invalid_request"},
		{"trailing data", `{"name":"a"} {}`, nil, 400, "invalid_request"},
		{"unknown field", `{"name":"a","colour":"red"}`, nil, 400, "invalid_request"},
		{"read-only field", `{"name":"a","account_id":"acc_x"}`, nil, 400, "invalid_request"},
		{"status is read-only", `{"name":"a","status":"revoked"}`, nil, 400, "invalid_request"},
		{"wrong type", `{"name":42}`, nil, 400, "invalid_request"},
		{"bad timestamp", `{"name":"a","expires_at":"tomorrow"}`, nil, 400, "invalid_request"},
		{"invalid utf-8", "{\"name\":\"\xff\xfe\"}", nil, 400, "invalid_request"},
		{"empty", "", nil, 400, "invalid_request"},
		{"wrong content type", `{"name":"a"}`, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
		{"too large", `{"name":"` + strings.Repeat("a", 1<<20) + `"}`, nil, 413, "payload_too_large"},
		{"overlong name", `{"name":"` + strings.Repeat("a", 101) + `"}`, nil, 422, "validation_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := e.do("POST", "/v1/api_keys", admin, tc.body, tc.hdr...)
			is.Equal(r.status, tc.status)
			is.Equal(r.errCode(), tc.code)
			is.True(!strings.Contains(r.errMessage(), "json:")) // no internals
		})
	}
	is.New(t).Equal(len(e.do("GET", "/v1/api_keys", admin, nil).list()), 1) // nothing was created
}

func TestUnknownFieldNamed(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	r := e.do("POST", "/v1/api_keys", admin, `{"name":"a","colour":"red"}`)
	is.True(strings.Contains(r.errMessage(), "colour"))
	r = e.do("POST", "/v1/api_keys", admin, `{"name":["a"]}`)
	is.Equal(r.json()["error"].(map[string]any)["details"].([]any)[0].(map[string]any)["field"], "name")
}

func TestIdempotencyKey(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	body := map[string]any{"name": "once"}
	first := e.do("POST", "/v1/api_keys", admin, body, "Idempotency-Key", "create-once-1")
	is.Equal(first.status, http.StatusCreated)
	is.Equal(first.header.Get("Idempotent-Replayed"), "")

	again := e.do("POST", "/v1/api_keys", admin, body, "Idempotency-Key", "create-once-1")
	is.Equal(again.status, http.StatusCreated)
	is.Equal(again.header.Get("Idempotent-Replayed"), "true")
	is.Equal(string(again.body), string(first.body))                 // the first response, secret included
	is.Equal(len(e.do("GET", "/v1/api_keys", admin, nil).list()), 2) // created once

	other := e.do("POST", "/v1/api_keys", admin, map[string]any{"name": "twice"}, "Idempotency-Key", "create-once-1")
	is.Equal(other.status, http.StatusConflict)
	is.Equal(other.errCode(), "conflict")

	failed := e.do("POST", "/v1/api_keys", admin, map[string]any{"name": ""}, "Idempotency-Key", "bad-1")
	is.Equal(failed.status, http.StatusUnprocessableEntity)
	replay := e.do("POST", "/v1/api_keys", admin, map[string]any{"name": ""}, "Idempotency-Key", "bad-1")
	is.Equal(replay.header.Get("Idempotent-Replayed"), "true") // client errors are replayed too

	long := e.do("POST", "/v1/api_keys", admin, body, "Idempotency-Key", strings.Repeat("k", 256))
	is.Equal(long.status, http.StatusBadRequest)

	// Another API key of the same account has its own idempotency keys.
	second := e.keyWith(admin, "keys:write")
	r := e.do("POST", "/v1/api_keys", second, body, "Idempotency-Key", "create-once-1")
	is.Equal(r.header.Get("Idempotent-Replayed"), "")
}

func TestResponsesAreNotSniffedOrCached(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	for _, r := range []*response{
		e.do("GET", "/v1/account", key, nil),
		e.do("GET", "/v1/vehicles/veh_nope", key, nil),
		e.do("GET", "/v1/account", "", nil),
	} {
		is.Equal(r.header.Get("X-Content-Type-Options"), "nosniff")
		is.Equal(r.header.Get("Cache-Control"), "no-store")
	}
	doc := e.do("GET", "/v1/openapi.json", "", nil)
	is.Equal(doc.header.Get("Cache-Control"), "public, max-age=300") // the document may be cached
}

// A PATCH may name its body a JSON merge patch (RFC 7396), as the document
// offers; other methods take application/json only.
func TestMergePatchMediaType(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	v := e.do("POST", "/v1/vehicles", key, map[string]any{"name": "Truck 1", "make": "Volvo"}).data()
	path := "/v1/vehicles/" + v["vehicle_id"].(string)

	r := e.do("PATCH", path, key, `{"make":null,"tags":["north"]}`, "Content-Type", "application/merge-patch+json")
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["make"], nil)            // null cleared it
	is.Equal(r.data()["tags"], []any{"north"}) // the rest applied
	r = e.do("PATCH", path, key, `{"name":"Truck 2"}`, "Content-Type", "application/merge-patch+json; charset=utf-8")
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["name"], "Truck 2")

	r = e.do("PATCH", path, key, `{"name":"Truck 3"}`, "Content-Type", "application/json-patch+json")
	is.Equal(r.status, http.StatusUnsupportedMediaType) // JSON Patch (RFC 6902) is another format
	r = e.do("POST", "/v1/vehicles", key, `{"name":"Truck 4"}`, "Content-Type", "application/merge-patch+json")
	is.Equal(r.status, http.StatusUnsupportedMediaType)
	is.Equal(e.do("GET", path, key, nil).data()["name"], "Truck 2") // refused patches changed nothing
}

// A value of the wrong JSON type is named by its whole path, batch index
// included, not called "not valid JSON".
func TestWrongTypesAreNamed(t *testing.T) {
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	v := e.do("POST", "/v1/vehicles", key, map[string]any{"name": "Truck"}).data()["vehicle_id"].(string)
	ts := e.clock.Now().Format(time.RFC3339)
	cases := []struct {
		method, path, body, field, want string
	}{
		{"POST", "/v1/api_keys", `{"name":"a","expires_at":123}`, "expires_at", "RFC 3339"},
		{"POST", "/v1/api_keys", `{"name":"a","expires_at":"tomorrow"}`, "expires_at", "RFC 3339"},
		{"POST", "/v1/vehicles/" + v + "/locations", `{"locations":[{"latitude":1,"longitude":2,"timestamp":"` + ts + `"},{"latitude":1,"longitude":2,"timestamp":1795428000}]}`, "locations[1].timestamp", "RFC 3339"},
		{"POST", "/v1/vehicles/locations", `{"locations":[{"vehicle_id":"` + v + `","latitude":"52.5","longitude":2,"timestamp":"` + ts + `"}]}`, "locations[0].latitude", "a number"},
		{"POST", "/v1/vehicles", `{"name":"a","tags":["north",7]}`, "tags[1]", "a string"},
		{"POST", "/v1/vehicles", `{"name":"a","year":2024.5}`, "year", "a whole number"},
		{"PATCH", "/v1/vehicles/" + v, `{"year":"2024"}`, "year", "a whole number"},
		{"POST", "/v1/alerts/rules", `{"type":"speeding","threshold_kmh":"fast"}`, "threshold_kmh", "a number"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.field, func(t *testing.T) {
			is := is.New(t)
			r := e.do(c.method, c.path, key, c.body)
			is.Equal(r.status, http.StatusBadRequest)
			is.Equal(r.errCode(), "invalid_request")
			d := r.json()["error"].(map[string]any)["details"].([]any)[0].(map[string]any)
			is.Equal(d["field"], c.field)
			is.True(strings.Contains(r.errMessage(), c.field))
			is.True(strings.Contains(d["message"].(string), c.want))
		})
	}
	is.New(t).Equal(len(e.do("GET", "/v1/vehicles/"+v+"/locations", key, nil).list()), 0) // nothing stored
}

// Messages go out as written: JSON without HTML escaping.
func TestMessagesAreNotHTMLEscaped(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.do("GET", "/v1/account", "", nil)
	is.True(strings.Contains(string(r.body), "Bearer <API_KEY>"))
	is.True(!strings.Contains(string(r.body), `\u003c`))
}

// Queries are as strict as bodies: a parameter the endpoint does not take
// is a 400 naming it (a typo must not return the whole list).
func TestUnknownQueryParameters(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	r := e.do("GET", "/v1/vehicles?tags=reefer", key, nil)
	is.Equal(r.status, http.StatusBadRequest)
	is.True(strings.Contains(r.errMessage(), `"tags"`))
	is.True(strings.Contains(r.errMessage(), "tag")) // says what it takes
	is.Equal(r.json()["error"].(map[string]any)["details"].([]any)[0].(map[string]any)["field"], "tags")
	r = e.do("GET", "/v1/account?foo=1", key, nil)
	is.Equal(r.status, http.StatusBadRequest)
	is.True(strings.Contains(r.errMessage(), "no query parameters"))
	is.Equal(e.do("GET", "/v1/vehicles?tag=reefer&limit=5", key, nil).status, http.StatusOK)
}
