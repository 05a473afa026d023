package sqlstore

import (
	"database/sql"
	"errors"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

const workOrderColumns = `w.id, w.account_id, w.vehicle_id, w.title, w.description, w.priority, w.status, w.due_date,
	w.assigned_to, w.odometer_km, w.cost_cents, w.currency, w.schedule_id, w.created_at, w.updated_at, w.completed_at`

func scanWorkOrder(s scanner) (fleet.WorkOrder, error) {
	var w fleet.WorkOrder
	var priority, status string
	var odo sql.NullFloat64
	var cost, completed sql.NullInt64
	var created, updated int64
	if err := s.Scan(&w.ID, &w.AccountID, &w.VehicleID, &w.Title, &w.Description, &priority, &status, &w.DueDate,
		&w.AssignedTo, &odo, &cost, &w.Currency, &w.ScheduleID, &created, &updated, &completed); err != nil {
		return fleet.WorkOrder{}, err
	}
	w.Priority, w.Status = fleet.Priority(priority), fleet.WorkOrderStatus(status)
	w.OdometerKm = nullFloat(odo)
	if cost.Valid {
		c := cost.Int64
		w.CostCents = &c
	}
	w.CreatedAt, w.UpdatedAt, w.CompletedAt = fromDB(created), fromDB(updated), fromNullDB(completed)
	return w, nil
}

func costArg(c *int64) any {
	if c == nil {
		return nil
	}
	return *c
}

// CreateWorkOrder implements fleet.Tx.
func (t *tx) CreateWorkOrder(w fleet.WorkOrder) error {
	err := t.insert(`INSERT INTO work_orders (id, account_id, vehicle_id, title, description, priority, status, due_date,
			assigned_to, odometer_km, cost_cents, currency, schedule_id, created_at, updated_at, completed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.AccountID, w.VehicleID, w.Title, w.Description, string(w.Priority), string(w.Status), w.DueDate,
		w.AssignedTo, floatArg(w.OdometerKm), costArg(w.CostCents), w.Currency, w.ScheduleID,
		toDB(w.CreatedAt), toDB(w.UpdatedAt), toNullDB(w.CompletedAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A work order with id %q exists.", w.ID)
	case errForeignKey:
		return notFound(err, "account", w.AccountID)
	}
	return wrap(err, "create work order")
}

// WorkOrder implements fleet.Tx.
func (t *tx) WorkOrder(accountID, id string) (fleet.WorkOrder, error) {
	w, err := scanWorkOrder(t.queryRow(`SELECT `+workOrderColumns+` FROM work_orders w WHERE w.id = ? AND w.account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.WorkOrder{}, fleet.NotFound("work order", id)
	}
	return w, wrap(t.failed(err), "read work order")
}

// WorkOrders implements fleet.Tx.
func (t *tx) WorkOrders(accountID string, f fleet.WorkOrderFilter, p fleet.Page) ([]fleet.WorkOrder, error) {
	out := []fleet.WorkOrder{}
	if p.Limit <= 0 {
		return out, nil
	}
	where, args := []string{"w.account_id = ?", "w.id > ?"}, []any{accountID, p.After}
	for _, c := range []struct{ col, v string }{{"w.vehicle_id", f.VehicleID}, {"w.status", string(f.Status)}, {"w.priority", string(f.Priority)}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.v)
		}
	}
	rows, err := t.query(t.d.q(`SELECT `+workOrderColumns+` FROM work_orders w WHERE `+
		strings.Join(where, " AND ")+` ORDER BY w.id LIMIT ?`), append(args, int64(p.Limit))...)
	if err != nil {
		return nil, wrap(t.failed(err), "list work orders")
	}
	defer rows.Close()
	for rows.Next() {
		w, err := scanWorkOrder(rows)
		if err != nil {
			return nil, wrap(err, "list work orders")
		}
		if f.Match(&w) {
			out = append(out, w)
		}
	}
	return out, wrap(t.failed(rows.Err()), "list work orders")
}

// UpdateWorkOrder implements fleet.Tx.
func (t *tx) UpdateWorkOrder(w fleet.WorkOrder) error {
	n, err := t.update(`UPDATE work_orders SET title = ?, description = ?, priority = ?, status = ?, due_date = ?,
			assigned_to = ?, odometer_km = ?, cost_cents = ?, currency = ?, schedule_id = ?, updated_at = ?, completed_at = ?
		WHERE id = ? AND account_id = ?`,
		w.Title, w.Description, string(w.Priority), string(w.Status), w.DueDate, w.AssignedTo, floatArg(w.OdometerKm),
		costArg(w.CostCents), w.Currency, w.ScheduleID, toDB(w.UpdatedAt), toNullDB(w.CompletedAt), w.ID, w.AccountID)
	if err != nil {
		return wrap(err, "update work order")
	}
	if n == 0 {
		return fleet.NotFound("work order", w.ID)
	}
	return nil
}

const scheduleColumns = `s.id, s.account_id, s.vehicle_id, s.name, s.interval_days, s.interval_km, s.last_service_date,
	s.last_service_odometer_km, s.auto_create_work_order, s.next_due_date, s.next_due_odometer_km, s.status,
	s.notified_due_soon, s.notified_overdue, s.cycle_work_order_id, s.created_at, s.updated_at,
	s.interval_engine_hours, s.last_service_engine_hours, s.next_due_engine_hours`

func scanSchedule(r scanner) (fleet.Schedule, error) {
	var s fleet.Schedule
	var days sql.NullInt64
	var km, lastOdo, nextOdo, hours, lastHours, nextHours sql.NullFloat64
	var status string
	var created, updated int64
	if err := r.Scan(&s.ID, &s.AccountID, &s.VehicleID, &s.Name, &days, &km, &s.LastServiceDate, &lastOdo,
		&s.AutoCreateWorkOrder, &s.NextDueDate, &nextOdo, &status, &s.NotifiedDueSoon, &s.NotifiedOverdue,
		&s.CycleWorkOrderID, &created, &updated, &hours, &lastHours, &nextHours); err != nil {
		return fleet.Schedule{}, err
	}
	s.IntervalEngineHours, s.LastServiceEngineHours, s.NextDueEngineHours = nullFloat(hours), nullFloat(lastHours), nullFloat(nextHours)
	if days.Valid {
		d := int(days.Int64)
		s.IntervalDays = &d
	}
	s.IntervalKm, s.LastServiceOdometerKm, s.NextDueOdometerKm = nullFloat(km), nullFloat(lastOdo), nullFloat(nextOdo)
	s.Status = fleet.ScheduleStatus(status)
	s.CreatedAt, s.UpdatedAt = fromDB(created), fromDB(updated)
	return s, nil
}

func intArg(i *int) any {
	if i == nil {
		return nil
	}
	return int64(*i)
}

// CreateSchedule implements fleet.Tx.
func (t *tx) CreateSchedule(s fleet.Schedule) error {
	if t.readOnly {
		return errReadOnly
	}
	var one int
	err := t.queryRow(`SELECT 1 FROM vehicles WHERE id = ? AND account_id = ?`, s.VehicleID, s.AccountID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.NotFound("vehicle", s.VehicleID)
	}
	if err != nil {
		return wrap(t.failed(err), "create schedule")
	}
	err = t.keeping(cachedSchedules, func() error {
		return t.insert(`INSERT INTO schedules (id, account_id, vehicle_id, name, interval_days, interval_km, last_service_date,
			last_service_odometer_km, auto_create_work_order, next_due_date, next_due_odometer_km, status,
			notified_due_soon, notified_overdue, cycle_work_order_id, created_at, updated_at,
			interval_engine_hours, last_service_engine_hours, next_due_engine_hours)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.ID, s.AccountID, s.VehicleID, s.Name, intArg(s.IntervalDays), floatArg(s.IntervalKm), s.LastServiceDate,
			floatArg(s.LastServiceOdometerKm), s.AutoCreateWorkOrder, s.NextDueDate, floatArg(s.NextDueOdometerKm),
			string(s.Status), s.NotifiedDueSoon, s.NotifiedOverdue, s.CycleWorkOrderID, toDB(s.CreatedAt), toDB(s.UpdatedAt),
			floatArg(s.IntervalEngineHours), floatArg(s.LastServiceEngineHours), floatArg(s.NextDueEngineHours))
	})
	if c := t.cache; c != nil {
		c.forgetSchedules(s.VehicleID)
	}
	if classify(err) == errUnique {
		return conflict(err, "A schedule with id %q exists.", s.ID)
	}
	return wrap(err, "create schedule")
}

// Schedule implements fleet.Tx.
func (t *tx) Schedule(accountID, id string) (fleet.Schedule, error) {
	s, err := scanSchedule(t.queryRow(`SELECT `+scheduleColumns+` FROM schedules s WHERE s.id = ? AND s.account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Schedule{}, fleet.NotFound("schedule", id)
	}
	return s, wrap(t.failed(err), "read schedule")
}

func (t *tx) schedules(doing, where string, args ...any) ([]fleet.Schedule, error) {
	return queryAll(t, doing, scanSchedule, `SELECT `+scheduleColumns+` FROM schedules s WHERE `+where, args...)
}

// Schedules implements fleet.Tx.
func (t *tx) Schedules(accountID string, f fleet.ScheduleFilter, p fleet.Page) ([]fleet.Schedule, error) {
	if p.Limit <= 0 {
		return []fleet.Schedule{}, nil
	}
	where, args := "s.account_id = ? AND s.id > ?", []any{accountID, p.After}
	if f.VehicleID != "" {
		where, args = where+" AND s.vehicle_id = ?", append(args, f.VehicleID)
	}
	if f.Status != "" {
		where, args = where+" AND s.status = ?", append(args, string(f.Status))
	}
	all, err := t.schedules("list schedules", where+" ORDER BY s.id LIMIT ?", append(args, int64(p.Limit))...)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for i := range all {
		if f.Match(&all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// UpdateSchedule implements fleet.Tx.
func (t *tx) UpdateSchedule(s fleet.Schedule) error {
	if t.readOnly {
		return errReadOnly
	}
	var vehicleID string
	err := t.keeping(cachedSchedules, func() error {
		return t.queryRow(`UPDATE schedules SET name = ?, interval_days = ?, interval_km = ?, last_service_date = ?,
			last_service_odometer_km = ?, auto_create_work_order = ?, next_due_date = ?, next_due_odometer_km = ?, status = ?,
			notified_due_soon = ?, notified_overdue = ?, cycle_work_order_id = ?, updated_at = ?,
			interval_engine_hours = ?, last_service_engine_hours = ?, next_due_engine_hours = ?
		WHERE id = ? AND account_id = ? RETURNING vehicle_id`,
			s.Name, intArg(s.IntervalDays), floatArg(s.IntervalKm), s.LastServiceDate, floatArg(s.LastServiceOdometerKm),
			s.AutoCreateWorkOrder, s.NextDueDate, floatArg(s.NextDueOdometerKm), string(s.Status), s.NotifiedDueSoon,
			s.NotifiedOverdue, s.CycleWorkOrderID, toDB(s.UpdatedAt),
			floatArg(s.IntervalEngineHours), floatArg(s.LastServiceEngineHours), floatArg(s.NextDueEngineHours), s.ID, s.AccountID).Scan(&vehicleID)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.NotFound("schedule", s.ID)
	}
	if c := t.cache; c != nil {
		c.forgetSchedules(vehicleID) // the row's vehicle, whatever s says
	}
	return wrap(t.failed(err), "update schedule")
}

// DeleteSchedule implements fleet.Tx.
func (t *tx) DeleteSchedule(accountID, id string) error {
	if t.readOnly {
		return errReadOnly
	}
	var vehicleID string
	err := t.keeping(cachedSchedules, func() error {
		return t.queryRow(`DELETE FROM schedules WHERE id = ? AND account_id = ? RETURNING vehicle_id`, id, accountID).Scan(&vehicleID)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.NotFound("schedule", id)
	}
	if c := t.cache; c != nil {
		c.forgetSchedules(vehicleID)
	}
	return wrap(t.failed(err), "delete schedule")
}

// SchedulesOfVehicle implements fleet.Tx. A group's transaction reads them
// through its row cache (rowcache.go); on PostgreSQL the group reads them
// with its vehicles, locked (group_postgres.go).
func (t *tx) SchedulesOfVehicle(vehicleID string) ([]fleet.Schedule, error) {
	if t.cache != nil {
		if cached, ok := t.cache.schedules[vehicleID]; ok {
			return cloneSchedules(cached), nil
		}
	}
	schs, err := t.schedules("read schedules", "s.vehicle_id = ? ORDER BY s.id", vehicleID)
	if err == nil && t.cache != nil {
		t.cache.setSchedules(vehicleID, cloneSchedules(schs))
	}
	return schs, err
}

// cloneSchedules returns a copy of schs that shares no memory with it.
func cloneSchedules(schs []fleet.Schedule) []fleet.Schedule {
	out := make([]fleet.Schedule, len(schs))
	for i := range schs {
		out[i] = schs[i].Clone()
	}
	return out
}

// SchedulesToCheck implements fleet.Tx. On PostgreSQL the rows are locked
// and rows locked by a concurrent check are skipped.
func (t *tx) SchedulesToCheck(dueSoonBy, overdueBefore string, limit int) ([]fleet.Schedule, error) {
	lock := ""
	if !t.readOnly {
		lock = t.d.skipLocked
	}
	return t.schedules("check schedules", `s.next_due_date <> ''
		  AND ((s.status = 'ok' AND s.next_due_date <= ?) OR (s.status <> 'overdue' AND s.next_due_date < ?))
		ORDER BY s.next_due_date, s.id LIMIT ?`+lock, dueSoonBy, overdueBefore, int64(limit))
}
