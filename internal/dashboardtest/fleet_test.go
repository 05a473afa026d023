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

const (
	managerEmail    = "manager@acme.test"
	managerPassword = "fleet-manager-runs-it-4"
)

// A manager runs the fleet in the browser, by labels and button words: a
// vehicle added (a mistake answered beside its field, what was typed
// kept), a tracker registered to it with what to type into the tracker,
// its last report's attributes, a work order opened and started, a week's
// summary shown with its CSV, and vehicles imported from CSV after a
// preview; at 390 px every page fits the screen.
func TestRunTheFleetInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		forgetHostile(t, w)
		ctx := context.Background()
		p := fleet.SystemPrincipal(w.account)
		_, _, err := w.svc.Operator().CreateUser(ctx, w.account.ID, fleet.UserParams{Email: managerEmail, Name: "Max", Role: fleet.RoleManager}, managerPassword)
		is.NoErr(err)
		b := open(t, w)
		b.hold(width)
		b.signIn(managerEmail, managerPassword)

		// A vehicle, with a mistake first.
		b.run("open the vehicles", chromedp.Navigate(b.base+"/vehicles"), chromedp.WaitVisible(link("Add a vehicle")))
		b.press("add a vehicle", link("Add a vehicle"))
		b.run("fill in a vehicle with a mistake", chromedp.WaitVisible(byLabel("Name")),
			chromedp.SendKeys(byLabel("Name"), "Truck 9"),
			chromedp.SendKeys(byLabel("Licence plate (optional)"), "B-FL 9"),
			chromedp.SendKeys(byLabel("Year (optional)"), "nineteen"),
			chromedp.SendKeys(byLabel("Tags (optional)"), "north, cold"))
		b.press("add it", button("Add vehicle"))
		var yearError, plate, invalid string
		b.run("read the mistake", chromedp.Text("#year-error", &yearError), chromedp.Value(byLabel("Licence plate (optional)"), &plate),
			chromedp.AttributeValue(byLabel("Year (optional)"), "aria-invalid", &invalid, nil))
		is.Equal(yearError, "Year must be a whole number, such as 2021.")
		is.Equal(plate, "B-FL 9") // kept
		is.Equal(invalid, "true")
		if width < 800 {
			b.fitsPhone("vehicle form with a mistake", "Add vehicle")
		}
		b.shot("vehicle-form")
		b.run("correct it", chromedp.Clear(byLabel("Year (optional)")), chromedp.SendKeys(byLabel("Year (optional)"), "2021"))
		b.press("add it", button("Add vehicle"))
		is.True(strings.Contains(b.text(), "Truck 9 is added."))

		// Its tracker, registered on its page.
		b.press("register a device", link("Register a device"))
		b.run("fill in the device", chromedp.WaitVisible(byLabel("Identifier")),
			chromedp.SendKeys(byLabel("Identifier"), "356307042441013"),
			chromedp.SendKeys(byLabel("Name (optional)"), "FMB920 in the cab"),
			chromedp.SetValue(byLabel("Protocol it speaks (optional)"), "teltonika"))
		if width < 800 {
			b.fitsPhone("device registration", "Register device")
		}
		b.shot("device-register")
		b.press("register it", button("Register device"))
		page := b.text()
		is.True(strings.Contains(page, "FMB920 in the cab is registered to Truck 9."))
		is.True(strings.Contains(page, "5027"))
		sp := 38.0
		_, err = w.svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: "356307042441013", Protocol: "teltonika",
			Positions: []fleet.DevicePosition{{Latitude: 52.51, Longitude: 13.39, Timestamp: w.now().Add(-30 * time.Second).UTC(), Valid: true, Speed: &sp,
				Attrs: fleet.Attributes{fleet.BoolAttr("ignition", true), fleet.NumberAttr("battery_voltage", 12.6), fleet.NumberAttr("fuel_level", 71)}}}})
		is.NoErr(err)
		b.run("reload the device", chromedp.Reload(), chromedp.WaitVisible("#attributes"))
		var attrs string
		b.run("read the attributes", chromedp.Text("#attributes", &attrs))
		is.True(strings.Contains(attrs, "battery_voltage"))
		is.True(strings.Contains(attrs, "12.6"))
		if width < 800 {
			b.fitsPhone("device", "Save device")
		}
		b.cspKept()
		b.shot("device")

		// Removing the device, and deleting the vehicle, ask first, naming them.
		b.press("remove the device", link("Remove device…"))
		b.run("read the question", chromedp.WaitVisible(button("Remove the device")))
		is.True(strings.Contains(b.text(), "Remove the device FMB920 in the cab (identifier 356307042441013) from Truck 9?"))
		if width < 800 {
			b.fitsPhone("device removal", "Remove the device")
		}
		b.shot("device-remove")
		b.press("keep it", link("Cancel"))
		b.press("back to the truck", link("← Truck 9"))
		b.press("delete the truck", link("Delete vehicle…"))
		b.run("read the question", chromedp.WaitVisible(button("Delete the vehicle")))
		question := b.text()
		is.True(strings.Contains(question, "Delete the vehicle Truck 9 (plate B-FL 9)?"))
		is.True(strings.Contains(question, "Its 1 device (356307042441013) will belong to no vehicle"))
		if width < 800 {
			b.fitsPhone("vehicle deletion", "Delete the vehicle")
		}
		b.shot("vehicle-delete")

		// A work order, opened and started.
		b.run("open maintenance", chromedp.Navigate(b.base+"/maintenance"), chromedp.WaitVisible(byLabel("Title")))
		vs, err := w.svc.ListVehicles(ctx, p, fleet.VehicleFilter{Query: "Truck 9"}, fleet.ListQuery{})
		is.NoErr(err)
		b.run("fill in a work order", chromedp.SetValue("#order-vehicle", vs.Items[0].ID), chromedp.SendKeys(byLabel("Title"), "Brake pads"),
			chromedp.SetValue(byLabel("Priority"), "high"))
		b.press("open it", button("Open work order"))
		is.True(strings.Contains(b.text(), "The work order Brake pads is open."))
		b.press("start it", row("Brake pads")+button("Start"))
		is.True(strings.Contains(b.text(), "The work order Brake pads is in progress now."))
		b.run("in progress", chromedp.Navigate(b.base+"/maintenance?status=in_progress"), chromedp.WaitVisible(row("Brake pads")))
		if width < 800 {
			b.fitsPhone("maintenance", "Complete")
		}
		b.shot("maintenance")

		// A week's summary, and its CSV.
		b.run("open reports", chromedp.Navigate(b.base+"/reports"), chromedp.WaitVisible(byLabel("Report")))
		b.press("show the summary", button("Show report"))
		is.True(strings.Contains(b.text(), "Download CSV"))
		if width < 800 {
			b.fitsPhone("reports", "Show report", "Download CSV")
		}
		b.shot("reports")

		// Vehicles imported after a preview.
		b.run("open the import", chromedp.Navigate(b.base+"/vehicles/import"), chromedp.WaitVisible(byLabel("Or paste the CSV")),
			chromedp.SendKeys(byLabel("Or paste the CSV"), "name,license_plate,external_id,tags\nVan 20,B-FL 20,V-20,south\nVan 21,B-FL 21,V-21,south\n"))
		b.press("preview", button("Preview import"))
		is.True(strings.Contains(b.text(), "Preview: 2 vehicles to create, 0 existing, 0 bad rows"))
		if width < 800 {
			b.fitsPhone("import preview", "Import 2 vehicles")
		}
		b.shot("vehicle-import")
		b.press("import", button("Import 2 vehicles"))
		is.True(strings.Contains(b.text(), "2 vehicles are imported"))

		// A report ten minutes old is stale on the live map's list.
		old, err := w.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Old van"})
		is.NoErr(err)
		fast := 30.0
		_, err = w.svc.IngestLocations(ctx, p, old.ID, []fleet.Point{{Latitude: 52.52, Longitude: 13.41, Timestamp: w.now().Add(-10 * time.Minute).UTC(), Speed: &fast}})
		is.NoErr(err)
		var oldRow, truckRow string
		b.run("open the map", chromedp.Navigate(b.base+"/map"), chromedp.WaitVisible(row("Old van")+`//span[contains(@class, "st-stale")]`),
			chromedp.Text(row("Old van"), &oldRow), chromedp.Text(row("Truck 7"), &truckRow))
		is.True(strings.Contains(oldRow, "stale"))
		is.True(!strings.Contains(truckRow, "stale"))
	})
}

// An admin finds a tracker the server refused as unknown and registers it
// to a vehicle from its row.
func TestUnknownDeviceRegisteredInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		forgetHostile(t, w)
		ctx := context.Background()
		known, err := w.svc.DeviceEdge().Known(ctx, "862000000000001", "gt06", "192.0.2.7:40000")
		is.NoErr(err)
		is.True(!known)
		b := open(t, w)
		b.hold(width)
		b.signIn(adminEmail, adminPassword)
		b.run("open the vehicles", chromedp.Navigate(b.base+"/vehicles"), chromedp.WaitVisible(link("Unknown devices")))
		b.press("open the unknown devices", link("Unknown devices"))
		b.run("find the tracker", chromedp.WaitVisible(row("862000000000001")))
		if width < 800 {
			b.fitsPhone("unknown devices", "Register this…")
		}
		b.shot("devices-unknown")
		b.run("register it", chromedp.Click(row("862000000000001")+"//a", chromedp.BySearch), chromedp.WaitVisible(byLabel("Vehicle")))
		var identifier string
		b.run("read the identifier", chromedp.Value(byLabel("Identifier"), &identifier))
		is.Equal(identifier, "862000000000001")
		b.press("register it without a vehicle", button("Register device"))
		var vehicleError string
		b.run("read the mistake", chromedp.Text("#vehicle_id-error", &vehicleError))
		is.Equal(vehicleError, "Vehicle is required: choose the vehicle it rides in.")
		b.run("choose the truck", chromedp.SetValue(byLabel("Vehicle"), w.vehicle.ID))
		b.shot("device-register-unknown")
		b.press("register it", button("Register device"))
		is.True(strings.Contains(b.text(), "862000000000001 is registered: its next message is stored."))
		known, err = w.svc.DeviceEdge().Known(ctx, "862000000000001", "gt06", "192.0.2.7:40000")
		is.NoErr(err)
		is.True(known)
	})
}
