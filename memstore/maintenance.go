package memstore

import (
	"cmp"
	"slices"

	"github.com/fleetkit/fleetapi/fleet"
)

func cloneWorkOrder(w fleet.WorkOrder) fleet.WorkOrder {
	w.OdometerKm = clonePtr(w.OdometerKm)
	w.CostCents = clonePtr(w.CostCents)
	w.CompletedAt = clonePtr(w.CompletedAt)
	return w
}

func cloneSchedule(s fleet.Schedule) fleet.Schedule {
	s.IntervalDays = clonePtr(s.IntervalDays)
	s.IntervalKm = clonePtr(s.IntervalKm)
	s.LastServiceOdometerKm = clonePtr(s.LastServiceOdometerKm)
	s.IntervalEngineHours, s.LastServiceEngineHours = clonePtr(s.IntervalEngineHours), clonePtr(s.LastServiceEngineHours)
	s.NextDueEngineHours = clonePtr(s.NextDueEngineHours)
	s.NextDueOdometerKm = clonePtr(s.NextDueOdometerKm)
	return s
}

func (t *tx) CreateWorkOrder(w fleet.WorkOrder) error {
	if err := t.writable(); err != nil {
		return err
	}
	return t.s.workOrders.insert(t.txn, w)
}

func (t *tx) WorkOrder(accountID, id string) (fleet.WorkOrder, error) {
	return t.s.workOrders.get(accountID, id)
}

func (t *tx) WorkOrders(accountID string, f fleet.WorkOrderFilter, p fleet.Page) ([]fleet.WorkOrder, error) {
	return t.s.workOrders.list(accountID, p, func(w fleet.WorkOrder) bool { return f.Match(&w) }), nil
}

func (t *tx) UpdateWorkOrder(w fleet.WorkOrder) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.workOrders.get(w.AccountID, w.ID)
	if err != nil {
		return err
	}
	w.VehicleID, w.CreatedAt = old.VehicleID, old.CreatedAt
	return t.s.workOrders.put(t.txn, w)
}

func (t *tx) CreateSchedule(s fleet.Schedule) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.s.vehicles.get(s.AccountID, s.VehicleID); err != nil {
		return err
	}
	if err := t.s.schedules.insert(t.txn, s); err != nil {
		return err
	}
	t.indexSchedule(s.VehicleID, s.ID)
	return nil
}

// indexSchedule adds a schedule to its vehicle's list, in id order.
func (t *tx) indexSchedule(vehicleID, id string) {
	ids := t.s.vehicleSchedules[vehicleID]
	i, _ := slices.BinarySearch(ids, id)
	t.s.vehicleSchedules[vehicleID] = slices.Insert(slices.Clip(ids), i, id)
	t.undo(func() { t.s.vehicleSchedules[vehicleID] = ids; t.dropEmpty(vehicleID) })
}

// unindexSchedule removes a schedule from its vehicle's list.
func (t *tx) unindexSchedule(vehicleID, id string) {
	ids := t.s.vehicleSchedules[vehicleID]
	i, ok := slices.BinarySearch(ids, id)
	if !ok {
		return
	}
	t.s.vehicleSchedules[vehicleID] = slices.Delete(slices.Clone(ids), i, i+1)
	t.dropEmpty(vehicleID)
	t.undo(func() { t.s.vehicleSchedules[vehicleID] = ids })
}

func (t *tx) dropEmpty(vehicleID string) {
	if len(t.s.vehicleSchedules[vehicleID]) == 0 {
		delete(t.s.vehicleSchedules, vehicleID)
	}
}

func (t *tx) Schedule(accountID, id string) (fleet.Schedule, error) {
	return t.s.schedules.get(accountID, id)
}

func (t *tx) Schedules(accountID string, f fleet.ScheduleFilter, p fleet.Page) ([]fleet.Schedule, error) {
	return t.s.schedules.list(accountID, p, func(s fleet.Schedule) bool { return f.Match(&s) }), nil
}

func (t *tx) UpdateSchedule(s fleet.Schedule) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.schedules.get(s.AccountID, s.ID)
	if err != nil {
		return err
	}
	s.VehicleID, s.CreatedAt = old.VehicleID, old.CreatedAt
	return t.s.schedules.put(t.txn, s)
}

func (t *tx) DeleteSchedule(accountID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.schedules.get(accountID, id)
	if err != nil {
		return err
	}
	if err := t.s.schedules.delete(t.txn, accountID, id); err != nil {
		return err
	}
	t.unindexSchedule(old.VehicleID, id)
	return nil
}

func (t *tx) SchedulesOfVehicle(vehicleID string) ([]fleet.Schedule, error) {
	ids := t.s.vehicleSchedules[vehicleID]
	out := make([]fleet.Schedule, 0, len(ids))
	for _, id := range ids {
		out = append(out, cloneSchedule(t.s.schedules.byID[id]))
	}
	return out, nil
}

// deleteSchedulesOf deletes every schedule of a vehicle.
func (t *tx) deleteSchedulesOf(accountID, vehicleID string) error {
	for _, id := range slices.Clone(t.s.vehicleSchedules[vehicleID]) {
		if err := t.DeleteSchedule(accountID, id); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) SchedulesToCheck(dueSoonBy, overdueBefore string, limit int) ([]fleet.Schedule, error) {
	var out []fleet.Schedule
	for _, s := range t.s.schedules.byID {
		if s.NextDueDate == "" {
			continue
		}
		if s.Status == fleet.ScheduleOK && s.NextDueDate <= dueSoonBy || s.Status != fleet.ScheduleOverdue && s.NextDueDate < overdueBefore {
			out = append(out, cloneSchedule(s))
		}
	}
	slices.SortFunc(out, func(a, b fleet.Schedule) int {
		return cmp.Or(cmp.Compare(a.NextDueDate, b.NextDueDate), cmp.Compare(a.ID, b.ID))
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
