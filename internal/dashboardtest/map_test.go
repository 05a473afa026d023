package dashboardtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// A map tab over the plan's live streams says so, in the words of a person
// with open live maps, instead of "reconnecting…" for ever.
func TestMapOverTheStreamLimitSaysWhy(t *testing.T) {
	is := is.New(t)
	w := serveWith(t, setup{plan: fleet.PlanFree})
	ctx := context.Background()
	us, _, err := w.svc.SignIn(ctx, adminEmail, adminPassword, "127.0.0.1")
	is.NoErr(err)
	for range fleet.PlanFree.Limits().StreamsPerKey { // two maps open elsewhere
		sub, err := w.svc.Subscribe(ctx, us.Principal(), nil, "")
		is.NoErr(err)
		t.Cleanup(sub.Close)
	}
	b := open(t, w)
	b.signIn(adminEmail, adminPassword)
	b.run("open the map", chromedp.Navigate(b.base+"/map"),
		waitText("You have 2 live maps open, the most the free plan allows; close one first."))
	page := b.text()
	is.True(!strings.Contains(page, "API key"))
	is.True(!strings.Contains(page, "reconnecting"))
}

// Markers take their vehicle's status colour, which a legend names; names
// show on hover or tap rather than piling up where vehicles cluster.
func TestMapMarkersByStatus(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	ctx := context.Background()
	vs, err := w.svc.ListVehicles(ctx, fleet.SystemPrincipal(w.account), fleet.VehicleFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	ids := map[string]string{}
	for _, v := range vs.Items {
		ids[v.Name] = v.ID
		if v.Name == hostileName { // out of the screenshot: TestDashboardInBrowser shows it is text
			_, err := w.svc.DeleteVehicle(ctx, fleet.SystemPrincipal(w.account), v.ID)
			is.NoErr(err)
		}
	}
	b := open(t, w)
	b.signIn(adminEmail, adminPassword)
	b.run("open the map", chromedp.Navigate(b.base+"/map"), chromedp.WaitVisible(row("Truck 7")),
		chromedp.Poll(`document.getElementById("stream-status").textContent === "live"`, nil, chromedp.WithPollingTimeout(15*time.Second)))
	colour := func(name string) string {
		var c string
		b.eval("read the colour of "+name, fmt.Sprintf(`getComputedStyle(window.fleetMap.markers[%q].getElement()).backgroundColor`, ids[name]), &c)
		return c
	}
	moving, idle := colour("Truck 7"), colour("Van 2")
	is.True(moving != idle) // a moving vehicle and an idle one look different
	var legend map[string]string
	b.eval("read the legend", `Object.fromEntries([...document.querySelectorAll("[aria-label='Status colours'] li")].map(li =>
		[li.innerText.trim(), getComputedStyle(li.querySelector("span")).backgroundColor]))`, &legend)
	is.Equal(legend["moving"], moving)
	is.Equal(legend["idle"], idle)
	is.True(legend["stopped"] != "" && legend["offline"] != "")

	var labels int
	b.eval("count the labels shown", `[...document.querySelectorAll(".leaflet-tooltip")].filter(e => e.offsetParent !== null).length`, &labels)
	is.Equal(labels, 0) // none until asked for
	var at []float64
	b.run("let the map settle", mapSettled("map"))
	b.eval("find the truck", fmt.Sprintf(`(() => { const r = window.fleetMap.markers[%q].getElement().getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`, ids["Truck 7"]), &at)
	is.Equal(len(at), 2)
	b.run("hover over the truck", chromedp.MouseEvent(input.MouseMoved, at[0], at[1]), waitText("Truck 7 · moving"),
		// The label glides to its marker while the map's first zoom ends.
		chromedp.Poll(fmt.Sprintf(`(() => {
			const m = window.fleetMap.markers[%q].getElement().getBoundingClientRect();
			const t = document.querySelector(".leaflet-tooltip").getBoundingClientRect();
			return Math.abs((t.x + t.width/2) - (m.x + m.width/2)) < 2 && m.top - t.bottom >= 0 && m.top - t.bottom < 30;
		})()`, ids["Truck 7"]), nil, chromedp.WithPollingTimeout(10*time.Second)))
	var shown string
	b.eval("read the label", `[...document.querySelectorAll(".leaflet-tooltip")].map(e => e.innerText).join("|")`, &shown)
	is.Equal(shown, "Truck 7 · moving")
	b.cspKept()
	b.shot("map")
}

// A map whose tiles do not load says so, and that the list still works.
func TestMapWithoutTilesSaysSo(t *testing.T) {
	is := is.New(t)
	w := serveWith(t, setup{brokenTiles: true})
	b := open(t, w)
	b.signIn(adminEmail, adminPassword)
	b.run("open the map", chromedp.Navigate(b.base+"/map"), chromedp.WaitVisible(row("Truck 7")),
		waitText("The map could not be loaded"))
	is.True(strings.Contains(b.text(), "the list still shows every vehicle"))
}

// A vehicle's marker opens, by a click or Enter, the latest report's
// attributes in words, as the vehicle page's map does; a text attribute
// with markup shows as text; a new report changes them live.
func TestMapPopupShowsTheLatestAttributes(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	truck := w.telemetryTruck(t)
	ctx := context.Background()
	p := fleet.SystemPrincipal(w.account)
	report := func(at time.Time, attrs ...fleet.Attribute) {
		t.Helper()
		speed := 0.0
		_, err := w.svc.IngestLocations(ctx, p, truck.ID, []fleet.Point{{Latitude: 52.524, Longitude: 13.412, Timestamp: at.UTC(),
			Speed: &speed, Attributes: fleet.Attributes(attrs).Sort()}})
		is.NoErr(err)
	}
	report(w.now().Add(-time.Minute), fleet.BoolAttr(fleet.AttrIgnition, true), fleet.NumberAttr(fleet.AttrPowerV, 13.9),
		fleet.NumberAttr(fleet.AttrFuelLevel, 57), fleet.TextAttr(fleet.AttrDriverIdentifier, "01A2B3C4D5E6F708"),
		fleet.TextAttr("note", `<b>loud</b><img src=x onerror="window.pwned=1">`))
	b := open(t, w)
	b.signIn(viewerEmail, viewerPassword)
	b.run("open the map", chromedp.Navigate(b.base+"/map"), chromedp.WaitVisible(row("Truck 12")),
		chromedp.Poll(`document.getElementById("stream-status").textContent === "live"`, nil, chromedp.WithPollingTimeout(15*time.Second)))
	b.run("let the map settle", mapSettled("map"))
	b.run("open the truck's popup with Enter", chromedp.Evaluate(fmt.Sprintf(`window.fleetMap.markers[%q].getElement().focus(), true`, truck.ID), nil),
		chromedp.KeyEvent("\r"), chromedp.WaitVisible(`#map .attr-popup`))
	var popup string
	b.run("read the popup", chromedp.Text(`#map .attr-popup`, &popup))
	for _, want := range []string{"Truck 12", "Ignition on", "Power 13.9 V", "Fuel 57 %", "Driver key 01A2B3C4D5E6F708",
		`note: <b>loud</b><img src=x onerror="window.pwned=1">`} {
		if !strings.Contains(popup, want) {
			t.Errorf("the popup lacks %q: %q", want, popup)
		}
	}
	var markup bool
	b.eval("look for markup", `!!document.querySelector("#map .attr-popup b, #map .attr-popup img") || window.pwned === 1`, &markup)
	is.True(!markup) // the text attribute is text
	b.run("screenshot map-popup", fullShot(b.dir, "map-popup.png", 1280, 900))
	// On a phone the popup opens whole inside the map and clear of the
	// zoom control: the map pans to it.
	b.run("open the popup on a phone", chromedp.EmulateViewport(390, 844), settle(),
		chromedp.Evaluate(fmt.Sprintf(`(() => { const m = window.fleetMap.markers[%q]; m.closePopup(); m.openPopup(); return true })()`, truck.ID), nil),
		chromedp.Poll(`(() => {
			const p = document.querySelector("#map .attr-popup").closest(".leaflet-popup").getBoundingClientRect();
			const m = document.getElementById("map").getBoundingClientRect();
			const z = document.querySelector("#map .leaflet-control-zoom").getBoundingClientRect();
			const clear = p.left >= z.right || p.top >= z.bottom;
			return clear && p.top >= m.top && p.left >= m.left && p.right <= m.right && p.bottom <= m.bottom;
		})()`, nil, chromedp.WithPollingTimeout(5*time.Second)),
		fullShot(b.dir, "map-popup-390.png", 390, 844), chromedp.EmulateViewport(b.width, b.height), settle())
	var fits bool // a hostile long name wraps: the list does not scroll sideways
	b.eval("the list fits its box", `(() => { const l = document.querySelector(".vehicle-list"); return l.scrollWidth <= l.clientWidth })()`, &fits)
	is.True(fits)

	report(w.now(), fleet.BoolAttr(fleet.AttrIgnition, false), fleet.NumberAttr(fleet.AttrPowerV, 12.2))
	b.run("see the next report", chromedp.Poll(`(() => {
		const t = document.querySelector("#map .attr-popup").innerText;
		return t.includes("Ignition off") && t.includes("Power 12.2 V") && !t.includes("note:");
	})()`, nil, chromedp.WithPollingTimeout(10*time.Second)))
	b.cspKept()
}
