package dashboardtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// In an account of more vehicles than a picker lists, a manager finds a
// vehicle beyond them by typing its name into the picker's search, and
// opens a work order for it; a mistake in the form keeps it chosen.
func TestVehiclePickerSearchInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		forgetHostile(t, w)
		ctx := context.Background()
		p := fleet.SystemPrincipal(w.account)
		_, _, err := w.svc.Operator().CreateUser(ctx, w.account.ID, fleet.UserParams{Email: managerEmail, Name: "Max", Role: fleet.RoleManager}, managerPassword)
		is.NoErr(err)
		for i := range 5_001 {
			_, err := w.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Car %04d", i)})
			is.NoErr(err)
		}
		zulu, err := w.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Zulu wagon", LicensePlate: "B-ZU 1"}) // the last: not listed
		is.NoErr(err)
		b := open(t, w)
		b.hold(width)
		b.signIn(managerEmail, managerPassword)
		const find = "Find a vehicle by name or plate"
		// By the search's id: finding a field by its label (byLabel) reads
		// every element of a page of 10,000 choices once per label.
		const search = "#order-vehicle-search"
		b.run("open maintenance", chromedp.Navigate(b.base+"/maintenance"), chromedp.WaitVisible(search))
		var label string
		b.eval("read the search's label", `document.querySelector("label[for=order-vehicle-search]").textContent`, &label)
		is.Equal(label, find)
		var listed int
		b.eval("count the choices", `document.querySelectorAll("#order-vehicle option[value='`+zulu.ID+`']").length`, &listed)
		is.Equal(listed, 0) // beyond the list
		is.True(strings.Contains(b.text(), "5,000 of the account's vehicles are listed; find any other by its name or plate."))
		b.run("search", chromedp.SendKeys(search, "zulu"), waitText("1 vehicle found and chosen: Zulu wagon."))
		var chosen string
		b.run("read the choice", chromedp.Value("#order-vehicle", &chosen))
		is.Equal(chosen, zulu.ID)
		if width < 800 {
			b.fitsPhone("maintenance with a search", "Open work order")
		}
		b.cspKept()
		b.shot("vehicle-search")
		b.press("open it without a title", button("Open work order"))
		b.run("read the choice kept", chromedp.WaitVisible("#title-error"), chromedp.Value("#order-vehicle", &chosen))
		is.Equal(chosen, zulu.ID)
		b.run("give a title", chromedp.SendKeys("#title", "Tyres"))
		b.press("open it", button("Open work order"))
		is.True(strings.Contains(b.text(), "The work order Tyres is open."))
		l, err := w.svc.ListWorkOrders(ctx, p, fleet.WorkOrderFilter{VehicleID: zulu.ID}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 1)
	})
}
