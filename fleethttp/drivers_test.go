package fleethttp_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// Drivers over HTTP, on every store; every answer is checked against the
// OpenAPI document by e.do.
func TestDriversOverHTTP(t *testing.T) {
	onEachStore(t, testDriversOverHTTP)
}

func testDriversOverHTTP(t *testing.T, e *env) {
	is := is.New(t)
	_, key := e.account(fleet.PlanPro)
	truck := e.vehicle(key, "Truck 7")
	van := e.vehicle(key, "Van 2")

	r := e.do("POST", "/v1/drivers", key, map[string]any{"name": "Ana Lima", "identifier": "01A2B3C4D5E6F708", "phone": "+351 912 345 678",
		"email": "ana@example.com", "license_number": "L-1234", "license_expires_on": "2029-03-31", "notes": "Nights.\nForklift.", "external_id": "hr-17"})
	is.Equal(r.status, http.StatusCreated)
	d := r.data()
	ana := d["driver_id"].(string)
	is.True(strings.HasPrefix(ana, "drv_"))
	is.Equal(d["vehicle_id"], nil)
	is.Equal(d["license_expires_on"], "2029-03-31")
	is.Equal(d["created_at"], T0.Format(time.RFC3339))
	r = e.do("POST", "/v1/drivers", key, map[string]any{"name": "Bo Berg"})
	is.Equal(r.status, http.StatusCreated)
	bo := r.data()["driver_id"].(string)
	is.Equal(r.data()["identifier"], nil) // optional fields unset are null
	is.Equal(r.data()["phone"], nil)
	is.Equal(e.do("GET", "/v1/drivers/"+ana, key, nil).data()["name"], "Ana Lima")

	// Bad input, each refused by name, nothing stored.
	long := strings.Repeat("x", 101)
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		field  string
	}{
		{"empty", map[string]any{}, 422, "name"},
		{"blank name", map[string]any{"name": "   "}, 422, "name"},
		{"name too long", map[string]any{"name": long}, 422, "name"},
		{"name of the wrong type", map[string]any{"name": 7}, 400, "name"},
		{"identifier too long", map[string]any{"name": "Cy", "identifier": strings.Repeat("A", 65)}, 422, "identifier"},
		{"identifier with a space", map[string]any{"name": "Cy", "identifier": "01 A2"}, 422, "identifier"},
		{"identifier of the wrong type", map[string]any{"name": "Cy", "identifier": 1234}, 400, "identifier"},
		{"e-mail", map[string]any{"name": "Cy", "email": "cy at example"}, 422, "email"},
		{"phone", map[string]any{"name": "Cy", "phone": "ring ring"}, 422, "phone"},
		{"date", map[string]any{"name": "Cy", "license_expires_on": "2029-13-01"}, 422, "license_expires_on"},
		{"external id too long", map[string]any{"name": "Cy", "external_id": long}, 422, "external_id"},
		{"read-only vehicle_id", map[string]any{"name": "Cy", "vehicle_id": truck}, 400, ""},
		{"taken identifier, in another case", map[string]any{"name": "Cy", "identifier": "01a2b3c4d5e6f708"}, 409, "identifier"},
		{"taken external id", map[string]any{"name": "Cy", "external_id": "hr-17"}, 409, "external_id"},
	} {
		r := e.do("POST", "/v1/drivers", key, c.body)
		if r.status != c.status || c.field != "" && !namesField(r, c.field) {
			t.Errorf("%s: %d %s, want %d naming %s", c.name, r.status, r.body, c.status, c.field)
		}
	}
	is.Equal(len(e.do("GET", "/v1/drivers", key, nil).list()), 2) // nothing stored

	// Merge patch.
	e.clock.Advance(time.Minute)
	r = e.do("PATCH", "/v1/drivers/"+ana, key, map[string]any{"phone": nil, "notes": "Days."})
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["phone"], nil)
	is.Equal(r.data()["notes"], "Days.")
	is.Equal(r.data()["email"], "ana@example.com") // absent: unchanged
	is.Equal(r.data()["updated_at"], T0.Add(time.Minute).Format(time.RFC3339))
	for _, c := range []struct {
		body   map[string]any
		status int
		field  string
	}{
		{map[string]any{"name": nil}, 422, "name"},
		{map[string]any{"name": ""}, 422, "name"},
		{map[string]any{"identifier": "Tab\there"}, 422, "identifier"},
		{map[string]any{"notes": strings.Repeat("n", 2001)}, 422, "notes"},
		{map[string]any{"notes": []string{"x"}}, 400, "notes"},
		{map[string]any{"vehicle_id": truck}, 400, ""},
		{map[string]any{"identifier": "01A2B3C4D5E6F708"}, 409, "identifier"}, // Ana's
	} {
		r := e.do("PATCH", "/v1/drivers/"+bo, key, c.body)
		if r.status != c.status || c.field != "" && !namesField(r, c.field) {
			t.Errorf("PATCH %v: %d %s, want %d naming %s", c.body, r.status, r.body, c.status, c.field)
		}
	}
	is.Equal(e.do("GET", "/v1/drivers/"+bo, key, nil).data()["identifier"], nil) // unchanged

	// Another account sees none of it, and names none of it.
	_, other := e.account(fleet.PlanPro)
	theirs := e.do("POST", "/v1/drivers", other, map[string]any{"name": "Theirs", "identifier": "01A2B3C4D5E6F708"}) // their own namespace
	is.Equal(theirs.status, http.StatusCreated)
	theirDriver := theirs.data()["driver_id"].(string)
	theirVan := e.vehicle(other, "Their van")
	is.Equal(e.do("GET", "/v1/drivers/"+ana, other, nil).status, http.StatusNotFound)
	is.Equal(e.do("PATCH", "/v1/drivers/"+ana, other, map[string]any{"name": "Stolen"}).status, http.StatusNotFound)
	is.Equal(e.do("DELETE", "/v1/drivers/"+ana, other, nil).status, http.StatusNotFound)
	is.Equal(len(e.do("GET", "/v1/drivers", other, nil).list()), 1)
	is.Equal(e.do("GET", "/v1/drivers/drv_nope", key, nil).status, http.StatusNotFound)

	// Assignment.
	r = e.do("PUT", "/v1/vehicles/"+truck+"/driver", key, map[string]any{"driver_id": ana})
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data(), map[string]any{"vehicle_id": truck, "driver_id": ana})
	is.Equal(e.do("GET", "/v1/vehicles/"+truck, key, nil).data()["driver_id"], ana)
	is.Equal(e.do("GET", "/v1/drivers/"+ana, key, nil).data()["vehicle_id"], truck)
	l := e.do("GET", "/v1/drivers?vehicle_id="+truck, key, nil).list()
	is.Equal(len(l), 1)
	is.Equal(l[0].(map[string]any)["driver_id"], ana)
	// She moves to the van: the truck has no driver.
	is.Equal(e.do("PUT", "/v1/vehicles/"+van+"/driver", key, map[string]any{"driver_id": ana}).status, http.StatusOK)
	is.Equal(e.do("GET", "/v1/vehicles/"+truck, key, nil).data()["driver_id"], nil)
	evs := e.do("GET", "/v1/events?type=vehicle.driver_changed", key, nil).list()
	is.Equal(len(evs), 3)
	left := evs[1].(map[string]any)["data"].(map[string]any)
	is.Equal(left, map[string]any{"vehicle_id": truck, "from": ana, "to": nil, "identifier": nil, "at": e.clock.Now().Format(time.RFC3339)})
	for _, c := range []struct {
		path   string
		body   any
		status int
		field  string
	}{
		{"/v1/vehicles/" + truck + "/driver", map[string]any{}, 422, "driver_id"},
		{"/v1/vehicles/" + truck + "/driver", map[string]any{"driver_id": 7}, 400, "driver_id"},
		{"/v1/vehicles/" + truck + "/driver", map[string]any{"driver_id": theirDriver}, 422, "driver_id"},
		{"/v1/vehicles/" + truck + "/driver", map[string]any{"driver_id": "drv_nope"}, 422, "driver_id"},
		{"/v1/vehicles/" + truck + "/driver", map[string]any{"driver_id": ana, "vehicle_id": van}, 400, ""},
		{"/v1/vehicles/" + theirVan + "/driver", map[string]any{"driver_id": ana}, 404, ""},
		{"/v1/vehicles/veh_nope/driver", map[string]any{"driver_id": nil}, 404, ""},
	} {
		r := e.do("PUT", c.path, key, c.body)
		if r.status != c.status || c.field != "" && !namesField(r, c.field) {
			t.Errorf("PUT %s %v: %d %s, want %d naming %s", c.path, c.body, r.status, r.body, c.status, c.field)
		}
	}
	is.Equal(len(e.do("GET", "/v1/events?type=vehicle.driver_changed", key, nil).list()), 3) // none changed anything
	r = e.do("PUT", "/v1/vehicles/"+van+"/driver", key, map[string]any{"driver_id": nil})
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data(), map[string]any{"vehicle_id": van, "driver_id": nil})

	// Deleting a driver clears their vehicle.
	is.Equal(e.do("PUT", "/v1/vehicles/"+van+"/driver", key, map[string]any{"driver_id": bo}).status, http.StatusOK)
	r = e.do("DELETE", "/v1/drivers/"+bo, key, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data(), map[string]any{"driver_id": bo, "deleted": true})
	is.Equal(e.do("GET", "/v1/vehicles/"+van, key, nil).data()["driver_id"], nil)
	is.Equal(e.do("GET", "/v1/drivers/"+bo, key, nil).status, http.StatusNotFound)

	// Filters that can name no driver are 400.
	for _, q := range []string{"identifier=" + url.QueryEscape("a b"), "vehicle_id=truck", "q=%00"} {
		is.Equal(e.do("GET", "/v1/drivers?"+q, key, nil).status, http.StatusBadRequest)
	}
	l = e.do("GET", "/v1/drivers?identifier=01a2b3c4d5e6f708", key, nil).list()
	is.Equal(len(l), 1) // the key in any case
	is.Equal(len(e.do("GET", "/v1/drivers?q=lima", key, nil).list()), 1)
}

// The plan caps drivers as it caps devices: the free plan's eleventh is
// 409 naming the cap.
func TestDriverCapOverHTTP(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanFree)
	for i := range 10 {
		is.Equal(e.do("POST", "/v1/drivers", key, map[string]any{"name": "Driver " + string(rune('A'+i))}).status, http.StatusCreated)
	}
	r := e.do("POST", "/v1/drivers", key, map[string]any{"name": "One too many"})
	is.Equal(r.status, http.StatusConflict)
	is.True(strings.Contains(r.errMessage(), "free plan may have at most 10 drivers"))
}

// The summary by driver, with a fixed clock and a time zone: Ana's drive
// over midnight in Berlin splits into two days, the halt within it is
// idling, and the van's later trip without a driver comes last; as JSON
// and as CSV, a page at a time. Trips carry the driver, in both forms.
func TestSummaryByDriverOverHTTP(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	van := e.vehicle(key, "Van")
	ana := e.do("POST", "/v1/drivers", key, map[string]any{"name": "Ana"}).data()["driver_id"].(string)
	is.Equal(e.do("PUT", "/v1/vehicles/"+van+"/driver", key, map[string]any{"driver_id": ana}).status, http.StatusOK)
	// 23:50 to 00:04 in Berlin (22:50 to 23:04 UTC): 5 minutes at 60
	// km/h, a 2-minute halt (90 s idling between its reports), 7 minutes
	// at 60 km/h, then parked.
	start := time.Date(2026, 11, 22, 22, 50, 0, 0, time.UTC)
	e.clock.Set(start.Add(40 * time.Minute))
	var pts []map[string]any
	at, lon := start, 13.0
	add := func(n int, speed float64) {
		for range n {
			at = at.Add(30 * time.Second)
			if speed > 0 {
				lon += 0.0073 // about 0.5 km at 52 N
			}
			pts = append(pts, pt(at, 52.0, lon, speed))
		}
	}
	pts = append(pts, pt(start, 52.0, lon, 0))
	add(10, 60)
	add(4, 0)
	add(14, 60)
	add(14, 0)
	is.Equal(e.do("POST", "/v1/vehicles/"+van+"/locations", key, batch(pts...)).status, http.StatusOK)
	// Cleared, the van drives again at 23:20 UTC (00:20 Berlin).
	is.Equal(e.do("PUT", "/v1/vehicles/"+van+"/driver", key, map[string]any{"driver_id": nil}).status, http.StatusOK)
	pts, at = pts[:0], start.Add(30*time.Minute)
	add(6, 40)
	add(12, 0)
	is.Equal(e.do("POST", "/v1/vehicles/"+van+"/locations", key, batch(pts...)).status, http.StatusOK)

	trips := e.do("GET", "/v1/vehicles/"+van+"/trips?from=2026-11-22T22:00:00Z", key, nil).list()
	is.Equal(len(trips), 2)
	is.Equal(trips[0].(map[string]any)["driver_id"], ana)
	is.Equal(trips[1].(map[string]any)["driver_id"], nil)
	rows := readCSV(t, e.do("GET", "/v1/vehicles/"+van+"/trips?from=2026-11-22T22:00:00Z", key, nil, "Accept", "text/csv"))
	is.Equal(rows[0][len(rows[0])-1], "driver_id")
	is.Equal(rows[1][len(rows[1])-1], ana)
	is.Equal(rows[2][len(rows[2])-1], "")

	q := "/v1/reports/summary?group_by=driver&tz=Europe/Berlin&from=2026-11-22T22:00:00Z"
	list := e.do("GET", q, key, nil).list()
	is.Equal(len(list), 3)
	row := func(i int) map[string]any { return list[i].(map[string]any) }
	is.Equal(row(0)["driver_id"], ana)
	is.Equal(row(0)["day"], "2026-11-22")
	is.Equal(row(0)["trips"], 1.0)
	is.Equal(row(0)["idling_seconds"], 90.0)
	is.Equal(row(0)["first_departure"], "2026-11-22T22:50:30Z")
	is.Equal(row(0)["last_arrival"], nil) // it ends the next day
	is.Equal(row(1)["driver_id"], ana)
	is.Equal(row(1)["day"], "2026-11-23")
	is.Equal(row(1)["trips"], 0.0)
	is.Equal(row(1)["idling_seconds"], 0.0)
	is.Equal(row(1)["last_arrival"], "2026-11-22T23:04:00Z")
	is.Equal(row(2)["driver_id"], nil)
	is.Equal(row(2)["day"], "2026-11-23")
	is.Equal(row(2)["trips"], 1.0)
	is.Equal(row(2)["max_speed"], 40.0)
	_, hasStopped := row(0)["stopped_seconds"]
	is.True(!hasStopped) // a stop is a vehicle's
	dist := row(0)["distance_km"].(float64) + row(1)["distance_km"].(float64)
	is.True(dist > 11.4 && dist < 11.6) // 23 steps of 0.5 km, the halt none
	is.Equal(row(0)["driving_seconds"].(float64)+row(1)["driving_seconds"].(float64)+90, 13.5*60.0)

	// A page at a time, in the same order.
	var walked []any
	next := q + "&limit=1"
	for {
		r := e.do("GET", next, key, nil)
		walked = append(walked, r.list()...)
		pg := r.json()["pagination"].(map[string]any)
		if pg["has_more"] != true {
			break
		}
		next = q + "&limit=1&cursor=" + url.QueryEscape(pg["next_cursor"].(string))
	}
	is.Equal(walked, list)

	csvRows := readCSV(t, e.do("GET", q, key, nil, "Accept", "text/csv"))
	is.Equal(csvRows[0], []string{"driver_id", "day", "distance_km", "trips", "driving_seconds", "idling_seconds", "max_speed", "first_departure", "last_arrival"})
	is.Equal(len(csvRows), 4)
	is.Equal(csvRows[1][:2], []string{ana, "2026-11-22"})
	is.Equal(csvRows[1][5], "90")
	is.Equal(csvRows[3][:2], []string{"", "2026-11-23"}) // no driver: empty

	// By vehicle, the day's idling too.
	byVehicle := e.do("GET", "/v1/reports/summary?group_by=vehicle&from=2026-11-22T22:00:00Z", key, nil).list()
	is.Equal(len(byVehicle), 1)
	is.Equal(byVehicle[0].(map[string]any)["idling_seconds"], 90.0)

	// The deleted driver's trips still count under their id.
	is.Equal(e.do("DELETE", "/v1/drivers/"+ana, key, nil).status, http.StatusOK)
	is.Equal(e.do("GET", q, key, nil).list(), list)
	for _, bad := range []string{"&tz=Mars/Olympus", "&limit=0", "&cursor=nope"} {
		is.Equal(e.do("GET", q+bad, key, nil).status, http.StatusBadRequest)
	}
}
