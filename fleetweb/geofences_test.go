package fleetweb_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

func (e *env) geofences(t *testing.T, acc fleet.Account) []fleet.Geofence {
	t.Helper()
	l, err := e.svc.ListGeofences(context.Background(), fleet.SystemPrincipal(acc), fleet.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func (e *env) alertRules(t *testing.T, acc fleet.Account) []fleet.AlertRule {
	t.Helper()
	l, err := e.svc.ListAlertRules(context.Background(), fleet.SystemPrincipal(acc), fleet.AlertRuleFilter{}, fleet.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// An admin draws geofences by typing them: a circle and a polygon, each
// form redirecting; mistakes come back beside their fields with what was
// typed, nothing stored; a polygon's change keeps its holes; a geofence a
// rule watches is not offered for deletion, and is deleted once free.
func TestAdminManagesGeofences(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	base := e.srv.URL

	r := do(t, c, "GET", base+"/geofences", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "No geofences yet"))
	is.True(strings.Contains(r.body, `id="fence-form"`))

	// A circle, typed.
	r = follow(t, c, base, do(t, c, "POST", base+"/geofences", url.Values{"name": {"Depot"}, "shape": {"circle"},
		"lat": {"52.52"}, "lon": {"13.405"}, "radius_m": {"250"}, "corners": {"1, 2\n"}}))
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Depot is added."))
	gs := e.geofences(t, e.accA)
	is.Equal(len(gs), 1)
	depot := gs[0]
	is.Equal(depot.Geometry.Type, fleet.GeometryPoint)
	is.Equal(depot.Geometry.Point, []float64{13.405, 52.52})
	is.Equal(*depot.RadiusM, 250.0)
	is.True(strings.Contains(r.body, "Circle, 250 m"))

	// A polygon, one corner a line in any of the separators people type;
	// the ring closes by itself.
	r = follow(t, c, base, do(t, c, "POST", base+"/geofences", url.Values{"name": {`Yard <b>North</b>`}, "shape": {"polygon"},
		"corners": {"52.50, 13.30\n52.50 13.32\r\n52.52;13.32\n\n52.52,13.30"}}))
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Yard &lt;b&gt;North&lt;/b&gt; is added.")) // markup is text
	is.True(!strings.Contains(r.body, "<b>North"))
	gs = e.geofences(t, e.accA)
	is.Equal(len(gs), 2)
	yard := gs[1]
	is.Equal(yard.Geometry.Rings, [][][]float64{{{13.30, 52.50}, {13.32, 52.50}, {13.32, 52.52}, {13.30, 52.52}, {13.30, 52.50}}})
	is.True(strings.Contains(r.body, "Polygon, 4 corners"))

	// Mistakes, each beside its field, what was typed kept, nothing stored.
	for _, tc := range []struct {
		form   url.Values
		status int
		want   []string
		kept   string
	}{
		{url.Values{"name": {""}, "shape": {"circle"}, "lat": {"52.5"}, "lon": {"13.4"}, "radius_m": {"0"}}, 422,
			[]string{`id="name-error" class="field-error">Name is required, 1 to 100 characters.`, `id="radius_m-error" class="field-error">Radius must be above 0 and at most 1000000.`}, `value="52.5"`},
		{url.Values{"name": {strings.Repeat("x", 101)}, "shape": {"circle"}, "lat": {"north"}, "lon": {"13.4"}, "radius_m": {"a lot"}}, 422,
			[]string{`id="name-error"`, `id="centre-error" class="field-error wide">Centre must be a latitude and a longitude in degrees`, `id="radius_m-error" class="field-error">Radius must be a number of metres`}, `value="north"`},
		{url.Values{"name": {"Edge"}, "shape": {"circle"}, "lat": {"95"}, "lon": {"13.4"}, "radius_m": {"10"}}, 422,
			[]string{`id="centre-error" class="field-error wide">Centre: latitude must be between -90 and 90.`}, `value="95"`},
		{url.Values{"name": {"Line"}, "shape": {"polygon"}, "corners": {"52.5, 13.3\n52.6, 13.4"}}, 422,
			[]string{`id="corners-error" class="field-error">Corners must be at least 3, one a line.`}, "52.6, 13.4"},
		{url.Values{"name": {"Typo"}, "shape": {"polygon"}, "corners": {"52.5, 13.3\n52.6 x 13.4\n52.7, 13.3"}}, 422,
			[]string{`id="corners-error" class="field-error">Corners: line 2 must be a latitude and a longitude`}, "52.6 x 13.4"},
		{url.Values{"name": {"Far"}, "shape": {"polygon"}, "corners": {"52.5, 13.3\n52.6, 213.4\n52.7, 13.3"}}, 422,
			[]string{`id="corners-error" class="field-error">Corners: line 2: longitude must be between -180 and 180.`}, "213.4"},
		{url.Values{"name": {"Blob"}, "shape": {"blob"}}, 422, []string{`id="shape-error" class="field-error">Shape must be a circle or a polygon.`}, `value="Blob"`},
	} {
		r = do(t, c, "POST", base+"/geofences", tc.form)
		is.Equal(r.status, tc.status) // a refused form
		body := html.UnescapeString(r.body)
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%v: no %q in the page", tc.form, w)
			}
		}
		is.True(strings.Contains(body, tc.kept)) // what was typed is kept
		is.True(strings.Contains(body, "Please correct the form:"))
	}
	is.Equal(len(e.geofences(t, e.accA)), 2) // nothing stored

	// A polygon with a hole, changed from the form: the hole is kept.
	p := fleet.SystemPrincipal(e.accA)
	ctx := context.Background()
	holed, err := e.svc.CreateGeofence(ctx, p, fleet.Geofence{Name: "Park", Geometry: fleet.Geometry{Type: fleet.GeometryPolygon, Rings: [][][]float64{
		{{13.0, 52.0}, {13.2, 52.0}, {13.2, 52.2}, {13.0, 52.2}, {13.0, 52.0}},
		{{13.05, 52.05}, {13.1, 52.05}, {13.1, 52.1}, {13.05, 52.05}},
	}}})
	is.NoErr(err)
	r = do(t, c, "GET", base+"/geofences/"+holed.ID, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "52, 13\n52, 13.2\n52.2, 13.2\n52.2, 13\n</textarea>"))
	is.True(strings.Contains(r.body, "Its 1 hole is kept."))
	r = follow(t, c, base, do(t, c, "POST", base+"/geofences/"+holed.ID, url.Values{"name": {"Park East"}, "shape": {"polygon"},
		"corners": {"52, 13\n52, 13.3\n52.2, 13.3\n52.2, 13"}}))
	is.True(strings.Contains(r.body, "Park East is saved."))
	got, err := e.svc.Geofence(ctx, p, holed.ID)
	is.NoErr(err)
	is.Equal(len(got.Geometry.Rings), 2)
	is.Equal(got.Geometry.Rings[0][1], []float64{13.3, 52})
	is.Equal(got.Geometry.Rings[1], holed.Geometry.Rings[1])
	// A circle becomes a polygon; a refused change changes nothing.
	r = do(t, c, "POST", base+"/geofences/"+depot.ID, url.Values{"name": {"Depot"}, "shape": {"circle"}, "lat": {"52.52"}, "lon": {"13.405"}, "radius_m": {"-5"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(html.UnescapeString(r.body), `id="radius_m-error" class="field-error">Radius must be above 0`))
	is.True(strings.Contains(r.body, `value="-5"`))
	got, _ = e.svc.Geofence(ctx, p, depot.ID)
	is.Equal(*got.RadiusM, 250.0)

	// Watched by a rule: the question names the rule and offers no
	// deletion, and a forced one is refused; once the rule is gone, it goes.
	rule, err := e.svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertGeofenceExit, GeofenceID: depot.ID}, nil)
	is.NoErr(err)
	r = do(t, c, "GET", base+"/geofences/"+depot.ID+"/delete", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "cannot be deleted while 1 rule watches it"))
	is.True(strings.Contains(r.body, "Leaves a geofence Depot"))
	is.True(!strings.Contains(r.body, "Delete the geofence</button>"))
	r = do(t, c, "POST", base+"/geofences/"+depot.ID+"/delete", url.Values{})
	is.Equal(r.status, http.StatusConflict)
	is.Equal(len(e.geofences(t, e.accA)), 3)
	_, err = e.svc.DeleteAlertRule(ctx, p, rule.ID)
	is.NoErr(err)
	r = do(t, c, "GET", base+"/geofences/"+depot.ID+"/delete", nil)
	is.True(strings.Contains(r.body, "Delete the geofence <strong>Depot</strong> (Circle, 250 m)?"))
	r = follow(t, c, base, do(t, c, "POST", base+"/geofences/"+depot.ID+"/delete", url.Values{}))
	is.True(strings.Contains(r.body, "Depot is deleted."))
	is.Equal(len(e.geofences(t, e.accA)), 2)
}

// Another account's geofences and rules are not found, neither shown nor
// changed; a viewer sees them and is offered no form, and a forged post
// is refused.
func TestGeofencesAndRulesOfTheirAccountOnly(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	pb := fleet.SystemPrincipal(e.accB)
	theirs, err := e.svc.CreateGeofence(ctx, pb, fleet.Geofence{Name: "Bravo yard", Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{13, 52}}, RadiusM: ptr(100.0)})
	is.NoErr(err)
	theirRule, err := e.svc.CreateAlertRule(ctx, pb, fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: ptr(80.0)}, nil)
	is.NoErr(err)
	theirVan, err := e.svc.CreateVehicle(ctx, pb, fleet.Vehicle{Name: "Bravo van"})
	is.NoErr(err)

	c := e.signedIn(t, "admin@acme.test", adminPassword)
	base := e.srv.URL
	for _, path := range []string{"/geofences/" + theirs.ID, "/geofences/" + theirs.ID + "/delete", "/rules/" + theirRule.ID, "/rules/" + theirRule.ID + "/delete"} {
		r := do(t, c, "GET", base+path, nil)
		is.Equal(r.status, http.StatusNotFound) // another account's
		is.True(!strings.Contains(r.body, "Bravo"))
	}
	for _, path := range []string{"/geofences/" + theirs.ID, "/geofences/" + theirs.ID + "/delete", "/rules/" + theirRule.ID, "/rules/" + theirRule.ID + "/disable", "/rules/" + theirRule.ID + "/delete"} {
		r := do(t, c, "POST", base+path, url.Values{"name": {"Mine now"}, "shape": {"circle"}, "lat": {"1"}, "lon": {"1"}, "radius_m": {"5"}, "severity": {"info"}})
		is.Equal(r.status, http.StatusNotFound) // another account's
	}
	r := do(t, c, "GET", base+"/geofences", nil)
	is.True(!strings.Contains(r.body, "Bravo"))
	// A rule naming their geofence or their vehicle: the mistake beside
	// the field, nothing made.
	r = do(t, c, "POST", base+"/rules", url.Values{"type": {"geofence_enter"}, "severity": {"warning"}, "geofence_id": {theirs.ID}, "vehicle_ids": {theirVan.ID}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	body := html.UnescapeString(r.body)
	is.True(strings.Contains(body, `id="geofence_id-error" class="field-error">Geofence: no geofence "`+theirs.ID+`" in this account.`))
	is.True(strings.Contains(body, `id="vehicle_ids-error" class="field-error">Vehicles: no vehicle "`+theirVan.ID+`" in this account.`))
	is.Equal(len(e.alertRules(t, e.accA)), 0)
	g, _ := e.svc.Geofence(ctx, pb, theirs.ID)
	is.Equal(g.Name, "Bravo yard")
	rr, _ := e.svc.AlertRule(ctx, pb, theirRule.ID)
	is.True(rr.Enabled)

	// A viewer sees the account's own, and no form.
	pa := fleet.SystemPrincipal(e.accA)
	mine, err := e.svc.CreateGeofence(ctx, pa, fleet.Geofence{Name: "Acme depot", Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{13, 52}}, RadiusM: ptr(100.0)})
	is.NoErr(err)
	myRule, err := e.svc.CreateAlertRule(ctx, pa, fleet.AlertRule{Type: fleet.AlertGeofenceEnter, GeofenceID: mine.ID}, nil)
	is.NoErr(err)
	v := e.signedIn(t, "viewer@acme.test", viewerPassword)
	for _, path := range []string{"/geofences", "/geofences/" + mine.ID, "/rules", "/rules/" + myRule.ID} {
		r = do(t, v, "GET", base+path, nil)
		is.Equal(r.status, http.StatusOK)
		is.True(strings.Contains(r.body, "Acme depot"))
		for _, never := range []string{"<form method=\"post\" action=\"/geofences", "<form method=\"post\" action=\"/rules", "Delete…", ">Edit<"} {
			if strings.Contains(r.body, never) {
				t.Errorf("%s offers a viewer %q", path, never)
			}
		}
	}
	for _, path := range []string{"/geofences", "/geofences/" + mine.ID, "/geofences/" + mine.ID + "/delete", "/rules", "/rules/" + myRule.ID + "/disable", "/rules/" + myRule.ID + "/delete"} {
		r = do(t, v, "POST", base+path, url.Values{"name": {"Forged"}, "shape": {"circle"}, "lat": {"1"}, "lon": {"1"}, "radius_m": {"5"}, "type": {"speeding"}, "threshold_kmh": {"5"}})
		is.Equal(r.status, http.StatusForbidden) // a viewer changes nothing
	}
	is.Equal(len(e.geofences(t, e.accA)), 1)
	is.Equal(len(e.alertRules(t, e.accA)), 1)
	rr, _ = e.svc.AlertRule(ctx, pa, myRule.ID)
	is.True(rr.Enabled)
}

func ptr[T any](v T) *T { return &v }

// A manager runs geofences and rules as an admin does: offered the forms,
// and their changes go through.
func TestManagerSetsGeofencesAndRules(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	m := e.manager(t)
	base := e.srv.URL
	r := do(t, m, "GET", base+"/geofences", nil)
	is.True(strings.Contains(r.body, `id="fence-form"`))
	r = follow(t, m, base, do(t, m, "POST", base+"/geofences", url.Values{"name": {"Depot"}, "shape": {"circle"}, "lat": {"52.52"}, "lon": {"13.405"}, "radius_m": {"250"}}))
	is.True(strings.Contains(r.body, "Depot is added."))
	gs := e.geofences(t, e.accA)
	is.Equal(len(gs), 1)
	r = follow(t, m, base, do(t, m, "POST", base+"/rules", url.Values{"type": {"geofence_enter"}, "severity": {"info"}, "geofence_id": {gs[0].ID}, "enabled": {"1"}}))
	is.True(strings.Contains(html.UnescapeString(r.body), "The rule “Enters a geofence Depot” is added."))
	is.True(strings.Contains(r.body, ">Disable</button>"))
	is.Equal(len(e.alertRules(t, e.accA)), 1)
}

// An admin sets rules of every type fleet offers, each with its fields;
// changes one, disables and enables it, and deletes it after a question
// that names it.
func TestAdminManagesAlertRules(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	pa := fleet.SystemPrincipal(e.accA)
	depot, err := e.svc.CreateGeofence(ctx, pa, fleet.Geofence{Name: "Depot", Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{13, 52}}, RadiusM: ptr(100.0)})
	is.NoErr(err)
	truck, err := e.svc.CreateVehicle(ctx, pa, fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	base := e.srv.URL

	r := do(t, c, "GET", base+"/rules", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "No alert rules yet"))
	for _, typ := range fleet.RuleTypes() { // every type is offered
		is.True(strings.Contains(r.body, `<option value="`+string(typ)+`"`))
	}
	is.True(strings.Contains(r.body, `data-types="speeding"`))
	is.True(strings.Contains(r.body, `data-types="geofence_enter geofence_exit"`))

	// One of each type, with its fields; another type's field is not sent.
	for _, f := range []url.Values{
		{"type": {"speeding"}, "severity": {"critical"}, "threshold_kmh": {"90"}, "after_minutes": {"nonsense"}, "enabled": {"1"}},
		{"type": {"vehicle_offline"}, "severity": {"warning"}, "after_minutes": {"30"}, "vehicle_ids": {truck.ID}, "enabled": {"1"}},
		{"type": {"geofence_enter"}, "severity": {"info"}, "geofence_id": {depot.ID}, "threshold_kmh": {"12"}, "enabled": {"1"}},
		{"type": {"geofence_exit"}, "severity": {"info"}, "geofence_id": {depot.ID}},
	} {
		r = follow(t, c, base, do(t, c, "POST", base+"/rules", f))
		is.Equal(r.status, http.StatusOK)
		is.True(strings.Contains(r.body, "” is added."))
	}
	rules := e.alertRules(t, e.accA)
	is.Equal(len(rules), 4)
	is.Equal(*rules[0].ThresholdKmh, 90.0)
	is.Equal(rules[0].Severity, fleet.SeverityCritical)
	is.Equal(*rules[1].AfterMinutes, 30)
	is.Equal(rules[1].VehicleIDs, []string{truck.ID})
	is.Equal(rules[2].GeofenceID, depot.ID)
	is.True(rules[2].ThresholdKmh == nil)
	is.True(!rules[3].Enabled) // unticked
	body := html.UnescapeString(r.body)
	for _, words := range []string{"Speeding</a> <span>above 90 km/h", "Not reporting</a> <span>silent for 30 minutes", "Enters a geofence</a> <span>Depot", "Leaves a geofence</a> <span>Depot"} {
		if !strings.Contains(body, words) {
			t.Errorf("the list does not say %q", words)
		}
	}
	is.True(strings.Contains(body, `<td data-label="Vehicles">Truck 7</td>`))

	// Mistakes: beside the fields, typed values kept, nothing made.
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"type": {"speeding"}, "severity": {"warning"}, "threshold_kmh": {"fast"}}, `id="threshold_kmh-error" class="field-error">Speed limit must be a number, such as 90 km/h.`},
		{url.Values{"type": {"speeding"}, "severity": {"warning"}, "threshold_kmh": {"1001"}}, `id="threshold_kmh-error" class="field-error">Speed limit must be above 0 and at most 1000.`},
		{url.Values{"type": {"speeding"}, "severity": {"warning"}}, `id="threshold_kmh-error" class="field-error">Speed limit is required for a speeding rule`},
		{url.Values{"type": {"vehicle_offline"}, "severity": {"warning"}, "after_minutes": {"1.5"}}, `id="after_minutes-error" class="field-error">Silent for must be a whole number, such as 30 minutes.`},
		{url.Values{"type": {"geofence_exit"}, "severity": {"warning"}}, `id="geofence_id-error" class="field-error">Geofence is required for a geofence_exit rule`},
		{url.Values{"type": {"speeding"}, "severity": {"<script>"}, "threshold_kmh": {"50"}}, `id="severity-error" class="field-error">Severity must be one of info, warning, critical.`},
		{url.Values{"type": {"teleport"}, "severity": {"warning"}}, `id="type-error" class="field-error">Alert when must be one of`},
		{url.Values{"type": {"speeding"}, "severity": {"warning"}, "threshold_kmh": {"50"}, "vehicle_ids": {"veh_<b>"}}, `id="vehicle_ids-error" class="field-error">Vehicles must be a vehicle id`},
	} {
		r = do(t, c, "POST", base+"/rules", tc.form)
		is.Equal(r.status, http.StatusUnprocessableEntity)
		if !strings.Contains(html.UnescapeString(r.body), tc.want) {
			t.Errorf("%v: no %q in the page", tc.form, tc.want)
		}
		is.True(!strings.Contains(r.body, "<script>")) // markup is text
		for _, v := range tc.form["threshold_kmh"] {
			is.True(strings.Contains(r.body, `value="`+v+`"`)) // kept
		}
	}
	is.Equal(len(e.alertRules(t, e.accA)), 4)

	// Changed: its fields and its vehicles (none: every vehicle).
	speeding := rules[0]
	r = do(t, c, "GET", base+"/rules/"+speeding.ID, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, `value="90"`))
	r = do(t, c, "POST", base+"/rules/"+speeding.ID, url.Values{"severity": {"warning"}, "threshold_kmh": {"eighty"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, `value="eighty"`))
	r = follow(t, c, base, do(t, c, "POST", base+"/rules/"+speeding.ID, url.Values{"severity": {"warning"}, "threshold_kmh": {"80"}, "type": {"vehicle_offline"}}))
	is.True(strings.Contains(r.body, "The rule is saved."))
	got, err := e.svc.AlertRule(ctx, pa, speeding.ID)
	is.NoErr(err)
	is.Equal(*got.ThresholdKmh, 80.0)
	is.Equal(got.Type, fleet.AlertSpeeding) // a rule's type does not change
	is.Equal(got.Severity, fleet.SeverityWarning)
	r = follow(t, c, base, do(t, c, "POST", base+"/rules/"+rules[1].ID, url.Values{"severity": {"warning"}, "after_minutes": {"45"}}))
	got, _ = e.svc.AlertRule(ctx, pa, rules[1].ID)
	is.Equal(len(got.VehicleIDs), 0) // none chosen: every vehicle
	is.True(strings.Contains(r.body, "every vehicle"))

	// Disabled, enabled.
	r = follow(t, c, base, do(t, c, "POST", base+"/rules/"+speeding.ID+"/disable", url.Values{}))
	is.True(strings.Contains(html.UnescapeString(r.body), "The rule “Speeding above 80 km/h” is disabled"))
	got, _ = e.svc.AlertRule(ctx, pa, speeding.ID)
	is.True(!got.Enabled)
	follow(t, c, base, do(t, c, "POST", base+"/rules/"+speeding.ID+"/enable", url.Values{}))
	got, _ = e.svc.AlertRule(ctx, pa, speeding.ID)
	is.True(got.Enabled)

	// The telematics types, each with its fields.
	for _, tc := range []struct {
		form  url.Values
		words string
	}{
		{url.Values{"type": {"alarm"}, "severity": {"critical"}, "alarms": {"sos", "tow"}}, "Alarm</a> <span>on sos or tow"},
		{url.Values{"type": {"ignition_on"}, "severity": {"warning"}, "outside_hours_tz": {"Europe/Berlin"}, "outside_hours_from": {"07:00"},
			"outside_hours_to": {"18:00"}, "outside_hours_days": {"mon", "tue"}}, "Ignition on</a> <span>outside 07:00–18:00, mon, tue (Europe/Berlin)"},
		{url.Values{"type": {"idling"}, "severity": {"info"}, "idle_minutes": {"10"}, "after_minutes": {"99"}}, "Idling</a> <span>for 10 minutes"},
		{url.Values{"type": {"fuel_drop"}, "severity": {"warning"}, "threshold_l": {"20"}}, "Fuel drop</a> <span>by 20 litres"},
		{url.Values{"type": {"harsh_driving"}, "severity": {"warning"}, "types": {"hard_braking"}}, "Harsh driving</a> <span>hard braking, or a speed change above 0.4 g"},
		{url.Values{"type": {"power_cut"}, "severity": {"critical"}}, "Power cut</a> <span>until power is back above 9 V"},
	} {
		r = follow(t, c, base, do(t, c, "POST", base+"/rules", tc.form))
		if !strings.Contains(html.UnescapeString(r.body), tc.words) {
			t.Errorf("%v: the list does not say %q", tc.form, tc.words)
		}
	}
	rules = e.alertRules(t, e.accA)
	is.Equal(len(rules), 10)
	is.Equal(rules[4].Alarms, []string{"sos", "tow"})
	is.Equal(*rules[5].OutsideHours, fleet.WorkingHours{TZ: "Europe/Berlin", Days: []string{"mon", "tue"}, From: "07:00", To: "18:00"})
	is.Equal(*rules[6].AfterMinutes, 10) // the idling input, not the offline one
	is.Equal(*rules[7].ThresholdL, 20.0)
	is.True(rules[7].ThresholdPercent == nil)
	// Their mistakes beside their fields.
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"type": {"ignition_on"}, "severity": {"warning"}, "outside_hours_tz": {"Mars/Olympus"}, "outside_hours_from": {"07:00"}, "outside_hours_to": {"18:00"}},
			`id="outside_hours-error" class="field-error">Working hours' time zone must be an IANA time zone`},
		{url.Values{"type": {"fuel_drop"}, "severity": {"warning"}}, `id="threshold_percent-error" class="field-error">Drop: a fuel_drop rule needs threshold_percent`},
		{url.Values{"type": {"alarm"}, "severity": {"warning"}, "alarms": {"meteor"}}, `id="alarms-error" class="field-error">Alarms: "meteor" is not an alarm`},
		{url.Values{"type": {"idling"}, "severity": {"warning"}, "idle_minutes": {"soon"}}, `id="idle_minutes-error" class="field-error">Idle for must be a whole number, such as 10 minutes.`},
	} {
		r = do(t, c, "POST", base+"/rules", tc.form)
		is.Equal(r.status, http.StatusUnprocessableEntity)
		if !strings.Contains(html.UnescapeString(r.body), tc.want) {
			t.Errorf("%v: no %q in the page", tc.form, tc.want)
		}
	}
	is.Equal(len(e.alertRules(t, e.accA)), 10)
	// A telematics rule changed: its ticks replaced, an emptied list is every alarm.
	r = follow(t, c, base, do(t, c, "POST", base+"/rules/"+rules[4].ID, url.Values{"severity": {"critical"}}))
	is.True(strings.Contains(r.body, "on any alarm"))
	got, _ = e.svc.AlertRule(ctx, pa, rules[4].ID)
	is.Equal(len(got.Alarms), 0)
	r = do(t, c, "GET", base+"/rules/"+rules[5].ID, nil)
	is.True(strings.Contains(r.body, `value="Europe/Berlin"`) && strings.Contains(r.body, `name="outside_hours_days" value="mon" checked`))

	// Deleted after a question that names it.
	r = do(t, c, "GET", base+"/rules/"+speeding.ID+"/delete", nil)
	is.True(strings.Contains(r.body, "Delete the alert rule <strong>Speeding above 80 km/h</strong> (every vehicle, warning)?"))
	r = follow(t, c, base, do(t, c, "POST", base+"/rules/"+speeding.ID+"/delete", url.Values{}))
	is.True(strings.Contains(html.UnescapeString(r.body), "The rule “Speeding above 80 km/h” is deleted."))
	is.Equal(len(e.alertRules(t, e.accA)), 9)
}
