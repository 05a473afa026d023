package dashboardtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// telemetryTruck adds "Truck 12", driven by Ana Lima (her iButton in its
// reports), which drove a quarter of an hour from 40 minutes ago with its
// ignition on, braked hard, then stood with the ignition off and was
// towed; its reports carry power, fuel and engine hours. An alarm rule
// watches it.
func (w *world) telemetryTruck(t *testing.T) fleet.Vehicle {
	t.Helper()
	ctx := context.Background()
	p := fleet.SystemPrincipal(w.account)
	v, err := w.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 12", LicensePlate: "B-FL 12"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.CreateDriver(ctx, p, fleet.Driver{Name: "Ana Lima", Identifier: "01A2B3C4D5E6F708"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertAlarm, Severity: fleet.SeverityCritical,
		RuleParams: fleet.RuleParams{Alarms: []string{"tow"}}}, nil); err != nil {
		t.Fatal(err)
	}
	start := w.now().UTC().Truncate(time.Minute).Add(-40 * time.Minute)
	var pts []fleet.Point
	for i := range 16 {
		speed, on, volts := 40.0, true, 13.9
		attrs := fleet.Attributes{
			fleet.TextAttr(fleet.AttrDriverIdentifier, "01A2B3C4D5E6F708"),
			fleet.NumberAttr(fleet.AttrFuelLevel, 61-float64(i)*0.25),
			fleet.NumberAttr(fleet.AttrEngineHours, 1234.5+float64(i)/60),
		}
		switch {
		case i == 9:
			attrs = append(attrs, fleet.TextAttr(fleet.AttrAlarm, "hard_braking"))
		case i >= 12:
			speed, on, volts = 0, false, 12.4
		}
		if i == 14 {
			speed = 6
			attrs = append(attrs, fleet.TextAttr(fleet.AttrAlarm, "tow"))
		}
		attrs = append(attrs, fleet.BoolAttr(fleet.AttrIgnition, on), fleet.NumberAttr(fleet.AttrPowerV, volts))
		pts = append(pts, fleet.Point{Latitude: 52.50 + float64(min(i, 12))*0.002, Longitude: 13.40 + float64(min(i, 12))*0.001,
			Timestamp: start.Add(time.Duration(i) * time.Minute), Speed: &speed, Attributes: attrs.Sort()})
	}
	if _, err := w.svc.IngestLocations(ctx, p, v.ID, pts); err != nil {
		t.Fatal(err)
	}
	return v
}

// A vehicle's page shows what its tracker says besides the position: the
// ignition, power, fuel, engine hours and driver, the day's alarms in
// words, the alarm rule's alert in words, and the latest report's
// attributes in the map's popup.
func TestVehicleTelemetryInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		truck := w.telemetryTruck(t)
		b := open(t, w)
		forgetHostile(t, w)
		b.run("live in New York", emulation.SetTimezoneOverride(testZone))
		b.hold(width)
		b.signIn(viewerEmail, viewerPassword)
		b.run("open Truck 12", chromedp.Navigate(b.base+"/vehicles/"+truck.ID), chromedp.WaitVisible(`#telemetry`),
			chromedp.Poll(`window.fleetDay && window.fleetDay.trips === 1`, nil, chromedp.WithPollingTimeout(10*time.Second)))
		var telemetry string
		b.run("read the telemetry", chromedp.Text(`#telemetry`, &telemetry))
		for _, want := range []string{"Ignition\noff", "Power\n12.4 V", "Fuel\n57 %", "Engine hours\n1,234.8 h", "Driver\nAna Lima", "As of"} {
			if !strings.Contains(telemetry, want) {
				t.Errorf("the telemetry lacks %q: %q", want, telemetry)
			}
		}
		var alarms []string
		b.eval("read the alarms", `[...document.querySelectorAll("#alarms td.title")].map(td => td.textContent)`, &alarms)
		is.Equal(alarms, []string{"Towing: moved with the ignition off", "Harsh braking"}) // newest first
		var alert string
		b.run("read the open alert", chromedp.Text(`#vehicle-alerts td.title`, &alert))
		is.True(strings.Contains(alert, "Towing: moved with the ignition off"))
		is.True(strings.Contains(alert, "raised the alarm tow"))
		if width < 800 {
			b.fitsPhone("vehicle's telemetry", "Show the day")
		}
		b.cspKept()
		b.run("wait for the tiles", mapSettled("day-map"))
		b.run("open the position's popup", chromedp.Evaluate(`window.fleetDay.position.openPopup(), true`, nil), chromedp.WaitVisible(`.attr-popup`))
		b.run("let the map pan to it", settle(), chromedp.Poll(`!document.querySelector("#day-map .leaflet-pan-anim")`, nil,
			chromedp.WithPollingTimeout(10*time.Second)), settle())
		var popup string
		b.run("read the popup", chromedp.Text(`.attr-popup`, &popup))
		for _, want := range []string{"Truck 12", "Ignition off", "Power 12.4 V", "Fuel 57 %", "Engine 1,234.8 h", "Driver key 01A2B3C4D5E6F708"} {
			if !strings.Contains(popup, want) {
				t.Errorf("the popup lacks %q: %q", want, popup)
			}
		}
		b.shot("vehicle-telemetry")
	})
}
