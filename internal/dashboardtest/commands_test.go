package dashboardtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// An admin stops a truck's engine from its page while it drives: the
// confirmation names the truck and says the stop waits while it goes 10
// km/h or more; once confirmed the command is listed, queued, with why it
// waits. A viewer sees the command and no controls. At 1280 and 390 px.
func TestCommandsInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		ctx := context.Background()
		p := fleet.SystemPrincipal(w.account)
		d, err := w.svc.CreateDevice(ctx, p, fleet.Device{Identifier: "356307042441013", VehicleID: w.vehicle.ID, Name: "FMB920"})
		is.NoErr(err)
		speed := 42.0
		_, err = w.svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: d.Identifier, Protocol: "teltonika",
			Positions: []fleet.DevicePosition{{Latitude: 52.5201, Longitude: 13.4052, Timestamp: w.now().Add(-30 * time.Second).UTC(), Speed: &speed, Valid: true}}})
		is.NoErr(err)

		admin := open(t, w)
		admin.hold(width)
		admin.signIn(adminEmail, adminPassword)
		admin.run("open the truck", chromedp.Navigate(admin.base+"/vehicles/"+w.vehicle.ID), chromedp.WaitVisible(link("Commands…")))
		admin.press("open its commands", link("Commands…"))
		admin.run("see its device", waitText("FMB920 (356307042441013)"))
		admin.press("ask to stop the engine", button("Stop engine…"))
		admin.run("the confirmation", waitText("Stop the engine of Truck 7?"))
		text := admin.text()
		is.True(strings.Contains(text, "Truck 7's engine will be cut"))
		is.True(strings.Contains(text, "If its latest report shows 10 km/h or more, the stop waits until a report shows it slower"))
		if width < 800 {
			admin.fitsPhone("engine stop confirmation", "Stop the engine", "Cancel")
		}
		admin.shot("command-confirm")
		admin.press("confirm", button("Stop the engine"))
		admin.run("the queued stop", waitText("The engine stop command is queued"))
		text = admin.text()
		is.True(strings.Contains(text, "Held: the vehicle's latest report shows 42 km/h"))
		is.True(strings.Contains(text, "queued"))
		if width < 800 {
			admin.fitsPhone("commands", "Stop engine…", "Send", "Cancel")
		}
		admin.cspKept()
		admin.shot("commands")
		l, err := w.svc.ListCommands(ctx, p, d.ID, fleet.CommandFilter{}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 1)
		is.Equal(l.Items[0].Type, fleet.CommandEngineStop)

		viewer := open(t, w)
		viewer.hold(width)
		viewer.signIn(viewerEmail, viewerPassword)
		viewer.run("open the truck's commands", chromedp.Navigate(viewer.base+"/vehicles/"+w.vehicle.ID+"/commands"), waitText("engine stop"))
		text = viewer.text()
		is.True(!strings.Contains(text, "Stop engine…") && !strings.Contains(text, "Send"))
		is.True(strings.Contains(text, "Your role is viewer: an admin or a manager sends commands."))
	})
}
