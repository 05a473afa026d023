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

// A manager changes every field of a work order and of a schedule on
// their pages; a mistake is said beside its field with what was typed
// kept and nothing changed; markup stays text; another account's work
// order or schedule is not found; a viewer sees no form and a forged post
// is refused.
func TestMaintenanceEditPages(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	p := fleet.SystemPrincipal(e.accA)
	v, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)
	o, err := e.svc.CreateWorkOrder(ctx, p, fleet.WorkOrder{VehicleID: v.ID, Title: "Brakes"})
	is.NoErr(err)
	days := 180
	s, err := e.svc.CreateSchedule(ctx, p, fleet.Schedule{VehicleID: v.ID, Name: "Oil change", IntervalDays: &days})
	is.NoErr(err)
	pb := fleet.SystemPrincipal(e.accB)
	vb, err := e.svc.CreateVehicle(ctx, pb, fleet.Vehicle{Name: "Bravo's"})
	is.NoErr(err)
	ob, err := e.svc.CreateWorkOrder(ctx, pb, fleet.WorkOrder{VehicleID: vb.ID, Title: "Bravo's brakes"})
	is.NoErr(err)
	sb, err := e.svc.CreateSchedule(ctx, pb, fleet.Schedule{VehicleID: vb.ID, Name: "Bravo's oil", IntervalDays: &days})
	is.NoErr(err)
	c := e.manager(t)

	page := do(t, c, "GET", e.srv.URL+"/maintenance", nil)
	is.True(strings.Contains(page.body, `<a class="button" href="/maintenance/work-orders/`+o.ID+`">Edit</a>`))
	is.True(strings.Contains(page.body, `<a class="button" href="/maintenance/schedules/`+s.ID+`">Edit</a>`))
	page = do(t, c, "GET", e.srv.URL+"/maintenance/work-orders/"+o.ID, nil)
	is.Equal(page.status, http.StatusOK)
	is.True(strings.Contains(page.body, `value="Brakes"`))

	good := url.Values{"title": {"Brakes, front"}, "priority": {"urgent"}, "due_date": {"2026-12-01"}, "assigned_to": {"Garage Nord"},
		"odometer_km": {"120500"}, "cost": {"120.5"}, "currency": {"eur"}, "description": {"Pads and discs."}}
	with := func(k, val string) url.Values { return changed(good, k, val) }
	for _, tc := range []struct {
		form       url.Values
		field, say string
	}{
		{with("title", ""), "title", "Title is required, 1 to 200 characters."},
		{with("title", strings.Repeat("x", 201)), "title", "Title is required"},
		{with("priority", "someday"), "priority", "Priority must be one of"},
		{with("due_date", "soon"), "due_date", "Due on must be a date"},
		{with("odometer_km", "far"), "odometer_km", "Odometer km must be a number of kilometres"},
		{with("cost", "a lot"), "cost", "Cost must be an amount such as 120.50, with at most 2 decimals."},
		{with("cost", "1.505"), "cost", "with at most 2 decimals"},
		{with("cost", "-5"), "cost", "Cost must not be negative."},
		{with("currency", "E1"), "currency", "Currency must be an ISO 4217 code"},
		{with("currency", ""), "currency", "Currency is required"},
	} {
		mistakeBeside(t, do(t, c, "POST", e.srv.URL+"/maintenance/work-orders/"+o.ID, tc.form), tc.field, tc.say, `value="`+tc.form.Get("assigned_to")+`"`)
	}
	same, err := e.svc.WorkOrder(ctx, p, o.ID)
	is.NoErr(err)
	is.Equal(same.Title, "Brakes") // nothing changed
	is.Equal(same.CostCents, nil)

	r := do(t, c, "POST", e.srv.URL+"/maintenance/work-orders/"+o.ID, with("title", `<script>alert(1)</script>`))
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(r.header.Get("Location")[:len("/maintenance/work-orders/"+o.ID+"?")], "/maintenance/work-orders/"+o.ID+"?")
	page = follow(t, c, e.srv.URL, r)
	is.True(strings.Contains(page.body, "&lt;script&gt;alert(1)&lt;/script&gt; is saved."))
	is.True(!strings.Contains(page.body, "<script>alert"))
	is.True(strings.Contains(page.body, "120.50 EUR"))
	got, err := e.svc.WorkOrder(ctx, p, o.ID)
	is.NoErr(err)
	is.Equal(got.Priority, fleet.PriorityUrgent)
	is.Equal(got.DueDate, "2026-12-01")
	is.Equal(got.AssignedTo, "Garage Nord")
	is.Equal(*got.OdometerKm, 120500.0)
	is.Equal(*got.CostCents, int64(12050))
	is.Equal(got.Currency, "EUR")
	is.Equal(got.Description, "Pads and discs.")
	is.Equal(got.Status, fleet.WorkOrderOpen)
	// Emptied fields are cleared.
	r = do(t, c, "POST", e.srv.URL+"/maintenance/work-orders/"+o.ID, url.Values{"title": {"Brakes"}, "priority": {"low"}})
	is.Equal(r.status, http.StatusSeeOther)
	got, err = e.svc.WorkOrder(ctx, p, o.ID)
	is.NoErr(err)
	is.Equal(got.CostCents, nil)
	is.Equal(got.AssignedTo, "")
	is.Equal(got.OdometerKm, nil)

	// The schedule.
	page = do(t, c, "GET", e.srv.URL+"/maintenance/schedules/"+s.ID, nil)
	is.Equal(page.status, http.StatusOK)
	is.True(strings.Contains(page.body, `id="interval_days" name="interval_days" inputmode="numeric" value="180"`))
	sgood := url.Values{"name": {"Oil and filter"}, "interval_days": {"365"}, "interval_km": {"20000"}, "interval_engine_hours": {"500"},
		"last_service_date": {s.LastServiceDate}, "last_service_odometer_km": {"1000"}, "last_service_engine_hours": {"20"}, "auto_create_work_order": {"1"}}
	swith := func(k, val string) url.Values { return changed(sgood, k, val) }
	for _, tc := range []struct {
		form       url.Values
		field, say string
	}{
		{swith("name", ""), "schedule-name", "Name is required"},
		{swith("name", strings.Repeat("n", 101)), "schedule-name", "Name is required"},
		{swith("interval_days", "often"), "interval_days", "Every how many days must be a whole number of days, such as 180."},
		{swith("interval_days", "0"), "interval_days", "Every how many days must be between 1 and"},
		{swith("interval_km", "far"), "interval_km", "Every how many km must be a number of kilometres"},
		{swith("interval_engine_hours", "-1"), "interval_engine_hours", "Every how many engine hours must be above 0"},
		{swith("last_service_date", "2999-01-01"), "last_service_date", "Last service on must not be in the future."},
		{swith("last_service_date", ""), "last_service_date", "Last service on is required."},
		{swith("last_service_odometer_km", "lots"), "last_service_odometer_km", "must be a number of kilometres"},
		{swith("last_service_engine_hours", "x"), "last_service_engine_hours", "Engine hours at the last service must be a number of hours"},
	} {
		mistakeBeside(t, do(t, c, "POST", e.srv.URL+"/maintenance/schedules/"+s.ID, tc.form), tc.field, tc.say, `value="`+tc.form.Get("name")+`"`)
	}
	sameS, err := e.svc.Schedule(ctx, p, s.ID)
	is.NoErr(err)
	is.Equal(sameS.Name, "Oil change")
	is.Equal(sameS.IntervalKm, nil)

	r = do(t, c, "POST", e.srv.URL+"/maintenance/schedules/"+s.ID, sgood)
	is.Equal(r.status, http.StatusSeeOther)
	page = follow(t, c, e.srv.URL, r)
	is.True(strings.Contains(page.body, "The schedule Oil and filter is saved."))
	is.True(strings.Contains(page.body, "365 days or 20000 km or 500 engine hours"))
	gs, err := e.svc.Schedule(ctx, p, s.ID)
	is.NoErr(err)
	is.Equal(*gs.IntervalDays, 365)
	is.Equal(*gs.IntervalKm, 20000.0)
	is.Equal(*gs.IntervalEngineHours, 500.0)
	is.Equal(*gs.LastServiceOdometerKm, 1000.0)
	is.Equal(*gs.LastServiceEngineHours, 20.0)
	is.True(gs.AutoCreateWorkOrder)
	// Unticked, emptied: the interval by km goes, the box clears.
	r = do(t, c, "POST", e.srv.URL+"/maintenance/schedules/"+s.ID, url.Values{"name": {"Oil and filter"}, "interval_days": {"365"},
		"last_service_date": {s.LastServiceDate}, "last_service_odometer_km": {"1000"}})
	is.Equal(r.status, http.StatusSeeOther)
	gs, err = e.svc.Schedule(ctx, p, s.ID)
	is.NoErr(err)
	is.Equal(gs.IntervalKm, nil)
	is.Equal(gs.IntervalEngineHours, nil)
	is.True(!gs.AutoCreateWorkOrder)

	// Another account's: not found, and untouched.
	is.Equal(do(t, c, "GET", e.srv.URL+"/maintenance/work-orders/"+ob.ID, nil).status, http.StatusNotFound)
	is.Equal(do(t, c, "POST", e.srv.URL+"/maintenance/work-orders/"+ob.ID, good).status, http.StatusNotFound)
	is.Equal(do(t, c, "GET", e.srv.URL+"/maintenance/schedules/"+sb.ID, nil).status, http.StatusNotFound)
	is.Equal(do(t, c, "POST", e.srv.URL+"/maintenance/schedules/"+sb.ID, sgood).status, http.StatusNotFound)
	bo, err := e.svc.WorkOrder(ctx, pb, ob.ID)
	is.NoErr(err)
	is.Equal(bo.Title, "Bravo's brakes")
	bs, err := e.svc.Schedule(ctx, pb, sb.ID)
	is.NoErr(err)
	is.Equal(bs.Name, "Bravo's oil")

	// A viewer: the details, no form, a forged post refused.
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	for _, path := range []string{"/maintenance/work-orders/" + o.ID, "/maintenance/schedules/" + s.ID} {
		vp := do(t, viewer, "GET", e.srv.URL+path, nil)
		is.Equal(vp.status, http.StatusOK)
		is.Equal(strings.Count(vp.body, `method="post"`), 1) // signing out only
	}
	is.True(!strings.Contains(do(t, viewer, "GET", e.srv.URL+"/maintenance", nil).body, ">Edit</a>"))
	is.Equal(do(t, viewer, "POST", e.srv.URL+"/maintenance/work-orders/"+o.ID, good).status, http.StatusForbidden)
	is.Equal(do(t, viewer, "POST", e.srv.URL+"/maintenance/schedules/"+s.ID, sgood).status, http.StatusForbidden)
	got, err = e.svc.WorkOrder(ctx, p, o.ID)
	is.NoErr(err)
	is.Equal(got.Title, "Brakes")
	gs, err = e.svc.Schedule(ctx, p, s.ID)
	is.NoErr(err)
	is.Equal(gs.IntervalKm, nil)
}

// changed is form with its field k set to v.
func changed(form url.Values, k, v string) url.Values {
	f := url.Values{}
	for key, vs := range form {
		f[key] = vs
	}
	f.Set(k, v)
	return f
}

// mistakeBeside checks that a form came back refused, with the mistake
// said beside its field (the element field-error) and what was typed
// (kept) in it.
func mistakeBeside(t *testing.T, r resp, field, say, kept string) {
	t.Helper()
	is := is.New(t)
	is.Equal(r.status, http.StatusUnprocessableEntity) // say
	body := html.UnescapeString(r.body)
	i := strings.Index(body, `id="`+field+`-error"`)
	is.True(i > 0) // field
	is.True(strings.Contains(body[i:], say))
	is.True(strings.Contains(body, kept)) // what was typed is kept
}
