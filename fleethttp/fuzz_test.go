package fleethttp

import (
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
)

// FuzzBearer: the Authorization parser never panics and only yields a
// token for the Bearer scheme.
func FuzzBearer(f *testing.F) {
	for _, s := range []string{"Bearer fleet_abc", "bearer x", "Basic abc", "", "Bearer ", "BEARER  \t tok "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := bearer(h)
		if ok && (len(h) < len("bearer ") || len(tok) > len(h)) {
			t.Fatalf("token %q from header %q", tok, h)
		}
	})
}

// FuzzDecodeBodies: every request body type decodes or is refused with
// invalid_request, never a panic or another code.
func FuzzDecodeBodies(f *testing.F) {
	for _, s := range []string{`{"name":"a"}`, `{"name":1}`, `{`, `[]`, `null`, `{"permissions":["*"],"expires_at":"2026-01-01T00:00:00Z"}`,
		`{"grace_period_seconds":-1}`, `{"name":"x","tags":[1]}`, `{"year":1e400}`, "{\"name\":\"\xff\"}",
		`{"vehicle_id":"veh_x","title":"t","due_date":"2026-02-30","cost_cents":1e3}`, `{"interval_km":-0,"last_service_date":null}`,
		`{"url":"https://h/x","events":["*",1]}`, `{"geometry":{"type":"Point","coordinates":[0,0]},"radius_m":5}`, `{"data":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(err error) {
			if err != nil && fleet.ErrorCode(err) != fleet.CodeInvalidRequest {
				t.Fatalf("decoding %q: code %s", b, fleet.ErrorCode(err))
			}
		}
		_, err := decode[createKeyRequest](b, false)
		check(err)
		_, err = decode[rotateKeyRequest](b, true)
		check(err)
		_, err = decode[vehicleRequest](b, false)
		check(err)
		_, err = decode[fleet.VehiclePatch](b, false)
		check(err)
		_, err = decode[fleet.WorkOrderPatch](b, false)
		check(err)
		_, err = decode[fleet.SchedulePatch](b, false)
		check(err)
		_, err = decode[fleet.AlertRulePatch](b, false)
		check(err)
		_, err = decode[fleet.WebhookPatch](b, false)
		check(err)
		_, err = decode[alertRequest](b, false)
		check(err)
		_, err = decode[ruleRequest](b, false)
		check(err)
		// A geometry is read as GeoJSON: what is wrong inside it is a 422
		// naming the position, so that code may come back too.
		if _, err = decode[geofenceRequest](b, false); fleet.ErrorCode(err) != fleet.CodeValidation {
			check(err)
		}
		_, err = decode[workOrderRequest](b, false)
		check(err)
		_, err = decode[scheduleRequest](b, false)
		check(err)
		_, err = decode[webhookRequest](b, false)
		check(err)
		_, err = decode[struct{}](b, true)
		check(err)
	})
}
