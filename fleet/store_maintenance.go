package fleet

// MaintenanceTx is the maintenance area's part of a Tx: work orders and
// schedules.
type MaintenanceTx interface {
	// CreateWorkOrder stores a new work order. Returns conflict if the id
	// exists. The vehicle is not checked: work orders outlive their vehicle.
	CreateWorkOrder(w WorkOrder) error
	// WorkOrder returns not_found if the account has no such work order.
	WorkOrder(accountID, id string) (WorkOrder, error)
	// WorkOrders returns the account's work orders that f.Match, in id
	// order, after p.After, at most p.Limit of them.
	WorkOrders(accountID string, f WorkOrderFilter, p Page) ([]WorkOrder, error)
	// UpdateWorkOrder replaces a stored work order (every field but ID,
	// AccountID, VehicleID and CreatedAt). Returns not_found if the account
	// has no such work order.
	UpdateWorkOrder(w WorkOrder) error

	// CreateSchedule stores a new schedule, bookkeeping fields included.
	// Returns conflict if the id exists, not_found if the account has no
	// vehicle s.VehicleID.
	CreateSchedule(s Schedule) error
	// Schedule returns not_found if the account has no such schedule.
	Schedule(accountID, id string) (Schedule, error)
	// Schedules returns the account's schedules that f.Match, in id order,
	// after p.After, at most p.Limit of them.
	Schedules(accountID string, f ScheduleFilter, p Page) ([]Schedule, error)
	// UpdateSchedule replaces a stored schedule (every field but ID,
	// AccountID, VehicleID and CreatedAt). Returns not_found if the account
	// has no such schedule.
	UpdateSchedule(s Schedule) error
	// DeleteSchedule deletes a schedule; work orders linked to it stay.
	// Returns not_found if the account has no such schedule.
	DeleteSchedule(accountID, id string) error
	// SchedulesOfVehicle returns the vehicle's schedules in id order (none
	// for an unknown vehicle).
	SchedulesOfVehicle(vehicleID string) ([]Schedule, error)
	// SchedulesToCheck returns schedules, of any account, whose stored
	// Status the calendar may have overtaken: those with Status ok and a
	// NextDueDate <= dueSoonBy, and those with Status other than overdue and
	// a NextDueDate < overdueBefore (dates compare as "YYYY-MM-DD" strings;
	// an empty NextDueDate never matches); at most limit, earliest
	// NextDueDate first, then in id order. In a store shared by several
	// processes, rows returned to one Update are not returned to another
	// running at the same time (SKIP LOCKED).
	SchedulesToCheck(dueSoonBy, overdueBefore string, limit int) ([]Schedule, error)
}
