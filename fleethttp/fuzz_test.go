package fleethttp

import (
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// FuzzBearer: the Authorization parser never panics; it reads the token of
// the Bearer scheme, whatever the scheme's case (RFC 7235), without the
// blanks around it, and of no other scheme.
func FuzzBearer(f *testing.F) {
	for _, s := range [][2]string{{"Bearer", "fleet_abc"}, {"bearer", "x"}, {"Basic", "abc"}, {"", ""}, {"Bearer", ""},
		{"BEARER", " \t tok "}, {"Bearerx", "tok"}, {"Bear", "er tok"}, {"bearer", "a b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, scheme, token string) {
		h := scheme + " " + token
		tok, ok := bearer(h)
		switch {
		case strings.EqualFold(scheme, "bearer") && strings.TrimSpace(token) != "":
			if !ok || tok != strings.TrimSpace(token) {
				t.Fatalf("bearer(%q) = %q, %v: want %q", h, tok, ok, strings.TrimSpace(token))
			}
		case !strings.ContainsAny(scheme, " \t") && !strings.EqualFold(scheme, "bearer"):
			if ok {
				t.Fatalf("bearer(%q) took a token of scheme %q", h, scheme)
			}
		}
		if ok && (strings.TrimSpace(tok) != tok || !strings.Contains(h, tok)) {
			t.Fatalf("bearer(%q) = %q: not a trimmed part of the header", h, tok)
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
		_, err := decode[fleetwire.CreateKeyRequest](b, false)
		check(err)
		_, err = decode[fleetwire.RotateKeyRequest](b, true)
		check(err)
		_, err = decode[fleetwire.VehicleInput](b, false)
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
		_, err = decode[fleetwire.AlertInput](b, false)
		check(err)
		_, err = decode[fleetwire.AlertRuleInput](b, false)
		check(err)
		// A geometry is read as GeoJSON: what is wrong inside it is a 422
		// naming the position, so that code may come back too.
		if _, err = decode[fleetwire.GeofenceInput](b, false); fleet.ErrorCode(err) != fleet.CodeValidation {
			check(err)
		}
		_, err = decode[fleetwire.WorkOrderInput](b, false)
		check(err)
		_, err = decode[fleetwire.ScheduleInput](b, false)
		check(err)
		_, err = decode[fleetwire.WebhookInput](b, false)
		check(err)
		_, err = decode[struct{}](b, true)
		check(err)
	})
}
