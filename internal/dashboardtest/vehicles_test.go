package dashboardtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// trucks adds n trailers that never reported ("Trailer 1" to "Trailer
// n"), and "Truck 9", driven by Ana Lima, which drove ten minutes from 40
// minutes ago and has stood since, reported by a tracker; it returns Truck
// 9 and its trip's start.
func (w *world) trucks(t *testing.T, n int) (fleet.Vehicle, time.Time) {
	t.Helper()
	ctx := context.Background()
	p := fleet.SystemPrincipal(w.account)
	for i := 1; i <= n; i++ {
		if _, err := w.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Trailer %d", i), Tags: []string{"trailers"}}); err != nil {
			t.Fatal(err)
		}
	}
	year, odometer := 2022, 184_230.0
	v, err := w.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 9", LicensePlate: "B-FL 9", VIN: "WMA06XZZ7NM123456", Make: "MAN",
		Model: "TGX 18.470", Year: &year, OdometerKm: &odometer, Tags: []string{"north", "reefer"}})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := w.svc.CreateDevice(ctx, p, fleet.Device{Identifier: "356307042441013", VehicleID: v.ID, Name: "Cab tracker"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.CreateDevice(ctx, p, fleet.Device{Identifier: "862010000000042", VehicleID: v.ID, Name: "Trailer tracker"}); err != nil {
		t.Fatal(err)
	}
	ana, err := w.svc.CreateDriver(ctx, p, fleet.Driver{Name: "Ana Lima", Identifier: "01A2B3C4D5E6F708"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.AssignDriver(ctx, p, v.ID, fleet.AssignTo(ana.ID)); err != nil {
		t.Fatal(err)
	}
	start := w.now().UTC().Truncate(time.Minute).Add(-40 * time.Minute)
	var pts []fleet.Point
	fast, still := 40.0, 0.0
	for i := range 10 {
		pts = append(pts, fleet.Point{Latitude: 52.50 + float64(i)*0.002, Longitude: 13.40 + float64(i)*0.001, Timestamp: start.Add(time.Duration(i) * time.Minute), Speed: &fast})
	}
	for i := range 8 {
		pts = append(pts, fleet.Point{Latitude: 52.518, Longitude: 13.409, Timestamp: start.Add(time.Duration(10+i) * time.Minute), Speed: &still})
	}
	if _, err := w.svc.IngestLocations(ctx, p, v.ID, pts); err != nil {
		t.Fatal(err)
	}
	// The cab tracker's last report: a stop's position without a fix.
	if _, err := w.svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: dev.Identifier, Protocol: "teltonika",
		Positions: []fleet.DevicePosition{{Latitude: 52.518, Longitude: 13.409, Timestamp: start.Add(18 * time.Minute)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.CreateAlert(ctx, p, fleet.Alert{VehicleID: v.ID, Severity: fleet.SeverityWarning, Message: "Reefer temperature above 5 °C."}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.CreateWorkOrder(ctx, p, fleet.WorkOrder{VehicleID: v.ID, Title: "Brake inspection", Priority: fleet.PriorityHigh,
		DueDate: w.now().AddDate(0, 0, 7).Format(time.DateOnly), AssignedTo: "Depot workshop"}); err != nil {
		t.Fatal(err)
	}
	return v, start
}

// dayClock is a time as a vehicle's page writes it for today (at now) in
// loc.
func dayClock(t, now time.Time, loc *time.Location) string {
	t = t.In(loc)
	if y, m, d := now.In(loc).Date(); t.Year() == y && t.Month() == m && t.Day() == d {
		return t.Format("15:04")
	}
	return t.Format("2 Jan 15:04")
}

// The vehicles page, as a fleet manager uses it: search by the Search
// field, filter by status and tag, sort, page with Next, open a vehicle;
// its page shows the tracker, today's trip and stop in the browser's time
// zone in tables and on the map, and another day by the Day field.
func TestVehiclesInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		truck, start := w.trucks(t, 60)
		b := open(t, w)
		forgetHostile(t, w) // out of the screenshots: TestDashboardInBrowser shows that a name is text
		const zone = testZone
		b.run("live in New York", emulation.SetTimezoneOverride(zone))
		ny, err := time.LoadLocation(zone)
		is.NoErr(err)
		b.hold(width)
		b.signIn(viewerEmail, viewerPassword)

		b.run("open the vehicles", chromedp.Navigate(b.base+"/vehicles"), chromedp.WaitVisible(byLabel("Search")))
		page := b.text()
		is.True(strings.Contains(page, "1–50 of 64 vehicles"))
		var names []string
		b.eval("read the names", `[...document.querySelectorAll("#vehicle-list td.title a")].map(a => a.textContent)`, &names)
		is.Equal(names[:3], []string{"Trailer 1", "Trailer 2", "Trailer 3"}) // by name, as a person sorts
		if width < 800 {
			b.fitsPhone("vehicles", "Show vehicles", "Next", "Trailer 1")
		}
		b.press("see the next page", link("Next"))
		is.True(strings.Contains(b.text(), "51–64 of 64 vehicles"))
		b.run("the latest reports first", chromedp.Navigate(b.base+"/vehicles?sort=-last_report"), chromedp.WaitVisible(link("Truck 9")))
		b.shot("vehicles")

		// Search, then narrow by status and tag, sorted by last report.
		b.run("search", chromedp.Navigate(b.base+"/vehicles"), chromedp.WaitVisible(byLabel("Search")),
			chromedp.SendKeys(byLabel("Search"), "truck"))
		b.press("show them", button("Show vehicles"))
		b.eval("read the names", `[...document.querySelectorAll("#vehicle-list td.title a")].map(a => a.textContent)`, &names)
		is.Equal(names, []string{"Truck 7", "Truck 9"})
		b.run("choose", chromedp.SetValue(byLabel("Tag"), "north"), chromedp.SetValue(byLabel("Sort by"), "-last_report"))
		b.press("show them", button("Show vehicles"))
		b.eval("read the names", `[...document.querySelectorAll("#vehicle-list td.title a")].map(a => a.textContent)`, &names)
		is.Equal(names, []string{"Truck 9"})
		b.run("moving ones", chromedp.SetValue(byLabel("Tag"), ""), chromedp.SetValue(byLabel("Status"), "moving"))
		b.press("show them", button("Show vehicles"))
		b.eval("read the names", `[...document.querySelectorAll("#vehicle-list td.title a")].map(a => a.textContent)`, &names)
		is.Equal(names, []string{"Truck 7"}) // at 42 km/h a minute ago
		b.run("a status none has", chromedp.SetValue(byLabel("Status"), "idle"))
		b.press("show them", button("Show vehicles"))
		is.True(strings.Contains(b.text(), "No vehicles match"))
		if width >= 800 { // the headers sort too (a phone's cards have none: it sorts with Sort by)
			b.run("every vehicle", chromedp.Navigate(b.base+"/vehicles?q=truck"), chromedp.WaitVisible(link("Last report")))
			b.press("sort by last report", link("Last report"))
			b.eval("read the names", `[...document.querySelectorAll("#vehicle-list td.title a")].map(a => a.textContent)`, &names)
			is.Equal(names, []string{"Truck 7", "Truck 9"}) // newest first: Truck 7 reported a minute ago
			b.press("sort the other way", link("Last report"))
			b.eval("read the names", `[...document.querySelectorAll("#vehicle-list td.title a")].map(a => a.textContent)`, &names)
			is.Equal(names, []string{"Truck 9", "Truck 7"})
		}

		// The vehicle's page: its tracker, its day in New York's time.
		b.run("find Truck 9", chromedp.Navigate(b.base+"/vehicles?q=truck+9"), chromedp.WaitVisible(link("Truck 9")))
		b.press("open Truck 9", link("Truck 9"))
		b.run("wait for its map", chromedp.Poll(`window.fleetDay && window.fleetDay.trips === 1 && window.fleetDay.stops >= 1`, nil, chromedp.WithPollingTimeout(10*time.Second)))
		page = b.text()
		for _, want := range []string{"B-FL 9", "MAN", "184,23", // the odometer, advanced by the trip's distance
			"Driver: Ana Lima", "Cab tracker", "356307042441013", "Teltonika", "not stored: no GPS fix",
			"Reefer temperature above 5 °C.", "Brake inspection", "The day and its times are in " + zone,
			"1 trip, ", dayClock(start, w.now(), ny), dayClock(start.Add(9*time.Minute), w.now(), ny), "still there"} {
			if !strings.Contains(page, want) {
				t.Errorf("the vehicle's page lacks %q", want)
			}
		}
		var trip string
		b.run("read the trip", chromedp.Text(`//table[@id="trips"]//tr[td]`, &trip))
		is.True(strings.Contains(trip, dayClock(start, w.now(), ny)))
		if width < 800 {
			b.fitsPhone("vehicle", "Show the day", "Previous day")
		}
		b.cspKept()
		b.run("wait for the tiles", mapSettled("day-map"))
		b.shot("vehicle")

		// Another day, by the Day field: yesterday had no trips.
		yesterday := w.now().In(ny).AddDate(0, 0, -1).Format("01022006") // as a date field is typed in en-US
		b.run("choose yesterday", chromedp.SendKeys(byLabel("Day"), yesterday))
		b.press("show the day", button("Show the day"))
		is.True(strings.Contains(b.url(), "day="+w.now().In(ny).AddDate(0, 0, -1).Format(time.DateOnly)))
		page = b.text()
		is.True(strings.Contains(page, "No trips on this day."))
		b.press("back to today", link("Today"))
		is.True(strings.Contains(b.text(), "1 trip, "))
		is.True(strings.Contains(b.url(), "/vehicles/"+truck.ID))
	})
}

// forgetHostile deletes the vehicle with the hostile name, so that a
// screenshot shows a fleet as a reader expects it.
func forgetHostile(t *testing.T, w *world) {
	t.Helper()
	ctx := context.Background()
	vs, err := w.svc.ListVehicles(ctx, fleet.SystemPrincipal(w.account), fleet.VehicleFilter{Query: "<img"}, fleet.ListQuery{})
	if err != nil || len(vs.Items) != 1 {
		t.Fatalf("find the hostile name: %v, %d", err, len(vs.Items))
	}
	if _, err := w.svc.DeleteVehicle(ctx, fleet.SystemPrincipal(w.account), vs.Items[0].ID); err != nil {
		t.Fatal(err)
	}
}

// mapSettled waits until the map in the element with the id has stopped
// zooming and every tile of it has loaded: a label opened while the map
// still zooms is drawn where the marker was.
func mapSettled(id string) chromedp.Action {
	return chromedp.Poll(fmt.Sprintf(`(() => {
		const el = document.getElementById(%q);
		const tiles = el.querySelectorAll(".leaflet-tile");
		return !el.classList.contains("leaflet-zoom-anim") && tiles.length > 0 &&
			[...tiles].every(t => t.complete && t.classList.contains("leaflet-tile-loaded"));
	})()`, id), nil, chromedp.WithPollingTimeout(10*time.Second))
}
