package dashboardtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// A manager changes a work order and a service schedule on their pages,
// by labels and button words: a mistake is said beside its field with
// what was typed kept and nothing saved, markup typed into a title stays
// text, and the corrected form is saved; at 390 px the pages fit.
func TestEditMaintenanceInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		ctx := context.Background()
		p := fleet.SystemPrincipal(w.account)
		_, _, err := w.svc.Operator().CreateUser(ctx, w.account.ID, fleet.UserParams{Email: managerEmail, Name: "Max", Role: fleet.RoleManager}, managerPassword)
		is.NoErr(err)
		o, err := w.svc.CreateWorkOrder(ctx, p, fleet.WorkOrder{VehicleID: w.vehicle.ID, Title: "Brake pads"})
		is.NoErr(err)
		days := 180
		s, err := w.svc.CreateSchedule(ctx, p, fleet.Schedule{VehicleID: w.vehicle.ID, Name: "Oil change", IntervalDays: &days})
		is.NoErr(err)
		b := open(t, w)
		b.hold(width)
		b.signIn(managerEmail, managerPassword)

		// The work order.
		const markup = `Brake pads <img src=x onerror="window.pwned=1">`
		b.run("open maintenance", chromedp.Navigate(b.base+"/maintenance"), chromedp.WaitVisible(row("Brake pads")))
		b.press("edit the work order", row("Brake pads")+link("Edit"))
		b.run("change it with a mistake", chromedp.WaitVisible(byLabel("Title")),
			chromedp.Clear(byLabel("Title")), chromedp.SendKeys(byLabel("Title"), markup),
			chromedp.SetValue(byLabel("Priority"), "urgent"),
			chromedp.SendKeys(byLabel("Assigned to (optional)"), "Garage Nord"),
			chromedp.SendKeys(byLabel("Cost (optional)"), "a lot"),
			chromedp.SendKeys(byLabel("Currency (optional)"), "EUR"))
		b.press("save it", button("Save work order"))
		var costError, title, garage, invalid string
		b.run("read the mistake", chromedp.Text("#cost-error", &costError), chromedp.Value(byLabel("Title"), &title),
			chromedp.Value(byLabel("Assigned to (optional)"), &garage),
			chromedp.AttributeValue(byLabel("Cost (optional)"), "aria-invalid", &invalid, nil))
		is.Equal(costError, "Cost must be an amount such as 120.50, with at most 2 decimals.")
		is.Equal(title, markup) // kept
		is.Equal(garage, "Garage Nord")
		is.Equal(invalid, "true")
		same, err := w.svc.WorkOrder(ctx, p, o.ID)
		is.NoErr(err)
		is.Equal(same.Title, "Brake pads") // nothing saved
		b.run("correct it", chromedp.Clear(byLabel("Cost (optional)")), chromedp.SendKeys(byLabel("Cost (optional)"), "120.50"))
		b.press("save it", button("Save work order"))
		page := b.text()
		is.True(strings.Contains(page, "The work order "+markup+" is saved."))
		is.True(strings.Contains(page, "120.50 EUR"))
		var pwned bool
		b.eval("check the title is text", `window.pwned === 1 || document.querySelector("main img") !== null`, &pwned)
		is.True(!pwned)
		got, err := w.svc.WorkOrder(ctx, p, o.ID)
		is.NoErr(err)
		is.Equal(got.Priority, fleet.PriorityUrgent)
		is.Equal(*got.CostCents, int64(12050))
		is.Equal(got.AssignedTo, "Garage Nord")
		if width < 800 {
			b.fitsPhone("work order", "Save work order")
		}
		b.cspKept()
		b.shot("work-order")

		// The schedule.
		b.run("back to maintenance", chromedp.Navigate(b.base+"/maintenance"), chromedp.WaitVisible(row("Oil change")))
		b.press("edit the schedule", row("Oil change")+link("Edit"))
		b.run("change it with a mistake", chromedp.WaitVisible(byLabel("Every how many km")),
			chromedp.SendKeys(byLabel("Every how many km"), "far"),
			chromedp.SendKeys(byLabel("Every how many engine hours"), "500"))
		b.press("save it", button("Save schedule"))
		var kmError, hours string
		b.run("read the mistake", chromedp.Text("#interval_km-error", &kmError), chromedp.Value(byLabel("Every how many engine hours"), &hours))
		is.Equal(kmError, "Every how many km must be a number of kilometres, such as 15000.")
		is.Equal(hours, "500")
		b.run("correct it", chromedp.Clear(byLabel("Every how many km")), chromedp.SendKeys(byLabel("Every how many km"), "15000"))
		b.press("save it", button("Save schedule"))
		page = b.text()
		is.True(strings.Contains(page, "The schedule Oil change is saved."))
		is.True(strings.Contains(page, "180 days or 15000 km or 500 engine hours"))
		gs, err := w.svc.Schedule(ctx, p, s.ID)
		is.NoErr(err)
		is.Equal(*gs.IntervalKm, 15000.0)
		is.Equal(*gs.IntervalEngineHours, 500.0)
		if width < 800 {
			b.fitsPhone("schedule", "Save schedule")
		}
		b.shot("schedule")
	})
}
