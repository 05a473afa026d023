package fleetweb_test

import (
	"context"
	"net/http"
	"net/url"
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
		{url.Values{"report": {"trips"}}, "vehicle_id", "Vehicle: choose one for trips and stops."},
		{url.Values{"report": {"<script>"}}, "report", "Report must be one of the list."},
		{url.Values{"report": {"trips"}, "vehicle_id": {other.ID}}, "vehicle_id", "Vehicle: there is no such vehicle."},
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
