package fleethttp_test

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/matryer/is"
)

// drive posts a vehicle's reports every 30 s ending at the clock's time:
// 10 minutes at 50 km/h, 8 standing (a delivery), 10 driving, 6 standing.
func (e *env) drive(secret, vehicleID string) {
	e.t.Helper()
	var pts []map[string]any
	start := e.clock.Now().Add(-34 * time.Minute)
	lon := 13.0
	for i := 1; i <= 68; i++ {
		speed := 50.0
		if i > 20 && i <= 36 || i > 56 {
			speed = 0
		}
		if speed > 0 {
			lon += 0.0061 // about 0.42 km at 52 N
		}
		pts = append(pts, pt(start.Add(time.Duration(i)*30*time.Second), 52.0, lon, speed))
	}
	r := e.do("POST", "/v1/vehicles/"+vehicleID+"/locations", secret, batch(pts...))
	if r.status != http.StatusOK && r.status != http.StatusCreated {
		e.t.Fatalf("ingest: %d %s", r.status, r.body)
	}
}

func readCSV(t *testing.T, r *response) [][]string {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("Content-Type %q, body %s", ct, r.body)
	}
	if !strings.Contains(string(r.body), "\r\n") {
		t.Fatal("CSV lines must end in CRLF")
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestTripsCSV(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	vid := e.vehicle(key, "Van, \"the blue one\"")
	e.drive(key, vid)

	r := e.do("GET", "/v1/vehicles/"+vid+"/trips?limit=1", key, nil, "Accept", "text/csv")
	is.Equal(r.status, http.StatusOK)
	rows := readCSV(t, r)
	is.Equal(rows[0][:3], []string{"trip_id", "vehicle_id", "status"}) // the header row
	is.Equal(len(rows), 2)
	is.Equal(rows[1][1], vid)
	is.Equal(rows[1][2], "completed")
	next := r.header.Get(fleethttp.NextCursorHeader)
	is.True(next != "")
	r = e.do("GET", "/v1/vehicles/"+vid+"/trips?limit=1&cursor="+url.QueryEscape(next), key, nil, "Accept", "text/csv")
	rows2 := readCSV(t, r)
	is.Equal(len(rows2), 2)
	is.True(rows2[1][0] != rows[1][0])
	is.Equal(r.header.Get(fleethttp.NextCursorHeader), "") // the last page

	r = e.do("GET", "/v1/vehicles/"+vid+"/stops", key, nil, "Accept", "text/csv")
	rows = readCSV(t, r)
	is.Equal(rows[0], []string{"vehicle_id", "start", "end", "duration_seconds", "latitude", "longitude"})
	is.Equal(len(rows), 3)
	is.Equal(rows[2][2], "") // ongoing: no end

	r = e.do("GET", "/v1/reports/summary?tz=Europe/Berlin", key, nil, "Accept", "text/csv, application/json;q=0.5")
	rows = readCSV(t, r)
	is.Equal(rows[0], []string{"vehicle_id", "day", "distance_km", "trips", "driving_seconds", "stopped_seconds", "max_speed", "first_departure", "last_arrival", "idling_seconds"})
	is.Equal(len(rows), 2)
	is.Equal(rows[1][3], "2")

	// JSON unless CSV is asked for.
	r = e.do("GET", "/v1/reports/summary", key, nil)
	is.True(strings.HasPrefix(r.header.Get("Content-Type"), "application/json"))
}

// A summary's distances are to the metre in CSV as in JSON: an odometer
// from 9612.75 to 9613.45 km made 0.7 km, not 0.7000000000007276.
func TestSummaryCSVDistanceToTheMetre(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	vid := e.vehicle(key, "Van")
	start := e.clock.Now().Add(-10 * time.Minute)
	odo := 9612.4
	var pts []map[string]any
	for i := range 16 {
		speed := 0.0
		if i >= 1 && i <= 3 {
			speed, odo = 42, odo+0.35
		}
		p := pt(start.Add(time.Duration(i)*30*time.Second), 52.0, 13.0+0.005*float64(min(i, 3)), speed)
		p["odometer_km"] = odo
		pts = append(pts, p)
	}
	r := e.do("POST", "/v1/vehicles/"+vid+"/locations", key, batch(pts...))
	is.True(r.status == http.StatusOK || r.status == http.StatusCreated)
	rows := readCSV(t, e.do("GET", "/v1/reports/summary", key, nil, "Accept", "text/csv"))
	is.Equal(len(rows), 2)
	is.Equal(rows[0][2], "distance_km")
	is.Equal(rows[1][2], "0.7")
	rows = readCSV(t, e.do("GET", "/v1/vehicles/"+vid+"/trips", key, nil, "Accept", "text/csv"))
	is.Equal(rows[0][9], "distance_km")
	is.Equal(rows[1][9], "0.7")
}

func TestTripsBadInput(t *testing.T) {
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	vid := e.vehicle(key, "Van")
	e.drive(key, vid)
	_, other := e.account(fleet.PlanPro)
	otherVehicle := e.vehicle(other, "Theirs")
	tripID := e.do("GET", "/v1/vehicles/"+vid+"/trips", key, nil).list()[0].(map[string]any)["trip_id"].(string)
	for _, tc := range []struct {
		path   string
		secret string
		status int
		code   string
	}{
		{"/v1/reports/summary?tz=Mars/Olympus", key, 400, fleet.CodeInvalidRequest},
		{"/v1/reports/summary?group_by=week", key, 400, fleet.CodeInvalidRequest},
		{"/v1/reports/summary?limit=0", key, 400, fleet.CodeInvalidRequest},
		{"/v1/reports/summary?from=2026-11-22T10:00:00Z&to=2026-11-21T10:00:00Z", key, 400, fleet.CodeInvalidRequest},
		{"/v1/reports/summary?vehicle_id=" + otherVehicle, key, 404, fleet.CodeNotFound},
		{"/v1/reports/summary?from=yesterday", key, 400, fleet.CodeInvalidRequest},
		{"/v1/vehicles/" + vid + "/trips?cursor=nope", key, 400, fleet.CodeInvalidRequest},
		{"/v1/vehicles/" + vid + "/stops?limit=501", key, 400, fleet.CodeInvalidRequest},
		{"/v1/vehicles/" + otherVehicle + "/trips", key, 404, fleet.CodeNotFound},
		{"/v1/trips/" + tripID + "?include=stops", key, 400, fleet.CodeInvalidRequest},
		{"/v1/trips/" + tripID, other, 404, fleet.CodeNotFound},
		{"/v1/trips/trip_nope", key, 404, fleet.CodeNotFound},
	} {
		t.Run(tc.path, func(t *testing.T) {
			is := is.New(t)
			r := e.do("GET", tc.path, tc.secret, nil)
			is.Equal(r.status, tc.status)
			is.Equal(r.json()["error"].(map[string]any)["code"], tc.code)
		})
	}
	// Another account's summary holds none of this one's vehicles.
	rows := e.do("GET", "/v1/reports/summary", other, nil).list()
	if len(rows) != 0 {
		t.Fatalf("another account's rows: %v", rows)
	}
}

// A trip's points come at most fleet.MaxHistoryLimit to a response, paged
// with the history's cursor: points_limit and points_cursor ask for a
// page, points_pagination says whether there are more (fleetclient's
// TestClientTripPoints walks them with the client).
func TestTripPointsArePaged(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanEnterprise)
	vid := e.vehicle(key, "Long hauler")
	const n = fleet.MaxHistoryLimit + 50
	start := e.clock.Now().Add(-n * time.Second)
	for i := 0; i < n; i += fleet.MaxPointsPerVehicleBatch {
		var pts []map[string]any
		for j := i; j < min(n, i+fleet.MaxPointsPerVehicleBatch); j++ {
			pts = append(pts, pt(start.Add(time.Duration(j)*time.Second), 52.0, 13.0+float64(j)/1e5, 60))
		}
		is.Equal(e.do("POST", "/v1/vehicles/"+vid+"/locations", key, batch(pts...)).status, http.StatusOK)
	}
	trips := e.do("GET", "/v1/vehicles/"+vid+"/trips", key, nil).list()
	is.Equal(len(trips), 1)
	trip := trips[0].(map[string]any)["trip_id"].(string)

	// The first page: the most a response holds, and a cursor.
	r := e.do("GET", "/v1/trips/"+trip+"?include=points", key, nil)
	is.Equal(r.status, http.StatusOK)
	locs := r.data()["locations"].([]any)
	is.Equal(len(locs), fleet.MaxHistoryLimit)
	pg := r.data()["points_pagination"].(map[string]any)
	is.Equal(pg["has_more"], true)
	next := pg["next_cursor"].(string)
	r = e.do("GET", "/v1/trips/"+trip+"?include=points&points_cursor="+url.QueryEscape(next), key, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(len(r.data()["locations"].([]any)), 50) // the rest
	is.Equal(r.data()["points_pagination"], map[string]any{"next_cursor": nil, "has_more": false})
	is.Equal(r.data()["locations"].([]any)[0].(map[string]any)["timestamp"], start.Add(fleet.MaxHistoryLimit*time.Second).Format(time.RFC3339))

	// Without include=points: no points, no pagination, as before.
	r = e.do("GET", "/v1/trips/"+trip, key, nil)
	is.Equal(r.data()["locations"], nil)
	is.Equal(r.data()["points_pagination"], nil)

	// The history's cursor and the trip's are one form: a page of one
	// resumes the other.
	h := e.do("GET", "/v1/vehicles/"+vid+"/locations?limit=3&from="+url.QueryEscape(start.Format(time.RFC3339)), key, nil)
	is.Equal(h.status, http.StatusOK)
	hc := h.json()["pagination"].(map[string]any)["next_cursor"].(string)
	r = e.do("GET", "/v1/trips/"+trip+"?include=points&points_limit=2&points_cursor="+url.QueryEscape(hc), key, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["locations"].([]any)[0].(map[string]any)["timestamp"], start.Add(3*time.Second).Format(time.RFC3339))
	tc := r.data()["points_pagination"].(map[string]any)["next_cursor"].(string)
	h = e.do("GET", "/v1/vehicles/"+vid+"/locations?limit=1&from="+url.QueryEscape(start.Format(time.RFC3339))+"&cursor="+url.QueryEscape(tc), key, nil)
	is.Equal(h.list()[0].(map[string]any)["timestamp"], start.Add(5*time.Second).Format(time.RFC3339))

	for _, q := range []string{"include=points&points_limit=0", "include=points&points_limit=10001", "include=points&points_limit=abc",
		"include=points&points_cursor=nope", "points_limit=5", "points_cursor=" + url.QueryEscape(next)} {
		r := e.do("GET", "/v1/trips/"+trip+"?"+q, key, nil)
		is.Equal(r.status, http.StatusBadRequest) // q
		is.Equal(r.errCode(), fleet.CodeInvalidRequest)
	}
}
