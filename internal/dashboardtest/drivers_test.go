package dashboardtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// Drivers managed from the dashboard: added by the form's labels (a
// mistake answered beside its field, what was typed kept), found by the
// search, changed, assigned to a vehicle on its page, and deleted after a
// question that names them. A viewer sees them and is offered nothing.
func TestDriversInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		forgetHostile(t, w)
		ctx := context.Background()
		p := fleet.SystemPrincipal(w.account)
		for _, d := range []fleet.Driver{
			{Name: "Bo Berg", Identifier: "0000012A4F6B", Phone: "+49 30 1234567", LicenseExpiresOn: "2027-06-30"},
			{Name: "Cy Ward", Identifier: "card-5521", Phone: "+49 40 7654321", LicenseExpiresOn: "2026-01-31"},
		} {
			_, err := w.svc.CreateDriver(ctx, p, d)
			is.NoErr(err)
		}
		b := open(t, w)
		b.hold(width)
		b.signIn(adminEmail, adminPassword)
		b.run("open the drivers", chromedp.Navigate(b.base+"/drivers"), chromedp.WaitVisible(byLabel("Name")))
		is.True(strings.Contains(b.text(), "2 drivers"))

		// A mistake: beside the field, in words, the rest kept.
		b.run("fill in a driver with mistakes",
			chromedp.SendKeys(byLabel("Name"), "Ana Lima"),
			chromedp.SendKeys(byLabel("Driver key (optional)"), "01A2 B3C4"),
			chromedp.SendKeys(byLabel("Phone (optional)"), "+351 912 345 678"),
			chromedp.SendKeys(byLabel("E-mail (optional)"), "ana.lima at example.com"),
		)
		b.press("add her", button("Add driver"))
		var keyError, emailError, phone string
		b.run("read the mistakes", chromedp.Text("#identifier-error", &keyError), chromedp.Text("#email-error", &emailError),
			chromedp.Value(byLabel("Phone (optional)"), &phone))
		is.True(strings.HasPrefix(keyError, "Driver key must be 1 to 64 printable ASCII characters without spaces"))
		is.True(strings.HasPrefix(emailError, "E-mail address must be an e-mail address"))
		is.Equal(phone, "+351 912 345 678") // kept
		var invalid string
		b.run("read the field's state", chromedp.AttributeValue(byLabel("Driver key (optional)"), "aria-invalid", &invalid, nil))
		is.Equal(invalid, "true")
		if width < 800 {
			b.fitsPhone("drivers with mistakes", "Add driver")
		}
		b.shot("driver-mistakes")
		b.run("correct them",
			chromedp.Clear(byLabel("Driver key (optional)")), chromedp.SendKeys(byLabel("Driver key (optional)"), "01A2B3C4D5E6F708"),
			chromedp.Clear(byLabel("E-mail (optional)")), chromedp.SendKeys(byLabel("E-mail (optional)"), "ana.lima@example.com"),
			chromedp.SendKeys(byLabel("Licence number (optional)"), "P-881-220-44"),
		)
		b.press("add her", button("Add driver"))
		is.True(strings.Contains(b.text(), "Ana Lima is added."))
		l, err := w.svc.ListDrivers(ctx, p, fleet.DriverFilter{Identifier: "01A2B3C4D5E6F708"}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 1)
		ana := l.Items[0]
		is.Equal(ana.Email, "ana.lima@example.com")
		is.Equal(ana.Phone, "+351 912 345 678")

		// Assigned on the truck's page; the page and the list say so.
		b.run("open the truck", chromedp.Navigate(b.base+"/vehicles/"+w.vehicle.ID), chromedp.WaitVisible(byLabel("Who drives it")),
			chromedp.SetValue(byLabel("Who drives it"), ana.ID))
		b.press("assign her", button("Assign"))
		page := b.text()
		is.True(strings.Contains(page, "Ana Lima drives this vehicle now."))
		is.True(strings.Contains(page, "Driver: Ana Lima"))
		v, err := w.svc.Vehicle(ctx, p, w.vehicle.ID)
		is.NoErr(err)
		is.Equal(v.DriverID, ana.ID)

		// The list, searched.
		b.run("search", chromedp.Navigate(b.base+"/drivers"), chromedp.WaitVisible(byLabel("Search")), chromedp.SendKeys(byLabel("Search"), "lima"))
		b.press("find her", button("Find drivers"))
		var names []string
		b.eval("read the names", `[...document.querySelectorAll("#driver-list td.title a")].map(a => a.textContent)`, &names)
		is.Equal(names, []string{"Ana Lima"})
		b.run("every driver", chromedp.Navigate(b.base+"/drivers"), chromedp.WaitVisible(row("Ana Lima")))
		var anaRow, cyRow string
		b.run("read the rows", chromedp.Text(row("Ana Lima"), &anaRow), chromedp.Text(row("Cy Ward"), &cyRow))
		is.True(strings.Contains(anaRow, "Truck 7"))
		is.True(strings.Contains(cyRow, "expired")) // January 2026
		if width < 800 {
			b.fitsPhone("drivers", "Edit", "Delete…", "Add driver")
		}
		b.cspKept()
		b.shot("drivers")

		// Changed on her page: an emptied field is cleared.
		b.press("edit her", row("Ana Lima")+link("Edit"))
		b.run("change her", chromedp.WaitVisible(button("Save driver")), chromedp.Clear(byLabel("Phone (optional)")),
			chromedp.SendKeys(byLabel("Notes (optional)"), "Night shifts; forklift licence."))
		b.press("save her", button("Save driver"))
		page = b.text()
		is.True(strings.Contains(page, "Ana Lima is saved."))
		is.True(strings.Contains(page, "Truck 7"))
		got, err := w.svc.Driver(ctx, p, ana.ID)
		is.NoErr(err)
		is.Equal(got.Phone, "")
		is.Equal(got.Notes, "Night shifts; forklift licence.")
		b.shot("driver")

		// Deleted after a question naming her and her truck.
		b.press("delete her", link("Delete…"))
		b.run("read the question", chromedp.WaitVisible(button("Delete the driver")))
		question := b.text()
		is.True(strings.Contains(question, "Delete the driver Ana Lima (driver key 01A2B3C4D5E6F708)?"))
		is.True(strings.Contains(question, "Truck 7 will have no driver."))
		b.shot("driver-delete")
		b.press("confirm", button("Delete the driver"))
		is.True(strings.Contains(b.text(), "Ana Lima is deleted."))
		_, err = w.svc.Driver(ctx, p, ana.ID)
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		v, _ = w.svc.Vehicle(ctx, p, w.vehicle.ID)
		is.Equal(v.DriverID, "")
		b.cspKept()

		// A viewer sees the drivers and is offered no change.
		b.signOut()
		b.signIn(viewerEmail, viewerPassword)
		b.run("open the drivers as a viewer", chromedp.Navigate(b.base+"/drivers"), chromedp.WaitVisible(row("Bo Berg")))
		page = b.text()
		for _, never := range []string{"Add a driver", "Edit", "Delete…"} {
			if strings.Contains(page, never) {
				t.Errorf("a viewer is offered %q", never)
			}
		}
		b.run("open the truck as a viewer", chromedp.Navigate(b.base+"/vehicles/"+w.vehicle.ID), waitText("Driver: none"))
		is.True(!strings.Contains(b.text(), "Who drives it"))
		var forged int
		b.eval("forge a driver", `fetch("/drivers", {method: "POST", body: new URLSearchParams({name: "Forged"})}).then(r => r.status)`, &forged)
		is.Equal(forged, 403)
		l, err = w.svc.ListDrivers(ctx, p, fleet.DriverFilter{Query: "forged"}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 0)
	})
}
