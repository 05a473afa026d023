package fleet_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// allowedMoves is the work order state machine as API.md §6 writes it,
// kept apart from the implementation's table so that each checks the other.
var allowedMoves = map[[2]fleet.WorkOrderStatus]bool{
	{"open", "in_progress"}:      true,
	{"open", "on_hold"}:          true,
	{"open", "completed"}:        true,
	{"open", "cancelled"}:        true,
	{"in_progress", "on_hold"}:   true,
	{"in_progress", "completed"}: true,
	{"in_progress", "cancelled"}: true,
	{"on_hold", "in_progress"}:   true,
	{"on_hold", "cancelled"}:     true,
}

func TestWorkOrderTransitionTable(t *testing.T) {
	is.New(t).Equal(len(fleet.WorkOrderStatuses), 5)
	for _, from := range fleet.WorkOrderStatuses {
		for _, to := range fleet.WorkOrderStatuses {
			t.Run(string(from)+">"+string(to), func(t *testing.T) {
				is := is.New(t)
				err := fleet.CheckWorkOrderTransition(from, to)
				switch {
				case from == to:
					is.NoErr(err) // repeating the status is not a transition
				case allowedMoves[[2]fleet.WorkOrderStatus{from, to}]:
					is.NoErr(err) // allowed
				default:
					is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition)
					is.Equal(fleet.ErrorMessage(err), fmt.Sprintf("A work order cannot move from %s to %s.", from, to))
				}
			})
		}
	}
	is := is.New(t)
	for _, from := range fleet.WorkOrderStatuses { // WorkOrderMoves lists exactly the allowed moves
		var want []fleet.WorkOrderStatus
		for _, to := range fleet.WorkOrderStatuses {
			if allowedMoves[[2]fleet.WorkOrderStatus{from, to}] {
				want = append(want, to)
			}
		}
		got := fleet.WorkOrderMoves(from)
		slices.Sort(got)
		slices.Sort(want)
		is.Equal(got, want)
	}
	is.True(fleet.WorkOrderCompleted.Final() && fleet.WorkOrderCancelled.Final())
	is.True(!fleet.WorkOrderOnHold.Final())
	is.Equal(fleet.ErrorCode(fleet.CheckWorkOrderTransition("open", "done")), fleet.CodeInvalidStateTransition)
	is.Equal(fleet.ErrorCode(fleet.CheckWorkOrderTransition("done", "done")), fleet.CodeInvalidStateTransition)
}

func TestEvaluateSchedule(t *testing.T) {
	now := time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC) // today is 2026-11-22
	days := func(n int) *int { return &n }
	km := func(f float64) *float64 { return &f }
	cases := []struct {
		name     string
		s        fleet.Schedule
		odometer *float64
		nextDate string
		nextKm   *float64
		status   fleet.ScheduleStatus
	}{
		{"days, far", fleet.Schedule{IntervalDays: days(30), LastServiceDate: "2026-11-01"}, nil, "2026-12-01", nil, "ok"},
		{"days, 8 days left", fleet.Schedule{IntervalDays: days(30), LastServiceDate: "2026-10-31"}, nil, "2026-11-30", nil, "ok"},
		{"days, 7 days left", fleet.Schedule{IntervalDays: days(30), LastServiceDate: "2026-10-30"}, nil, "2026-11-29", nil, "due_soon"},
		{"days, due today", fleet.Schedule{IntervalDays: days(30), LastServiceDate: "2026-10-23"}, nil, "2026-11-22", nil, "due_soon"},
		{"days, due yesterday", fleet.Schedule{IntervalDays: days(30), LastServiceDate: "2026-10-22"}, nil, "2026-11-21", nil, "overdue"},
		{"km, far", fleet.Schedule{IntervalKm: km(10000), LastServiceDate: "2026-11-22", LastServiceOdometerKm: km(0)}, km(9499.9), "", km(10000), "ok"},
		{"km, 500 left", fleet.Schedule{IntervalKm: km(10000), LastServiceDate: "2026-11-22", LastServiceOdometerKm: km(0)}, km(9500), "", km(10000), "due_soon"},
		{"km, 400 left", fleet.Schedule{IntervalKm: km(10000), LastServiceDate: "2026-11-22", LastServiceOdometerKm: km(0)}, km(9600), "", km(10000), "due_soon"},
		{"km, at the reading", fleet.Schedule{IntervalKm: km(10000), LastServiceDate: "2026-11-22", LastServiceOdometerKm: km(0)}, km(10000), "", km(10000), "due_soon"},
		{"km, past it", fleet.Schedule{IntervalKm: km(10000), LastServiceDate: "2026-11-22", LastServiceOdometerKm: km(0)}, km(10000.1), "", km(10000), "overdue"},
		{"km, no odometer counts as 0", fleet.Schedule{IntervalKm: km(300), LastServiceDate: "2026-11-22", LastServiceOdometerKm: km(0)}, nil, "", km(300), "due_soon"},
		{"km, no float noise", fleet.Schedule{IntervalKm: km(0.2), LastServiceDate: "2026-11-22", LastServiceOdometerKm: km(0.1)}, nil, "", km(0.3), "due_soon"},
		{"both, the more due counts", fleet.Schedule{IntervalDays: days(180), IntervalKm: km(10000), LastServiceDate: "2026-06-01", LastServiceOdometerKm: km(5000)}, km(15001), "2026-11-28", km(15000), "overdue"},
		{"both, days make it due", fleet.Schedule{IntervalDays: days(180), IntervalKm: km(10000), LastServiceDate: "2026-06-01", LastServiceOdometerKm: km(5000)}, km(6000), "2026-11-28", km(15000), "due_soon"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got := fleet.EvaluateSchedule(tc.s, tc.odometer, now)
			is.Equal(got.NextDueDate, tc.nextDate)
			is.Equal(got.NextDueOdometerKm == nil, tc.nextKm == nil)
			if tc.nextKm != nil {
				is.Equal(*got.NextDueOdometerKm, *tc.nextKm)
			}
			is.Equal(got.Status, tc.status)
		})
	}
}

func TestWorkOrderValidationNamesEveryField(t *testing.T) {
	is := is.New(t)
	cost := int64(-1)
	odo := -5.0
	w := fleet.WorkOrder{Title: " ", Priority: "asap", Status: "done", DueDate: "2026-02-30", AssignedTo: strings.Repeat("x", 101),
		Description: strings.Repeat("d", fleet.MaxDescription+1), OdometerKm: &odo, CostCents: &cost, Currency: "eur"}
	err := w.Validate()
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	is.Equal(fields(err), []string{"vehicle_id", "title", "description", "priority", "status", "due_date", "assigned_to", "odometer_km", "cost_cents", "currency"})

	cost = 1999
	w = fleet.WorkOrder{VehicleID: "veh_x", Title: "Oil", Priority: "low", Status: "open", CostCents: &cost}
	is.Equal(fields(w.Validate()), []string{"currency"}) // required with a cost
	w.Currency = "EUR"
	is.NoErr(w.Validate())
}

func TestScheduleValidationNamesEveryField(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := fleet.Schedule{Name: "", LastServiceDate: "2026-11-23"}
	is.Equal(fields(s.Validate(now)), []string{"vehicle_id", "name", "interval_days", "interval_km", "interval_engine_hours", "last_service_date", "last_service_odometer_km"})
	zero, neg := 0, -1.0
	s = fleet.Schedule{VehicleID: "veh_x", Name: "Oil", IntervalDays: &zero, IntervalKm: &neg, LastServiceDate: "22/11/2026", LastServiceOdometerKm: &neg}
	is.Equal(fields(s.Validate(now)), []string{"interval_days", "interval_km", "last_service_date", "last_service_odometer_km"})
}

func fields(err error) []string {
	e, ok := err.(*fleet.Error)
	if !ok {
		return nil
	}
	var out []string
	for _, d := range e.Details {
		out = append(out, d.Field)
	}
	return out
}

// maint is a service with an account, a vehicle and helpers for the
// maintenance tests.
type maint struct {
	t   *testing.T
	svc *fleet.Service
	clk interface {
		Now() time.Time
		Advance(time.Duration)
	}
	p fleet.Principal
	v fleet.Vehicle
}

func newMaint(t *testing.T, odometer float64) *maint {
	t.Helper()
	return newMaintOn(t, odometer, fleet.PlanPro)
}

func newMaintOn(t *testing.T, odometer float64, plan fleet.Plan) *maint {
	t.Helper()
	svc, clock := newService(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	p := fleet.SystemPrincipal(a)
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck", OdometerKm: &odometer})
	if err != nil {
		t.Fatal(err)
	}
	return &maint{t: t, svc: svc, clk: clock, p: p, v: v}
}

func (m *maint) workOrder(title string) fleet.WorkOrder {
	m.t.Helper()
	w, err := m.svc.CreateWorkOrder(ctx, m.p, fleet.WorkOrder{VehicleID: m.v.ID, Title: title})
	if err != nil {
		m.t.Fatal(err)
	}
	return w
}

func (m *maint) move(id string, to fleet.WorkOrderStatus) (fleet.WorkOrder, error) {
	return m.svc.UpdateWorkOrder(ctx, m.p, id, fleet.WorkOrderPatch{Status: fleet.Optional[fleet.WorkOrderStatus]{Set: true, Value: to}})
}

func (m *maint) events(typ string) []fleet.Event {
	m.t.Helper()
	l, err := m.svc.ListEvents(ctx, m.p, fleet.EventFilter{Type: typ}, fleet.ListQuery{Limit: 500})
	if err != nil {
		m.t.Fatal(err)
	}
	return l.Items
}

func (m *maint) odometer(km float64) {
	m.t.Helper()
	m.clk.Advance(time.Second)
	_, err := m.svc.IngestLocations(ctx, m.p, m.v.ID, []fleet.Point{{Latitude: 1, Longitude: 1, Timestamp: m.clk.Now(), OdometerKm: &km}})
	if err != nil {
		m.t.Fatal(err)
	}
}

func (m *maint) schedule(id string) fleet.Schedule {
	m.t.Helper()
	s, err := m.svc.Schedule(ctx, m.p, id)
	if err != nil {
		m.t.Fatal(err)
	}
	return s
}

func (m *maint) workOrders(f fleet.WorkOrderFilter) []fleet.WorkOrder {
	m.t.Helper()
	l, err := m.svc.ListWorkOrders(ctx, m.p, f, fleet.ListQuery{Limit: 500})
	if err != nil {
		m.t.Fatal(err)
	}
	return l.Items
}

// reach puts a new work order in status st by allowed moves.
func (m *maint) reach(st fleet.WorkOrderStatus) fleet.WorkOrder {
	m.t.Helper()
	w := m.workOrder("in " + string(st))
	path := map[fleet.WorkOrderStatus][]fleet.WorkOrderStatus{
		"open": {}, "in_progress": {"in_progress"}, "on_hold": {"on_hold"}, "completed": {"completed"}, "cancelled": {"cancelled"},
	}[st]
	for _, to := range path {
		var err error
		if w, err = m.move(w.ID, to); err != nil {
			m.t.Fatal(err)
		}
	}
	return w
}

// TestWorkOrderEveryMoveThroughTheService: every (from, to) pair on a real
// work order; a forbidden move is 409 and changes nothing, events included.
func TestWorkOrderEveryMoveThroughTheService(t *testing.T) {
	for _, from := range fleet.WorkOrderStatuses {
		for _, to := range fleet.WorkOrderStatuses {
			t.Run(string(from)+">"+string(to), func(t *testing.T) {
				is := is.New(t)
				m := newMaint(t, 0)
				w := m.reach(from)
				m.clk.Advance(time.Minute)
				before := len(m.events(""))
				got, err := m.move(w.ID, to)
				after, _ := m.svc.WorkOrder(ctx, m.p, w.ID)
				changes := m.events(fleet.EventWorkOrderStatusChanged)
				switch {
				case from == to:
					is.NoErr(err)
					is.Equal(got.Status, from)
					is.True(got.UpdatedAt.Equal(w.UpdatedAt)) // a no-op
					is.Equal(len(m.events("")), before)       // emits nothing
				case allowedMoves[[2]fleet.WorkOrderStatus{from, to}]:
					is.NoErr(err)
					is.Equal(got.Status, to)
					is.Equal(after.Status, to)
					is.True(after.UpdatedAt.Equal(m.clk.Now()))
					is.Equal(after.CompletedAt != nil, to == fleet.WorkOrderCompleted) // completed_at on completion only
					last := changes[len(changes)-1]
					is.Equal(string(last.Data), fmt.Sprintf(`{"work_order_id":%q,"vehicle_id":%q,"from":%q,"to":%q,"at":%q}`,
						w.ID, m.v.ID, from, to, m.clk.Now().Format(time.RFC3339)))
					is.Equal(len(m.events("")), before+1)
				default:
					is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition)
					is.True(strings.Contains(fleet.ErrorMessage(err), string(from)) && strings.Contains(fleet.ErrorMessage(err), string(to)))
					is.Equal(after, w)                  // unchanged
					is.Equal(len(m.events("")), before) // and no event
				}
			})
		}
	}
}

func TestForbiddenMoveWithOtherFieldsChangesNothing(t *testing.T) {
	is := is.New(t)
	m := newMaint(t, 0)
	w := m.reach(fleet.WorkOrderCompleted)
	cost := int64(12000)
	_, err := m.svc.UpdateWorkOrder(ctx, m.p, w.ID, fleet.WorkOrderPatch{
		Status:    fleet.Optional[fleet.WorkOrderStatus]{Set: true, Value: fleet.WorkOrderOpen},
		CostCents: fleet.Optional[*int64]{Set: true, Value: &cost}, Currency: fleet.Optional[string]{Set: true, Value: "EUR"},
	})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition)
	got, _ := m.svc.WorkOrder(ctx, m.p, w.ID)
	is.Equal(got.CostCents, nil) // the cost in the same patch was not kept

	got, err = m.svc.UpdateWorkOrder(ctx, m.p, w.ID, fleet.WorkOrderPatch{
		CostCents: fleet.Optional[*int64]{Set: true, Value: &cost}, Currency: fleet.Optional[string]{Set: true, Value: "EUR"},
	})
	is.NoErr(err) // a completed work order's cost can still be recorded
	is.Equal(*got.CostCents, int64(12000))
	is.Equal(len(m.events(fleet.EventWorkOrderUpdated)), 1)
}

// TestScheduleDueByDateWithTheClock: a 30-day schedule turns due_soon 7
// days ahead and overdue the day after its due date, found by
// CheckMaintenance alone; each event once.
func TestScheduleDueByDateWithTheClock(t *testing.T) {
	is := is.New(t)
	m := newMaint(t, 1000)
	days := 30
	s, err := m.svc.CreateSchedule(ctx, m.p, fleet.Schedule{VehicleID: m.v.ID, Name: "Inspection", IntervalDays: &days})
	is.NoErr(err)
	is.Equal(s.LastServiceDate, "2026-11-22")  // defaults: today
	is.Equal(*s.LastServiceOdometerKm, 1000.0) // and the vehicle's odometer
	is.Equal(s.NextDueDate, "2026-12-22")
	is.Equal(s.NextDueOdometerKm, nil)
	is.Equal(s.Status, fleet.ScheduleOK)

	check := func() int {
		n, err := m.svc.Jobs().CheckMaintenance(ctx)
		is.NoErr(err)
		return n
	}
	m.clk.Advance(22 * 24 * time.Hour) // 2026-12-14: 8 days left
	is.Equal(check(), 0)
	is.Equal(m.schedule(s.ID).Status, fleet.ScheduleOK)
	m.clk.Advance(24 * time.Hour) // 7 days left
	is.Equal(check(), 1)
	is.Equal(m.schedule(s.ID).Status, fleet.ScheduleDueSoon)
	is.Equal(check(), 0)              // nothing changes twice
	m.clk.Advance(7 * 24 * time.Hour) // the due date itself
	is.Equal(check(), 0)
	is.Equal(m.schedule(s.ID).Status, fleet.ScheduleDueSoon)
	m.clk.Advance(24 * time.Hour) // the day after
	is.Equal(check(), 1)
	is.Equal(m.schedule(s.ID).Status, fleet.ScheduleOverdue)
	m.clk.Advance(30 * 24 * time.Hour)
	is.Equal(check(), 0)

	soon, over := m.events(fleet.EventMaintenanceDueSoon), m.events(fleet.EventMaintenanceOverdue)
	is.Equal(len(soon), 1)
	is.Equal(len(over), 1)
	is.True(strings.Contains(string(soon[0].Data), `"status":"due_soon"`)) // the schedule after the change
	is.True(strings.Contains(string(over[0].Data), `"schedule_id":"`+s.ID+`"`))
	is.True(!strings.Contains(string(over[0].Data), "Notified")) // bookkeeping stays inside
	is.Equal(len(m.workOrders(fleet.WorkOrderFilter{})), 0)      // auto_create_work_order is off
}

// TestAutoWorkOrderOncePerCycle: the schedule opens one work order when it
// becomes due, none when it turns overdue in the same cycle; completing it
// records the service and a new cycle opens a new one.
func TestAutoWorkOrderOncePerCycle(t *testing.T) {
	is := is.New(t)
	m := newMaint(t, 0)
	interval := 10000.0
	zero := 0.0
	s, err := m.svc.CreateSchedule(ctx, m.p, fleet.Schedule{VehicleID: m.v.ID, Name: "Oil change", IntervalKm: &interval,
		LastServiceOdometerKm: &zero, AutoCreateWorkOrder: true})
	is.NoErr(err)
	is.Equal(*s.NextDueOdometerKm, 10000.0)

	m.odometer(9000)
	is.Equal(len(m.workOrders(fleet.WorkOrderFilter{})), 0)
	m.odometer(9600)
	m.odometer(9700)
	m.odometer(10100) // overdue
	m.odometer(10200)
	wos := m.workOrders(fleet.WorkOrderFilter{})
	is.Equal(len(wos), 1) // one per cycle
	w := wos[0]
	is.Equal(w.ScheduleID, s.ID)
	is.Equal(w.Title, "Oil change")
	is.Equal(w.Status, fleet.WorkOrderOpen)
	is.Equal(w.Priority, fleet.PriorityMedium)
	is.Equal(w.VehicleID, m.v.ID)
	is.Equal(len(m.events(fleet.EventWorkOrderCreated)), 1)
	is.Equal(len(m.events(fleet.EventMaintenanceDueSoon)), 1)
	is.Equal(len(m.events(fleet.EventMaintenanceOverdue)), 1)
	n, err := m.svc.Jobs().CheckMaintenance(ctx)
	is.NoErr(err)
	is.Equal(n, 0) // a km-only schedule owes nothing to the calendar

	odo := 10150.0
	m.clk.Advance(24 * time.Hour)
	_, err = m.svc.UpdateWorkOrder(ctx, m.p, w.ID, fleet.WorkOrderPatch{
		Status:     fleet.Optional[fleet.WorkOrderStatus]{Set: true, Value: fleet.WorkOrderCompleted},
		OdometerKm: fleet.Optional[*float64]{Set: true, Value: &odo},
	})
	is.NoErr(err)
	s = m.schedule(s.ID)
	is.Equal(s.Status, fleet.ScheduleOK)
	is.Equal(*s.LastServiceOdometerKm, 10150.0) // the work order's reading
	is.Equal(s.LastServiceDate, "2026-11-23")   // the completion date
	is.Equal(*s.NextDueOdometerKm, 20150.0)

	m.odometer(19700) // the next cycle
	wos = m.workOrders(fleet.WorkOrderFilter{Status: fleet.WorkOrderOpen})
	is.Equal(len(wos), 1)
	is.True(wos[0].ID != w.ID)
	is.Equal(len(m.events(fleet.EventMaintenanceDueSoon)), 2)

	// A work order completed without a reading records the vehicle's.
	_, err = m.move(wos[0].ID, fleet.WorkOrderCompleted)
	is.NoErr(err)
	is.Equal(*m.schedule(s.ID).LastServiceOdometerKm, 19700.0)
}

func TestOverdueAtOnceOpensHighPriorityWorkOrder(t *testing.T) {
	is := is.New(t)
	m := newMaint(t, 52000)
	interval, last := 10000.0, 40000.0
	s, err := m.svc.CreateSchedule(ctx, m.p, fleet.Schedule{VehicleID: m.v.ID, Name: "Brakes", IntervalKm: &interval,
		LastServiceOdometerKm: &last, AutoCreateWorkOrder: true})
	is.NoErr(err)
	is.Equal(s.Status, fleet.ScheduleOverdue) // evaluated on creation
	is.Equal(len(m.events(fleet.EventMaintenanceOverdue)), 1)
	is.Equal(len(m.events(fleet.EventMaintenanceDueSoon)), 0) // overdue supersedes due_soon
	wos := m.workOrders(fleet.WorkOrderFilter{})
	is.Equal(len(wos), 1)
	is.Equal(wos[0].Priority, fleet.PriorityHigh)
}

func TestManualLinkedWorkOrderCountsForTheCycle(t *testing.T) {
	is := is.New(t)
	m := newMaint(t, 0)
	interval := 1000.0
	s, err := m.svc.CreateSchedule(ctx, m.p, fleet.Schedule{VehicleID: m.v.ID, Name: "Tyres", IntervalKm: &interval, AutoCreateWorkOrder: true})
	is.NoErr(err)
	w, err := m.svc.CreateWorkOrder(ctx, m.p, fleet.WorkOrder{VehicleID: m.v.ID, Title: "Tyres early", ScheduleID: s.ID})
	is.NoErr(err)
	m.odometer(900)
	is.Equal(len(m.workOrders(fleet.WorkOrderFilter{})), 1) // the cycle has its work order already
	is.Equal(m.schedule(s.ID).Status, fleet.ScheduleDueSoon)
	_, err = m.move(w.ID, fleet.WorkOrderCompleted)
	is.NoErr(err)
	is.Equal(m.schedule(s.ID).Status, fleet.ScheduleOK)

	other, err := m.svc.CreateVehicle(ctx, m.p, fleet.Vehicle{Name: "Other"})
	is.NoErr(err)
	_, err = m.svc.CreateWorkOrder(ctx, m.p, fleet.WorkOrder{VehicleID: other.ID, Title: "x", ScheduleID: s.ID})
	is.Equal(fields(err), []string{"schedule_id"}) // a schedule of another vehicle
}

func TestSchedulePatchStartsCycleOnlyForANewService(t *testing.T) {
	is := is.New(t)
	m := newMaint(t, 0)
	days := 10
	s, err := m.svc.CreateSchedule(ctx, m.p, fleet.Schedule{VehicleID: m.v.ID, Name: "Wash", IntervalDays: &days})
	is.NoErr(err)
	m.clk.Advance(4 * 24 * time.Hour)
	_, err = m.svc.Jobs().CheckMaintenance(ctx)
	is.NoErr(err)
	is.Equal(m.schedule(s.ID).Status, fleet.ScheduleDueSoon)

	longer := 30
	s, err = m.svc.UpdateSchedule(ctx, m.p, s.ID, fleet.SchedulePatch{IntervalDays: fleet.Optional[*int]{Set: true, Value: &longer}})
	is.NoErr(err)
	is.Equal(s.Status, fleet.ScheduleOK) // recomputed at once
	m.clk.Advance(20 * 24 * time.Hour)
	_, err = m.svc.Jobs().CheckMaintenance(ctx)
	is.NoErr(err)
	is.Equal(m.schedule(s.ID).Status, fleet.ScheduleDueSoon)
	is.Equal(len(m.events(fleet.EventMaintenanceDueSoon)), 1) // same cycle: no second event

	s, err = m.svc.UpdateSchedule(ctx, m.p, s.ID, fleet.SchedulePatch{LastServiceDate: fleet.Optional[string]{Set: true, Value: fleet.DateOf(m.clk.Now())}})
	is.NoErr(err) // a service done elsewhere
	is.Equal(s.Status, fleet.ScheduleOK)
	m.clk.Advance(23 * 24 * time.Hour)
	_, err = m.svc.Jobs().CheckMaintenance(ctx)
	is.NoErr(err)
	is.Equal(len(m.events(fleet.EventMaintenanceDueSoon)), 2) // a new cycle notifies again

	_, err = m.svc.UpdateSchedule(ctx, m.p, s.ID, fleet.SchedulePatch{IntervalDays: fleet.Optional[*int]{Set: true}})
	is.Equal(fields(err), []string{"interval_days", "interval_km", "interval_engine_hours"}) // at least one interval
	_, err = m.svc.UpdateSchedule(ctx, m.p, s.ID, fleet.SchedulePatch{LastServiceDate: fleet.Optional[string]{Set: true, Value: "2099-01-01"}})
	is.Equal(fields(err), []string{"last_service_date"}) // not in the future
}

func TestVehiclePatchOfOdometerReviewsSchedules(t *testing.T) {
	is := is.New(t)
	m := newMaint(t, 100)
	interval := 1000.0
	s, err := m.svc.CreateSchedule(ctx, m.p, fleet.Schedule{VehicleID: m.v.ID, Name: "Oil", IntervalKm: &interval})
	is.NoErr(err)
	is.Equal(*s.NextDueOdometerKm, 1100.0)
	odo := 1200.0
	_, err = m.svc.UpdateVehicle(ctx, m.p, m.v.ID, fleet.VehiclePatch{OdometerKm: fleet.Optional[*float64]{Set: true, Value: &odo}})
	is.NoErr(err)
	is.Equal(m.schedule(s.ID).Status, fleet.ScheduleOverdue)
}

func TestDeleteVehicleDeletesSchedulesKeepsWorkOrders(t *testing.T) {
	is := is.New(t)
	m := newMaint(t, 0)
	days := 30
	s, err := m.svc.CreateSchedule(ctx, m.p, fleet.Schedule{VehicleID: m.v.ID, Name: "x", IntervalDays: &days})
	is.NoErr(err)
	w := m.workOrder("history")
	_, err = m.svc.DeleteVehicle(ctx, m.p, m.v.ID)
	is.NoErr(err)
	_, err = m.svc.Schedule(ctx, m.p, s.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	got, err := m.svc.WorkOrder(ctx, m.p, w.ID)
	is.NoErr(err)
	is.Equal(got.VehicleID, m.v.ID) // stays as history
	_, err = m.move(w.ID, fleet.WorkOrderCompleted)
	is.NoErr(err) // and can still be closed
}

func TestMaintenancePermissions(t *testing.T) {
	is := is.New(t)
	m := newMaint(t, 0)
	reader := m.p
	reader.Key.Permissions = fleet.Permissions{fleet.PermMaintenanceRead}
	_, err := m.svc.CreateWorkOrder(ctx, reader, fleet.WorkOrder{VehicleID: m.v.ID, Title: "x"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	_, err = m.svc.ListWorkOrders(ctx, reader, fleet.WorkOrderFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	none := m.p
	none.Key.Permissions = fleet.Permissions{fleet.PermVehiclesRead}
	_, err = m.svc.ListSchedules(ctx, none, fleet.ScheduleFilter{}, fleet.ListQuery{})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
}

func TestTurningOnAutoWorkOrderWhileDueOpensOne(t *testing.T) {
	is := is.New(t)
	m := newMaint(t, 950)
	interval, zero := 1000.0, 0.0
	s, err := m.svc.CreateSchedule(ctx, m.p, fleet.Schedule{VehicleID: m.v.ID, Name: "Filter", IntervalKm: &interval, LastServiceOdometerKm: &zero})
	is.NoErr(err)
	is.Equal(s.Status, fleet.ScheduleDueSoon)
	is.Equal(len(m.workOrders(fleet.WorkOrderFilter{})), 0)
	on := true
	for range 2 {
		_, err = m.svc.UpdateSchedule(ctx, m.p, s.ID, fleet.SchedulePatch{AutoCreateWorkOrder: fleet.Optional[*bool]{Set: true, Value: &on}})
		is.NoErr(err)
	}
	wos := m.workOrders(fleet.WorkOrderFilter{})
	is.Equal(len(wos), 1) // opened at once, and once
	is.Equal(wos[0].ScheduleID, s.ID)
	is.Equal(len(m.events(fleet.EventMaintenanceDueSoon)), 1) // the transition was notified on creation only
}
