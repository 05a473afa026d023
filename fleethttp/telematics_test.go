package fleethttp_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestPointAttributesThroughTheAPI: attributes go in on both batch
// endpoints and come back from the history and the snapshot; the vehicle
// shows its telematics state; a bad one is 422 naming the point and the
// attribute, and nothing of the batch is stored.
func TestPointAttributesThroughTheAPI(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	van := e.vehicle(key, "Van")
	at := T0.Add(-10 * time.Minute)
	with := func(p map[string]any, attrs map[string]any) map[string]any { p["attributes"] = attrs; return p }

	r := e.do("POST", "/v1/vehicles/"+van+"/locations", key, batch(
		with(pt(at, 52.5, 13.4, 0), map[string]any{"ignition": false, "fuel_level": 64.5}),
		with(pt(at.Add(time.Minute), 52.5, 13.4, 0), map[string]any{"ignition": true, "power_v": 13.8, "driver_identifier": "00AB"}),
	))
	is.Equal(r.status, http.StatusOK)
	bulk := with(pt(at.Add(2*time.Minute), 52.5, 13.41, 30), map[string]any{"ignition": true, "engine_hours": 1523.5, "fuel_level": 63})
	bulk["vehicle_id"] = van
	is.Equal(e.do("POST", "/v1/vehicles/locations", key, batch(bulk)).status, http.StatusOK)

	hist := e.do("GET", "/v1/vehicles/"+van+"/locations?from="+at.Format(time.RFC3339), key, nil).list()
	is.Equal(len(hist), 3)
	is.Equal(hist[0].(map[string]any)["attributes"], map[string]any{"fuel_level": 64.5, "ignition": false})
	is.Equal(hist[1].(map[string]any)["attributes"], map[string]any{"driver_identifier": "00AB", "ignition": true, "power_v": 13.8})

	snap := e.do("GET", "/v1/vehicles/locations", key, nil).list()
	is.Equal(len(snap), 1)
	is.Equal(snap[0].(map[string]any)["attributes"], map[string]any{"engine_hours": 1523.5, "fuel_level": 63.0, "ignition": true})

	v := e.do("GET", "/v1/vehicles/"+van, key, nil).data()
	is.Equal(v["ignition"], true)
	is.Equal(v["engine_hours"], 1523.5)
	is.Equal(v["fuel_level"], 63.0)
	is.Equal(v["power_v"], 13.8)
	is.Equal(v["telemetry_at"], at.Add(2*time.Minute).Format(time.RFC3339))

	events := e.do("GET", "/v1/events?type=vehicle.ignition_on", key, nil).list()
	is.Equal(len(events), 1)
	is.Equal(events[0].(map[string]any)["data"].(map[string]any)["at"], at.Add(time.Minute).Format(time.RFC3339))

	// Bad attributes: 422 naming each, nothing stored.
	later := at.Add(5 * time.Minute)
	r = e.do("POST", "/v1/vehicles/"+van+"/locations", key, batch(
		with(pt(later, 52.5, 13.4, 0), map[string]any{"ignition": true}),
		with(pt(later.Add(time.Second), 52.5, 13.4, 0), map[string]any{"Fuel Level": 1, "note": strings.Repeat("x", 65)}),
	))
	is.Equal(r.status, http.StatusUnprocessableEntity)
	fields := []string{}
	for _, d := range r.json()["error"].(map[string]any)["details"].([]any) {
		fields = append(fields, d.(map[string]any)["field"].(string))
	}
	is.Equal(fields, []string{`locations[1].attributes["Fuel Level"]`, "locations[1].attributes.note"})
	is.Equal(len(e.do("GET", "/v1/vehicles/"+van+"/locations?from="+at.Format(time.RFC3339), key, nil).list()), 3)

	// A value of another type is a wrong type: 400.
	r = e.do("POST", "/v1/vehicles/"+van+"/locations", key, batch(with(pt(later, 52.5, 13.4, 0), map[string]any{"x": []int{1}})))
	is.Equal(r.status, http.StatusBadRequest)
}
