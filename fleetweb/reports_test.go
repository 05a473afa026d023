package fleetweb_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/matryer/is"
)

// The Reports page shows trips, stops and daily summaries of a range of
// days as tables, with vehicles by name and times in the person's zone,
// and downloads them as fleet's CSV; a mistake in the form is said beside
// its field, and another account's vehicle is not found.
func TestReports(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC))
	e := newEnvWith(t, fleet.Options{Now: clock.Now}, fleetweb.Options{MapTiles: "off"})
	p := fleet.SystemPrincipal(e.accA)
	v, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck <7>"})
	is.NoErr(err)
	var pts []fleet.Point
	fast, slow := 40.0, 0.0
	start := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	for i := range 10 {
		pts = append(pts, fleet.Point{Latitude: 52.5 + float64(i)*0.001, Longitude: 13.4, Timestamp: start.Add(time.Duration(i) * time.Minute), Speed: &fast})
	}
	for i := range 7 {
		pts = append(pts, fleet.Point{Latitude: 52.509, Longitude: 13.4, Timestamp: start.Add(time.Duration(10+i) * time.Minute), Speed: &slow})
	}
	_, err = e.svc.IngestLocations(ctx, p, v.ID, pts)
	is.NoErr(err)
	other, err := e.svc.CreateVehicle(ctx, fleet.SystemPrincipal(e.accB), fleet.Vehicle{Name: "Bravo's"})
	is.NoErr(err)

	c := e.signedIn(t, "viewer@acme.test", viewerPassword) // reading needs no change
	get := func(q url.Values) resp { return do(t, c, "GET", e.srv.URL+"/reports?"+q.Encode(), nil) }

	form := get(url.Values{})
	is.Equal(form.status, http.StatusOK)
	is.True(strings.Contains(form.body, `<label for="report">Report</label>`))
	is.True(strings.Contains(form.body, `value="2026-11-17"`)) // the last seven days by default
	is.True(!strings.Contains(form.body, "Download CSV"))

	trips := get(url.Values{"report": {"trips"}, "vehicle_id": {v.ID}, "from": {"2026-11-23"}, "to": {"2026-11-23"}, "tz": {"UTC"}})
	is.Equal(trips.status, http.StatusOK)
	is.True(strings.Contains(trips.body, "1 row"))
	is.True(strings.Contains(trips.body, "Truck &lt;7&gt;"))      // by name, as text
	is.True(strings.Contains(trips.body, "2026-11-23 08:00 UTC")) // in the zone's words
	is.True(strings.Contains(trips.body, "Download CSV"))
	csv := do(t, c, "GET", e.srv.URL+"/reports?"+url.Values{"report": {"trips"}, "vehicle_id": {v.ID}, "from": {"2026-11-23"}, "to": {"2026-11-23"}, "tz": {"UTC"}, "format": {"csv"}}.Encode(), nil)
	is.Equal(csv.status, http.StatusOK)
	is.Equal(csv.header.Get("Content-Type"), "text/csv; charset=utf-8")
	is.True(strings.HasPrefix(csv.body, strings.Join(fleet.TripCSVHeader, ",")+"\r\n"))
	is.True(strings.Contains(csv.body, v.ID+",completed,2026-11-23T08:00:00Z"))

	stops := get(url.Values{"report": {"stops"}, "vehicle_id": {v.ID}, "from": {"2026-11-23"}, "to": {"2026-11-23"}, "tz": {"UTC"}})
	is.Equal(stops.status, http.StatusOK)
	is.True(strings.Contains(stops.body, "<th scope=\"col\">From</th>"))

	sum := get(url.Values{"report": {"summary"}, "from": {"2026-11-23"}, "to": {"2026-11-23"}, "tz": {"UTC"}})
	is.Equal(sum.status, http.StatusOK)
	is.True(strings.Contains(sum.body, "Truck &lt;7&gt;"))
	is.True(!strings.Contains(sum.body, "Bravo"))
	drivers := get(url.Values{"report": {"drivers"}, "from": {"2026-11-23"}, "to": {"2026-11-23"}, "tz": {"UTC"}})
	is.Equal(drivers.status, http.StatusOK)

	for _, tc := range []struct {
		q          url.Values
		field, say string
	}{
		{url.Values{"report": {"summary"}, "from": {"yesterday"}}, "from", "From must be a date such as 2026-11-23."},
		{url.Values{"report": {"summary"}, "from": {"2026-11-23"}, "to": {"2026-11-20"}}, "to", "To must be on or after From."},
		{url.Values{"report": {"summary"}, "from": {"2026-01-01"}, "to": {"2026-11-20"}}, "to", "To must be at most 31 days after From."},
		{url.Values{"report": {"trips"}}, "vehicle_id", "Vehicles: choose at least one for trips and stops."},
		{url.Values{"report": {"<script>"}}, "report", "Report must be one of the list."},
		{url.Values{"report": {"trips"}, "vehicle_id": {other.ID}}, "vehicle_id", "Vehicles: there is no such vehicle."},
		{url.Values{"report": {"summary"}, "vehicle_id": {v.ID, other.ID}}, "vehicle_id", "Vehicles: there is no such vehicle."},
		{url.Values{"report": {"drivers"}, "driver_id": {"drv_nope"}}, "driver_id", "Drivers: there is no such driver."},
		{url.Values{"report": {"drivers"}, "vehicle_id": {v.ID, v.ID + "x"}}, "vehicle_id", "Vehicles: a summary by driver is of one vehicle"},
	} {
		r := get(tc.q)
		is.True(r.status == http.StatusUnprocessableEntity || r.status == http.StatusNotFound) // tc.say
		i := strings.Index(r.body, `id="`+tc.field+`-error"`)
		is.True(i > 0)
		is.True(strings.Contains(r.body[i:], tc.say))
		is.True(!strings.Contains(r.body, "<script>"))
		is.True(!strings.Contains(r.body, "Bravo"))
	}
}

// A report of a chosen set of vehicles (or drivers) has the rows of those
// and no others, as a table and as CSV alike; a set too large, or one
// that names another account's vehicle, is said beside its field.
func TestReportsOfChosenVehicles(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC))
	e := newEnvWith(t, fleet.Options{Now: clock.Now}, fleetweb.Options{MapTiles: "off"})
	p := fleet.SystemPrincipal(e.accA)
	start := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	var vs []fleet.Vehicle
	var ds []fleet.Driver
	for i, name := range []string{"Alpha", "Bravo", "Charlie"} {
		v, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: name})
		is.NoErr(err)
		d, err := e.svc.CreateDriver(ctx, p, fleet.Driver{Name: name + "'s driver"})
		is.NoErr(err)
		_, err = e.svc.AssignDriver(ctx, p, v.ID, fleet.AssignTo(d.ID))
		is.NoErr(err)
		var pts []fleet.Point
		fast, slow := 40.0, 0.0
		for j := range 10 {
			pts = append(pts, fleet.Point{Latitude: 52.5 + float64(j)*0.001, Longitude: 13.4 + float64(i)*0.01, Timestamp: start.Add(time.Duration(j) * time.Minute), Speed: &fast})
		}
		for j := range 7 {
			pts = append(pts, fleet.Point{Latitude: 52.509, Longitude: 13.4 + float64(i)*0.01, Timestamp: start.Add(time.Duration(10+j) * time.Minute), Speed: &slow})
		}
		_, err = e.svc.IngestLocations(ctx, p, v.ID, pts)
		is.NoErr(err)
		vs, ds = append(vs, v), append(ds, d)
	}
	c := e.signedIn(t, "viewer@acme.test", viewerPassword)
	day := url.Values{"from": {"2026-11-23"}, "to": {"2026-11-23"}, "tz": {"UTC"}}
	query := func(report string, key string, ids ...string) url.Values {
		q := url.Values{"report": {report}, key: ids}
		for k, v := range day {
			q[k] = v
		}
		return q
	}
	for _, tc := range []struct {
		q         url.Values
		in, notIn []string // names in the table, and ids in the CSV
		inIDs     []string
	}{
		{query("trips", "vehicle_id", vs[0].ID, vs[2].ID), []string{"Alpha", "Charlie"}, []string{"Bravo"}, []string{vs[0].ID, vs[2].ID}},
		{query("stops", "vehicle_id", vs[1].ID, vs[2].ID), []string{"Bravo", "Charlie"}, []string{"Alpha"}, []string{vs[1].ID, vs[2].ID}},
		{query("summary", "vehicle_id", vs[0].ID, vs[1].ID), []string{"Alpha", "Bravo"}, []string{"Charlie"}, []string{vs[0].ID, vs[1].ID}},
		{query("drivers", "driver_id", ds[1].ID, ds[2].ID), []string{"Bravo's driver", "Charlie's driver"}, []string{"Alpha's driver"}, []string{ds[1].ID, ds[2].ID}},
	} {
		page := do(t, c, "GET", e.srv.URL+"/reports?"+tc.q.Encode(), nil)
		is.Equal(page.status, http.StatusOK)
		i := strings.Index(page.body, `<table id="report-rows"`)
		is.True(i > 0)
		table := html.UnescapeString(page.body[i:])
		for _, name := range tc.in {
			is.True(strings.Contains(table, name)) // chosen, in the table
		}
		for _, name := range tc.notIn {
			is.True(!strings.Contains(table, name)) // not chosen
		}
		for _, id := range tc.inIDs { // the choices stay chosen
			is.True(strings.Contains(page.body, `<option value="`+id+`" selected>`))
		}
		tableRows := strings.Count(table[:strings.Index(table, "</table>")], "<tr>") - 1
		is.True(tableRows >= len(tc.in))
		tc.q.Set("format", "csv")
		csv := do(t, c, "GET", e.srv.URL+"/reports?"+tc.q.Encode(), nil)
		is.Equal(csv.status, http.StatusOK)
		lines := strings.Split(strings.TrimSpace(csv.body), "\r\n")
		is.Equal(len(lines)-1, tableRows) // the CSV has the table's rows
		col := slices.Index(strings.Split(lines[0], ","), "vehicle_id")
		if tc.q.Get("report") == "drivers" {
			col = slices.Index(strings.Split(lines[0], ","), "driver_id")
		}
		is.True(col >= 0)
		seen := map[string]bool{}
		for _, l := range lines[1:] {
			seen[strings.Split(l, ",")[col]] = true
		}
		is.Equal(len(seen), len(tc.inIDs))
		for _, id := range tc.inIDs {
			is.True(seen[id])
		}
	}
	var many []string
	for i := range 101 {
		many = append(many, fmt.Sprintf("veh_%03d", i))
	}
	r := do(t, c, "GET", e.srv.URL+"/reports?"+query("summary", "vehicle_id", many...).Encode(), nil)
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, `id="vehicle_id-error" class="field-error">Vehicles: choose at most 100, or none for every vehicle.`))
}
