package fleethttp_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

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

// TestTelematicsRulesOverHTTP: each telematics rule type, set up over the
// API, opens its alert from points an API client sends with attributes,
// once; sending the same batch again opens nothing.
func TestTelematicsRulesOverHTTP(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van 3")
	rules := map[string]string{}
	for _, body := range []map[string]any{
		{"type": "alarm", "alarms": []string{"sos", "tow"}},
		{"type": "ignition_on", "outside_hours": map[string]any{"tz": "UTC", "from": "06:00", "to": "07:00"}},
		{"type": "idling", "after_minutes": 3},
		{"type": "fuel_drop", "threshold_percent": 10},
		{"type": "harsh_driving"},
		{"type": "power_cut"},
	} {
		rules[body["type"].(string)] = e.created("/v1/alerts/rules", key, body)["rule_id"].(string)
	}
	t0 := e.clock.Now().Add(-2 * time.Hour).Truncate(time.Hour)
	if t0.Hour() >= 6 && t0.Hour() < 8 {
		t0 = t0.Add(-3 * time.Hour) // the ignition goes on at t0+1m: outside 06:00-07:00
	}
	with := func(p map[string]any, attrs map[string]any) map[string]any { p["attributes"] = attrs; return p }
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	points := batch(
		with(pt(at(0), 52.5, 13.4, 0), map[string]any{"ignition": false, "fuel_level": 80, "power_v": 12.6}),
		with(pt(at(60), 52.5, 13.4, 0), map[string]any{"ignition": true, "fuel_level": 80}),                       // ignition on
		with(pt(at(300), 52.5, 13.4, 0), map[string]any{"ignition": true, "fuel_level": 65}),                      // idling 4 min; 15 points of fuel gone
		with(pt(at(302), 52.5, 13.4, 30), map[string]any{"ignition": true}),                                       // 30 km/h in 2 s: 0.42 g
		with(pt(at(400), 52.51, 13.41, 50), map[string]any{"ignition": true, "alarm": "tow"}),                     // a tow alarm
		with(pt(at(500), 52.52, 13.42, 0), map[string]any{"ignition": false, "alarm": "power_cut", "power_v": 0}), // power cut
	)
	r := e.do("POST", "/v1/vehicles/"+veh+"/locations", key, points)
	is.Equal(r.status, http.StatusOK)
	byType := map[string]map[string]any{}
	for _, a := range e.alertList(key, "") {
		is.True(byType[a["type"].(string)] == nil) // one alert per rule
		byType[a["type"].(string)] = a
	}
	for typ, rule := range rules {
		a := byType[typ]
		if a == nil {
			t.Fatalf("no %s alert", typ)
		}
		is.Equal(a["rule_id"], rule)
		is.Equal(a["vehicle_id"], veh)
		want := "open"
		if typ == "idling" {
			want = "resolved" // it drove off at t0+302s
		}
		is.Equal(a["status"], want)
	}
	is.Equal(byType["alarm"]["data"].(map[string]any)["alarm"], "tow")
	is.Equal(byType["harsh_driving"]["data"].(map[string]any)["type"], "hard_acceleration")
	is.Equal(byType["fuel_drop"]["data"].(map[string]any)["unit"], "percent")
	is.Equal(byType["idling"]["data"].(map[string]any)["minutes"], 4.0) // the first point past 3 minutes
	r = e.do("POST", "/v1/vehicles/"+veh+"/locations", key, points)     // sent again
	is.Equal(r.status, http.StatusOK)
	is.Equal(len(e.alertList(key, "")), len(rules))
}
