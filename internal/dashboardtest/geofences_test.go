package dashboardtest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// clickMap clicks the map in the element with the id at a fraction of its
// width and height, as a person's mouse does.
func (b *browserSession) clickMap(id string, fx, fy float64) {
	b.t.Helper()
	var at []float64
	b.eval("find the map", `(() => { const el = document.getElementById("`+id+`"); el.scrollIntoView({block: "center"});
		const r = el.getBoundingClientRect(); return [r.left + r.width * `+ftoa(fx)+`, r.top + r.height * `+ftoa(fy)+`]; })()`, &at)
	b.run("click the map", chromedp.MouseClickXY(at[0], at[1]))
}

// drag drags what sel finds by dx, dy pixels with the mouse, in steps, as
// a person does.
func (b *browserSession) drag(sel string, dx, dy float64) {
	b.t.Helper()
	var at []float64
	// Where it is once the map has settled: the same place two frames in a
	// row (a map still fitting its shape moves its handles).
	b.run("find "+sel, chromedp.WaitVisible(sel), chromedp.Evaluate(`new Promise(done => {
		const el = document.querySelector(`+strconv.Quote(sel)+`); el.scrollIntoView({block: "center"});
		let last = "";
		const look = () => { const r = el.getBoundingClientRect(); const k = r.left + "," + r.top;
			if (k === last) { done([r.left + r.width / 2, r.top + r.height / 2]); return; }
			last = k; requestAnimationFrame(() => requestAnimationFrame(look)); };
		look(); })`, &at, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	x, y := at[0], at[1]
	steps := []chromedp.Action{input.DispatchMouseEvent(input.MousePressed, x, y).WithButton(input.Left).WithClickCount(1)}
	for i := 1; i <= 5; i++ {
		steps = append(steps, input.DispatchMouseEvent(input.MouseMoved, x+dx*float64(i)/5, y+dy*float64(i)/5).WithButton(input.Left))
	}
	steps = append(steps, input.DispatchMouseEvent(input.MouseReleased, x+dx, y+dy).WithButton(input.Left).WithClickCount(1))
	b.run("drag "+sel, steps...)
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Geofences drawn and typed in the browser: a circle drawn with two clicks
// on the map, a polygon typed with a mistake answered beside its field
// (what was typed kept) and then corrected, a polygon drawn corner by
// corner, a change, and a deletion after its question. A viewer is
// offered no form.
func TestGeofencesInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		forgetHostile(t, w)
		ctx := context.Background()
		p := fleet.SystemPrincipal(w.account)
		b := open(t, w)
		b.hold(width)
		b.signIn(adminEmail, adminPassword)
		b.run("open the geofences", chromedp.Navigate(b.base+"/geofences"), chromedp.WaitVisible(button("Draw on the map")))
		is.True(strings.Contains(b.text(), "No geofences yet"))

		// A circle: two clicks, the centre and the edge.
		b.run("start drawing", chromedp.Click(button("Draw on the map")))
		b.clickMap("fence-map", 0.5, 0.5)
		b.run("the edge wanted", waitText("Now click the circle's edge."))
		b.clickMap("fence-map", 0.7, 0.5)
		var lat, lon, radius string
		b.run("read the circle", chromedp.Value(byLabel("Centre latitude"), &lat), chromedp.Value(byLabel("Centre longitude"), &lon),
			chromedp.Value(byLabel("Radius (metres)"), &radius))
		is.True(lat != "" && lon != "" && radius != "" && radius != "0")
		b.run("name it", chromedp.SendKeys(byLabel("Name"), "Depot"))
		b.press("add it", button("Add geofence"))
		is.True(strings.Contains(b.text(), "Depot is added."))
		gs, err := w.svc.ListGeofences(ctx, p, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(gs.Items), 1)
		is.Equal(gs.Items[0].Geometry.Type, fleet.GeometryPoint)
		is.True(*gs.Items[0].RadiusM > 0)

		// A polygon typed: two corners are not enough, said beside the
		// field, what was typed kept.
		b.run("choose a polygon", chromedp.Click(`//label[normalize-space()="Polygon: its corners"]`), chromedp.WaitVisible(byLabel("Corners")),
			chromedp.SendKeys(byLabel("Name"), "Yard <b>North</b>"),
			chromedp.SendKeys(byLabel("Corners"), "52.50, 13.30\n52.50, 13.32\n"))
		var preview string
		b.eval("see the preview", `window.fleetFences.preview`, &preview)
		is.Equal(preview, "polygon") // drawn as it is typed
		b.press("add it", button("Add geofence"))
		var cornersError, corners string
		b.run("read the mistake", chromedp.Text("#corners-error", &cornersError), chromedp.Value(byLabel("Corners"), &corners))
		is.Equal(cornersError, "Corners must be at least 3, one a line.")
		is.True(strings.Contains(corners, "52.50, 13.32")) // kept
		var invalid string
		b.run("read the field's state", chromedp.AttributeValue(byLabel("Corners"), "aria-invalid", &invalid, nil))
		is.Equal(invalid, "true")
		if width < 800 {
			b.fitsPhone("geofence mistakes", "Add geofence", "Draw on the map")
		}
		b.shot("geofence-mistakes")
		b.run("add a corner", chromedp.SendKeys(byLabel("Corners"), "52.52, 13.32\n"))
		b.press("add it", button("Add geofence"))
		is.True(strings.Contains(b.text(), "Yard <b>North</b> is added.")) // markup is text
		var pwned bool
		b.eval("no markup ran", `document.querySelector("main b") !== null && document.querySelector("main b").textContent === "North"`, &pwned)
		is.True(!pwned)

		// A polygon drawn corner by corner.
		b.run("choose a polygon", chromedp.Click(`//label[normalize-space()="Polygon: its corners"]`), chromedp.WaitVisible(byLabel("Corners")),
			chromedp.SendKeys(byLabel("Name"), "Drawn"))
		b.run("start drawing", chromedp.Click(button("Draw on the map")))
		for _, c := range [][2]float64{{0.3, 0.3}, {0.7, 0.3}, {0.5, 0.7}} {
			b.clickMap("fence-map", c[0], c[1])
		}
		b.run("corners drawn", waitText("3 corners. Stop drawing when it is done."))
		b.run("stop drawing", chromedp.Click(button("Stop drawing")))
		b.run("read the corners", chromedp.Value(byLabel("Corners"), &corners))
		is.Equal(len(strings.Split(strings.TrimSpace(corners), "\n")), 3)
		b.press("add it", button("Add geofence"))
		is.True(strings.Contains(b.text(), "Drawn is added."))
		page := b.text()
		is.True(strings.Contains(page, "3 geofences"))
		is.True(strings.Contains(page, "Polygon, 3 corners"))
		var drawn int
		b.eval("count the shapes", `window.fleetFences.drawn`, &drawn)
		is.Equal(drawn, 3)
		if width < 800 {
			b.fitsPhone("geofences", "Edit", "Delete…", "Add geofence")
		}
		b.cspKept()
		b.shot("geofences")

		// Changed: the circle's edge dragged on the map, then the radius
		// typed.
		b.press("edit the depot", row("Depot")+link("Edit"))
		b.run("wait for the form", chromedp.WaitVisible(button("Save geofence")))
		var before, after string
		b.run("read the radius", chromedp.Value(byLabel("Radius (metres)"), &before))
		b.drag(`.fence-handle[title="The circle's edge"]`, 40, 0)
		b.run("read the radius", chromedp.Value(byLabel("Radius (metres)"), &after))
		is.True(after != before && after != "") // the field follows the handle
		// The handle set the field's value, which Clear does not undo.
		b.run("type a radius", chromedp.Evaluate(`document.getElementById("radius_m").value = ""`, nil),
			chromedp.SendKeys(byLabel("Radius (metres)"), "400"))
		b.press("save it", button("Save geofence"))
		is.True(strings.Contains(b.text(), "Depot is saved."))
		is.True(strings.Contains(b.text(), "Circle, 400 m"))
		b.shot("geofence")

		// Deleted after the question.
		b.run("the list", chromedp.Navigate(b.base+"/geofences"), chromedp.WaitVisible(row("Drawn")))
		b.press("delete one", row("Drawn")+link("Delete…"))
		is.True(strings.Contains(b.text(), "Delete the geofence Drawn (Polygon, 3 corners)?"))
		b.press("confirm", button("Delete the geofence"))
		is.True(strings.Contains(b.text(), "Drawn is deleted."))
		b.cspKept()

		// A viewer sees them and is offered nothing.
		b.signOut()
		b.signIn(viewerEmail, viewerPassword)
		b.run("open the geofences as a viewer", chromedp.Navigate(b.base+"/geofences"), chromedp.WaitVisible(row("Depot")))
		page = b.text()
		for _, never := range []string{"Add a geofence", "Edit", "Delete…", "Draw on the map"} {
			if strings.Contains(page, never) {
				t.Errorf("a viewer is offered %q", never)
			}
		}
		var forged int
		b.eval("forge a geofence", `fetch("/geofences", {method: "POST", body: new URLSearchParams({name: "Forged", shape: "circle", lat: "1", lon: "1", radius_m: "5"})}).then(r => r.status)`, &forged)
		is.Equal(forged, 403)
		gs, _ = w.svc.ListGeofences(ctx, p, fleet.ListQuery{})
		is.Equal(len(gs.Items), 2)
	})
}

// Alert rules in the browser: the form shows the chosen type's fields
// only, a mistake is answered beside its field, rules of three types are
// added (a telematics one by its ticks), disabled, enabled, changed and
// deleted.
func TestAlertRulesInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		forgetHostile(t, w)
		ctx := context.Background()
		p := fleet.SystemPrincipal(w.account)
		radius := 300.0
		depot, err := w.svc.CreateGeofence(ctx, p, fleet.Geofence{Name: "Depot", Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{13.405, 52.52}}, RadiusM: &radius})
		is.NoErr(err)
		b := open(t, w)
		b.hold(width)
		b.signIn(adminEmail, adminPassword)
		b.run("open the rules", chromedp.Navigate(b.base+"/rules"), chromedp.WaitVisible(byLabel("Alert when")))
		is.True(strings.Contains(b.text(), "No alert rules yet"))
		visible := func(label string) bool {
			var v bool
			b.eval("is "+label+" shown", `(() => { const el = document.evaluate('`+byLabel(label)+`', document, null, 9, null).singleNodeValue; return el !== null && el.offsetParent !== null; })()`, &v)
			return v
		}
		is.True(visible("Speed limit (km/h)"))
		is.True(!visible("Geofence") && !visible("Silent for (minutes)")) // another type's

		// A mistake beside its field, the value kept.
		b.run("a speed that is not one", chromedp.SendKeys(byLabel("Speed limit (km/h)"), "fast"), chromedp.SetValue(byLabel("Severity"), "critical"))
		b.press("add it", button("Add rule"))
		var speedError, typed string
		b.run("read the mistake", chromedp.Text("#threshold_kmh-error", &speedError), chromedp.Value(byLabel("Speed limit (km/h)"), &typed))
		is.Equal(speedError, "Speed limit must be a number, such as 90 km/h.")
		is.Equal(typed, "fast")
		if width < 800 {
			b.fitsPhone("rule mistakes", "Add rule")
		}
		b.shot("rule-mistakes")
		b.run("correct it", chromedp.Clear(byLabel("Speed limit (km/h)")), chromedp.SendKeys(byLabel("Speed limit (km/h)"), "90"))
		b.press("add it", button("Add rule"))
		is.True(strings.Contains(b.text(), "The rule “Speeding above 90 km/h” is added."))

		// A geofence rule for one vehicle: the type's field appears.
		b.run("choose leaving a geofence", chromedp.SetValue(byLabel("Alert when"), "geofence_exit"),
			chromedp.Evaluate(`document.getElementById("rule-type").dispatchEvent(new Event("change"))`, nil))
		is.True(visible("Geofence") && !visible("Speed limit (km/h)"))
		b.run("fill it in", chromedp.SetValue(byLabel("Geofence"), depot.ID), chromedp.SetValue(byLabel("Vehicles (optional)"), w.vehicle.ID))
		b.press("add it", button("Add rule"))
		is.True(strings.Contains(b.text(), "The rule “Leaves a geofence Depot” is added."))
		var leave string
		b.run("read its row", chromedp.Text(row("Leaves a geofence"), &leave))
		is.True(strings.Contains(leave, "Truck 7"))
		rules, err := w.svc.ListAlertRules(ctx, p, fleet.AlertRuleFilter{}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(rules.Items), 2)
		is.Equal(rules.Items[1].GeofenceID, depot.ID)
		is.Equal(rules.Items[1].VehicleIDs, []string{w.vehicle.ID})

		// A telematics rule: the alarms ticked by their words.
		b.run("choose an alarm rule", chromedp.SetValue(byLabel("Alert when"), "alarm"),
			chromedp.Evaluate(`document.getElementById("rule-type").dispatchEvent(new Event("change"))`, nil),
			chromedp.Click(`//label[normalize-space()="sos"]`), chromedp.Click(`//label[normalize-space()="tow"]`))
		is.True(!visible("Geofence"))
		b.press("add it", button("Add rule"))
		is.True(strings.Contains(b.text(), "The rule “Alarm on sos or tow” is added."))

		// Disabled and enabled again.
		b.press("disable it", row("Speeding")+button("Disable"))
		is.True(strings.Contains(b.text(), "is disabled: it opens no alert until it is enabled again."))
		var state string
		b.run("read its state", chromedp.Text(row("Speeding")+`/td[@data-label="State"]`, &state))
		is.Equal(state, "disabled")
		if width < 800 {
			b.fitsPhone("rules", "Edit", "Enable", "Disable", "Delete…", "Add rule")
		}
		b.cspKept()
		b.shot("rules")
		b.press("enable it", row("Speeding")+button("Enable"))
		r, _ := w.svc.AlertRule(ctx, p, rules.Items[0].ID)
		is.True(r.Enabled)

		// Changed on its page.
		b.press("edit it", row("Speeding")+link("Edit"))
		b.run("change it", chromedp.WaitVisible(button("Save rule")), chromedp.Clear(byLabel("Speed limit (km/h)")),
			chromedp.SendKeys(byLabel("Speed limit (km/h)"), "80"))
		b.press("save it", button("Save rule"))
		is.True(strings.Contains(b.text(), "The rule is saved."))
		is.True(strings.Contains(b.text(), "Speeding above 80 km/h"))
		b.shot("rule")

		// Deleted after the question.
		b.press("delete it", link("Delete…"))
		is.True(strings.Contains(b.text(), "Delete the alert rule Speeding above 80 km/h (every vehicle, critical)?"))
		b.press("confirm", button("Delete the rule"))
		is.True(strings.Contains(b.text(), "The rule “Speeding above 80 km/h” is deleted."))
		rules, _ = w.svc.ListAlertRules(ctx, p, fleet.AlertRuleFilter{}, fleet.ListQuery{})
		is.Equal(len(rules.Items), 2)
		b.cspKept()
	})
}
