package fleetweb_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/matryer/is"
)

var vehicleNameRE = regexp.MustCompile(`<td data-label="Name" class="title"><a href="/vehicles/(veh_[0-9a-z]+)">([^<]+)</a>`)

// listed returns the names of the vehicles a page of /vehicles lists, in
// its order.
func listed(body string) []string {
	var out []string
	for _, m := range vehicleNameRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[2])
	}
	return out
}

// fleetOf makes n vehicles "Truck 1" to "Truck n" in the account, the even
// ones tagged north and the odd ones south; Truck 1 to 5 report, Truck k
// k minutes ago, the odd ones moving at 50 km/h.
func fleetOf(t *testing.T, svc *fleet.Service, acc fleet.Account, now time.Time, n int) map[string]fleet.Vehicle {
	t.Helper()
	ctx := context.Background()
	p := fleet.SystemPrincipal(acc)
	out := map[string]fleet.Vehicle{}
	for i := 1; i <= n; i++ {
		tag := "north"
		if i%2 == 1 {
			tag = "south"
		}
		v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Truck %d", i), Tags: []string{tag}, LicensePlate: fmt.Sprintf("B-FL %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if i <= 5 {
			sp := float64(50 * (i % 2))
			if _, err := svc.IngestLocations(ctx, p, v.ID, []fleet.Point{{Latitude: 52.5, Longitude: 13.4, Timestamp: now.Add(-time.Duration(i) * time.Minute), Speed: &sp}}); err != nil {
				t.Fatal(err)
			}
			v, _ = svc.Vehicle(ctx, p, v.ID)
		}
		out[v.Name] = v
	}
	return out
}

// The vehicles list: sorted by name as a person sorts (Truck 2 before Truck
// 10), 50 a page with how many there are, searched, filtered by status and
// tag, sorted by status or last report (never-reported last), all on one
// page when asked, and only the account's own.
func TestVehiclesListSearchesSortsAndPages(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	e := newEnvWith(t, fleet.Options{Now: clock.Now}, fleetweb.Options{})
	fleetOf(t, e.svc, e.accA, clock.Now(), 120)
	_, err := e.svc.CreateVehicle(context.Background(), fleet.SystemPrincipal(e.accB), fleet.Vehicle{Name: "Bravo van"})
	is.NoErr(err)
	c := e.signedIn(t, "viewer@acme.test", viewerPassword)
	get := func(q string) resp {
		t.Helper()
		r := do(t, c, "GET", e.srv.URL+"/vehicles"+q, nil)
		return r
	}

	r := get("")
	is.Equal(r.status, http.StatusOK)
	names := listed(r.body)
	is.Equal(len(names), 50)
	is.Equal(names[:4], []string{"Truck 1", "Truck 2", "Truck 3", "Truck 4"}) // 2 before 10
	is.Equal(names[49], "Truck 50")
	is.True(strings.Contains(r.body, "1–50 of 120 vehicles"))
	is.True(strings.Contains(r.body, `href="/vehicles?page=2" rel="next"`))
	is.True(strings.Contains(r.body, "Page 1 of 3"))
	is.True(!strings.Contains(r.body, "Bravo van")) // another account's
	is.True(!strings.Contains(r.body, `method="post" action="/vehicles`))

	r = get("?page=3")
	names = listed(r.body)
	is.Equal(len(names), 20)
	is.Equal(names[0], "Truck 101")
	is.True(strings.Contains(r.body, "101–120 of 120 vehicles"))
	is.True(!strings.Contains(r.body, `rel="next"`))

	r = get("?q=truck+11") // name, plate or VIN
	is.Equal(listed(r.body), []string{"Truck 11", "Truck 110", "Truck 111", "Truck 112", "Truck 113", "Truck 114", "Truck 115", "Truck 116", "Truck 117", "Truck 118", "Truck 119"})
	is.True(strings.Contains(r.body, "11 vehicles"))
	is.True(strings.Contains(r.body, "of 120 in the account"))
	r = get("?q=B-FL+7&tag=south")
	is.Equal(listed(r.body)[:3], []string{"Truck 7", "Truck 71", "Truck 73"})

	r = get("?status=moving")
	is.Equal(listed(r.body), []string{"Truck 1", "Truck 3", "Truck 5"})
	is.True(strings.Contains(r.body, `<option value="moving" selected>moving (3)</option>`))
	is.True(strings.Contains(r.body, `<option value="offline">offline (115)</option>`))
	r = get("?status=idle&tag=north")
	is.Equal(listed(r.body), []string{"Truck 2", "Truck 4"})

	r = get("?sort=-last_report")
	is.Equal(listed(r.body)[:6], []string{"Truck 1", "Truck 2", "Truck 3", "Truck 4", "Truck 5", "Truck 6"}) // newest first, then never
	is.True(strings.Contains(r.body, `aria-sort="descending"`))
	r = get("?sort=last_report")
	is.Equal(listed(r.body)[:6], []string{"Truck 5", "Truck 4", "Truck 3", "Truck 2", "Truck 1", "Truck 6"}) // never-reported still last
	r = get("?sort=-name")
	is.Equal(listed(r.body)[:3], []string{"Truck 120", "Truck 119", "Truck 118"})
	r = get("?sort=status")
	is.Equal(listed(r.body)[:5], []string{"Truck 1", "Truck 3", "Truck 5", "Truck 2", "Truck 4"}) // moving, then idle
	r = get("?sort=-status&per=100")
	is.Equal(len(listed(r.body)), 100)
	is.Equal(listed(r.body)[0], "Truck 6") // offline first

	r = get("?per=all")
	is.Equal(len(listed(r.body)), 120)
	is.True(strings.Contains(r.body, "120 vehicles"))
	is.True(!strings.Contains(r.body, `rel="next"`))
	r = get("")
	is.True(strings.Contains(r.body, `href="/vehicles?per=all">Show all 120 on one page</a>`)) // asked for, never given unasked

	// The times are the browser's zone's, and the page says which.
	r = do(t, c, "GET", e.srv.URL+"/vehicles?sort=-last_report", nil, "Cookie", "fleet_tz=America/New_York")
	is.True(strings.Contains(r.body, "2026-11-23 06:59 EST"))
	is.True(strings.Contains(r.body, "Times are in America/New_York."))

	// What no one could mean: said, and the list shown as it is by default.
	for _, q := range []string{"?status=parked", "?sort=colour", "?per=7", "?page=0", "?q=%01", "?tz=..%2Fetc%2Fpasswd"} {
		r = get(q)
		is.Equal(r.status, http.StatusBadRequest)
		is.True(strings.Contains(r.body, `class="error"`))
		is.Equal(len(listed(r.body)), 50)
	}
	r = get("?page=99") // past the last page: the last
	is.Equal(listed(r.body)[0], "Truck 101")
}

// A vehicle's page: its details and devices (protocol, last seen, what
// became of the last report), the day's trips and stops in the person's
// time zone, other days, and its open alerts and work orders; another
// account's vehicle is not found.
func TestVehiclePageShowsItsDay(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	// Noon in Berlin on 23 November; the trips ran from 08:00 UTC.
	clock := testclock.New(time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC))
	e := newEnvWith(t, fleet.Options{Now: clock.Now}, fleetweb.Options{MapTiles: "off"})
	p := fleet.SystemPrincipal(e.accA)
	v, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7", LicensePlate: "B-FL 7", VIN: "1HGCM82633A004352", Tags: []string{"north"}})
	is.NoErr(err)
	dev, err := e.svc.CreateDevice(ctx, p, fleet.Device{Identifier: "356307042441013", VehicleID: v.ID, Name: "Cab tracker"})
	is.NoErr(err)
	_, err = e.svc.CreateDevice(ctx, p, fleet.Device{Identifier: "862000000000001", VehicleID: v.ID})
	is.NoErr(err)
	drive := func(start time.Time, lat float64) {
		t.Helper()
		var pts []fleet.Point
		fast, slow := 40.0, 0.0
		for i := range 10 { // ten minutes at 40 km/h, northwards
			pts = append(pts, fleet.Point{Latitude: lat + float64(i)*0.001, Longitude: 13.4, Timestamp: start.Add(time.Duration(i) * time.Minute), Speed: &fast})
		}
		for i := range 7 { // then standing
			pts = append(pts, fleet.Point{Latitude: lat + 0.009, Longitude: 13.4, Timestamp: start.Add(time.Duration(10+i) * time.Minute), Speed: &slow})
		}
		_, err := e.svc.IngestLocations(ctx, p, v.ID, pts)
		is.NoErr(err)
	}
	drive(time.Date(2026, 11, 22, 22, 30, 0, 0, time.UTC), 52.40) // 23:30 in Berlin, the 22nd
	drive(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC), 52.50)
	drive(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), 52.60)
	rep, err := e.svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: dev.Identifier, Protocol: "teltonika",
		Positions: []fleet.DevicePosition{{Latitude: 52.6, Longitude: 13.4, Timestamp: clock.Now().Add(-time.Minute), Valid: false}}})
	is.NoErr(err)
	is.True(!rep.Stored)
	_, err = e.svc.CreateAlert(ctx, p, fleet.Alert{VehicleID: v.ID, Message: "Flat tyre reported", Severity: fleet.SeverityCritical})
	is.NoErr(err)
	_, err = e.svc.CreateAlert(ctx, p, fleet.Alert{Message: "Not this vehicle's"})
	is.NoErr(err)
	_, err = e.svc.CreateWorkOrder(ctx, p, fleet.WorkOrder{VehicleID: v.ID, Title: "Replace the tyre"})
	is.NoErr(err)
	done, err := e.svc.CreateWorkOrder(ctx, p, fleet.WorkOrder{VehicleID: v.ID, Title: "Wash"})
	is.NoErr(err)
	_, err = e.svc.UpdateWorkOrder(ctx, p, done.ID, fleet.WorkOrderPatch{Status: fleet.Some(fleet.WorkOrderCancelled)})
	is.NoErr(err)

	c := e.signedIn(t, "viewer@acme.test", viewerPassword)
	berlin := "Cookie"
	r := do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID, nil, berlin, "fleet_tz=Europe/Berlin")
	is.Equal(r.status, http.StatusOK)
	for _, want := range []string{
		"Truck 7", "B-FL 7", "1HGCM82633A004352",
		"Cab tracker", "<code class=\"nowrap\">356307042441013</code>", "Teltonika", "not stored: no GPS fix", "862000000000001",
		"Trips and stops on Monday 23 November 2026", "The day and its times are in Europe/Berlin",
		"2 trips, ", "09:00", "10:00", // the day's trips, in Berlin's time
		"Flat tyre reported", "Replace the tyre",
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the vehicle's page lacks %q", want)
		}
	}
	for _, never := range []string{"Not this vehicle's", ">Wash<", "23:30", `method="post"`} {
		if strings.Contains(r.body, never) && !(never == `method="post"` && strings.Count(r.body, never) == 1) { // sign-out's only
			t.Errorf("the vehicle's page shows %q", never)
		}
	}
	is.Equal(strings.Count(r.body, `<td data-label="Trip" class="title">`), 2)
	is.True(strings.Contains(r.body, `href="/vehicles/`+v.ID+`?day=2026-11-22"`)) // the day before
	is.True(!strings.Contains(r.body, ">Next day<"))                              // none after today

	// The day before, in Berlin: the late trip. In UTC the 22nd has it too,
	// and the 23rd has all three (22:30 UTC is the 22nd's).
	r = do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID+"?day=2026-11-22", nil, berlin, "fleet_tz=Europe/Berlin")
	is.Equal(strings.Count(r.body, `<td data-label="Trip" class="title">`), 1)
	is.True(strings.Contains(r.body, "23:30"))
	is.True(strings.Contains(r.body, ">Next day<") && strings.Contains(r.body, ">Today<"))
	r = do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID+"?day=2026-11-23&tz=UTC", nil, berlin, "fleet_tz=Europe/Berlin") // ?tz= wins
	is.Equal(strings.Count(r.body, `<td data-label="Trip" class="title">`), 2)
	is.True(strings.Contains(r.body, "08:00") && strings.Contains(r.body, "in UTC"))
	r = do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID+"?day=2026-11-20", nil)
	is.True(strings.Contains(r.body, "No trips on this day."))
	r = do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID+"?day=2026-10-01", nil)
	is.True(strings.Contains(r.body, "The free plan keeps 7 days of history: this day is older."))
	r = do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID+"?day=yesterday&tz=Mars/Olympus", nil, berlin, "fleet_tz=Europe/Berlin")
	is.Equal(r.status, http.StatusBadRequest)
	is.True(strings.Contains(r.body, "Day must be a date, YYYY-MM-DD."))
	is.True(strings.Contains(r.body, "Time zone must be a time zone such as Europe/Berlin."))
	is.True(strings.Contains(r.body, "Trips and stops on Monday 23 November 2026")) // today, in the cookie's zone

	// The map's data: each trip's path and the stops.
	r = do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID+"?tz=Europe/Berlin", nil)
	data := regexp.MustCompile(`(?s)<script type="application/json" id="day-data">(.*?)</script>`).FindStringSubmatch(r.body)
	is.True(data != nil)
	is.True(strings.HasPrefix(data[1], `{"trips":[[[52.5,13.4],[52.501,13.4]`))
	is.True(strings.Contains(data[1], `{"lat":52.509,"lon":13.4,"label":"Stopped from 09:09 to 10:00 (51 min)"}`))
	is.True(strings.Contains(data[1], `"label":"Stopped from 22 Nov 23:39 to 09:00 (9 h 21 min)"`)) // the night's stop, begun the day before
	is.True(strings.Contains(data[1], `"position":{"lat":52.609,"lon":13.4,"label":"Truck 7 · offline · 2026-11-23 10:16 CET"}`))

	other := e.signedIn(t, "admin@bravo.test", otherPassword)
	is.Equal(do(t, other, "GET", e.srv.URL+"/vehicles/"+v.ID, nil).status, http.StatusNotFound)
	is.Equal(do(t, other, "GET", e.srv.URL+"/vehicles/veh_nonsense", nil).status, http.StatusNotFound)
}

// The vehicles list writes its rows itself (for speed), and escapes what
// an API client wrote as the templates do: a name, a plate and a tag made
// to break out of their text or their attribute stay text.
func TestVehiclesListEscapesWhatClientsWrote(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	const name, plate, tag = `Van <img src=x onerror="alert(1)"> & 'co'`, `<b>B-1</b>`, `"><script>alert(2)</script> x&y`
	v, err := e.svc.CreateVehicle(context.Background(), fleet.SystemPrincipal(e.accA), fleet.Vehicle{Name: name, LicensePlate: plate, Tags: []string{tag}})
	is.NoErr(err)
	c := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r := do(t, c, "GET", e.srv.URL+"/vehicles", nil)
	is.Equal(r.status, http.StatusOK)
	for _, raw := range []string{"<img", "<script>alert(2)", "<b>B-1"} {
		is.True(!strings.Contains(r.body, raw)) // never as markup
	}
	is.True(strings.Contains(r.body, `<a href="/vehicles/`+v.ID+`">Van &lt;img src=x onerror=&#34;alert(1)&#34;&gt; &amp; &#39;co&#39;</a>`))
	is.True(strings.Contains(r.body, `<span class="pair">&lt;b&gt;B-1&lt;/b&gt;</span>`))
	is.True(strings.Contains(r.body, `<a class="tag" href="/vehicles?tag=%22%3E%3Cscript%3Ealert%282%29%3C%2Fscript%3E+x%26y">&#34;&gt;&lt;script&gt;alert(2)&lt;/script&gt; x&amp;y</a>`))
	// The tag's link finds the vehicle by that tag.
	r = do(t, c, "GET", e.srv.URL+"/vehicles?tag=%22%3E%3Cscript%3Ealert%282%29%3C%2Fscript%3E+x%26y", nil)
	is.Equal(listed(r.body), []string{html.EscapeString(name)})
}
