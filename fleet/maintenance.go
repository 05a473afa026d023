package fleet

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// WorkOrderStatus is where a work order stands; it moves only as the
// transition table allows (CheckWorkOrderTransition).
type WorkOrderStatus string

// Work order statuses.
const (
	WorkOrderOpen       WorkOrderStatus = "open"
	WorkOrderInProgress WorkOrderStatus = "in_progress"
	WorkOrderOnHold     WorkOrderStatus = "on_hold"
	WorkOrderCompleted  WorkOrderStatus = "completed"
	WorkOrderCancelled  WorkOrderStatus = "cancelled"
)

// WorkOrderStatuses lists every work order status, in the order of the
// contract.
var WorkOrderStatuses = []WorkOrderStatus{WorkOrderOpen, WorkOrderInProgress, WorkOrderOnHold, WorkOrderCompleted, WorkOrderCancelled}

// workOrderMoves is the work order state machine of the contract: the
// statuses each status may move to. completed and cancelled are final.
var workOrderMoves = map[WorkOrderStatus][]WorkOrderStatus{
	WorkOrderOpen:       {WorkOrderInProgress, WorkOrderOnHold, WorkOrderCompleted, WorkOrderCancelled},
	WorkOrderInProgress: {WorkOrderOnHold, WorkOrderCompleted, WorkOrderCancelled},
	WorkOrderOnHold:     {WorkOrderInProgress, WorkOrderCancelled},
	WorkOrderCompleted:  nil,
	WorkOrderCancelled:  nil,
}

// Valid reports whether s is a known status.
func (s WorkOrderStatus) Valid() bool {
	_, ok := workOrderMoves[s]
	return ok
}

// Final reports whether no move leaves s.
func (s WorkOrderStatus) Final() bool { return s.Valid() && len(workOrderMoves[s]) == 0 }

// WorkOrderMoves returns the statuses a work order in status from may move
// to (none for a final or unknown status).
func WorkOrderMoves(from WorkOrderStatus) []WorkOrderStatus {
	return slices.Clone(workOrderMoves[from])
}

// CheckWorkOrderTransition returns nil if a work order may move from from to
// to, and invalid_state_transition naming both otherwise. A "move" to the
// status a work order already has is not a transition: it is allowed and
// changes nothing (a PATCH repeating the current status is a no-op).
func CheckWorkOrderTransition(from, to WorkOrderStatus) error {
	if from == to && from.Valid() {
		return nil
	}
	if slices.Contains(workOrderMoves[from], to) {
		return nil
	}
	return Errorf(CodeInvalidStateTransition, "A work order cannot move from %s to %s.", from, to)
}

// Priority is how urgent a work order is.
type Priority string

// Priorities; medium is the default.
const (
	PriorityLow    Priority = "low"
	PriorityMedium Priority = "medium"
	PriorityHigh   Priority = "high"
	PriorityUrgent Priority = "urgent"
)

var priorities = []Priority{PriorityLow, PriorityMedium, PriorityHigh, PriorityUrgent}

// Priorities lists every priority, lowest first.
func Priorities() []Priority { return slices.Clone(priorities) }

// Valid reports whether p is a known priority.
func (p Priority) Valid() bool { return slices.Contains(priorities, p) }

// WorkOrder is a piece of maintenance work on a vehicle. Optional text
// fields are "" when unset (null on the wire); dates are "YYYY-MM-DD".
// A work order outlives its vehicle and its schedule, as history.
type WorkOrder struct {
	ID          string          `json:"work_order_id"`
	AccountID   string          `json:"-"`
	VehicleID   string          `json:"vehicle_id"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Priority    Priority        `json:"priority"`
	Status      WorkOrderStatus `json:"status"`
	DueDate     string          `json:"due_date"`
	AssignedTo  string          `json:"assigned_to"`
	OdometerKm  *float64        `json:"odometer_km"` // the reading at the service
	CostCents   *int64          `json:"cost_cents"`  // minor units of Currency
	Currency    string          `json:"currency"`    // ISO 4217, e.g. EUR
	ScheduleID  string          `json:"schedule_id"` // the schedule whose service this is
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
	CompletedAt *time.Time      `json:"completed_at"` // set when it moves to completed
}

// Limits on work order and schedule fields.
const (
	MaxTitle       = 200
	MaxDescription = 5000
	MaxIntervalDay = 3650
	MaxIntervalKm  = 1e6
)

// MarshalJSON writes the work order as the API shows it: unset optional
// fields are null.
func (w WorkOrder) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID          string          `json:"work_order_id"`
		VehicleID   string          `json:"vehicle_id"`
		Title       string          `json:"title"`
		Description *string         `json:"description"`
		Priority    Priority        `json:"priority"`
		Status      WorkOrderStatus `json:"status"`
		DueDate     *string         `json:"due_date"`
		AssignedTo  *string         `json:"assigned_to"`
		OdometerKm  *float64        `json:"odometer_km"`
		CostCents   *int64          `json:"cost_cents"`
		Currency    *string         `json:"currency"`
		ScheduleID  *string         `json:"schedule_id"`
		CreatedAt   time.Time       `json:"created_at"`
		UpdatedAt   time.Time       `json:"updated_at"`
		CompletedAt *time.Time      `json:"completed_at"`
	}{
		w.ID, w.VehicleID, w.Title, nullString(w.Description), w.Priority, w.Status, nullString(w.DueDate),
		nullString(w.AssignedTo), w.OdometerKm, w.CostCents, nullString(w.Currency), nullString(w.ScheduleID),
		w.CreatedAt, w.UpdatedAt, w.CompletedAt,
	})
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Validate checks the fields a client sets, naming every bad one.
func (w *WorkOrder) Validate() error {
	var val Validator
	w.validate(&val)
	return val.Err()
}

func (w *WorkOrder) validate(val *Validator) {
	val.Check(w.VehicleID != "", "vehicle_id", "is required")
	val.Check(strings.TrimSpace(w.Title) != "" && utf8.RuneCountInString(w.Title) <= MaxTitle, "title", "is required, 1 to %d characters", MaxTitle)
	val.Text("title", w.Title)
	val.Check(utf8.RuneCountInString(w.Description) <= MaxDescription, "description", "must be at most %d characters", MaxDescription)
	val.MultilineText("description", w.Description)
	val.Check(w.Priority.Valid(), "priority", "must be one of low, medium, high, urgent")
	val.Check(w.Status.Valid(), "status", "must be one of open, in_progress, on_hold, completed, cancelled")
	if w.DueDate != "" {
		val.Check(ValidDate(w.DueDate), "due_date", "must be a date, YYYY-MM-DD")
	}
	val.Check(utf8.RuneCountInString(w.AssignedTo) <= MaxTextField, "assigned_to", "must be at most %d characters", MaxTextField)
	val.Text("assigned_to", w.AssignedTo)
	if w.OdometerKm != nil {
		val.Check(*w.OdometerKm >= 0 && *w.OdometerKm < 1e8, "odometer_km", "must be between 0 and 100000000")
	}
	if w.CostCents != nil {
		val.Check(*w.CostCents >= 0, "cost_cents", "must not be negative")
	}
	switch {
	case w.Currency != "":
		val.Check(validCurrency(w.Currency), "currency", "must be an ISO 4217 code: 3 upper-case letters, e.g. EUR")
	case w.CostCents != nil:
		val.Add("currency", "is required when cost_cents is set")
	}
}

func validCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// WorkOrderFilter selects work orders in a list; zero fields match any.
type WorkOrderFilter struct {
	VehicleID string
	Status    WorkOrderStatus
	Priority  Priority
}

// Match reports whether w passes the filter; stores use it so that the rule
// is written once.
func (f WorkOrderFilter) Match(w *WorkOrder) bool {
	return (f.VehicleID == "" || w.VehicleID == f.VehicleID) &&
		(f.Status == "" || w.Status == f.Status) &&
		(f.Priority == "" || w.Priority == f.Priority)
}

// WorkOrderStatusChange is the data of a work_order.status_changed event.
type WorkOrderStatusChange struct {
	WorkOrderID string          `json:"work_order_id"`
	VehicleID   string          `json:"vehicle_id"`
	From        WorkOrderStatus `json:"from"`
	To          WorkOrderStatus `json:"to"`
	At          time.Time       `json:"at"`
}

// ScheduleStatus says how close a schedule's next service is.
type ScheduleStatus string

// Schedule statuses, from least to most due.
const (
	ScheduleOK      ScheduleStatus = "ok"
	ScheduleDueSoon ScheduleStatus = "due_soon"
	ScheduleOverdue ScheduleStatus = "overdue"
)

var scheduleStatuses = []ScheduleStatus{ScheduleOK, ScheduleDueSoon, ScheduleOverdue}

// ScheduleStatuses lists every schedule status, from least to most due.
func ScheduleStatuses() []ScheduleStatus { return slices.Clone(scheduleStatuses) }

// Valid reports whether s is a known status.
func (s ScheduleStatus) Valid() bool { return slices.Contains(scheduleStatuses, s) }

func (s ScheduleStatus) rank() int {
	switch s {
	case ScheduleDueSoon:
		return 1
	case ScheduleOverdue:
		return 2
	}
	return 0
}

// How close a service must be for its schedule to be due_soon.
const (
	DueSoonDays = 7
	DueSoonKm   = 500.0
	// DueSoonEngineHoursShare: a schedule by engine hours is due soon
	// within this share of its interval.
	DueSoonEngineHoursShare = 0.1
	// MaxIntervalEngineHours bounds interval_engine_hours.
	MaxIntervalEngineHours = 100_000.0
)

// Schedule is a recurring service of a vehicle: every IntervalDays days
// and/or every IntervalKm kilometres since the last service. A service
// cycle runs from one recorded service to the next; the due_soon and
// overdue events (and the automatic work order) happen at most once per
// cycle.
type Schedule struct {
	ID           string   `json:"schedule_id"`
	AccountID    string   `json:"-"`
	VehicleID    string   `json:"vehicle_id"`
	Name         string   `json:"name"`
	IntervalDays *int     `json:"interval_days"`
	IntervalKm   *float64 `json:"interval_km"`
	// IntervalEngineHours is due every that many engine hours (API.md §6,
	// §14); LastServiceEngineHours the vehicle's engine hours at the last
	// service (defaults to the vehicle's, 0 if unknown; nil without the
	// interval), NextDueEngineHours computed.
	IntervalEngineHours    *float64 `json:"interval_engine_hours"`
	LastServiceEngineHours *float64 `json:"last_service_engine_hours"`
	// LastServiceDate (YYYY-MM-DD) and LastServiceOdometerKm start the
	// current cycle. On creation they default to the creation date and the
	// vehicle's odometer (0 if it has none); once stored, both are set.
	LastServiceDate       string   `json:"last_service_date"`
	LastServiceOdometerKm *float64 `json:"last_service_odometer_km"`
	// AutoCreateWorkOrder opens one linked work order per cycle when the
	// schedule becomes due_soon (or overdue).
	AutoCreateWorkOrder bool `json:"auto_create_work_order"`
	// Computed by EvaluateSchedule: NextDueDate is "" without IntervalDays,
	// NextDueOdometerKm nil without IntervalKm.
	NextDueDate        string         `json:"next_due_date"`
	NextDueOdometerKm  *float64       `json:"next_due_odometer_km"`
	NextDueEngineHours *float64       `json:"next_due_engine_hours"`
	Status             ScheduleStatus `json:"status"`
	CreatedAt          time.Time      `json:"created_at"`
	UpdatedAt          time.Time      `json:"updated_at"`

	// Bookkeeping of the current cycle, never shown: whether its due_soon
	// and overdue events were emitted, and the work order opened for it.
	NotifiedDueSoon  bool   `json:"-"`
	NotifiedOverdue  bool   `json:"-"`
	CycleWorkOrderID string `json:"-"`
}

// Clone returns a copy of s that shares no memory with it.
func (s Schedule) Clone() Schedule {
	s.IntervalDays, s.IntervalKm = clonePtr(s.IntervalDays), clonePtr(s.IntervalKm)
	s.IntervalEngineHours, s.LastServiceEngineHours = clonePtr(s.IntervalEngineHours), clonePtr(s.LastServiceEngineHours)
	s.LastServiceOdometerKm = clonePtr(s.LastServiceOdometerKm)
	s.NextDueOdometerKm, s.NextDueEngineHours = clonePtr(s.NextDueOdometerKm), clonePtr(s.NextDueEngineHours)
	return s
}

// MarshalJSON writes the schedule as the API shows it.
func (s Schedule) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID                     string         `json:"schedule_id"`
		VehicleID              string         `json:"vehicle_id"`
		Name                   string         `json:"name"`
		IntervalDays           *int           `json:"interval_days"`
		IntervalKm             *float64       `json:"interval_km"`
		IntervalEngineHours    *float64       `json:"interval_engine_hours"`
		LastServiceDate        string         `json:"last_service_date"`
		LastServiceOdometerKm  float64        `json:"last_service_odometer_km"`
		LastServiceEngineHours *float64       `json:"last_service_engine_hours"`
		AutoCreateWorkOrder    bool           `json:"auto_create_work_order"`
		NextDueDate            *string        `json:"next_due_date"`
		NextDueOdometerKm      *float64       `json:"next_due_odometer_km"`
		NextDueEngineHours     *float64       `json:"next_due_engine_hours"`
		Status                 ScheduleStatus `json:"status"`
		CreatedAt              time.Time      `json:"created_at"`
		UpdatedAt              time.Time      `json:"updated_at"`
	}{
		s.ID, s.VehicleID, s.Name, s.IntervalDays, s.IntervalKm, s.IntervalEngineHours, s.LastServiceDate, orZero(s.LastServiceOdometerKm),
		s.LastServiceEngineHours, s.AutoCreateWorkOrder, nullString(s.NextDueDate), s.NextDueOdometerKm, s.NextDueEngineHours,
		s.Status, s.CreatedAt, s.UpdatedAt,
	})
}

func orZero(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// Validate checks the fields a client sets at time now, naming every bad
// one. The last service must not be in the future.
func (s *Schedule) Validate(now time.Time) error {
	var val Validator
	s.validate(&val, now)
	return val.Err()
}

// validate checks the schedule into val, once its numbers are stored
// without -0 (unsignedZero).
func (s *Schedule) validate(val *Validator, now time.Time) {
	s.IntervalKm, s.LastServiceOdometerKm = unsignedZeroPtr(s.IntervalKm), unsignedZeroPtr(s.LastServiceOdometerKm)
	s.IntervalEngineHours, s.LastServiceEngineHours = unsignedZeroPtr(s.IntervalEngineHours), unsignedZeroPtr(s.LastServiceEngineHours)
	val.Check(s.VehicleID != "", "vehicle_id", "is required")
	val.Check(strings.TrimSpace(s.Name) != "" && utf8.RuneCountInString(s.Name) <= MaxVehicleName, "name", "is required, 1 to %d characters", MaxVehicleName)
	val.Text("name", s.Name)
	if s.IntervalDays == nil && s.IntervalKm == nil && s.IntervalEngineHours == nil {
		const msg = "at least one of interval_days, interval_km and interval_engine_hours is required"
		val.Add("interval_days", msg)
		val.Add("interval_km", msg)
		val.Add("interval_engine_hours", msg)
	}
	if s.IntervalEngineHours != nil {
		val.Check(*s.IntervalEngineHours > 0 && *s.IntervalEngineHours <= MaxIntervalEngineHours, "interval_engine_hours",
			"must be above 0 and at most %d", int(MaxIntervalEngineHours))
	}
	if h := s.LastServiceEngineHours; h != nil {
		val.Check(*h >= 0 && *h < 1e7, "last_service_engine_hours", "must be between 0 and 10000000")
	}
	if s.IntervalDays != nil {
		val.Check(*s.IntervalDays >= 1 && *s.IntervalDays <= MaxIntervalDay, "interval_days", "must be between 1 and %d", MaxIntervalDay)
	}
	if s.IntervalKm != nil {
		val.Check(*s.IntervalKm > 0 && *s.IntervalKm <= MaxIntervalKm, "interval_km", "must be above 0 and at most %d", int(MaxIntervalKm))
	}
	switch {
	case s.LastServiceDate == "":
		val.Add("last_service_date", "is required")
	case !ValidDate(s.LastServiceDate):
		val.Add("last_service_date", "must be a date, YYYY-MM-DD")
	case s.LastServiceDate > DateOf(now):
		val.Add("last_service_date", "must not be in the future")
	}
	switch o := s.LastServiceOdometerKm; {
	case o == nil:
		val.Add("last_service_odometer_km", "is required")
	case *o < 0 || *o >= 1e8:
		val.Add("last_service_odometer_km", "must be between 0 and 100000000")
	}
}

// EvaluateSchedule is the schedule due computation: it returns s with
// NextDueDate, NextDueOdometerKm and Status computed from its intervals, its
// last service, the vehicle's odometer (nil counts as 0) and the date of now
// (UTC).
//
// The schedule is overdue when today is after the next due date or the
// odometer is past the next due reading; due_soon when the due date is at
// most DueSoonDays away (the due date itself included) or the odometer is
// within DueSoonKm of the due reading (the reading itself included); ok
// otherwise. With both intervals, the more due of the two counts.
//
// A schedule by engine hours (IntervalEngineHours) counts the vehicle's as
// 0 here: EvaluateScheduleWithHours takes them.
func EvaluateSchedule(s Schedule, odometerKm *float64, now time.Time) Schedule {
	return EvaluateScheduleWithHours(s, odometerKm, nil, now)
}

// EvaluateScheduleWithHours is EvaluateSchedule with the vehicle's engine
// hours (nil counts as 0) too: by IntervalEngineHours, the schedule is
// overdue past the next due engine hours, due_soon within a tenth of the
// interval of them (DueSoonEngineHoursShare).
func EvaluateScheduleWithHours(s Schedule, odometerKm, engineHours *float64, now time.Time) Schedule {
	s.NextDueDate, s.NextDueOdometerKm, s.NextDueEngineHours = "", nil, nil
	status := ScheduleOK
	worsen := func(to ScheduleStatus) {
		if to.rank() > status.rank() {
			status = to
		}
	}
	if s.IntervalDays != nil {
		if next, ok := AddDays(s.LastServiceDate, *s.IntervalDays); ok {
			s.NextDueDate = next
			today := DateOf(now)
			soon, _ := AddDays(next, -DueSoonDays)
			switch {
			case today > next:
				worsen(ScheduleOverdue)
			case today >= soon:
				worsen(ScheduleDueSoon)
			}
		}
	}
	if s.IntervalKm != nil {
		next := roundKm(orZero(s.LastServiceOdometerKm) + *s.IntervalKm)
		s.NextDueOdometerKm = &next
		odo := orZero(odometerKm)
		switch {
		case odo > next:
			worsen(ScheduleOverdue)
		case odo >= next-DueSoonKm:
			worsen(ScheduleDueSoon)
		}
	}
	if s.IntervalEngineHours != nil {
		next := math.Round((orZero(s.LastServiceEngineHours)+*s.IntervalEngineHours)*100) / 100
		s.NextDueEngineHours = &next
		h := orZero(engineHours)
		switch {
		case h > next:
			worsen(ScheduleOverdue)
		case h >= next-DueSoonEngineHoursShare**s.IntervalEngineHours:
			worsen(ScheduleDueSoon)
		}
	}
	s.Status = status
	return s
}

// roundKm keeps a distance to the metre, so that sums of readings show no
// floating-point noise.
func roundKm(f float64) float64 { return math.Round(f*1000) / 1000 }

// startCycle begins a new service cycle: nothing of it is notified yet.
func (s *Schedule) startCycle() {
	s.NotifiedDueSoon, s.NotifiedOverdue, s.CycleWorkOrderID = false, false, ""
}

// ScheduleFilter selects schedules in a list; zero fields match any.
type ScheduleFilter struct {
	VehicleID string
	Status    ScheduleStatus
}

// Match reports whether s passes the filter.
func (f ScheduleFilter) Match(s *Schedule) bool {
	return (f.VehicleID == "" || s.VehicleID == f.VehicleID) && (f.Status == "" || s.Status == f.Status)
}

// ScheduleDeleted is the answer to a schedule's deletion.
type ScheduleDeleted struct {
	ScheduleID string `json:"schedule_id"`
	Deleted    bool   `json:"deleted"`
}

// DateOf returns the UTC calendar date of t as "YYYY-MM-DD". Maintenance
// dates are UTC days.
func DateOf(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// ValidDate reports whether s is a calendar date written "YYYY-MM-DD".
func ValidDate(s string) bool {
	t, err := time.Parse(time.DateOnly, s)
	return err == nil && t.Format(time.DateOnly) == s && t.Year() >= 1900
}

// AddDays returns the date n days after date (before, for negative n); ok
// is false if date is not a valid date.
func AddDays(date string, n int) (string, bool) {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return "", false
	}
	return t.AddDate(0, 0, n).Format(time.DateOnly), true
}
