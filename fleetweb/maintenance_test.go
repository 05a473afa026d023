package fleetweb_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

// A manager opens work orders and moves them as the state machine allows,
// adds service schedules and deletes them; each mistake is said beside
// its field with what was typed kept; a viewer is offered no form and a
// forged post is refused; another account's vehicle is not one to choose.
func TestMaintenancePage(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	p := fleet.SystemPrincipal(e.accA)
	v, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)
	other, err := e.svc.CreateVehicle(ctx, fleet.SystemPrincipal(e.accB), fleet.Vehicle{Name: "Bravo's"})
	is.NoErr(err)
	orders := func() []fleet.WorkOrder {
		l, err := e.svc.ListWorkOrders(ctx, p, fleet.WorkOrderFilter{}, fleet.ListQuery{Limit: 100})
		is.NoErr(err)
		return l.Items
	}
	c := e.manager(t)
	is.True(strings.Contains(do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID, nil).body, `href="/maintenance?vehicle_id=`+v.ID+`#add-order-title">Open a work order</a>`))
	chosen := do(t, c, "GET", e.srv.URL+"/maintenance?vehicle_id="+v.ID, nil)
	is.True(strings.Contains(chosen.body, `<option value="`+v.ID+`" selected>Truck 7</option>`))
	page := do(t, c, "GET", e.srv.URL+"/maintenance", nil)
	is.Equal(page.status, http.StatusOK)
	is.True(strings.Contains(page.body, "Open a work order"))
	is.True(!strings.Contains(page.body, "Bravo"))

	for _, tc := range []struct {
		form       url.Values
		field, say string
		status     int
	}{
		{url.Values{"vehicle_id": {v.ID}, "title": {""}, "priority": {"medium"}}, "title", "Title is required, 1 to 200 characters.", http.StatusUnprocessableEntity},
		{url.Values{"vehicle_id": {v.ID}, "title": {strings.Repeat("x", 201)}, "priority": {"medium"}}, "title", "Title is required", http.StatusUnprocessableEntity},
		{url.Values{"vehicle_id": {""}, "title": {"Brakes"}, "priority": {"medium"}}, "order-vehicle", "Vehicle is required.", http.StatusUnprocessableEntity},
		{url.Values{"vehicle_id": {other.ID}, "title": {"Brakes"}, "priority": {"medium"}}, "order-vehicle", "Vehicle", http.StatusUnprocessableEntity},
		{url.Values{"vehicle_id": {v.ID}, "title": {"Brakes"}, "priority": {"someday"}}, "priority", "Priority must be one of", http.StatusUnprocessableEntity},
		{url.Values{"vehicle_id": {v.ID}, "title": {"Brakes"}, "priority": {"high"}, "due_date": {"soon"}}, "due_date", "Due on must be a date", http.StatusUnprocessableEntity},
	} {
		r := do(t, c, "POST", e.srv.URL+"/maintenance/work-orders", tc.form)
		is.Equal(r.status, tc.status) // tc.say
		body := html.UnescapeString(r.body)
		i := strings.Index(body, `id="`+tc.field+`-error"`)
		is.True(i > 0)
		is.True(strings.Contains(body[i:], tc.say))
		is.True(strings.Contains(body, `value="`+tc.form.Get("title")+`"`))
	}
	is.Equal(len(orders()), 0)

	r := do(t, c, "POST", e.srv.URL+"/maintenance/work-orders", url.Values{"vehicle_id": {v.ID}, "title": {"<i>Brakes</i>"}, "priority": {"high"}, "due_date": {"2026-12-01"}})
	is.Equal(r.status, http.StatusSeeOther)
	page = follow(t, c, e.srv.URL, r)
	is.True(strings.Contains(page.body, "The work order &lt;i&gt;Brakes&lt;/i&gt; is open."))
	o := orders()[0]
	is.Equal(o.Priority, fleet.PriorityHigh)
	// Start it, then complete it; a completed one moves no more.
	r = do(t, c, "POST", e.srv.URL+"/maintenance/work-orders/"+o.ID+"/status", url.Values{"status": {"in_progress"}})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, c, "POST", e.srv.URL+"/maintenance/work-orders/"+o.ID+"/status", url.Values{"status": {"completed"}, "tab": {"in_progress"}})
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(r.header.Get("Location")[:len("/maintenance?")], "/maintenance?")
	r = do(t, c, "POST", e.srv.URL+"/maintenance/work-orders/"+o.ID+"/status", url.Values{"status": {"open"}})
	is.Equal(r.status, http.StatusConflict)
	is.True(strings.Contains(r.body, "A work order cannot move from completed to open."))
	done := do(t, c, "GET", e.srv.URL+"/maintenance?status=completed", nil)
	is.True(strings.Contains(done.body, "&lt;i&gt;Brakes&lt;/i&gt;"))

	// Schedules.
	r = do(t, c, "POST", e.srv.URL+"/maintenance/schedules", url.Values{"vehicle_id": {v.ID}, "name": {"Oil change"}, "interval_days": {"often"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, `id="interval_days-error" class="field-error">Every how many days must be a whole number of days, such as 180.`))
	is.True(strings.Contains(r.body, `value="Oil change"`))
	r = do(t, c, "POST", e.srv.URL+"/maintenance/schedules", url.Values{"vehicle_id": {v.ID}, "name": {"Oil change"}, "interval_days": {"180"}, "interval_km": {"15000"}})
	is.Equal(r.status, http.StatusSeeOther)
	l, err := e.svc.ListSchedules(ctx, p, fleet.ScheduleFilter{}, fleet.ListQuery{Limit: 10})
	is.NoErr(err)
	is.Equal(len(l.Items), 1)
	page = follow(t, c, e.srv.URL, r)
	is.True(strings.Contains(page.body, "180 days or 15000 km"))
	is.True(strings.Contains(page.body, "at 15000 km"))

	// A viewer: no form, and a forged post refused.
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	vp := do(t, viewer, "GET", e.srv.URL+"/maintenance", nil)
	is.Equal(strings.Count(vp.body, `method="post"`), 1) // signing out only
	is.Equal(do(t, viewer, "POST", e.srv.URL+"/maintenance/work-orders", url.Values{"vehicle_id": {v.ID}, "title": {"x"}, "priority": {"low"}}).status, http.StatusForbidden)
	is.Equal(do(t, viewer, "POST", e.srv.URL+"/maintenance/schedules/"+l.Items[0].ID+"/delete", url.Values{}).status, http.StatusForbidden)

	r = do(t, c, "POST", e.srv.URL+"/maintenance/schedules/"+l.Items[0].ID+"/delete", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	l, err = e.svc.ListSchedules(ctx, p, fleet.ScheduleFilter{}, fleet.ListQuery{Limit: 10})
	is.NoErr(err)
	is.Equal(len(l.Items), 0)
}
