package fleethttp_test

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

func (e *env) created(path, key string, body any) map[string]any {
	e.t.Helper()
	r := e.do("POST", path, key, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("POST %s: %d %s", path, r.status, r.body)
	}
	return r.data()
}

func (e *env) alertList(key, query string) []map[string]any {
	e.t.Helper()
	r := e.do("GET", "/v1/alerts?limit=500&"+query, key, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("list alerts: %d %s", r.status, r.body)
	}
	var out []map[string]any
	for _, a := range r.list() {
		out = append(out, a.(map[string]any))
	}
	return out
}

var square = map[string]any{"type": "Polygon", "coordinates": [][][]float64{
	{{13.0, 52.0}, {13.2, 52.0}, {13.2, 52.2}, {13.0, 52.2}, {13.0, 52.0}},
}}

// TestAlertsAsANewUser walks the bars as a user would over HTTP: a speeding
// rule and one batch, a drive through a polygon, and a vehicle that goes
// silent with no request.
func TestAlertsAsANewUser(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Truck 7")

	rule := e.created("/v1/alerts/rules", key, map[string]any{"type": "speeding", "threshold_kmh": 90, "severity": "critical"})
	is.Equal(rule["enabled"], true)
	is.Equal(rule["vehicle_ids"], []any{})
	t0 := e.clock.Now().Add(-time.Hour)
	var pts []map[string]any
	for i, s := range []float64{80, 95, 100, 85} {
		pts = append(pts, pt(t0.Add(time.Duration(i)*time.Second), 52.5, 13.4, s))
	}
	is.Equal(e.do("POST", "/v1/vehicles/"+veh+"/locations", key, batch(pts...)).status, http.StatusOK)
	as := e.alertList(key, "type=speeding")
	is.Equal(len(as), 1) // exactly one alert for one batch
	is.Equal(as[0]["rule_id"], rule["rule_id"])
	is.Equal(as[0]["vehicle_id"], veh)
	is.Equal(as[0]["severity"], "critical")
	is.Equal(as[0]["data"].(map[string]any)["speed"], 95.0)
	is.Equal(as[0]["data"].(map[string]any)["timestamp"], t0.Add(time.Second).Format(time.RFC3339))
	created := e.eventsOf(key, "alert.created")
	is.Equal(len(created), 1)
	is.Equal(created[0]["alert_id"], as[0]["alert_id"]) // the event's data is the alert

	geo := e.created("/v1/geofences", key, map[string]any{"name": "Depot", "geometry": square})
	is.Equal(geo["radius_m"], nil)
	for _, typ := range []string{"geofence_enter", "geofence_exit"} {
		e.created("/v1/alerts/rules", key, map[string]any{"type": typ, "geofence_id": geo["geofence_id"], "vehicle_ids": []string{veh}})
	}
	pts = nil
	for i, lon := range []float64{12.9, 13.1, 13.15, 13.3} {
		pts = append(pts, pt(t0.Add(time.Duration(10+i)*time.Minute), 52.1, lon, 40))
	}
	is.Equal(e.do("POST", "/v1/vehicles/"+veh+"/locations", key, batch(pts...)).status, http.StatusOK)
	enter, exit := e.alertList(key, "type=geofence_enter"), e.alertList(key, "type=geofence_exit")
	is.Equal(len(enter), 1)
	is.Equal(len(exit), 1)
	is.Equal(enter[0]["data"].(map[string]any)["timestamp"], t0.Add(11*time.Minute).Format(time.RFC3339))
	is.Equal(enter[0]["data"].(map[string]any)["geofence_id"], geo["geofence_id"])
	is.Equal(exit[0]["data"].(map[string]any)["timestamp"], t0.Add(13*time.Minute).Format(time.RFC3339))

	e.created("/v1/alerts/rules", key, map[string]any{"type": "vehicle_offline", "after_minutes": 90})
	// The last report was at t0+13m; the clock is at t0+60m. No request
	// follows: only the clock moves and the background sweep runs.
	e.clock.Advance(42 * time.Minute)
	_, err := e.svc.Jobs().Sweep(ctx)
	is.NoErr(err)
	is.Equal(len(e.alertList(key, "type=vehicle_offline")), 0) // 89 minutes
	e.clock.Advance(time.Minute)
	_, err = e.svc.Jobs().Sweep(ctx)
	is.NoErr(err)
	off := e.alertList(key, "type=vehicle_offline")
	is.Equal(len(off), 1)
	is.Equal(off[0]["vehicle_id"], veh)
	is.Equal(len(e.alertList(key, "status=open")), 4)
}

func TestAlertLifecycleOverHTTP(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van")
	a := e.created("/v1/alerts", key, map[string]any{"vehicle_id": veh, "message": "Door open", "data": map[string]any{"door": "rear"}})
	is.Equal(a["type"], "custom")
	is.Equal(a["status"], "open")
	is.Equal(a["severity"], "warning")
	is.Equal(a["rule_id"], nil)
	id := a["alert_id"].(string)
	r := e.do("POST", "/v1/alerts/"+id+"/acknowledge", key, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["status"], "acknowledged")
	is.Equal(r.data()["acknowledged_at"], e.clock.Now().Format(time.RFC3339))
	r = e.do("POST", "/v1/alerts/"+id+"/acknowledge", key, map[string]any{})
	is.Equal(r.status, http.StatusConflict)
	is.Equal(r.errCode(), "invalid_state_transition")
	is.True(strings.Contains(r.errMessage(), "from acknowledged to acknowledged"))
	e.clock.Advance(time.Minute)
	r = e.do("POST", "/v1/alerts/"+id+"/resolve", key, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["resolved_at"], e.clock.Now().Format(time.RFC3339))
	r = e.do("POST", "/v1/alerts/"+id+"/acknowledge", key, nil)
	is.Equal(r.status, http.StatusConflict)
	is.True(strings.Contains(r.errMessage(), "from resolved to acknowledged"))
	is.Equal(e.do("POST", "/v1/alerts/"+id+"/resolve", key, map[string]any{"note": "x"}).status, http.StatusBadRequest)
	is.Equal(len(e.eventsOf(key, "alert.acknowledged")), 1)
	resolved := e.eventsOf(key, "alert.resolved")
	is.Equal(len(resolved), 1)
	is.Equal(resolved[0]["status"], "resolved")

	is.Equal(e.do("GET", "/v1/alerts/"+id, key, nil).data()["status"], "resolved")
	is.Equal(e.do("GET", "/v1/alerts/alt_nope", key, nil).status, http.StatusNotFound)
	is.Equal(e.do("POST", "/v1/alerts/alt_nope/resolve", key, nil).status, http.StatusNotFound)
}

func TestAlertListFilters(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	v1, v2 := e.vehicle(key, "A"), e.vehicle(key, "B")
	var ids []string
	for i, v := range []string{v1, v2, v1} {
		sev := []string{"info", "warning", "critical"}[i]
		ids = append(ids, e.created("/v1/alerts", key, map[string]any{"vehicle_id": v, "message": "m", "severity": sev})["alert_id"].(string))
		e.clock.Advance(time.Hour)
	}
	e.do("POST", "/v1/alerts/"+ids[0]+"/resolve", key, nil)
	count := func(q string) int { return len(e.alertList(key, q)) }
	is.Equal(count(""), 3)
	is.Equal(count("status=open"), 2)
	is.Equal(count("status=resolved"), 1)
	is.Equal(count("severity=critical"), 1)
	is.Equal(count("type=custom"), 3)
	is.Equal(count("type=speeding"), 0)
	is.Equal(count("vehicle_id="+v1), 2)
	is.Equal(count("from="+url.QueryEscape(T0.Add(time.Hour).Format(time.RFC3339))), 2)
	is.Equal(count("to="+url.QueryEscape(T0.Add(time.Hour).Format(time.RFC3339))), 2) // inclusive
	page := e.do("GET", "/v1/alerts?limit=2", key, nil)
	is.Equal(len(page.list()), 2)
	is.Equal(page.json()["pagination"].(map[string]any)["has_more"], true)
	for _, q := range []string{"status=closed", "type=fire", "severity=loud", "vehicle_id=nope", "from=yesterday",
		"from=" + url.QueryEscape(T0.Add(time.Hour).Format(time.RFC3339)) + "&to=" + url.QueryEscape(T0.Format(time.RFC3339)), "cursor=zzz"} {
		r := e.do("GET", "/v1/alerts?"+q, key, nil)
		is.Equal(r.status, http.StatusBadRequest) // q
	}
}

func TestAlertInputsAreContractErrors(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	_, other := e.account(fleet.PlanPro)
	foreignVeh := e.vehicle(other, "Theirs")
	foreignGeo := e.created("/v1/geofences", other, map[string]any{"name": "Theirs", "geometry": square})["geofence_id"]
	before := func() string {
		var b strings.Builder
		for _, p := range []string{"/v1/alerts", "/v1/alerts/rules", "/v1/geofences", "/v1/events?limit=500"} {
			b.Write(e.do("GET", p, key, nil).body)
		}
		return b.String()
	}
	snap := before()
	cases := []struct {
		path   string
		body   any
		status int
		fields []string
	}{
		{"/v1/alerts", map[string]any{"message": ""}, 422, []string{"message"}},
		{"/v1/alerts", map[string]any{"message": "m", "vehicle_id": foreignVeh}, 422, []string{"vehicle_id"}},
		{"/v1/alerts", map[string]any{"message": "m", "severity": "loud", "data": map[string]any{}}, 422, []string{"severity"}},
		{"/v1/alerts", map[string]any{"message": "m", "data": []int{1}}, 400, []string{"data"}}, // a wrong type
		{"/v1/alerts", map[string]any{"message": "m", "status": "resolved"}, 400, nil},
		{"/v1/alerts", `{"message": "m", "data": "text"}`, 400, []string{"data"}},
		{"/v1/alerts/rules", map[string]any{"type": "speeding"}, 422, []string{"threshold_kmh"}},
		{"/v1/alerts/rules", map[string]any{"type": "speeding", "threshold_kmh": -1, "after_minutes": 5}, 422, []string{"after_minutes", "threshold_kmh"}},
		{"/v1/alerts/rules", map[string]any{"type": "geofence_enter", "geofence_id": foreignGeo}, 422, []string{"geofence_id"}},
		{"/v1/alerts/rules", map[string]any{"type": "vehicle_offline", "after_minutes": 5, "vehicle_ids": []string{foreignVeh}}, 422, []string{"vehicle_ids[0]"}},
		{"/v1/alerts/rules", map[string]any{"type": "custom"}, 422, []string{"type"}},
		{"/v1/alerts/rules", map[string]any{"type": "speeding", "threshold_kmh": "fast"}, 400, nil},
		{"/v1/geofences", map[string]any{"name": "x", "geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{0, 0}, {1, 0}, {1, 1}, {0, 1}}}}}, 422, []string{"geometry.coordinates[0]"}},
		{"/v1/geofences", map[string]any{"name": "x", "geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{0, 0}, {1, 0}, {0, 0}}}}}, 422, []string{"geometry.coordinates[0]"}},
		{"/v1/geofences", map[string]any{"name": "x", "geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{0, 0}, {1, 95}, {1, 1}, {0, 0}}}}}, 422, []string{"geometry.coordinates[0][1]"}},
		{"/v1/geofences", map[string]any{"name": "x", "geometry": map[string]any{"type": "Point", "coordinates": []float64{0, 0}}}, 422, []string{"radius_m"}},
		{"/v1/geofences", map[string]any{"name": "x", "geometry": map[string]any{"type": "Point", "coordinates": []float64{0, 0}}, "radius_m": 0}, 422, []string{"radius_m"}},
		{"/v1/geofences", map[string]any{"name": "x", "geometry": map[string]any{"type": "Point", "coordinates": "here"}, "radius_m": 5}, 422, []string{"geometry.coordinates"}},
		{"/v1/geofences", map[string]any{"name": "x", "geometry": map[string]any{"type": "MultiPolygon", "coordinates": []int{}}}, 422, []string{"geometry.type"}},
		{"/v1/geofences", map[string]any{"name": "x"}, 422, []string{"geometry.type"}},
		{"/v1/geofences", `{"name": "x", "geometry": {"type": "Point", "coordinates": [0, 1e999]}, "radius_m": 5}`, 422, []string{"geometry.coordinates"}},
		{"/v1/geofences", map[string]any{"name": "x", "geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{square4(), longRing(fleet.MaxRingVertices + 1)}}}, 422, []string{"geometry.coordinates[1]"}},
	}
	for _, c := range cases {
		r := e.do("POST", c.path, key, c.body)
		if r.status != c.status {
			t.Fatalf("POST %s %v: %d %s", c.path, c.body, r.status, r.body)
		}
		if c.fields != nil {
			is.Equal(errorFields(r), c.fields)
		}
	}
	is.Equal(before(), snap) // nothing changed

	geo := e.created("/v1/geofences", key, map[string]any{"name": "Yard", "geometry": map[string]any{"type": "Point", "coordinates": []float64{13.4, 52.5}}, "radius_m": 300})
	gid := geo["geofence_id"].(string)
	rule := e.created("/v1/alerts/rules", key, map[string]any{"type": "geofence_exit", "geofence_id": gid})
	rid := rule["rule_id"].(string)
	r := e.do("DELETE", "/v1/geofences/"+gid, key, nil)
	is.Equal(r.status, http.StatusConflict)
	is.True(strings.Contains(r.errMessage(), rid)) // names the rule
	r = e.do("PATCH", "/v1/geofences/"+gid, key, map[string]any{"radius_m": nil})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.Equal(errorFields(r), []string{"radius_m"})
	r = e.do("PATCH", "/v1/geofences/"+gid, key, map[string]any{"geometry": square, "radius_m": nil, "name": "Square"})
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["geometry"].(map[string]any)["type"], "Polygon")
	r = e.do("PATCH", "/v1/alerts/rules/"+rid, key, map[string]any{"threshold_kmh": 50})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	r = e.do("PATCH", "/v1/alerts/rules/"+rid, key, map[string]any{"type": "speeding"})
	is.Equal(r.status, http.StatusBadRequest) // type is fixed
	r = e.do("PATCH", "/v1/alerts/rules/"+rid, key, map[string]any{"enabled": false, "severity": "info"})
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["enabled"], false)
	is.Equal(e.do("GET", "/v1/alerts/rules?geofence_id="+gid, key, nil).list()[0].(map[string]any)["rule_id"], rid)
	is.Equal(e.do("DELETE", "/v1/alerts/rules/"+rid, key, nil).status, http.StatusOK)
	is.Equal(e.do("DELETE", "/v1/geofences/"+gid, key, nil).status, http.StatusOK)
	is.Equal(e.do("GET", "/v1/geofences/"+gid, key, nil).status, http.StatusNotFound)
	is.Equal(e.do("GET", "/v1/alerts/rules/"+rid, key, nil).status, http.StatusNotFound)
}

// TestAlertsRouteNextToRules: /alerts/rules and /alerts/{alert_id} both
// route.
func TestAlertsRouteNextToRules(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	is.Equal(e.do("GET", "/v1/alerts/rules", key, nil).status, http.StatusOK)
	r := e.do("GET", "/v1/alerts/rules_x", key, nil)
	is.Equal(r.status, http.StatusNotFound)
	is.Equal(r.errCode(), "not_found")
	r = e.do("PUT", "/v1/alerts/rules", key, nil)
	is.Equal(r.status, http.StatusMethodNotAllowed)
}

// onEachStore runs test on a server over memstore, over SQLite in a file and,
// when FLEET_TEST_POSTGRES is set, over PostgreSQL.
func onEachStore(t *testing.T, test func(t *testing.T, e *env)) {
	open := map[string]func(t *testing.T) fleet.Store{
		"memstore": func(t *testing.T) fleet.Store { return memstore.New() },
		"sqlite": func(t *testing.T) fleet.Store {
			return openSQLStore(t, "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
		},
		"postgres": func(t *testing.T) fleet.Store { return openSQLStore(t, pgtest.NewDSN(t)) },
	}
	for _, name := range []string{"memstore", "sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			test(t, newEnvOn(t, open[name](t), testclock.New(T0)))
		})
	}
}

func openSQLStore(t *testing.T, dsn string) fleet.Store {
	t.Helper()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func (e *env) alertConfigVersion(accountID string) int64 {
	e.t.Helper()
	var v int64
	if err := e.store.View(ctx, func(tx fleet.Tx) (err error) { v, err = tx.AlertConfigVersion(accountID); return err }); err != nil {
		e.t.Fatal(err)
	}
	return v
}

// TestDeleteVehicleLeavesItsRules: deleting a vehicle takes it out of every
// rule that lists it, in the same change; a rule that listed only it is
// disabled, not widened to every vehicle, and the rules stay editable.
func TestDeleteVehicleLeavesItsRules(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		is := is.New(t)
		acc, key := e.account(fleet.PlanPro)
		_, otherKey := e.account(fleet.PlanPro)
		gone, kept := e.vehicle(key, "Gone"), e.vehicle(key, "Kept")
		only := e.created("/v1/alerts/rules", key, map[string]any{"type": "speeding", "threshold_kmh": 90, "vehicle_ids": []string{gone}})
		both := e.created("/v1/alerts/rules", key, map[string]any{"type": "vehicle_offline", "after_minutes": 30, "vehicle_ids": []string{gone, kept}})
		every := e.created("/v1/alerts/rules", key, map[string]any{"type": "speeding", "threshold_kmh": 120, "severity": "info"})
		theirs := e.created("/v1/alerts/rules", otherKey, map[string]any{"type": "speeding", "threshold_kmh": 90,
			"vehicle_ids": []string{e.vehicle(otherKey, "Theirs")}})
		rule := func(k string, r map[string]any) map[string]any {
			t.Helper()
			got := e.do("GET", "/v1/alerts/rules/"+r["rule_id"].(string), k, nil)
			is.Equal(got.status, http.StatusOK)
			return got.data()
		}
		t0 := e.clock.Now().Add(-time.Hour)
		// Ingest compiles the account's rules before the delete.
		is.Equal(e.do("POST", "/v1/vehicles/"+kept+"/locations", key, batch(pt(t0, 52.5, 13.4, 50))).status, http.StatusOK)
		events := len(e.do("GET", "/v1/events?limit=500", key, nil).list())
		version := e.alertConfigVersion(acc.ID)

		e.clock.Advance(time.Minute)
		is.Equal(e.do("DELETE", "/v1/vehicles/"+gone, key, nil).status, http.StatusOK)
		now := e.clock.Now().Format(time.RFC3339)
		got := rule(key, only)
		is.Equal(got["vehicle_ids"], []any{})
		is.Equal(got["enabled"], false) // disabled, not widened to every vehicle
		is.Equal(got["updated_at"], now)
		got = rule(key, both)
		is.Equal(got["vehicle_ids"], []any{kept})
		is.Equal(got["enabled"], true)
		is.Equal(got["updated_at"], now)
		is.Equal(rule(key, every), every)                                             // lists no vehicle: unchanged
		is.Equal(rule(otherKey, theirs), theirs)                                      // another account's: unchanged
		is.Equal(e.alertConfigVersion(acc.ID), version+1)                             // one change, one version
		is.Equal(len(e.do("GET", "/v1/events?limit=500", key, nil).list()), events+1) // vehicle.deleted only

		// The disabled rule judges nothing: a fast point of the vehicle left
		// opens an alert of the every-vehicle rule only.
		is.Equal(e.do("POST", "/v1/vehicles/"+kept+"/locations", key, batch(pt(t0.Add(time.Second), 52.5, 13.4, 130))).status, http.StatusOK)
		as := e.alertList(key, "type=speeding")
		is.Equal(len(as), 1)
		is.Equal(as[0]["rule_id"], every["rule_id"])

		// The rules stay editable.
		for _, r := range []map[string]any{only, both} {
			p := e.do("PATCH", "/v1/alerts/rules/"+r["rule_id"].(string), key, map[string]any{"severity": "critical"})
			is.Equal(p.status, http.StatusOK)
			is.Equal(p.data()["severity"], "critical")
		}
		is.Equal(rule(key, only)["enabled"], false)
		p := e.do("PATCH", "/v1/alerts/rules/"+only["rule_id"].(string), key, map[string]any{"vehicle_ids": []string{gone}})
		is.Equal(p.status, http.StatusUnprocessableEntity) // a deleted vehicle is no vehicle of the account
		is.Equal(errorFields(p), []string{"vehicle_ids[0]"})
		is.Equal(rule(key, only)["vehicle_ids"], []any{}) // and changes nothing
		p = e.do("PATCH", "/v1/alerts/rules/"+only["rule_id"].(string), key, map[string]any{"vehicle_ids": []string{kept}, "enabled": true})
		is.Equal(p.status, http.StatusOK)
		is.Equal(p.data()["vehicle_ids"], []any{kept})

		// A vehicle no rule lists changes no rule.
		version = e.alertConfigVersion(acc.ID)
		is.Equal(e.do("DELETE", "/v1/vehicles/"+e.vehicle(key, "Unwatched"), key, nil).status, http.StatusOK)
		is.Equal(e.alertConfigVersion(acc.ID), version)
	})
}

// TestAlertRuleAndGeofenceCaps: an account holds at most as many rules and
// geofences as its plan allows (free 20, pro 200, enterprise 1,000 each);
// one more is 409 conflict naming the plan's cap and changes nothing, other
// accounts are not affected, and deleting one makes room.
func TestAlertRuleAndGeofenceCaps(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		for _, plan := range []fleet.Plan{fleet.PlanFree, fleet.PlanPro, fleet.PlanEnterprise} {
			is := is.New(t)
			limits := plan.Limits()
			acc, key := e.account(plan)
			_, otherKey := e.account(plan)
			// All but one of each, stored directly.
			is.NoErr(e.store.Update(ctx, func(tx fleet.Tx) error {
				for range limits.AlertRules - 1 {
					if err := tx.CreateAlertRule(storetest.NewRule(acc.ID, fleet.AlertSpeeding)); err != nil {
						return err
					}
				}
				for range limits.Geofences - 1 {
					if err := tx.CreateGeofence(storetest.NewGeofence(acc.ID, "Site")); err != nil {
						return err
					}
				}
				return nil
			}))
			speeding := map[string]any{"type": "speeding", "threshold_kmh": 90}
			fence := map[string]any{"name": "Depot", "geometry": square}
			last := e.created("/v1/alerts/rules", key, speeding)
			e.created("/v1/geofences", key, fence)
			counts := func() (rules, geos int) {
				is.NoErr(e.store.View(ctx, func(tx fleet.Tx) (err error) {
					if rules, err = tx.CountAlertRules(acc.ID); err != nil {
						return err
					}
					geos, err = tx.CountGeofences(acc.ID)
					return err
				}))
				return rules, geos
			}
			version := e.alertConfigVersion(acc.ID)
			rulesCap := fmt.Sprintf("on the %s plan may have at most %d alert rules", plan, limits.AlertRules)
			for _, c := range []struct {
				path string
				body any
				cap  string
			}{
				{"/v1/alerts/rules", speeding, rulesCap},
				{"/v1/alerts/rules", map[string]any{"type": "vehicle_offline", "after_minutes": 30, "enabled": false}, rulesCap},
				{"/v1/geofences", fence, fmt.Sprintf("on the %s plan may have at most %d geofences", plan, limits.Geofences)},
			} {
				r := e.do("POST", c.path, key, c.body)
				is.Equal(r.status, http.StatusConflict)
				is.Equal(r.errCode(), "conflict")
				is.True(strings.Contains(r.errMessage(), c.cap)) // names the plan's cap
			}
			// Invalid input at the cap is still a validation error.
			r := e.do("POST", "/v1/alerts/rules", key, map[string]any{"type": "speeding"})
			is.Equal(r.status, http.StatusUnprocessableEntity)
			r = e.do("POST", "/v1/geofences", key, map[string]any{"name": ""})
			is.Equal(r.status, http.StatusUnprocessableEntity)
			rules, geos := counts()
			is.Equal(rules, limits.AlertRules) // nothing changed
			is.Equal(geos, limits.Geofences)
			is.Equal(e.alertConfigVersion(acc.ID), version)

			e.created("/v1/alerts/rules", otherKey, speeding) // per account
			e.created("/v1/geofences", otherKey, fence)

			is.Equal(e.do("DELETE", "/v1/alerts/rules/"+last["rule_id"].(string), key, nil).status, http.StatusOK)
			e.created("/v1/alerts/rules", key, speeding) // room again
			is.Equal(e.do("POST", "/v1/alerts/rules", key, speeding).status, http.StatusConflict)
		}
	})
}

// TestAlertRuleCapUnderConcurrency: simultaneous creates at the edge of the
// cap pass it by none; the rest are 409 conflict.
func TestAlertRuleCapUnderConcurrency(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		is := is.New(t)
		acc, key := e.account(fleet.PlanEnterprise)
		const room, n = 3, 8
		is.NoErr(e.store.Update(ctx, func(tx fleet.Tx) error {
			for range fleet.PlanEnterprise.Limits().AlertRules - room {
				if err := tx.CreateAlertRule(storetest.NewRule(acc.ID, fleet.AlertSpeeding)); err != nil {
					return err
				}
			}
			return nil
		}))
		statuses := simultaneously(t, n, func(int) (*env, *http.Request) {
			req, _ := http.NewRequest("POST", e.srv.URL+"/v1/alerts/rules", strings.NewReader(`{"type":"speeding","threshold_kmh":90}`))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			return e, req
		})
		is.Equal(statuses, map[int]int{http.StatusCreated: room, http.StatusConflict: n - room})
		is.NoErr(e.store.View(ctx, func(tx fleet.Tx) error {
			got, err := tx.CountAlertRules(acc.ID)
			is.Equal(got, fleet.PlanEnterprise.Limits().AlertRules)
			return err
		}))
	})
}

func square4() [][]float64 { return [][]float64{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}} }

// longRing is a closed ring of n positions inside square4.
func longRing(n int) [][]float64 {
	r := make([][]float64, n)
	for i := range n - 1 {
		a := 2 * math.Pi * float64(i) / float64(n-1)
		r[i] = []float64{5 + math.Cos(a), 5 + math.Sin(a)}
	}
	r[n-1] = r[0]
	return r
}
