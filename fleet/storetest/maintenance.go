package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// NewWorkOrder returns a work order of the account's vehicle, every field
// set, that is not stored yet.
func NewWorkOrder(accountID, vehicleID, title string) fleet.WorkOrder {
	odo := 10150.25
	cost := int64(123456789012)
	done := T0.Add(2*time.Hour + 123456*time.Microsecond)
	return fleet.WorkOrder{
		ID: fleet.NewID(fleet.PrefixWorkOrder), AccountID: accountID, VehicleID: vehicleID, Title: title,
		Description: "Change oil and filter", Priority: fleet.PriorityHigh, Status: fleet.WorkOrderCompleted,
		DueDate: "2026-12-01", AssignedTo: "Garage North", OdometerKm: &odo, CostCents: &cost, Currency: "EUR",
		ScheduleID: fleet.NewID(fleet.PrefixSchedule), CreatedAt: T0, UpdatedAt: T0.Add(time.Hour), CompletedAt: &done,
	}
}

// MustWorkOrder stores a minimal open work order and returns it.
func MustWorkOrder(tb testing.TB, s fleet.Store, accountID, vehicleID, title string, st fleet.WorkOrderStatus, pr fleet.Priority) fleet.WorkOrder {
	tb.Helper()
	w := fleet.WorkOrder{ID: fleet.NewID(fleet.PrefixWorkOrder), AccountID: accountID, VehicleID: vehicleID, Title: title,
		Priority: pr, Status: st, CreatedAt: T0, UpdatedAt: T0}
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateWorkOrder(w) }); err != nil {
		tb.Fatalf("create work order: %v", err)
	}
	return w
}

// NewSchedule returns a schedule of the account's vehicle, every field set,
// that is not stored yet.
func NewSchedule(accountID, vehicleID, name string) fleet.Schedule {
	days, km, last, next := 180, 10000.5, 1200.5, 11201.0
	return fleet.Schedule{
		ID: fleet.NewID(fleet.PrefixSchedule), AccountID: accountID, VehicleID: vehicleID, Name: name,
		IntervalDays: &days, IntervalKm: &km, LastServiceDate: "2026-06-01", LastServiceOdometerKm: &last,
		AutoCreateWorkOrder: true, NextDueDate: "2026-11-28", NextDueOdometerKm: &next, Status: fleet.ScheduleDueSoon,
		CreatedAt: T0, UpdatedAt: T0.Add(time.Minute), NotifiedDueSoon: true, NotifiedOverdue: false,
		CycleWorkOrderID: fleet.NewID(fleet.PrefixWorkOrder),
	}
}

// MustSchedule stores a schedule with the given due date and status and
// returns it.
func MustSchedule(tb testing.TB, s fleet.Store, accountID, vehicleID, nextDue string, st fleet.ScheduleStatus) fleet.Schedule {
	tb.Helper()
	sch := NewSchedule(accountID, vehicleID, "s")
	sch.NextDueDate, sch.Status = nextDue, st
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateSchedule(sch) }); err != nil {
		tb.Fatalf("create schedule: %v", err)
	}
	return sch
}

func i64(v int64) *int64 { return &v }

// RunMaintenance checks the maintenance area (fleet.MaintenanceTx): work
// orders and schedules scoped by account, filters, the schedules the
// calendar may have overtaken, rollback, and deleting a vehicle.
func RunMaintenance(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"WorkOrderRoundTrip", testWorkOrderRoundTrip},
		{"WorkOrdersScopedByAccount", testWorkOrdersScoped},
		{"WorkOrderFilters", testWorkOrderFilters},
		{"ScheduleRoundTrip", testScheduleRoundTrip},
		{"SchedulesScopedByAccount", testSchedulesScoped},
		{"ScheduleFilters", testScheduleFilters},
		{"SchedulesOfVehicle", testSchedulesOfVehicle},
		{"SchedulesToCheck", testSchedulesToCheck},
		{"MaintenanceRollback", testMaintenanceRollback},
		{"DeleteVehicleCascadesToSchedules", testDeleteVehicleCascadesToSchedules},
		{"ScheduleEngineHoursRoundTrip", testScheduleEngineHours},
	})
}

func getWorkOrder(t *testing.T, s fleet.Store, accountID, id string) fleet.WorkOrder {
	t.Helper()
	var w fleet.WorkOrder
	if err := s.View(ctx, func(tx fleet.Tx) (err error) { w, err = tx.WorkOrder(accountID, id); return err }); err != nil {
		t.Fatalf("get work order: %v", err)
	}
	return w
}

func getSchedule(t *testing.T, s fleet.Store, accountID, id string) fleet.Schedule {
	t.Helper()
	var sch fleet.Schedule
	if err := s.View(ctx, func(tx fleet.Tx) (err error) { sch, err = tx.Schedule(accountID, id); return err }); err != nil {
		t.Fatalf("get schedule: %v", err)
	}
	return sch
}

func testWorkOrderRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	w := NewWorkOrder(a.ID, v.ID, "Oil change")
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateWorkOrder(w) }))
	got := getWorkOrder(t, s, a.ID, w.ID)
	is.Equal(got.ID, w.ID)
	is.Equal(got.AccountID, a.ID)
	is.Equal(got.VehicleID, v.ID)
	is.Equal(got.Title, "Oil change")
	is.Equal(got.Description, "Change oil and filter")
	is.Equal(got.Priority, fleet.PriorityHigh)
	is.Equal(got.Status, fleet.WorkOrderCompleted)
	is.Equal(got.DueDate, "2026-12-01")
	is.Equal(got.AssignedTo, "Garage North")
	is.Equal(*got.OdometerKm, 10150.25)
	is.Equal(*got.CostCents, int64(123456789012)) // beyond 32 bits
	is.Equal(got.Currency, "EUR")
	is.Equal(got.ScheduleID, w.ScheduleID) // not checked: the schedule may be gone
	is.True(got.CreatedAt.Equal(T0))
	is.True(got.UpdatedAt.Equal(T0.Add(time.Hour)))
	is.True(got.CompletedAt.Equal(*w.CompletedAt)) // microseconds kept

	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateWorkOrder(w) })
	is.Equal(code(err), fleet.CodeConflict) // same id twice

	// A work order needs no stored vehicle: it outlives its vehicle.
	orphan := NewWorkOrder(a.ID, fleet.NewID(fleet.PrefixVehicle), "history")
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateWorkOrder(orphan) }))

	// A caller never shares memory with the store.
	*got.OdometerKm = 1
	is.Equal(*getWorkOrder(t, s, a.ID, w.ID).OdometerKm, 10150.25)

	// Update replaces every field but the id, account, vehicle and creation
	// time; nil and "" clear.
	upd := got
	upd.VehicleID = fleet.NewID(fleet.PrefixVehicle) // not changeable
	upd.CreatedAt = T0.Add(24 * time.Hour)           // not changeable
	upd.Title, upd.Description, upd.Priority, upd.Status = "Oil", "", fleet.PriorityLow, fleet.WorkOrderInProgress
	upd.DueDate, upd.AssignedTo, upd.OdometerKm, upd.CostCents, upd.Currency = "", "", nil, nil, ""
	upd.ScheduleID, upd.CompletedAt, upd.UpdatedAt = "", nil, T0.Add(3*time.Hour)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateWorkOrder(upd) }))
	again := getWorkOrder(t, s, a.ID, w.ID)
	is.Equal(again.VehicleID, v.ID)
	is.True(again.CreatedAt.Equal(T0))
	is.Equal(again.Title, "Oil")
	is.Equal(again.Description, "")
	is.Equal(again.Priority, fleet.PriorityLow)
	is.Equal(again.Status, fleet.WorkOrderInProgress)
	is.Equal(again.DueDate, "")
	is.Equal(again.AssignedTo, "")
	is.Equal(again.OdometerKm, nil)
	is.Equal(again.CostCents, nil)
	is.Equal(again.Currency, "")
	is.Equal(again.ScheduleID, "")
	is.Equal(again.CompletedAt, nil)
	is.True(again.UpdatedAt.Equal(T0.Add(3 * time.Hour)))

	// and sets again.
	upd.CostCents, upd.Currency = i64(0), "USD" // zero is a value, not null
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateWorkOrder(upd) }))
	again = getWorkOrder(t, s, a.ID, w.ID)
	is.True(again.CostCents != nil)
	is.Equal(*again.CostCents, int64(0))

	missing := NewWorkOrder(a.ID, v.ID, "missing")
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateWorkOrder(missing) })
	is.Equal(code(err), fleet.CodeNotFound)
}

func testWorkOrdersScoped(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	va, vb := MustVehicle(t, s, a.ID, "a"), MustVehicle(t, s, b.ID, "b")
	wa := MustWorkOrder(t, s, a.ID, va.ID, "a", fleet.WorkOrderOpen, fleet.PriorityMedium)
	wb := MustWorkOrder(t, s, b.ID, vb.ID, "b", fleet.WorkOrderOpen, fleet.PriorityMedium)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.WorkOrder(a.ID, wb.ID)
		is.Equal(code(err), fleet.CodeNotFound) // another account's work order
		list, err := tx.WorkOrders(a.ID, fleet.WorkOrderFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(list), 1)
		is.Equal(list[0].ID, wa.ID)
		list, err = tx.WorkOrders(a.ID, fleet.WorkOrderFilter{VehicleID: vb.ID}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(list), 0) // filtering by another account's vehicle finds nothing
		return nil
	}))
	other := wb
	other.AccountID = a.ID
	other.Title = "stolen"
	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateWorkOrder(other) })
	is.Equal(code(err), fleet.CodeNotFound) // cannot update across accounts
	is.Equal(getWorkOrder(t, s, b.ID, wb.ID).Title, "b")
}

func testWorkOrderFilters(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v1, v2 := MustVehicle(t, s, a.ID, "v1"), MustVehicle(t, s, a.ID, "v2")
	w1 := MustWorkOrder(t, s, a.ID, v1.ID, "1", fleet.WorkOrderOpen, fleet.PriorityHigh)
	w2 := MustWorkOrder(t, s, a.ID, v2.ID, "2", fleet.WorkOrderOpen, fleet.PriorityLow)
	w3 := MustWorkOrder(t, s, a.ID, v1.ID, "3", fleet.WorkOrderCompleted, fleet.PriorityHigh)
	w4 := MustWorkOrder(t, s, a.ID, v1.ID, "4", fleet.WorkOrderOpen, fleet.PriorityHigh)
	ids := func(f fleet.WorkOrderFilter, p fleet.Page) []string {
		var ws []fleet.WorkOrder
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { ws, err = tx.WorkOrders(a.ID, f, p); return err }))
		out := []string{}
		for _, w := range ws {
			out = append(out, w.ID)
		}
		return out
	}
	all := fleet.Page{Limit: 10}
	is.Equal(ids(fleet.WorkOrderFilter{}, all), []string{w1.ID, w2.ID, w3.ID, w4.ID}) // id order
	is.Equal(ids(fleet.WorkOrderFilter{VehicleID: v1.ID}, all), []string{w1.ID, w3.ID, w4.ID})
	is.Equal(ids(fleet.WorkOrderFilter{Status: fleet.WorkOrderOpen}, all), []string{w1.ID, w2.ID, w4.ID})
	is.Equal(ids(fleet.WorkOrderFilter{Priority: fleet.PriorityLow}, all), []string{w2.ID})
	is.Equal(ids(fleet.WorkOrderFilter{VehicleID: v1.ID, Status: fleet.WorkOrderOpen, Priority: fleet.PriorityHigh}, all), []string{w1.ID, w4.ID})
	is.Equal(ids(fleet.WorkOrderFilter{Status: fleet.WorkOrderCancelled}, all), []string{})
	// Filter and cursor together: the limit counts matching items only.
	f := fleet.WorkOrderFilter{VehicleID: v1.ID}
	is.Equal(ids(f, fleet.Page{Limit: 2}), []string{w1.ID, w3.ID})
	is.Equal(ids(f, fleet.Page{After: w1.ID, Limit: 1}), []string{w3.ID})
	is.Equal(ids(f, fleet.Page{After: w2.ID, Limit: 10}), []string{w3.ID, w4.ID}) // after a non-matching id
	is.Equal(ids(f, fleet.Page{After: w4.ID, Limit: 10}), []string{})
}

func testScheduleRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	sch := NewSchedule(a.ID, v.ID, "Oil every 10,000 km")
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateSchedule(sch) }))
	got := getSchedule(t, s, a.ID, sch.ID)
	is.Equal(got.ID, sch.ID)
	is.Equal(got.AccountID, a.ID)
	is.Equal(got.VehicleID, v.ID)
	is.Equal(got.Name, "Oil every 10,000 km")
	is.Equal(*got.IntervalDays, 180)
	is.Equal(*got.IntervalKm, 10000.5)
	is.Equal(got.LastServiceDate, "2026-06-01")
	is.Equal(*got.LastServiceOdometerKm, 1200.5)
	is.Equal(got.AutoCreateWorkOrder, true)
	is.Equal(got.NextDueDate, "2026-11-28")
	is.Equal(*got.NextDueOdometerKm, 11201.0)
	is.Equal(got.Status, fleet.ScheduleDueSoon)
	is.True(got.CreatedAt.Equal(T0))
	is.True(got.UpdatedAt.Equal(T0.Add(time.Minute)))
	is.Equal(got.NotifiedDueSoon, true) // bookkeeping is stored too
	is.Equal(got.NotifiedOverdue, false)
	is.Equal(got.CycleWorkOrderID, sch.CycleWorkOrderID)

	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateSchedule(sch) })
	is.Equal(code(err), fleet.CodeConflict) // same id twice

	*got.IntervalDays = 1 // a caller never shares memory with the store
	is.Equal(*getSchedule(t, s, a.ID, sch.ID).IntervalDays, 180)

	other := MustVehicle(t, s, a.ID, "other")
	upd := getSchedule(t, s, a.ID, sch.ID)
	upd.VehicleID = other.ID               // not changeable
	upd.CreatedAt = T0.Add(24 * time.Hour) // not changeable
	days := 90
	upd.Name, upd.IntervalDays, upd.IntervalKm = "Quarterly", &days, nil
	upd.LastServiceDate, upd.LastServiceOdometerKm = "2026-11-20", f64(0)
	upd.AutoCreateWorkOrder, upd.NextDueDate, upd.NextDueOdometerKm, upd.Status = false, "", nil, fleet.ScheduleOverdue
	upd.NotifiedDueSoon, upd.NotifiedOverdue, upd.CycleWorkOrderID = false, true, ""
	upd.UpdatedAt = T0.Add(time.Hour)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateSchedule(upd) }))
	again := getSchedule(t, s, a.ID, sch.ID)
	is.Equal(again.VehicleID, v.ID)
	is.True(again.CreatedAt.Equal(T0))
	is.Equal(again.Name, "Quarterly")
	is.Equal(*again.IntervalDays, 90)
	is.Equal(again.IntervalKm, nil)
	is.Equal(again.LastServiceDate, "2026-11-20")
	is.True(again.LastServiceOdometerKm != nil)
	is.Equal(*again.LastServiceOdometerKm, 0.0) // zero is a value, not null
	is.Equal(again.AutoCreateWorkOrder, false)
	is.Equal(again.NextDueDate, "")
	is.Equal(again.NextDueOdometerKm, nil)
	is.Equal(again.Status, fleet.ScheduleOverdue)
	is.Equal(again.NotifiedDueSoon, false)
	is.Equal(again.NotifiedOverdue, true)
	is.Equal(again.CycleWorkOrderID, "")
	is.True(again.UpdatedAt.Equal(T0.Add(time.Hour)))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		list, err := tx.SchedulesOfVehicle(other.ID)
		is.NoErr(err)
		is.Equal(len(list), 0) // it did not move to the other vehicle
		return nil
	}))

	missing := NewSchedule(a.ID, v.ID, "missing")
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateSchedule(missing) })
	is.Equal(code(err), fleet.CodeNotFound)
}

func testSchedulesScoped(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	va, vb := MustVehicle(t, s, a.ID, "a"), MustVehicle(t, s, b.ID, "b")
	sa := MustSchedule(t, s, a.ID, va.ID, "2026-12-01", fleet.ScheduleOK)
	sb := MustSchedule(t, s, b.ID, vb.ID, "2026-12-01", fleet.ScheduleOK)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Schedule(a.ID, sb.ID)
		is.Equal(code(err), fleet.CodeNotFound) // another account's schedule
		list, err := tx.Schedules(a.ID, fleet.ScheduleFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(list), 1)
		is.Equal(list[0].ID, sa.ID)
		return nil
	}))

	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateSchedule(NewSchedule(a.ID, vb.ID, "x")) })
	is.Equal(code(err), fleet.CodeNotFound) // a schedule needs a vehicle of its account
	err = s.Update(ctx, func(tx fleet.Tx) error {
		return tx.CreateSchedule(NewSchedule(a.ID, fleet.NewID(fleet.PrefixVehicle), "x"))
	})
	is.Equal(code(err), fleet.CodeNotFound) // and an existing one

	other := sb
	other.AccountID = a.ID
	other.Name = "stolen"
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateSchedule(other) })
	is.Equal(code(err), fleet.CodeNotFound) // cannot update across accounts
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteSchedule(a.ID, sb.ID) })
	is.Equal(code(err), fleet.CodeNotFound) // nor delete
	is.Equal(getSchedule(t, s, b.ID, sb.ID).Name, "s")

	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteSchedule(a.ID, sa.ID) }))
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Schedule(a.ID, sa.ID); return err })
	is.Equal(code(err), fleet.CodeNotFound) // deleted
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteSchedule(a.ID, sa.ID) })
	is.Equal(code(err), fleet.CodeNotFound) // twice
}

func testScheduleFilters(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v1, v2 := MustVehicle(t, s, a.ID, "v1"), MustVehicle(t, s, a.ID, "v2")
	s1 := MustSchedule(t, s, a.ID, v1.ID, "2026-12-01", fleet.ScheduleOK)
	s2 := MustSchedule(t, s, a.ID, v2.ID, "2026-12-01", fleet.ScheduleDueSoon)
	s3 := MustSchedule(t, s, a.ID, v1.ID, "2026-12-01", fleet.ScheduleOverdue)
	s4 := MustSchedule(t, s, a.ID, v1.ID, "2026-12-01", fleet.ScheduleOverdue)
	ids := func(f fleet.ScheduleFilter, p fleet.Page) []string {
		var schs []fleet.Schedule
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { schs, err = tx.Schedules(a.ID, f, p); return err }))
		out := []string{}
		for _, sch := range schs {
			out = append(out, sch.ID)
		}
		return out
	}
	all := fleet.Page{Limit: 10}
	is.Equal(ids(fleet.ScheduleFilter{}, all), []string{s1.ID, s2.ID, s3.ID, s4.ID})
	is.Equal(ids(fleet.ScheduleFilter{VehicleID: v1.ID}, all), []string{s1.ID, s3.ID, s4.ID})
	is.Equal(ids(fleet.ScheduleFilter{Status: fleet.ScheduleOverdue}, all), []string{s3.ID, s4.ID})
	is.Equal(ids(fleet.ScheduleFilter{VehicleID: v2.ID, Status: fleet.ScheduleOverdue}, all), []string{})
	is.Equal(ids(fleet.ScheduleFilter{VehicleID: v1.ID}, fleet.Page{After: s1.ID, Limit: 1}), []string{s3.ID})
	is.Equal(ids(fleet.ScheduleFilter{Status: fleet.ScheduleOverdue}, fleet.Page{After: s2.ID, Limit: 10}), []string{s3.ID, s4.ID})
}

func testSchedulesOfVehicle(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v1, v2 := MustVehicle(t, s, a.ID, "v1"), MustVehicle(t, s, a.ID, "v2")
	var mine []string
	for i := range 4 {
		sch := MustSchedule(t, s, a.ID, v1.ID, "2026-12-01", fleet.ScheduleOK)
		mine = append(mine, sch.ID)
		if i == 1 {
			MustSchedule(t, s, a.ID, v2.ID, "2026-12-01", fleet.ScheduleOK)
		}
	}
	of := func(vehicleID string) []string {
		var schs []fleet.Schedule
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { schs, err = tx.SchedulesOfVehicle(vehicleID); return err }))
		out := []string{}
		for _, sch := range schs {
			is.Equal(sch.VehicleID, vehicleID)
			is.Equal(sch.AccountID, a.ID)
			out = append(out, sch.ID)
		}
		return out
	}
	is.Equal(of(v1.ID), mine) // id order, only that vehicle's
	is.Equal(len(of(v2.ID)), 1)
	is.Equal(of(fleet.NewID(fleet.PrefixVehicle)), []string{}) // none for an unknown vehicle
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteSchedule(a.ID, mine[1]) }))
	is.Equal(of(v1.ID), []string{mine[0], mine[2], mine[3]})
}

func testSchedulesToCheck(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	va, vb := MustVehicle(t, s, a.ID, "a"), MustVehicle(t, s, b.ID, "b")
	// Today is 2026-11-22: due soon by 2026-11-29, overdue before 2026-11-22.
	const soonBy, overdueBefore = "2026-11-29", "2026-11-22"
	okSoon := MustSchedule(t, s, a.ID, va.ID, "2026-11-29", fleet.ScheduleOK)        // ok, due in 7 days: owes due_soon
	okLate := MustSchedule(t, s, b.ID, vb.ID, "2026-11-01", fleet.ScheduleOK)        // ok, long overdue: owes overdue
	soonLate := MustSchedule(t, s, a.ID, va.ID, "2026-11-21", fleet.ScheduleDueSoon) // due_soon, past its date: owes overdue
	MustSchedule(t, s, a.ID, va.ID, "2026-11-30", fleet.ScheduleOK)                  // ok, 8 days away
	MustSchedule(t, s, a.ID, va.ID, "2026-11-22", fleet.ScheduleDueSoon)             // due_soon, due today: nothing owed
	MustSchedule(t, s, b.ID, vb.ID, "2026-11-01", fleet.ScheduleOverdue)             // overdue already
	MustSchedule(t, s, a.ID, va.ID, "", fleet.ScheduleOK)                            // no date interval
	MustSchedule(t, s, a.ID, va.ID, "", fleet.ScheduleDueSoon)                       // no date interval
	sameDay := MustSchedule(t, s, a.ID, va.ID, "2026-11-01", fleet.ScheduleDueSoon)  // same date as okLate: id order

	check := func(limit int) []string {
		var schs []fleet.Schedule
		is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) {
			schs, err = tx.SchedulesToCheck(soonBy, overdueBefore, limit)
			return err
		}))
		out := []string{}
		for _, sch := range schs {
			out = append(out, sch.ID)
		}
		return out
	}
	is.Equal(check(10), []string{okLate.ID, sameDay.ID, soonLate.ID, okSoon.ID}) // earliest date first, across accounts
	is.Equal(check(2), []string{okLate.ID, sameDay.ID})                          // limit

	got := getSchedule(t, s, b.ID, okLate.ID)
	is.Equal(got.AccountID, b.ID) // whole schedules, with their account
	got.Status = fleet.ScheduleOverdue
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateSchedule(got) }))
	is.Equal(check(10), []string{sameDay.ID, soonLate.ID, okSoon.ID}) // a stored status leaves the list
}

func testMaintenanceRollback(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	keep := MustSchedule(t, s, a.ID, v.ID, "2026-12-01", fleet.ScheduleOK)
	gone := MustSchedule(t, s, a.ID, v.ID, "2026-12-01", fleet.ScheduleOK)
	w := MustWorkOrder(t, s, a.ID, v.ID, "w", fleet.WorkOrderOpen, fleet.PriorityMedium)
	fresh := NewSchedule(a.ID, v.ID, "fresh")
	freshWO := NewWorkOrder(a.ID, v.ID, "fresh")
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.CreateSchedule(fresh); err != nil {
			return err
		}
		if err := tx.CreateWorkOrder(freshWO); err != nil {
			return err
		}
		k := keep
		k.Status, k.NotifiedDueSoon = fleet.ScheduleDueSoon, true
		if err := tx.UpdateSchedule(k); err != nil {
			return err
		}
		if err := tx.DeleteSchedule(a.ID, gone.ID); err != nil {
			return err
		}
		ww := w
		ww.Status = fleet.WorkOrderCompleted
		if err := tx.UpdateWorkOrder(ww); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Schedule(a.ID, fresh.ID)
		is.Equal(code(err), fleet.CodeNotFound) // the insert is undone
		_, err = tx.WorkOrder(a.ID, freshWO.ID)
		is.Equal(code(err), fleet.CodeNotFound)
		k, err := tx.Schedule(a.ID, keep.ID)
		is.NoErr(err)
		is.Equal(k.Status, fleet.ScheduleOK) // the update is undone
		is.Equal(k.NotifiedDueSoon, true)    // (as stored by MustSchedule)
		_, err = tx.Schedule(a.ID, gone.ID)
		is.NoErr(err) // the delete is undone
		wo, err := tx.WorkOrder(a.ID, w.ID)
		is.NoErr(err)
		is.Equal(wo.Status, fleet.WorkOrderOpen)
		of, err := tx.SchedulesOfVehicle(v.ID)
		is.NoErr(err)
		is.Equal(len(of), 2) // keep and gone, not fresh
		is.Equal(of[0].ID, keep.ID)
		is.Equal(of[1].ID, gone.ID)
		return nil
	}))
}

func testDeleteVehicleCascadesToSchedules(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v, other := MustVehicle(t, s, a.ID, "gone"), MustVehicle(t, s, a.ID, "kept")
	s1 := MustSchedule(t, s, a.ID, v.ID, "2026-11-01", fleet.ScheduleOK)
	s2 := MustSchedule(t, s, a.ID, v.ID, "2026-11-01", fleet.ScheduleOK)
	so := MustSchedule(t, s, a.ID, other.ID, "2026-11-01", fleet.ScheduleOK)
	w := MustWorkOrder(t, s, a.ID, v.ID, "history", fleet.WorkOrderCompleted, fleet.PriorityMedium)

	// A delete that fails later in its transaction takes nothing with it.
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.DeleteVehicle(a.ID, v.ID); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom))
	is.Equal(getSchedule(t, s, a.ID, s1.ID).VehicleID, v.ID)

	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteVehicle(a.ID, v.ID) }))
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error {
		for _, id := range []string{s1.ID, s2.ID} {
			_, err := tx.Schedule(a.ID, id)
			is.Equal(code(err), fleet.CodeNotFound) // its schedules went with it
		}
		of, err := tx.SchedulesOfVehicle(v.ID)
		is.NoErr(err)
		is.Equal(len(of), 0)
		list, err := tx.Schedules(a.ID, fleet.ScheduleFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(list), 1) // another vehicle's stays
		is.Equal(list[0].ID, so.ID)
		due, err := tx.SchedulesToCheck("2026-11-29", "2026-11-22", 10)
		is.NoErr(err)
		is.Equal(len(due), 1)
		is.Equal(due[0].ID, so.ID)
		wo, err := tx.WorkOrder(a.ID, w.ID)
		is.NoErr(err) // work orders stay as history
		is.Equal(wo.VehicleID, v.ID)
		return nil
	}))
}
