package fleethttp_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestControlCharacters: single-line text refuses every C0 control and DEL,
// multi-line text (work order and webhook descriptions, alert messages,
// the strings of a custom alert's data) allows tab, line feed and carriage
// return and refuses the rest; each refusal is 422 naming the field and
// changes nothing, on every store. The bad-input catalogue puts U+0000 into
// every field of every route; this test covers the kinds of control
// character and what multi-line text accepts.
func TestControlCharacters(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		is := is.New(t)
		_, key := e.account(fleet.PlanPro)
		veh := e.vehicle(key, "Truck")
		refused := func(method, path string, body any, field string) {
			t.Helper()
			r := e.do(method, path, key, body)
			is.Equal(r.status, http.StatusUnprocessableEntity)
			is.Equal(r.errCode(), "validation_error")
			is.True(namesField(r, field))
		}
		for _, c := range []string{"\x00", "\x01", "\x1b", "\x1f", "\x7f", "\t", "\n", "\r"} {
			refused("POST", "/v1/vehicles", map[string]any{"name": "a" + c + "b"}, "name")
			refused("POST", "/v1/vehicles", map[string]any{"name": "x", "tags": []string{"ok", "a" + c}}, "tags[1]")
			refused("PATCH", "/v1/vehicles/"+veh, map[string]any{"license_plate": c}, "license_plate")
			refused("POST", "/v1/geofences", map[string]any{"name": c, "geometry": map[string]any{"type": "Point", "coordinates": []float64{13.4, 52.5}}, "radius_m": 200}, "name")
			refused("POST", "/v1/api_keys", map[string]any{"name": "k", "environment": "prod" + c}, "environment")
		}
		for _, c := range []string{"\x00", "\x07", "\x1f", "\x7f"} {
			refused("POST", "/v1/maintenance/work_orders", map[string]any{"vehicle_id": veh, "title": "Tyres", "description": "a" + c}, "description")
			refused("POST", "/v1/webhooks", map[string]any{"url": "http://127.0.0.1:9/x", "description": c}, "description")
			refused("POST", "/v1/alerts", map[string]any{"message": "Flat" + c}, "message")
			refused("POST", "/v1/alerts", map[string]any{"message": "Flat", "data": map[string]any{"n": map[string]any{"m": []any{1, "x" + c}}}}, "data.n.m[1]")
		}
		// A duplicate member, where a control character could hide, is
		// refused before anything else.
		r := e.do("POST", "/v1/alerts", key, `{"message":"Flat","data":{"a":"ok","a":"x\u0000"}}`)
		is.Equal(r.status, http.StatusBadRequest)
		is.True(namesField(r, "data.a"))
		refused("POST", "/v1/alerts", `{"message":"Flat","data":{"ok\u0000":1}}`, "data")
		is.Equal(len(e.do("GET", "/v1/alerts", key, nil).list()), 0) // nothing was created

		// Multi-line text keeps its tabs and line breaks.
		text := "Left front:\tworn\r\nRight front:\tok"
		w := e.created("/v1/maintenance/work_orders", key, map[string]any{"vehicle_id": veh, "title": "Tyres", "description": text})
		is.Equal(w["description"], text)
		a := e.created("/v1/alerts", key, map[string]any{"message": text, "data": map[string]any{"note": text}})
		is.Equal(a["message"], text)
		is.Equal(a["data"], map[string]any{"note": text})
		wh := e.created("/v1/webhooks", key, map[string]any{"url": "http://127.0.0.1:9/x", "description": text})
		is.Equal(wh["description"], text)
		is.Equal(e.do("PATCH", "/v1/webhooks/"+wh["webhook_id"].(string), key, map[string]any{"description": text + "\x00"}).status, http.StatusUnprocessableEntity)

		// Query parameters: 400 naming the parameter.
		for _, path := range []string{"/v1/vehicles?q=a%00", "/v1/vehicles?tag=%1b", "/v1/vehicles/locations?vehicle_id=veh_%00",
			"/v1/alerts/rules?geofence_id=%7f", "/v1/events?type=%00"} {
			r := e.do("GET", path, key, nil)
			is.Equal(r.status, http.StatusBadRequest)
			is.Equal(r.errCode(), "invalid_request")
		}
		is.True(namesField(e.do("GET", "/v1/vehicles?limit=5&q=a%00", key, nil), "q"))
	})
}

// TestControlCharactersRefusedByTheService: the rule is the domain's, so a
// program that embeds the service and calls it directly gets the same
// validation_error (or invalid_request for a filter), never a store error.
func TestControlCharactersRefusedByTheService(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		is := is.New(t)
		acc, _ := e.account(fleet.PlanPro)
		p := fleet.SystemPrincipal(acc)
		_, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "a\x00b"})
		is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
		_, err = e.svc.CreateAlert(ctx, p, fleet.Alert{Message: "x", Data: json.RawMessage(`{"a":"\u0000"}`)})
		is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
		_, _, err = e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme\x00"})
		is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
		_, err = e.svc.ListVehicles(ctx, p, fleet.VehicleFilter{Query: "a\x00"}, fleet.ListQuery{})
		is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
		_, err = e.svc.ListLocations(ctx, p, fleet.VehicleFilter{IDs: []string{"veh_\x00"}}, fleet.ListQuery{})
		is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
		_, err = e.svc.IngestLocations(ctx, p, "veh_\x00", []fleet.Point{{Latitude: 1, Longitude: 1, Timestamp: T0}})
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	})
}
