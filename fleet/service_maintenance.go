package fleet

import (
	"context"
	"strings"
	"time"
)

// WorkOrderPatch is a JSON merge patch of a work order: fields not Set
// stay. Status moves through the state machine.
type WorkOrderPatch struct {
	Title       Optional[string]          `json:"title,omitzero"`
	Description Optional[string]          `json:"description,omitzero"`
	Priority    Optional[Priority]        `json:"priority,omitzero"`
	Status      Optional[WorkOrderStatus] `json:"status,omitzero"`
	DueDate     Optional[string]          `json:"due_date,omitzero"`
	AssignedTo  Optional[string]          `json:"assigned_to,omitzero"`
	OdometerKm  Optional[*float64]        `json:"odometer_km,omitzero"`
	CostCents   Optional[*int64]          `json:"cost_cents,omitzero"`
	Currency    Optional[string]          `json:"currency,omitzero"`
}

// SchedulePatch is a JSON merge patch of a schedule: fields not Set stay.
// Changing the last service starts a new service cycle.
type SchedulePatch struct {
	Name                  Optional[string]   `json:"name,omitzero"`
	IntervalDays          Optional[*int]     `json:"interval_days,omitzero"`
	IntervalKm            Optional[*float64] `json:"interval_km,omitzero"`
	LastServiceDate       Optional[string]   `json:"last_service_date,omitzero"`
	LastServiceOdometerKm Optional[*float64] `json:"last_service_odometer_km,omitzero"`
	AutoCreateWorkOrder   Optional[*bool]    `json:"auto_create_work_order,omitzero"`
	// IntervalEngineHours and LastServiceEngineHours: by engine hours
	// (API.md §6).
	IntervalEngineHours    Optional[*float64] `json:"interval_engine_hours,omitzero"`
	LastServiceEngineHours Optional[*float64] `json:"last_service_engine_hours,omitzero"`
}

func notFoundWorkOrder(id string) error { return NotFound("work order", id) }
func notFoundSchedule(id string) error  { return NotFound("schedule", id) }

func (s *Service) getWorkOrder(tx MaintenanceTx, p Principal, id string) (WorkOrder, error) {
	if !ValidID(PrefixWorkOrder, id) {
		return WorkOrder{}, notFoundWorkOrder(id)
	}
	w, err := tx.WorkOrder(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return WorkOrder{}, notFoundWorkOrder(id)
	}
	return w, err
}

func (s *Service) getSchedule(tx MaintenanceTx, p Principal, id string) (Schedule, error) {
	if !ValidID(PrefixSchedule, id) {
		return Schedule{}, notFoundSchedule(id)
	}
	sch, err := tx.Schedule(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return Schedule{}, notFoundSchedule(id)
	}
	return sch, err
}

// vehicleOf looks up the vehicle a request body names; a vehicle that is not
// the account's is a bad field, named in val.
func (s *Service) vehicleOf(tx VehicleTx, accountID, id string, val *Validator) (Vehicle, error) {
	if id == "" {
		return Vehicle{}, nil // reported as required already
	}
	if !ValidID(PrefixVehicle, id) {
		val.Add("vehicle_id", "must name a vehicle of this account")
		return Vehicle{}, nil
	}
	v, err := tx.Vehicle(accountID, id)
	if ErrorCode(err) == CodeNotFound {
		val.Add("vehicle_id", "no vehicle %q in this account", id)
		return Vehicle{}, nil
	}
	return v, err
}

func normaliseWorkOrder(w *WorkOrder) {
	w.Title = strings.TrimSpace(w.Title)
	w.AssignedTo = strings.TrimSpace(w.AssignedTo)
	w.OdometerKm = unsignedZeroPtr(w.OdometerKm)
}

// CreateWorkOrder opens a work order from the fields a client sets in in
// (the others are ignored): it starts open, with priority medium unless
// given. The vehicle must be the account's, and a schedule_id must name a
// schedule of that vehicle; either is otherwise a validation_error naming
// the field.
func (s *Service) CreateWorkOrder(ctx context.Context, p Principal, in WorkOrder) (WorkOrder, error) {
	if err := p.allow("CreateWorkOrder"); err != nil {
		return WorkOrder{}, err
	}
	now := s.Now()
	w := WorkOrder{
		ID: NewID(PrefixWorkOrder), AccountID: p.Account.ID, VehicleID: in.VehicleID, Title: in.Title,
		Description: in.Description, Priority: in.Priority, Status: WorkOrderOpen, DueDate: in.DueDate,
		AssignedTo: in.AssignedTo, OdometerKm: in.OdometerKm, CostCents: in.CostCents, Currency: in.Currency,
		ScheduleID: in.ScheduleID, CreatedAt: now, UpdatedAt: now,
	}
	if w.Priority == "" {
		w.Priority = PriorityMedium
	}
	normaliseWorkOrder(&w)
	err := s.update(ctx, func(tx Tx) error {
		var val Validator
		w.validate(&val)
		if _, err := s.vehicleOf(tx, w.AccountID, w.VehicleID, &val); err != nil {
			return err
		}
		var sch Schedule
		if w.ScheduleID != "" {
			var err error
			sch, err = s.getSchedule(tx, p, w.ScheduleID)
			switch {
			case ErrorCode(err) == CodeNotFound:
				val.Add("schedule_id", "no schedule %q in this account", w.ScheduleID)
			case err != nil:
				return err
			case sch.VehicleID != w.VehicleID:
				val.Add("schedule_id", "must be a schedule of vehicle %s", w.VehicleID)
			}
		}
		if err := val.Err(); err != nil {
			return err
		}
		if err := tx.CreateWorkOrder(w); err != nil {
			return err
		}
		if sch.ID != "" && sch.CycleWorkOrderID == "" {
			// The cycle has its work order: the schedule opens no other.
			sch.CycleWorkOrderID = w.ID
			if err := tx.UpdateSchedule(sch); err != nil {
				return err
			}
		}
		return s.emit(tx, w.AccountID, EventWorkOrderCreated, now, w)
	})
	if err != nil {
		return WorkOrder{}, err
	}
	return w, nil
}

// WorkOrder returns one of the account's work orders.
func (s *Service) WorkOrder(ctx context.Context, p Principal, id string) (WorkOrder, error) {
	if err := p.allow("WorkOrder"); err != nil {
		return WorkOrder{}, err
	}
	var w WorkOrder
	err := s.view(ctx, func(tx Tx) (err error) { w, err = s.getWorkOrder(tx, p, id); return err })
	return w, err
}

// ListWorkOrders lists the account's work orders in creation order.
func (s *Service) ListWorkOrders(ctx context.Context, p Principal, f WorkOrderFilter, q ListQuery) (List[WorkOrder], error) {
	if err := p.allow("ListWorkOrders"); err != nil {
		return List[WorkOrder]{}, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return List[WorkOrder]{}, Errorf(CodeInvalidRequest, "status must be one of open, in_progress, on_hold, completed, cancelled.")
	}
	if f.Priority != "" && !f.Priority.Valid() {
		return List[WorkOrder]{}, Errorf(CodeInvalidRequest, "priority must be one of low, medium, high, urgent.")
	}
	if f.VehicleID != "" && !ValidID(PrefixVehicle, f.VehicleID) {
		return List[WorkOrder]{}, Errorf(CodeInvalidRequest, "vehicle_id must be a vehicle id (veh_...).")
	}
	page, limit, err := q.page(PrefixWorkOrder, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[WorkOrder]{}, err
	}
	var ws []WorkOrder
	err = s.view(ctx, func(tx Tx) (err error) { ws, err = tx.WorkOrders(p.Account.ID, f, page); return err })
	if err != nil {
		return List[WorkOrder]{}, err
	}
	return finish(ws, limit, func(w WorkOrder) string { return w.ID }), nil
}

// UpdateWorkOrder applies a merge patch to a work order. The result is
// validated whole and a status change must be allowed by the state machine
// (else invalid_state_transition); nothing changes if either fails.
//
// A patch that changes nothing (a status repeated, fields set to the values
// they have) is a no-op: no event, updated_at stays. Otherwise it emits
// work_order.updated when a field other than status changed and
// work_order.status_changed when the status did. Moving to completed sets
// completed_at and, for a work order linked to a schedule, records the
// service on the schedule and starts its next cycle. Fields other than
// status stay editable in every status (costs are often known late).
func (s *Service) UpdateWorkOrder(ctx context.Context, p Principal, id string, patch WorkOrderPatch) (WorkOrder, error) {
	if err := p.allow("UpdateWorkOrder"); err != nil {
		return WorkOrder{}, err
	}
	now := s.Now()
	var w WorkOrder
	err := s.update(ctx, func(tx Tx) (err error) {
		w, err = s.getWorkOrder(tx, p, id)
		if err != nil {
			return err
		}
		old := w
		set(&w.Title, patch.Title)
		set(&w.Description, patch.Description)
		set(&w.Priority, patch.Priority)
		set(&w.Status, patch.Status)
		set(&w.DueDate, patch.DueDate)
		set(&w.AssignedTo, patch.AssignedTo)
		set(&w.OdometerKm, patch.OdometerKm)
		set(&w.CostCents, patch.CostCents)
		set(&w.Currency, patch.Currency)
		normaliseWorkOrder(&w)
		if err := w.Validate(); err != nil {
			return err
		}
		if err := CheckWorkOrderTransition(old.Status, w.Status); err != nil {
			return err
		}
		fieldsChanged := !sameWorkOrderFields(old, w)
		statusChanged := old.Status != w.Status
		if !fieldsChanged && !statusChanged {
			w = old
			return nil
		}
		w.UpdatedAt = now
		if statusChanged && w.Status == WorkOrderCompleted {
			w.CompletedAt = &now
		}
		if err := tx.UpdateWorkOrder(w); err != nil {
			return err
		}
		if fieldsChanged {
			if err := s.emit(tx, w.AccountID, EventWorkOrderUpdated, now, w); err != nil {
				return err
			}
		}
		if statusChanged {
			change := WorkOrderStatusChange{WorkOrderID: w.ID, VehicleID: w.VehicleID, From: old.Status, To: w.Status, At: now}
			if err := s.emit(tx, w.AccountID, EventWorkOrderStatusChanged, now, change); err != nil {
				return err
			}
			if w.Status == WorkOrderCompleted {
				return s.recordService(tx, w, now)
			}
		}
		return nil
	})
	if err != nil {
		return WorkOrder{}, err
	}
	return w, nil
}

// sameWorkOrderFields reports whether a and b agree on every field a client
// sets other than status.
func sameWorkOrderFields(a, b WorkOrder) bool {
	return a.Title == b.Title && a.Description == b.Description && a.Priority == b.Priority &&
		a.DueDate == b.DueDate && a.AssignedTo == b.AssignedTo && samePtr(a.OdometerKm, b.OdometerKm) &&
		samePtr(a.CostCents, b.CostCents) && a.Currency == b.Currency
}

func samePtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// recordService records, on the schedule a completed work order is linked
// to, the service the work order did: last service today, at the work
// order's odometer reading or else the vehicle's (unchanged if neither is
// known). The next cycle starts. A deleted schedule is skipped.
func (s *Service) recordService(tx recordServiceTx, w WorkOrder, now time.Time) error {
	if w.ScheduleID == "" {
		return nil
	}
	sch, err := tx.Schedule(w.AccountID, w.ScheduleID)
	if ErrorCode(err) == CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	r, err := s.readingsOf(tx, sch)
	if err != nil {
		return err
	}
	sch.LastServiceDate = DateOf(now)
	switch {
	case w.OdometerKm != nil:
		sch.LastServiceOdometerKm = ptr(*w.OdometerKm)
	case r.km != nil:
		sch.LastServiceOdometerKm = ptr(*r.km)
	}
	if sch.IntervalEngineHours != nil && r.hours != nil {
		sch.LastServiceEngineHours = ptr(*r.hours)
	}
	sch.startCycle()
	sch.UpdatedAt = now
	if _, err := s.reviewSchedule(tx, &sch, r, now); err != nil {
		return err
	}
	return tx.UpdateSchedule(sch)
}

// readings are what a vehicle's schedules are due by besides the date: its
// odometer and its engine hours (nil if unknown).
type readings struct{ km, hours *float64 }

func readingsOfVehicle(v *Vehicle) readings { return readings{v.OdometerKm, v.EngineHours} }

// readingsOf returns the readings of a schedule's vehicle (none if it is
// gone).
func (s *Service) readingsOf(tx VehicleTx, sch Schedule) (readings, error) {
	v, err := tx.Vehicle(sch.AccountID, sch.VehicleID)
	if ErrorCode(err) == CodeNotFound {
		return readings{}, nil
	}
	if err != nil {
		return readings{}, err
	}
	return readingsOfVehicle(&v), nil
}

// reviewSchedule brings a schedule's computed fields up to date with the
// vehicle's odometer and the clock, and does what its becoming due owes,
// once per cycle: the maintenance.due_soon or maintenance.overdue event (an
// overdue schedule owes no due_soon event any more) and, with
// AutoCreateWorkOrder, one linked work order. It reports whether the
// schedule changed; the caller stores it.
func (s *Service) reviewSchedule(tx scheduleTx, sch *Schedule, r readings, now time.Time) (bool, error) {
	before := *sch
	*sch = EvaluateScheduleWithHours(*sch, r.km, r.hours, now)
	event := ""
	switch {
	case sch.Status == ScheduleOverdue && !sch.NotifiedOverdue:
		sch.NotifiedOverdue, sch.NotifiedDueSoon = true, true
		event = EventMaintenanceOverdue
	case sch.Status == ScheduleDueSoon && !sch.NotifiedDueSoon:
		sch.NotifiedDueSoon = true
		event = EventMaintenanceDueSoon
	}
	var opened *WorkOrder
	if sch.Status != ScheduleOK && sch.AutoCreateWorkOrder && sch.CycleWorkOrderID == "" {
		w := s.scheduledWorkOrder(*sch, now)
		if err := tx.CreateWorkOrder(w); err != nil {
			return false, err
		}
		sch.CycleWorkOrderID = w.ID
		opened = &w
	}
	if event != "" {
		// The one place a cycle's transition is found: its alert opens here,
		// in this transaction, once per cycle.
		if err := s.emit(tx, sch.AccountID, event, now, *sch); err != nil {
			return false, err
		}
		if err := s.maintenanceAlert(tx, *sch, event, now); err != nil {
			return false, err
		}
	}
	if opened != nil {
		if err := s.emit(tx, sch.AccountID, EventWorkOrderCreated, now, *opened); err != nil {
			return false, err
		}
	}
	return !sameScheduleState(before, *sch), nil
}

// scheduledWorkOrder is the work order a due schedule opens by itself: its
// title is the schedule's name, its due date the schedule's, and its
// priority high when the schedule is overdue already.
func (s *Service) scheduledWorkOrder(sch Schedule, now time.Time) WorkOrder {
	w := WorkOrder{
		ID: NewID(PrefixWorkOrder), AccountID: sch.AccountID, VehicleID: sch.VehicleID, Title: sch.Name,
		Priority: PriorityMedium, Status: WorkOrderOpen, DueDate: sch.NextDueDate, ScheduleID: sch.ID,
		CreatedAt: now, UpdatedAt: now,
	}
	if sch.Status == ScheduleOverdue {
		w.Priority = PriorityHigh
	}
	if len([]rune(w.Title)) > MaxTitle {
		w.Title = string([]rune(w.Title)[:MaxTitle])
	}
	w.Description = "Opened automatically: the schedule " + sch.Name + " is " + strings.ReplaceAll(string(sch.Status), "_", " ") + "."
	return w
}

func sameScheduleState(a, b Schedule) bool {
	return a.NextDueDate == b.NextDueDate && samePtr(a.NextDueOdometerKm, b.NextDueOdometerKm) &&
		samePtr(a.NextDueEngineHours, b.NextDueEngineHours) && a.Status == b.Status &&
		a.NotifiedDueSoon == b.NotifiedDueSoon && a.NotifiedOverdue == b.NotifiedOverdue && a.CycleWorkOrderID == b.CycleWorkOrderID
}

// reviewVehicleSchedules reviews the schedules of a vehicle whose odometer
// or engine hours have moved, storing those that changed.
func (s *Service) reviewVehicleSchedules(tx scheduleTx, v *Vehicle, now time.Time) error {
	schs, err := tx.SchedulesOfVehicle(v.ID)
	if err != nil {
		return err
	}
	for i := range schs {
		changed, err := s.reviewSchedule(tx, &schs[i], readingsOfVehicle(v), now)
		if err != nil {
			return err
		}
		if changed {
			if err := tx.UpdateSchedule(schs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// CreateSchedule creates a schedule from the fields a client sets in in.
// The last service defaults to today at the vehicle's odometer (0 if it has
// none). A schedule due at once emits its event and opens its work order in
// the same transaction.
func (s *Service) CreateSchedule(ctx context.Context, p Principal, in Schedule) (Schedule, error) {
	if err := p.allow("CreateSchedule"); err != nil {
		return Schedule{}, err
	}
	now := s.Now()
	sch := Schedule{
		ID: NewID(PrefixSchedule), AccountID: p.Account.ID, VehicleID: in.VehicleID, Name: strings.TrimSpace(in.Name),
		IntervalDays: in.IntervalDays, IntervalKm: in.IntervalKm, LastServiceDate: in.LastServiceDate,
		LastServiceOdometerKm: in.LastServiceOdometerKm, AutoCreateWorkOrder: in.AutoCreateWorkOrder,
		IntervalEngineHours: in.IntervalEngineHours, LastServiceEngineHours: in.LastServiceEngineHours,
		Status: ScheduleOK, CreatedAt: now, UpdatedAt: now,
	}
	if sch.LastServiceDate == "" {
		sch.LastServiceDate = DateOf(now)
	}
	err := s.update(ctx, func(tx Tx) error {
		var val Validator
		v, err := s.vehicleOf(tx, sch.AccountID, sch.VehicleID, &val)
		if err != nil {
			return err
		}
		if sch.LastServiceOdometerKm == nil {
			sch.LastServiceOdometerKm = ptr(orZero(v.OdometerKm))
		}
		if sch.IntervalEngineHours != nil && sch.LastServiceEngineHours == nil {
			sch.LastServiceEngineHours = ptr(orZero(v.EngineHours))
		}
		sch.validate(&val, now)
		if err := val.Err(); err != nil {
			return err
		}
		if err := tx.CreateSchedule(sch); err != nil {
			return err
		}
		changed, err := s.reviewSchedule(tx, &sch, readingsOfVehicle(&v), now)
		if err != nil || !changed {
			return err
		}
		return tx.UpdateSchedule(sch)
	})
	if err != nil {
		return Schedule{}, err
	}
	return sch, nil
}

// Schedule returns one of the account's schedules. Its status is the one
// last computed: on every odometer change, schedule change and completed
// work order, and for dates by CheckMaintenance (every SweepEvery in Run).
func (s *Service) Schedule(ctx context.Context, p Principal, id string) (Schedule, error) {
	if err := p.allow("Schedule"); err != nil {
		return Schedule{}, err
	}
	var sch Schedule
	err := s.view(ctx, func(tx Tx) (err error) { sch, err = s.getSchedule(tx, p, id); return err })
	return sch, err
}

// ListSchedules lists the account's schedules in creation order.
func (s *Service) ListSchedules(ctx context.Context, p Principal, f ScheduleFilter, q ListQuery) (List[Schedule], error) {
	if err := p.allow("ListSchedules"); err != nil {
		return List[Schedule]{}, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return List[Schedule]{}, Errorf(CodeInvalidRequest, "status must be one of ok, due_soon, overdue.")
	}
	if f.VehicleID != "" && !ValidID(PrefixVehicle, f.VehicleID) {
		return List[Schedule]{}, Errorf(CodeInvalidRequest, "vehicle_id must be a vehicle id (veh_...).")
	}
	page, limit, err := q.page(PrefixSchedule, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Schedule]{}, err
	}
	var schs []Schedule
	err = s.view(ctx, func(tx Tx) (err error) { schs, err = tx.Schedules(p.Account.ID, f, page); return err })
	if err != nil {
		return List[Schedule]{}, err
	}
	return finish(schs, limit, func(sch Schedule) string { return sch.ID }), nil
}

// UpdateSchedule applies a merge patch to a schedule; the result is
// validated whole, and nothing changes if it is invalid. Changing
// last_service_date or last_service_odometer_km records a service done
// elsewhere and starts a new cycle; changing the intervals does not. The
// schedule is then reviewed as on creation.
func (s *Service) UpdateSchedule(ctx context.Context, p Principal, id string, patch SchedulePatch) (Schedule, error) {
	if err := p.allow("UpdateSchedule"); err != nil {
		return Schedule{}, err
	}
	now := s.Now()
	var sch Schedule
	err := s.update(ctx, func(tx Tx) (err error) {
		sch, err = s.getSchedule(tx, p, id)
		if err != nil {
			return err
		}
		old := sch
		set(&sch.Name, patch.Name)
		sch.Name = strings.TrimSpace(sch.Name)
		set(&sch.IntervalDays, patch.IntervalDays)
		set(&sch.IntervalKm, patch.IntervalKm)
		set(&sch.LastServiceDate, patch.LastServiceDate)
		set(&sch.LastServiceOdometerKm, patch.LastServiceOdometerKm)
		set(&sch.IntervalEngineHours, patch.IntervalEngineHours)
		set(&sch.LastServiceEngineHours, patch.LastServiceEngineHours)
		r, err := s.readingsOf(tx, sch)
		if err != nil {
			return err
		}
		if sch.IntervalEngineHours != nil && sch.LastServiceEngineHours == nil {
			sch.LastServiceEngineHours = ptr(orZero(r.hours))
		}
		var val Validator
		if patch.AutoCreateWorkOrder.Set {
			if patch.AutoCreateWorkOrder.Value == nil {
				val.Add("auto_create_work_order", "must be true or false")
			} else {
				sch.AutoCreateWorkOrder = *patch.AutoCreateWorkOrder.Value
			}
		}
		sch.validate(&val, now)
		if err := val.Err(); err != nil {
			return err
		}
		if sch.LastServiceDate != old.LastServiceDate || !samePtr(sch.LastServiceOdometerKm, old.LastServiceOdometerKm) ||
			!samePtr(sch.LastServiceEngineHours, old.LastServiceEngineHours) {
			sch.startCycle()
		}
		sch.UpdatedAt = now
		if _, err := s.reviewSchedule(tx, &sch, r, now); err != nil {
			return err
		}
		return tx.UpdateSchedule(sch)
	})
	if err != nil {
		return Schedule{}, err
	}
	return sch, nil
}

// DeleteSchedule deletes a schedule; work orders linked to it stay, with
// their schedule_id, as history.
func (s *Service) DeleteSchedule(ctx context.Context, p Principal, id string) (ScheduleDeleted, error) {
	if err := p.allow("DeleteSchedule"); err != nil {
		return ScheduleDeleted{}, err
	}
	err := s.update(ctx, func(tx Tx) error {
		sch, err := s.getSchedule(tx, p, id)
		if err != nil {
			return err
		}
		return tx.DeleteSchedule(sch.AccountID, sch.ID)
	})
	if err != nil {
		return ScheduleDeleted{}, err
	}
	return ScheduleDeleted{ScheduleID: id, Deleted: true}, nil
}

// CheckMaintenance finds schedules that the calendar has made due_soon or
// overdue with no other change, records their status and does what the
// transition owes (events, the automatic work order), once per cycle. It
// returns how many schedules changed. Odometer-driven changes happen as
// location reports arrive; this is for dates.
func (j Jobs) CheckMaintenance(ctx context.Context) (int, error) {
	s := j.s
	const batch = 500
	total := 0
	for {
		now := s.Now()
		today := DateOf(now)
		soonBy, _ := AddDays(today, DueSoonDays)
		n, changed := 0, 0
		err := s.update(ctx, func(tx Tx) error {
			changed = 0
			schs, err := tx.SchedulesToCheck(soonBy, today, batch)
			if err != nil {
				return err
			}
			n = len(schs)
			for i := range schs {
				r, err := s.readingsOf(tx, schs[i])
				if err != nil {
					return err
				}
				ok, err := s.reviewSchedule(tx, &schs[i], r, now)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				if err := tx.UpdateSchedule(schs[i]); err != nil {
					return err
				}
				changed++
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += changed
		// A full batch in which nothing changed cannot make progress.
		if n < batch || changed == 0 {
			return total, nil
		}
	}
}
