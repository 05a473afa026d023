package fleethttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/matryer/is"
)

// tenant is one account with a resource of every kind, to call routes on.
type tenant struct {
	key                                                        string // every permission
	keyID, vehicleID, eventID                                  string
	workOrderID, scheduleID                                    string
	spareKeyID, spareVehicleID, spareScheduleID                string // for routes that delete or rotate
	webhookID, spareWebhookID, deliveryID                      string
	alertID, ruleID, geofenceID, spareRuleID, spareGeofenceID  string
	tripID                                                     string
	deviceID, spareDeviceID                                    string
	driverID, spareDriverID                                    string
	shareLinkID, spareShareLinkID                              string
	commandID, spareCommandID                                  string
	userID, ntfRuleID, spareNtfRuleID, reportID, spareReportID string
}

func (e *env) tenant() *tenant {
	e.t.Helper()
	a, key := e.account(fleet.PlanEnterprise)
	tn := &tenant{key: key}
	u, _, err := e.svc.Operator().CreateUser(context.Background(), a.ID, fleet.UserParams{Email: a.ID + "@example.com", Name: "Ana", Role: fleet.RoleViewer}, "")
	if err != nil {
		e.t.Fatal(err)
	}
	tn.userID = u.ID
	keys := e.do("GET", "/v1/api_keys", key, nil).list()
	tn.keyID = keys[0].(map[string]any)["key_id"].(string)
	// keys:read, so that a key holding only keys:write may rotate and
	// revoke it (acting on a key needs every permission it holds).
	spare := e.do("POST", "/v1/api_keys", key, map[string]any{"name": "spare", "permissions": []string{"keys:read"}})
	tn.spareKeyID = spare.data()["key_id"].(string)
	tn.vehicleID = e.vehicle(key, "Main")
	tn.spareVehicleID = e.vehicle(key, "Spare")
	e.do("POST", "/v1/vehicles/"+tn.vehicleID+"/locations", key, batch(pt(e.clock.Now().Add(-time.Minute), 1, 1, 20)))
	tn.tripID = e.do("GET", "/v1/vehicles/"+tn.vehicleID+"/trips", key, nil).list()[0].(map[string]any)["trip_id"].(string) // the report above is moving
	tn.eventID = e.do("GET", "/v1/events", key, nil).list()[0].(map[string]any)["event_id"].(string)
	tn.workOrderID = e.do("POST", "/v1/maintenance/work_orders", key, map[string]any{"vehicle_id": tn.vehicleID, "title": "Brakes"}).data()["work_order_id"].(string)
	for _, dst := range []*string{&tn.scheduleID, &tn.spareScheduleID} {
		*dst = e.do("POST", "/v1/maintenance/schedules", key, map[string]any{"vehicle_id": tn.vehicleID, "name": "Oil", "interval_km": 10000}).data()["schedule_id"].(string)
	}
	for _, dst := range []*string{&tn.webhookID, &tn.spareWebhookID} {
		*dst = e.do("POST", "/v1/webhooks", key, map[string]any{"url": "http://127.0.0.1:9/hook"}).data()["webhook_id"].(string)
	}
	tn.deliveryID = e.do("POST", "/v1/webhooks/"+tn.webhookID+"/test", key, nil).data()["delivery"].(map[string]any)["delivery_id"].(string)
	tn.alerts(e)
	for _, dst := range []*string{&tn.deviceID, &tn.spareDeviceID} {
		*dst = e.do("POST", "/v1/devices", key, map[string]any{"identifier": newIdentifier(), "vehicle_id": tn.vehicleID}).data()["device_id"].(string)
	}
	for _, dst := range []*string{&tn.driverID, &tn.spareDriverID} {
		*dst = e.do("POST", "/v1/drivers", key, map[string]any{"name": "Ana", "identifier": newIdentifier()}).data()["driver_id"].(string)
	}
	for _, dst := range []*string{&tn.shareLinkID, &tn.spareShareLinkID} {
		*dst = e.do("POST", "/v1/share_links", key, map[string]any{"vehicle_id": tn.vehicleID,
			"expires_at": e.clock.Now().Add(time.Hour)}).data()["share_link_id"].(string)
	}
	// Through the service: the routes' own calls are the matrices' cases.
	p := fleet.SystemPrincipal(a)
	for _, dst := range []*string{&tn.commandID, &tn.spareCommandID} {
		c, err := e.svc.CreateCommand(context.Background(), p, tn.deviceID, fleet.CommandInput{Type: fleet.CommandPositionRequest})
		if err != nil {
			e.t.Fatal(err)
		}
		*dst = c.ID
	}
	for _, dst := range []*string{&tn.ntfRuleID, &tn.spareNtfRuleID} {
		r, err := e.svc.CreateNotificationRule(context.Background(), p, fleet.NotificationRuleInput{UserID: tn.userID, Events: []string{fleet.EventAlertCreated}})
		if err != nil {
			e.t.Fatal(err)
		}
		*dst = r.ID
	}
	for _, dst := range []*string{&tn.reportID, &tn.spareReportID} {
		r, err := e.svc.CreateReportSchedule(context.Background(), p, fleet.ReportScheduleInput{UserID: tn.userID, Frequency: fleet.FrequencyDaily, Hour: 7, Report: fleet.ReportTrips})
		if err != nil {
			e.t.Fatal(err)
		}
		*dst = r.ID
	}
	return tn
}

// identifiers numbers the devices the tests register: an identifier is
// unique on the server.
var identifiers atomic.Int64

func newIdentifier() string { return fmt.Sprintf("35630704%07d", identifiers.Add(1)) }

// routeCase says how to call a route: which of the tenant's ids fill its
// path, and what body to send.
type routeCase struct {
	spare bool // use the spare key, vehicle or schedule (the route deletes or rotates)
	body  func(tn *tenant, now time.Time) any
	// foreign is the status when the body names another account's
	// resource (0: the body names none).
	foreign int
}

// routeCases covers every route of the API. A route added to routes.go
// without a case here fails TestMatricesCoverEveryRoute.
var routeCases = map[string]routeCase{
	"GET /v1/account":  {},
	"GET /v1/api_keys": {},
	"POST /v1/api_keys": {body: func(*tenant, time.Time) any {
		return map[string]any{"name": "m", "permissions": []string{"keys:read"}}
	}},
	"GET /v1/api_keys/{key_id}":                {},
	"DELETE /v1/api_keys/{key_id}":             {spare: true},
	"POST /v1/api_keys/{key_id}/rotate":        {spare: true, body: func(*tenant, time.Time) any { return map[string]any{"grace_period_seconds": 60} }},
	"GET /v1/api_keys/{key_id}/usage":          {},
	"GET /v1/vehicles":                         {},
	"POST /v1/vehicles":                        {body: func(*tenant, time.Time) any { return map[string]any{"name": "New"} }},
	"GET /v1/vehicles/{vehicle_id}":            {},
	"PATCH /v1/vehicles/{vehicle_id}":          {body: func(*tenant, time.Time) any { return map[string]any{"name": "Renamed"} }},
	"DELETE /v1/vehicles/{vehicle_id}":         {spare: true},
	"GET /v1/vehicles/locations":               {},
	"GET /v1/vehicles/locations/stream":        {},
	"POST /v1/stream_tokens":                   {},
	"GET /v1/vehicles/{vehicle_id}/locations":  {},
	"GET /v1/vehicles/{vehicle_id}/trips":      {},
	"GET /v1/vehicles/{vehicle_id}/stops":      {},
	"GET /v1/trips/{trip_id}":                  {},
	"GET /v1/reports/summary":                  {},
	"GET /v1/events":                           {},
	"GET /v1/events/{event_id}":                {},
	"POST /v1/vehicles/{vehicle_id}/locations": {body: func(_ *tenant, now time.Time) any { return batch(pt(now, 2, 2, 0)) }},
	"POST /v1/vehicles/locations": {foreign: http.StatusUnprocessableEntity, body: func(tn *tenant, now time.Time) any {
		p := pt(now, 3, 3, 0)
		p["vehicle_id"] = tn.vehicleID
		return batch(p)
	}},
	"GET /v1/maintenance/work_orders": {},
	"POST /v1/maintenance/work_orders": {foreign: http.StatusUnprocessableEntity, body: func(tn *tenant, _ time.Time) any {
		return map[string]any{"vehicle_id": tn.vehicleID, "title": "Tyres"}
	}},
	"GET /v1/maintenance/work_orders/{work_order_id}":   {},
	"PATCH /v1/maintenance/work_orders/{work_order_id}": {body: func(*tenant, time.Time) any { return map[string]any{"title": "Brakes and pads"} }},
	"GET /v1/maintenance/schedules":                     {},
	"POST /v1/maintenance/schedules": {foreign: http.StatusUnprocessableEntity, body: func(tn *tenant, _ time.Time) any {
		return map[string]any{"vehicle_id": tn.vehicleID, "name": "Inspection", "interval_days": 365}
	}},
	"GET /v1/maintenance/schedules/{schedule_id}":    {},
	"PATCH /v1/maintenance/schedules/{schedule_id}":  {body: func(*tenant, time.Time) any { return map[string]any{"name": "Oil change"} }},
	"DELETE /v1/maintenance/schedules/{schedule_id}": {spare: true},
	"GET /v1/webhooks": {},
	"POST /v1/webhooks": {body: func(*tenant, time.Time) any {
		return map[string]any{"url": "http://127.0.0.1:9/new", "events": []string{"vehicle.created"}}
	}},
	"GET /v1/webhooks/{webhook_id}":                                 {},
	"PATCH /v1/webhooks/{webhook_id}":                               {body: func(*tenant, time.Time) any { return map[string]any{"description": "Ops"} }},
	"DELETE /v1/webhooks/{webhook_id}":                              {spare: true},
	"POST /v1/webhooks/{webhook_id}/rotate_secret":                  {},
	"POST /v1/webhooks/{webhook_id}/test":                           {},
	"GET /v1/webhooks/{webhook_id}/deliveries":                      {},
	"POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry": {},
	"GET /v1/alerts":                                                {},
	"POST /v1/alerts": {foreign: http.StatusUnprocessableEntity, body: func(tn *tenant, _ time.Time) any {
		return map[string]any{"vehicle_id": tn.vehicleID, "message": "Check the load"}
	}},
	"GET /v1/alerts/{alert_id}":              {},
	"POST /v1/alerts/{alert_id}/acknowledge": {},
	"POST /v1/alerts/{alert_id}/resolve":     {},
	"GET /v1/alerts/rules":                   {},
	"POST /v1/alerts/rules": {foreign: http.StatusUnprocessableEntity, body: func(tn *tenant, _ time.Time) any {
		return map[string]any{"type": "geofence_exit", "geofence_id": tn.geofenceID, "vehicle_ids": []string{tn.vehicleID}}
	}},
	"GET /v1/alerts/rules/{rule_id}":    {},
	"PATCH /v1/alerts/rules/{rule_id}":  {body: func(*tenant, time.Time) any { return map[string]any{"severity": "critical"} }},
	"DELETE /v1/alerts/rules/{rule_id}": {spare: true},
	"GET /v1/geofences":                 {},
	"POST /v1/geofences": {body: func(*tenant, time.Time) any {
		return map[string]any{"name": "Yard", "geometry": map[string]any{"type": "Point", "coordinates": []float64{13.4, 52.5}}, "radius_m": 200}
	}},
	"GET /v1/geofences/{geofence_id}":    {},
	"PATCH /v1/geofences/{geofence_id}":  {body: func(*tenant, time.Time) any { return map[string]any{"name": "Depot north"} }},
	"DELETE /v1/geofences/{geofence_id}": {spare: true},
	"GET /v1/devices":                    {},
	"POST /v1/devices": {foreign: http.StatusUnprocessableEntity, body: func(tn *tenant, _ time.Time) any {
		return map[string]any{"identifier": newIdentifier(), "vehicle_id": tn.vehicleID, "name": "Cab unit"}
	}},
	"GET /v1/devices/{device_id}":    {},
	"PATCH /v1/devices/{device_id}":  {body: func(*tenant, time.Time) any { return map[string]any{"name": "Trailer unit"} }},
	"DELETE /v1/devices/{device_id}": {spare: true},
	"POST /v1/devices/{device_id}/commands": {body: func(*tenant, time.Time) any {
		return map[string]any{"type": "set_interval", "seconds": 30}
	}},
	"GET /v1/devices/{device_id}/commands":  {},
	"GET /v1/commands/{command_id}":         {},
	"POST /v1/commands/{command_id}/cancel": {spare: true},
	"GET /v1/drivers":                       {},
	"POST /v1/drivers": {body: func(*tenant, time.Time) any {
		return map[string]any{"name": "Bo Berg", "identifier": newIdentifier(), "phone": "+49 30 1234567", "email": "bo@example.com",
			"license_number": "B072RRE2I55", "license_expires_on": "2029-03-31", "notes": "Nights.", "external_id": "hr-" + newIdentifier()}
	}},
	"GET /v1/drivers/{driver_id}":    {},
	"PATCH /v1/drivers/{driver_id}":  {body: func(*tenant, time.Time) any { return map[string]any{"name": "Ana Lima", "phone": nil} }},
	"DELETE /v1/drivers/{driver_id}": {spare: true},
	"PUT /v1/vehicles/{vehicle_id}/driver": {body: func(tn *tenant, _ time.Time) any {
		return map[string]any{"driver_id": tn.driverID}
	}},
	"GET /v1/share_links": {},
	"POST /v1/share_links": {foreign: http.StatusNotFound, body: func(tn *tenant, now time.Time) any {
		return map[string]any{"vehicle_id": tn.vehicleID, "expires_at": now.Add(8 * time.Hour)}
	}},
	"GET /v1/share_links/{share_link_id}":    {},
	"DELETE /v1/share_links/{share_link_id}": {spare: true},
	"GET /v1/users":                          {},
	"GET /v1/notification_rules":             {},
	"POST /v1/notification_rules": {foreign: http.StatusUnprocessableEntity, body: func(tn *tenant, _ time.Time) any {
		return map[string]any{"user_id": tn.userID, "events": []string{"alert.created", "vehicle.status_changed"}, "vehicle_ids": []string{tn.vehicleID},
			"quiet_hours": map[string]any{"tz": "Europe/Berlin", "from": "22:00", "to": "07:00"}}
	}},
	"GET /v1/notification_rules/{notification_rule_id}":    {},
	"PATCH /v1/notification_rules/{notification_rule_id}":  {body: func(*tenant, time.Time) any { return map[string]any{"digest_minutes": 15, "quiet_hours": nil} }},
	"DELETE /v1/notification_rules/{notification_rule_id}": {spare: true},
	"GET /v1/report_schedules":                             {},
	"POST /v1/report_schedules": {foreign: http.StatusUnprocessableEntity, body: func(tn *tenant, _ time.Time) any {
		return map[string]any{"user_id": tn.userID, "frequency": "weekly", "weekday": "friday", "hour": 17, "tz": "Europe/Berlin",
			"report": "summary", "vehicle_ids": []string{tn.vehicleID}}
	}},
	"GET /v1/report_schedules/{report_schedule_id}":    {},
	"PATCH /v1/report_schedules/{report_schedule_id}":  {body: func(*tenant, time.Time) any { return map[string]any{"hour": 6} }},
	"DELETE /v1/report_schedules/{report_schedule_id}": {spare: true},
}

// alerts gives the tenant an alert, a geofence named by a rule, and a
// spare rule and geofence to delete.
func (tn *tenant) alerts(e *env) {
	e.t.Helper()
	tn.alertID = e.do("POST", "/v1/alerts", tn.key, map[string]any{"vehicle_id": tn.vehicleID, "message": "Tyre pressure low"}).data()["alert_id"].(string)
	for _, dst := range []*string{&tn.geofenceID, &tn.spareGeofenceID} {
		*dst = e.do("POST", "/v1/geofences", tn.key, map[string]any{"name": "Depot",
			"geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{13, 52}, {14, 52}, {14, 53}, {13, 52}}}}}).data()["geofence_id"].(string)
	}
	for _, dst := range []*string{&tn.ruleID, &tn.spareRuleID} {
		*dst = e.do("POST", "/v1/alerts/rules", tn.key, map[string]any{"type": "geofence_enter", "geofence_id": tn.geofenceID}).data()["rule_id"].(string)
	}
}

func fill(pattern string, tn *tenant, spare bool) string {
	keyID, vehID, schID, whID, ruleID, geoID, devID, drvID, shrID := tn.keyID, tn.vehicleID, tn.scheduleID, tn.webhookID, tn.ruleID, tn.geofenceID, tn.deviceID, tn.driverID, tn.shareLinkID
	ntfID, rptID, cmdID := tn.ntfRuleID, tn.reportID, tn.commandID
	if spare {
		cmdID = tn.spareCommandID
		keyID, vehID, schID, whID, ruleID, geoID, devID, drvID, shrID = tn.spareKeyID, tn.spareVehicleID, tn.spareScheduleID, tn.spareWebhookID, tn.spareRuleID, tn.spareGeofenceID, tn.spareDeviceID, tn.spareDriverID, tn.spareShareLinkID
		ntfID, rptID = tn.spareNtfRuleID, tn.spareReportID
	}
	return strings.NewReplacer("{key_id}", keyID, "{vehicle_id}", vehID, "{event_id}", tn.eventID,
		"{work_order_id}", tn.workOrderID, "{schedule_id}", schID, "{webhook_id}", whID, "{delivery_id}", tn.deliveryID,
		"{alert_id}", tn.alertID, "{rule_id}", ruleID, "{geofence_id}", geoID, "{trip_id}", tn.tripID, "{device_id}", devID, "{driver_id}", drvID,
		"{share_link_id}", shrID, "{notification_rule_id}", ntfID, "{report_schedule_id}", rptID, "{command_id}", cmdID).Replace(pattern)
}

// call sends one route's request. The event stream is cut once its
// headers arrive; everything else goes through the validating client.
func (e *env) call(method, path, secret string, body any) (int, http.Header) {
	e.t.Helper()
	if strings.HasSuffix(path, "/stream") {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, method, e.srv.URL+path, nil)
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		res, err := e.srv.Client().Do(req)
		if err != nil {
			e.t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			io.ReadAll(res.Body)
		}
		res.Body.Close()
		return res.StatusCode, res.Header
	}
	r := e.do(method, path, secret, body)
	return r.status, r.header
}

func routeList(t *testing.T, e *env) []fleethttp.RouteInfo {
	t.Helper()
	return fleethttp.NewHandler(e.svc).Routes()
}

func TestMatricesCoverEveryRoute(t *testing.T) {
	e := newEnv(t)
	for _, rt := range routeList(t, e) {
		if _, ok := routeCases[rt.Method+" "+rt.Pattern]; !ok {
			t.Errorf("route %s %s has no case in routeCases: add one so the matrices cover it", rt.Method, rt.Pattern)
		}
	}
}

// TestTenantIsolationMatrix: every route that takes an id, called with
// another account's id, is 404 and changes nothing; lists show only the
// caller's data.
func TestTenantIsolationMatrix(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.tenant(), e.tenant()
	snapshot := func() string {
		var b strings.Builder
		for _, p := range []string{"/v1/api_keys", "/v1/vehicles", "/v1/events?limit=500", "/v1/vehicles/locations",
			"/v1/vehicles/" + bob.vehicleID + "/locations", "/v1/api_keys/" + bob.spareKeyID,
			"/v1/maintenance/work_orders", "/v1/maintenance/schedules", "/v1/webhooks", "/v1/webhooks/" + bob.webhookID + "/deliveries",
			"/v1/alerts", "/v1/alerts/rules", "/v1/geofences", "/v1/devices", "/v1/drivers", "/v1/share_links", "/v1/vehicles/" + bob.vehicleID,
			"/v1/users", "/v1/notification_rules", "/v1/report_schedules"} {
			b.Write(e.do("GET", p, bob.key, nil).body)
		}
		return b.String()
	}
	before := snapshot()
	now := e.clock.Now()
	for _, rt := range routeList(t, e) {
		c := routeCases[rt.Method+" "+rt.Pattern]
		t.Run(rt.Method+" "+rt.Pattern, func(t *testing.T) {
			is := is.New(t)
			var body any
			if c.body != nil {
				body = c.body(bob, now)
			}
			status, _ := e.call(rt.Method, fill(rt.Pattern, bob, c.spare), alice.key, body)
			switch {
			case strings.Contains(rt.Pattern, "{"):
				is.Equal(status, http.StatusNotFound)
			case c.foreign != 0:
				is.Equal(status, c.foreign) // another account's id in the body is refused by name
			}
		})
	}
	is.New(t).Equal(snapshot(), before) // nothing of bob's changed
	for _, p := range []string{"/v1/api_keys", "/v1/vehicles", "/v1/events?limit=500", "/v1/vehicles/locations",
		"/v1/maintenance/work_orders", "/v1/maintenance/schedules", "/v1/webhooks", "/v1/alerts", "/v1/alerts/rules", "/v1/geofences", "/v1/devices", "/v1/drivers",
		"/v1/share_links", "/v1/users", "/v1/notification_rules", "/v1/report_schedules", "/v1/devices/" + alice.deviceID + "/commands"} {
		body := string(e.do("GET", p, alice.key, nil).body)
		for _, id := range []string{bob.keyID, bob.spareKeyID, bob.vehicleID, bob.spareVehicleID, bob.eventID, bob.workOrderID, bob.scheduleID,
			bob.webhookID, bob.alertID, bob.ruleID, bob.geofenceID, bob.deviceID, bob.spareDeviceID, bob.driverID, bob.spareDriverID,
			bob.shareLinkID, bob.spareShareLinkID, bob.userID, bob.ntfRuleID, bob.reportID, bob.commandID, bob.spareCommandID} {
			if strings.Contains(body, id) {
				t.Errorf("%s lists %s of another account", p, id)
			}
		}
	}
}

// TestPermissionMatrix: every route is 403 for a key holding every
// permission but the one it needs (and the write that implies it), and
// succeeds, with the success status the document gives it, for a key
// holding only that one.
func TestPermissionMatrix(t *testing.T) {
	e := newEnv(t)
	now := e.clock.Now()
	for _, rt := range routeList(t, e) {
		c := routeCases[rt.Method+" "+rt.Pattern]
		t.Run(rt.Method+" "+rt.Pattern, func(t *testing.T) {
			is := is.New(t)
			tn := e.tenant() // of its own, so what another route deleted or rotated is still there
			var body any
			if c.body != nil {
				body = c.body(tn, now)
			}
			if rt.Permission != "" {
				var others []string
				implied := strings.TrimSuffix(rt.Permission, ":read") + ":write"
				for _, p := range fleet.AllPermissions() {
					if p != rt.Permission && p != implied {
						others = append(others, p)
					}
				}
				without := e.keyWith(tn.key, others...)
				status, _ := e.call(rt.Method, fill(rt.Pattern, tn, c.spare), without, body)
				is.Equal(status, http.StatusForbidden)
			}
			perms := []string{rt.Permission}
			if rt.Permission == "" {
				perms = []string{fleet.PermEventsRead}
			}
			only := e.keyWith(tn.key, perms...)
			status, _ := e.call(rt.Method, fill(rt.Pattern, tn, c.spare), only, body)
			is.Equal(status, successStatus(t, rt)) // the route did its work
		})
	}
}

// successStatus is the 2xx status the document gives a route.
func successStatus(t *testing.T, rt fleethttp.RouteInfo) int {
	t.Helper()
	item := docData.Paths.Find(strings.TrimPrefix(rt.Pattern, "/v1"))
	if item == nil || item.GetOperation(rt.Method) == nil {
		t.Fatalf("%s %s is not in the document", rt.Method, rt.Pattern)
	}
	for code := range item.GetOperation(rt.Method).Responses.Map() {
		if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 {
			return n
		}
	}
	t.Fatalf("%s %s has no success response in the document", rt.Method, rt.Pattern)
	return 0
}

// TestAuthenticationMatrix: every route without a key, with a malformed,
// unknown, revoked or expired key is 401 with the rate-limit headers.
func TestAuthenticationMatrix(t *testing.T) {
	e := newEnv(t)
	tn := e.tenant()
	revoked := e.keyWith(tn.key, "*")
	for _, k := range e.do("GET", "/v1/api_keys?limit=500", tn.key, nil).list() {
		if km := k.(map[string]any); km["prefix"] == revoked[:12] {
			e.do("DELETE", "/v1/api_keys/"+km["key_id"].(string), tn.key, nil)
		}
	}
	exp := e.do("POST", "/v1/api_keys", tn.key, map[string]any{"name": "short", "expires_at": e.clock.Now().Add(time.Minute).Format(time.RFC3339)})
	expired := exp.data()["key"].(string)
	e.clock.Advance(2 * time.Minute)
	keys := map[string]string{"none": "", "malformed": "fleet_short", "unknown": fleet.NewSecret(), "revoked": revoked, "expired": expired}
	now := e.clock.Now()
	for _, rt := range routeList(t, e) {
		c := routeCases[rt.Method+" "+rt.Pattern]
		for name, key := range keys {
			t.Run(rt.Method+" "+rt.Pattern+" "+name, func(t *testing.T) {
				is := is.New(t)
				var body any
				if c.body != nil {
					body = c.body(tn, now)
				}
				e.clock.Advance(time.Hour) // a fresh per-address window for each call
				status, hd := e.call(rt.Method, fill(rt.Pattern, tn, c.spare), key, body)
				is.Equal(status, http.StatusUnauthorized)
				is.True(hd.Get("X-RateLimit-Limit") != "" && hd.Get("X-RateLimit-Reset") != "" && hd.Get("RateLimit") != "")
			})
		}
	}
}
