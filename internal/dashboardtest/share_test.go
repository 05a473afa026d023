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

// post reports a location of a vehicle with the seed key.
func (w *world) post(t *testing.T, vehicleID string, at time.Time, lat, lon float64) {
	t.Helper()
	body := fmt.Sprintf(`{"locations":[{"latitude":%g,"longitude":%g,"timestamp":%q,"speed":30}]}`, lat, lon, at.UTC().Format(time.RFC3339Nano))
	if status, resp := w.api(t, "POST", "/v1/vehicles/"+vehicleID+"/locations", w.seedKey, body); status >= 300 {
		t.Fatalf("post a location: %d %s", status, resp)
	}
}

// An admin shares a vehicle's live location from its page: chooses how
// long, copies the link shown once, and revokes it. Someone without an
// account opens the link in another browser: the company's and the
// vehicle's names, when it expires, the vehicle on the map with today's
// route, moving as it reports, never another vehicle; when the link is
// revoked the page says so within seconds, and the link then leads to
// the 404 of any unknown link. At 1280 and 390 px.
func TestShareLinkInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		forgetHostile(t, w)
		ctx := context.Background()
		vans, err := w.svc.ListVehicles(ctx, fleet.SystemPrincipal(w.account), fleet.VehicleFilter{Query: "Van 2"}, fleet.ListQuery{})
		is.NoErr(err)
		van := vans.Items[0]

		admin := open(t, w)
		admin.hold(width)
		admin.signIn(adminEmail, adminPassword)
		admin.run("open the truck", chromedp.Navigate(admin.base+"/vehicles/"+w.vehicle.ID), chromedp.WaitVisible(link("Share live location…")))
		admin.press("share it", link("Share live location…"))
		admin.run("choose how long", chromedp.WaitVisible(byLabel("How long")), chromedp.SetValue(byLabel("How long"), "8h"))
		admin.press("create the link", button("Create link"))
		var url string
		admin.run("read the link", chromedp.Value(byLabel("The new link"), &url))
		is.True(strings.HasPrefix(url, w.srv.URL+"/s/"))
		var copied string
		admin.run("copy it", chromedp.Click(button("Copy")), chromedp.Poll(`document.getElementById("copy-status").textContent !== ""`, nil,
			chromedp.WithPollingTimeout(5*time.Second)), chromedp.Text("#copy-status", &copied))
		is.True(copied != "")
		is.True(strings.Contains(admin.text(), "Active links"))
		if width < 800 {
			admin.fitsPhone("share links", "Copy", "Create link", "Revoke")
		}
		admin.cspKept()
		admin.shot("share-links")

		// The truck drives after the link is made: that is its route.
		start := w.now()
		route := [][2]float64{{52.5205, 13.4060}, {52.5230, 13.4105}, {52.5262, 13.4150}}
		for i, p := range route {
			w.post(t, w.vehicle.ID, start.Add(time.Duration(i)*time.Millisecond), p[0], p[1])
		}

		// Someone else, in New York, with no account.
		guest := open(t, w)
		guest.run("live in New York", emulation.SetTimezoneOverride(testZone))
		guest.hold(width)
		guest.run("open the link", chromedp.Navigate(url), chromedp.WaitVisible(`#share-map`),
			chromedp.Poll(`document.getElementById("main").getAttribute("data-zone") === "America/New_York"`, nil, chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Poll(`document.getElementById("stream-status").textContent === "live"`, nil, chromedp.WithPollingTimeout(15*time.Second)),
			mapSettled("share-map"))
		var header string
		guest.run("read the header", chromedp.Text("header.shared-top", &header))
		is.True(strings.Contains(header, "Acme Haulage"))
		is.True(strings.Contains(header, "Truck 7"))
		is.True(strings.Contains(header, "Shared until"))
		is.True(strings.Contains(header, "EST") || strings.Contains(header, "EDT")) // in the viewer's time zone
		page := guest.text()
		for _, hidden := range []string{"Van 2", "Van 3", w.vehicle.ID, w.account.ID, "B-FL 7", "Sign out", "API keys"} {
			is.True(!strings.Contains(page, hidden)) // nothing else of the account
		}
		var points int
		guest.eval("count the route", `window.fleetShare.points`, &points)
		is.Equal(points, 3)
		var drawn int
		guest.eval("count the line's points", `window.fleetShare.map ? document.querySelectorAll("#share-map path.trip-line").length : -1`, &drawn)
		is.Equal(drawn, 1)
		var lat float64
		guest.eval("read the position", `window.fleetShare.position.lat`, &lat)
		is.Equal(lat, 52.5262)
		if width < 800 {
			var wide bool
			guest.eval("look for a sideways scroll", `document.documentElement.scrollWidth > window.innerWidth`, &wide)
			is.True(!wide)
			var mapHeight float64
			guest.eval("measure the map", `document.getElementById("share-map").getBoundingClientRect().height / window.innerHeight`, &mapHeight)
			is.True(mapHeight > 0.4) // the map is most of a phone's screen
		}
		guest.cspKept()
		if width >= 800 { // from the full width, whose tiles cover the phone's too
			guest.run("let the map settle", mapSettled("share-map"))
			guest.shot("share")
		}

		// Another vehicle reports, then the truck: only the truck's report
		// reaches the page.
		w.post(t, van.ID, w.now(), 52.6000, 13.5000)
		w.post(t, w.vehicle.ID, w.now(), 52.5290, 13.4200)
		guest.run("watch the truck move", chromedp.Poll(`window.fleetShare.position.lat === 52.529`, nil, chromedp.WithPollingTimeout(10*time.Second)))
		guest.eval("count the route", `window.fleetShare.points`, &points)
		is.Equal(points, 4) // the truck's report, never the van's
		is.True(strings.Contains(guest.text(), "52.52900, 13.42000"))

		// Revoked on the dashboard: the open page says so within 5 s.
		admin.run("back to the links", chromedp.Navigate(admin.base+"/vehicles/"+w.vehicle.ID+"/share"), chromedp.WaitVisible(button("Revoke")))
		admin.press("revoke it", button("Revoke"))
		is.True(strings.Contains(admin.text(), "is revoked"))
		is.True(strings.Contains(admin.text(), "No active links."))
		guest.run("see the page told", chromedp.Poll(`window.fleetShare.ended === true`, nil, chromedp.WithPollingTimeout(5*time.Second)))
		is.True(strings.Contains(guest.text(), "This link has ended: it expired or was revoked."))
		guest.run("open it again", chromedp.Navigate(url), waitText("This link does not exist, or it has expired or been revoked."))
		var title string
		guest.run("read the title", chromedp.Title(&title))
		is.Equal(title, "Link not found")
		unknown := strings.Repeat("A", fleet.ShareTokenLen)
		var gone, unknownPage string
		guest.run("read the page", chromedp.OuterHTML("main", &gone))
		guest.run("open an unknown link", chromedp.Navigate(w.srv.URL+fleet.ShareLinkPath(unknown)), chromedp.OuterHTML("main", &unknownPage))
		is.Equal(gone, unknownPage) // a revoked link reads as one that never was
		guest.cspKept()
		guest.shot("share-gone")

		for _, ref := range w.tileReferers.all() {
			is.True(!strings.Contains(ref, "/s/")) // the tile server never learns the link
		}
	})
}
