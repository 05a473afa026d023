package fleethttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestTelematicsRuleSettings: each telematics rule type is created with its
// settings and its defaults, shows the other types' settings as null, and
// is patched as a merge patch; a setting of another type, a missing one or
// a bad value is 422 naming it, and changes nothing.
func TestTelematicsRuleSettings(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)

	alarm := e.created("/v1/alerts/rules", key, map[string]any{"type": "alarm"})
	is.Equal(alarm["alarms"], []any{}) // every alarm
	is.Equal(alarm["types"], nil)
	is.Equal(alarm["outside_hours"], nil)
	is.Equal(alarm["threshold_g"], nil)
	harsh := e.created("/v1/alerts/rules", key, map[string]any{"type": "harsh_driving", "types": []string{"hard_braking", "hard_braking"}})
	is.Equal(harsh["types"], []any{"hard_braking"}) // deduplicated
	is.Equal(harsh["threshold_g"], 0.4)             // the default
	is.Equal(harsh["alarms"], nil)
	power := e.created("/v1/alerts/rules", key, map[string]any{"type": "power_cut", "severity": "critical"})
	is.Equal(power["threshold_v"], 9.0)
	hours := e.created("/v1/alerts/rules", key, map[string]any{"type": "ignition_on",
		"outside_hours": map[string]any{"tz": "Europe/Berlin", "days": []string{"Mon", "tue"}, "from": "07:00", "to": "19:00"}})
	is.Equal(hours["outside_hours"], map[string]any{"tz": "Europe/Berlin", "days": []any{"mon", "tue"}, "from": "07:00", "to": "19:00"})
	idle := e.created("/v1/alerts/rules", key, map[string]any{"type": "idling", "after_minutes": 10})
	is.Equal(idle["after_minutes"], 10.0)
	fuel := e.created("/v1/alerts/rules", key, map[string]any{"type": "fuel_drop", "threshold_percent": 8})
	is.Equal(fuel["threshold_percent"], 8.0)
	is.Equal(fuel["threshold_l"], nil)

	got := e.do("GET", "/v1/alerts/rules/"+hours["rule_id"].(string), key, nil)
	is.Equal(got.status, http.StatusOK)
	is.Equal(got.data(), hours) // read back as created
	is.Equal(len(e.do("GET", "/v1/alerts/rules?type=fuel_drop", key, nil).list()), 1)

	snap := e.do("GET", "/v1/alerts/rules", key, nil).body
	cases := []struct {
		body   map[string]any
		fields []string
	}{
		{map[string]any{"type": "alarm", "alarms": []string{"sos", "meteor"}}, []string{"alarms[1]"}},
		{map[string]any{"type": "alarm", "threshold_kmh": 50}, []string{"threshold_kmh"}},
		{map[string]any{"type": "speeding", "threshold_kmh": 50, "alarms": []string{}}, []string{"alarms"}},
		{map[string]any{"type": "ignition_on", "outside_hours": map[string]any{"tz": "Mars/Olympus", "days": []string{"mon", "someday"}, "from": "7:00", "to": "24:00"}},
			[]string{"outside_hours.days[1]", "outside_hours.from", "outside_hours.to", "outside_hours.tz"}},
		{map[string]any{"type": "ignition_on", "outside_hours": map[string]any{"tz": "UTC", "from": "07:00", "to": "07:00"}}, []string{"outside_hours.to"}},
		{map[string]any{"type": "idling"}, []string{"after_minutes"}},
		{map[string]any{"type": "idling", "after_minutes": 0}, []string{"after_minutes"}},
		{map[string]any{"type": "idling", "after_minutes": 5, "threshold_v": 12}, []string{"threshold_v"}},
		{map[string]any{"type": "fuel_drop"}, []string{"threshold_percent"}},
		{map[string]any{"type": "fuel_drop", "threshold_percent": 5, "threshold_l": 5}, []string{"threshold_l"}},
		{map[string]any{"type": "fuel_drop", "threshold_percent": 101}, []string{"threshold_percent"}},
		{map[string]any{"type": "harsh_driving", "types": []string{"sos"}, "threshold_g": 0}, []string{"threshold_g", "types[0]"}},
		{map[string]any{"type": "power_cut", "threshold_v": -3, "outside_hours": map[string]any{"tz": "UTC", "from": "07:00", "to": "08:00"}},
			[]string{"outside_hours", "threshold_v"}},
		{map[string]any{"type": "vehicle_offline", "after_minutes": 5, "types": []string{}}, []string{"types"}},
	}
	for _, c := range cases {
		r := e.do("POST", "/v1/alerts/rules", key, c.body)
		if r.status != http.StatusUnprocessableEntity {
			t.Fatalf("POST %v: %d %s", c.body, r.status, r.body)
		}
		is.Equal(errorFields(r), c.fields)
	}
	is.Equal(string(e.do("GET", "/v1/alerts/rules", key, nil).body), string(snap)) // nothing changed

	fid := fuel["rule_id"].(string)
	r := e.do("PATCH", "/v1/alerts/rules/"+fid, key, map[string]any{"threshold_l": 20})
	is.Equal(r.status, http.StatusUnprocessableEntity) // both thresholds now
	is.Equal(errorFields(r), []string{"threshold_l"})
	r = e.do("PATCH", "/v1/alerts/rules/"+fid, key, map[string]any{"threshold_l": 20, "threshold_percent": nil})
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["threshold_l"], 20.0)
	is.Equal(r.data()["threshold_percent"], nil)
	hid := hours["rule_id"].(string)
	r = e.do("PATCH", "/v1/alerts/rules/"+hid, key, map[string]any{"outside_hours": nil})
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["outside_hours"], nil) // every ignition on now
	r = e.do("PATCH", "/v1/alerts/rules/"+harsh["rule_id"].(string), key, map[string]any{"threshold_g": 0.3, "types": nil})
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["threshold_g"], 0.3)
	is.Equal(r.data()["types"], []any{}) // all three
	r = e.do("POST", "/v1/alerts/rules", key, map[string]any{"type": "alarm", "alarms": "sos"})
	is.Equal(r.status, http.StatusBadRequest) // a wrong type
	is.True(strings.Contains(r.errMessage(), "alarms"))
}
