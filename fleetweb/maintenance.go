package fleetweb

import (
	"cmp"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// The Maintenance page: the account's work orders, newest first, by
// status, each with the moves the work-order state machine allows; its
// service schedules with when each is due next; and, for whom may
// (maintenance:write: an admin or a manager), the forms that open a work
// order and add a schedule. Each goes through the maintenance use cases
// with the person's principal.

// maxOrdersShown is how many work orders the page lists, newest first.
const maxOrdersShown = 200

type orderRow struct {
	Order       fleet.WorkOrder
	VehicleName string
	Moves       []fleet.WorkOrderStatus
}

type serviceScheduleRow struct {
	Schedule    fleet.Schedule
	VehicleName string
}

// orderForm and scheduleForm are the forms as typed, with their mistakes
// by field. The add forms and the edit pages share their fields
// (templates/maintenanceforms.html).
type orderForm struct {
	VehicleID, Title, Description, Priority, DueDate, AssignedTo, OdometerKm, Cost, Currency string
	Errors                                                                                   map[string]string
}

// Priorities are the priorities the form offers.
func (orderForm) Priorities() []fleet.Priority { return fleet.Priorities() }

func readOrderForm(r *http.Request) orderForm {
	v := r.PostFormValue
	return orderForm{VehicleID: v("vehicle_id"), Title: v("title"), Description: v("description"), Priority: v("priority"), DueDate: v("due_date"),
		AssignedTo: v("assigned_to"), OdometerKm: v("odometer_km"), Cost: v("cost"), Currency: strings.ToUpper(strings.TrimSpace(v("currency")))}
}

func orderFormOf(o fleet.WorkOrder) orderForm {
	f := orderForm{VehicleID: o.VehicleID, Title: o.Title, Description: o.Description, Priority: string(o.Priority), DueDate: o.DueDate,
		AssignedTo: o.AssignedTo, OdometerKm: numText(o.OdometerKm), Currency: o.Currency}
	if o.CostCents != nil {
		f.Cost = formatAmount(*o.CostCents, o.Currency)
	}
	return f
}

// order is the form as a work order: its numbers read, or the mistakes
// in them.
func (f orderForm) order() (fleet.WorkOrder, error) {
	var n numbers
	o := fleet.WorkOrder{VehicleID: f.VehicleID, Title: f.Title, Description: f.Description, Priority: fleet.Priority(f.Priority),
		DueDate: f.DueDate, AssignedTo: f.AssignedTo, Currency: f.Currency,
		OdometerKm: n.decimal("odometer_km", f.OdometerKm, "must be a number of kilometres, such as 120500")}
	cost, ok := parseAmount(f.Cost, f.Currency)
	if !ok {
		n.add("cost_cents", "must be an amount such as 120.50, with at most "+strconv.Itoa(minorDigits(f.Currency))+" decimals")
	}
	o.CostCents = cost
	return o, n.err()
}

// patch is the work order's form as a merge patch: every field is sent,
// an empty one cleared.
func (f orderForm) patch() (fleet.WorkOrderPatch, error) {
	o, err := f.order()
	return fleet.WorkOrderPatch{Title: fleet.Some(o.Title), Description: fleet.Some(o.Description), Priority: fleet.Some(o.Priority),
		DueDate: fleet.Some(o.DueDate), AssignedTo: fleet.Some(o.AssignedTo), OdometerKm: fleet.Some(o.OdometerKm),
		CostCents: fleet.Some(o.CostCents), Currency: fleet.Some(o.Currency)}, err
}

type scheduleForm struct {
	VehicleID, Name, IntervalDays, IntervalKm, IntervalEngineHours string
	LastServiceDate, LastServiceOdometerKm, LastServiceEngineHours string
	Auto                                                           bool
	Editing                                                        bool // a stored schedule's form: its last service is required
	Errors                                                         map[string]string
}

func readScheduleForm(r *http.Request) scheduleForm {
	v := r.PostFormValue
	return scheduleForm{VehicleID: v("vehicle_id"), Name: v("name"), IntervalDays: v("interval_days"), IntervalKm: v("interval_km"),
		IntervalEngineHours: v("interval_engine_hours"), LastServiceDate: v("last_service_date"), LastServiceOdometerKm: v("last_service_odometer_km"),
		LastServiceEngineHours: v("last_service_engine_hours"), Auto: v("auto_create_work_order") != ""}
}

func scheduleFormOf(s fleet.Schedule) scheduleForm {
	f := scheduleForm{VehicleID: s.VehicleID, Name: s.Name, IntervalKm: numText(s.IntervalKm), IntervalEngineHours: numText(s.IntervalEngineHours),
		LastServiceDate: s.LastServiceDate, LastServiceOdometerKm: numText(s.LastServiceOdometerKm),
		LastServiceEngineHours: numText(s.LastServiceEngineHours), Auto: s.AutoCreateWorkOrder, Editing: true}
	if s.IntervalDays != nil {
		f.IntervalDays = strconv.Itoa(*s.IntervalDays)
	}
	return f
}

// schedule is the form as a schedule: its numbers read, or the mistakes
// in them.
func (f scheduleForm) schedule() (fleet.Schedule, error) {
	var n numbers
	const km, hours = "must be a number of kilometres, such as 15000", "must be a number of hours, such as 500"
	s := fleet.Schedule{VehicleID: f.VehicleID, Name: f.Name, LastServiceDate: f.LastServiceDate, AutoCreateWorkOrder: f.Auto,
		IntervalDays:           n.whole("interval_days", f.IntervalDays, "must be a whole number of days, such as 180"),
		IntervalKm:             n.decimal("interval_km", f.IntervalKm, km),
		IntervalEngineHours:    n.decimal("interval_engine_hours", f.IntervalEngineHours, hours),
		LastServiceOdometerKm:  n.decimal("last_service_odometer_km", f.LastServiceOdometerKm, km),
		LastServiceEngineHours: n.decimal("last_service_engine_hours", f.LastServiceEngineHours, hours)}
	return s, n.err()
}

// patch is the schedule's form as a merge patch: every field is sent,
// an empty one cleared.
func (f scheduleForm) patch() (fleet.SchedulePatch, error) {
	s, err := f.schedule()
	return fleet.SchedulePatch{Name: fleet.Some(s.Name), IntervalDays: fleet.Some(s.IntervalDays), IntervalKm: fleet.Some(s.IntervalKm),
		LastServiceDate: fleet.Some(s.LastServiceDate), LastServiceOdometerKm: fleet.Some(s.LastServiceOdometerKm),
		AutoCreateWorkOrder: fleet.Some(&s.AutoCreateWorkOrder), IntervalEngineHours: fleet.Some(s.IntervalEngineHours),
		LastServiceEngineHours: fleet.Some(s.LastServiceEngineHours)}, err
}

// numbers reads a form's optional numbers: an empty field is none, and
// one that is not a number is a mistake said beside its field.
type numbers struct{ bad []fleet.FieldError }

func (n *numbers) add(field, msg string) {
	n.bad = append(n.bad, fleet.FieldError{Field: field, Message: msg})
}

func (n *numbers) decimal(field, text, msg string) *float64 {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		n.add(field, msg)
		return nil
	}
	return &v
}

func (n *numbers) whole(field, text, msg string) *int {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil
	}
	v, err := strconv.Atoi(t)
	if err != nil {
		n.add(field, msg)
		return nil
	}
	return &v
}

func (n *numbers) err() error {
	if n.bad == nil {
		return nil
	}
	return &fleet.Error{Code: fleet.CodeValidation, Message: "Please correct the form.", Details: n.bad}
}

// numText writes an optional number as a form shows it: "" for none.
func numText(f *float64) string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(*f, 'f', -1, 64)
}

type maintenanceData struct {
	Status     string // the tab: a work order status, or "" for the open ones
	Tabs       []fleet.WorkOrderStatus
	Orders     []orderRow
	MoreOrders bool
	Schedules  []serviceScheduleRow
	Vehicles   []vehicleChoice
	More       bool // the account has more vehicles than Vehicles lists
	Priorities []fleet.Priority
	Order      orderForm
	Schedule   scheduleForm
}

func (h *Handler) maintenancePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "Maintenance", Nav: "maintenance", User: &us}
	if n, ok := h.takeNotice(r); ok {
		if s, ok := n.(string); ok {
			p.Notice = s
		}
	}
	// ?vehicle_id= (a vehicle page's Open a work order) chooses the vehicle.
	vid := r.URL.Query().Get("vehicle_id")
	h.showMaintenance(w, r, us, http.StatusOK, p, orderForm{Priority: string(fleet.PriorityMedium), VehicleID: vid}, scheduleForm{VehicleID: vid})
}

func (h *Handler) showMaintenance(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, of orderForm, sf scheduleForm) {
	ctx := r.Context()
	pr := us.Principal()
	d := maintenanceData{Status: r.URL.Query().Get("status"), Tabs: fleet.WorkOrderStatuses, Priorities: fleet.Priorities(), Order: of, Schedule: sf}
	if d.Status != "" && !fleet.WorkOrderStatus(d.Status).Valid() {
		d.Status = ""
	}
	filter := fleet.WorkOrderFilter{Status: fleet.WorkOrderStatus(d.Status)}
	if d.Status == "" {
		filter.Status = fleet.WorkOrderOpen
	}
	orders, more, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.WorkOrder], error) {
		return h.svc.ListWorkOrders(ctx, pr, filter, q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	slices.Reverse(orders) // newest first
	d.MoreOrders = more || len(orders) > maxOrdersShown
	orders = orders[:min(len(orders), maxOrdersShown)]
	names := map[string]string{}
	name := func(id string) string {
		n, err := h.vehicleName(ctx, pr, id, names)
		if err != nil {
			return "a deleted vehicle"
		}
		return n
	}
	for _, o := range orders {
		d.Orders = append(d.Orders, orderRow{Order: o, VehicleName: name(o.VehicleID), Moves: fleet.WorkOrderMoves(o.Status)})
	}
	schedules, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Schedule], error) {
		return h.svc.ListSchedules(ctx, pr, fleet.ScheduleFilter{}, q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	for _, s := range schedules {
		d.Schedules = append(d.Schedules, serviceScheduleRow{Schedule: s, VehicleName: name(s.VehicleID)})
	}
	if us.Can(fleet.PermMaintenanceWrite) {
		if d.Vehicles, d.More, err = h.vehicleChoices(ctx, pr); err != nil {
			h.fail(w, r, &us, err)
			return
		}
		d.Vehicles = h.withChosen(ctx, pr, d.Vehicles, of.VehicleID, sf.VehicleID)
	}
	p.Data = d
	h.render(w, status, "maintenance", p)
}

// addWorkOrder opens a work order with the CreateWorkOrder use case.
func (h *Handler) addWorkOrder(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	f := readOrderForm(r)
	o, err := f.order()
	if err == nil {
		o, err = h.svc.CreateWorkOrder(r.Context(), us.Principal(), o)
	}
	if err != nil {
		p := page{Title: "Maintenance", Nav: "maintenance", User: &us}
		errorPage(&p, err)
		f.Errors = errorsOf(p)
		h.showMaintenance(w, r, us, statusOf(err), p, f, scheduleForm{})
		return
	}
	http.Redirect(w, r, "/maintenance?notice="+h.noticeOnce(r, "The work order "+o.Title+" is open.")+"#order-"+o.ID, http.StatusSeeOther)
}

type workOrderData struct {
	Order       fleet.WorkOrder
	VehicleName string
	Cost        string // with its currency, "" for none
	Form        orderForm
}

// workOrderPage shows a work order; an admin or a manager changes it
// here.
func (h *Handler) workOrderPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	o, err := h.svc.WorkOrder(r.Context(), us.Principal(), r.PathValue("work_order_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Title: o.Title, Nav: "maintenance", User: &us}
	if n, ok := h.takeNotice(r); ok {
		if s, ok := n.(string); ok {
			p.Notice = s
		}
	}
	h.showWorkOrder(w, r, us, http.StatusOK, p, o, orderFormOf(o))
}

func (h *Handler) showWorkOrder(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, o fleet.WorkOrder, f orderForm) {
	d := workOrderData{Order: o, Form: f}
	d.Form.Errors = errorsOf(p)
	var err error
	if d.VehicleName, err = h.vehicleName(r.Context(), us.Principal(), o.VehicleID, map[string]string{}); err != nil {
		d.VehicleName = "a deleted vehicle"
	}
	if o.CostCents != nil {
		d.Cost = formatAmount(*o.CostCents, o.Currency) + " " + o.Currency
	}
	p.Data = d
	h.render(w, status, "workorder", p)
}

// saveWorkOrder changes a work order's fields with the UpdateWorkOrder
// use case: every field of the form, an empty one cleared. Its status
// moves with the list's buttons.
func (h *Handler) saveWorkOrder(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	id := r.PathValue("work_order_id")
	f := readOrderForm(r)
	patch, err := f.patch()
	var o fleet.WorkOrder
	if err == nil {
		o, err = h.svc.UpdateWorkOrder(ctx, us.Principal(), id, patch)
	}
	if err != nil {
		old, gerr := h.svc.WorkOrder(ctx, us.Principal(), id)
		if gerr != nil || fleet.ErrorCode(err) != fleet.CodeValidation {
			h.fail(w, r, &us, cmp.Or(gerr, err))
			return
		}
		p := page{Title: old.Title, Nav: "maintenance", User: &us}
		errorPage(&p, err)
		h.showWorkOrder(w, r, us, statusOf(err), p, old, f)
		return
	}
	http.Redirect(w, r, "/maintenance/work-orders/"+o.ID+"?notice="+h.noticeOnce(r, "The work order "+o.Title+" is saved."), http.StatusSeeOther)
}

// moveWorkOrder moves a work order to another status, as the state
// machine allows (UpdateWorkOrder).
func (h *Handler) moveWorkOrder(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	to := fleet.WorkOrderStatus(r.PostFormValue("status"))
	o, err := h.svc.UpdateWorkOrder(r.Context(), us.Principal(), r.PathValue("work_order_id"), fleet.WorkOrderPatch{Status: fleet.Some(to)})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	back := url.Values{"notice": {h.noticeOnce(r, "The work order "+o.Title+" is "+strings.ReplaceAll(string(o.Status), "_", " ")+" now.")}}
	if s := r.PostFormValue("tab"); fleet.WorkOrderStatus(s).Valid() {
		back.Set("status", s)
	}
	http.Redirect(w, r, "/maintenance?"+back.Encode(), http.StatusSeeOther)
}

// addSchedule adds a service schedule with the CreateSchedule use case.
func (h *Handler) addSchedule(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	f := readScheduleForm(r)
	s, err := f.schedule()
	if err == nil {
		s, err = h.svc.CreateSchedule(r.Context(), us.Principal(), s)
	}
	if err != nil {
		p := page{Title: "Maintenance", Nav: "maintenance", User: &us}
		errorPage(&p, err)
		f.Errors = errorsOf(p)
		h.showMaintenance(w, r, us, statusOf(err), p, orderForm{Priority: string(fleet.PriorityMedium)}, f)
		return
	}
	http.Redirect(w, r, "/maintenance?notice="+h.noticeOnce(r, "The schedule "+s.Name+" is added.")+"#schedule-"+s.ID, http.StatusSeeOther)
}

type scheduleData struct {
	Schedule    fleet.Schedule
	VehicleName string
	Form        scheduleForm
}

// schedulePage shows a service schedule; an admin or a manager changes
// it here.
func (h *Handler) schedulePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	s, err := h.svc.Schedule(r.Context(), us.Principal(), r.PathValue("schedule_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Title: s.Name, Nav: "maintenance", User: &us}
	if n, ok := h.takeNotice(r); ok {
		if t, ok := n.(string); ok {
			p.Notice = t
		}
	}
	h.showSchedule(w, r, us, http.StatusOK, p, s, scheduleFormOf(s))
}

func (h *Handler) showSchedule(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, s fleet.Schedule, f scheduleForm) {
	d := scheduleData{Schedule: s, Form: f}
	d.Form.Errors, d.Form.Editing = errorsOf(p), true
	var err error
	if d.VehicleName, err = h.vehicleName(r.Context(), us.Principal(), s.VehicleID, map[string]string{}); err != nil {
		d.VehicleName = "a deleted vehicle"
	}
	p.Data = d
	h.render(w, status, "schedule", p)
}

// saveSchedule changes a service schedule with the UpdateSchedule use
// case: every field of the form, an empty one cleared. A changed last
// service starts a new cycle.
func (h *Handler) saveSchedule(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	id := r.PathValue("schedule_id")
	f := readScheduleForm(r)
	patch, err := f.patch()
	var s fleet.Schedule
	if err == nil {
		s, err = h.svc.UpdateSchedule(ctx, us.Principal(), id, patch)
	}
	if err != nil {
		old, gerr := h.svc.Schedule(ctx, us.Principal(), id)
		if gerr != nil || fleet.ErrorCode(err) != fleet.CodeValidation {
			h.fail(w, r, &us, cmp.Or(gerr, err))
			return
		}
		p := page{Title: old.Name, Nav: "maintenance", User: &us}
		errorPage(&p, err)
		h.showSchedule(w, r, us, statusOf(err), p, old, f)
		return
	}
	http.Redirect(w, r, "/maintenance/schedules/"+s.ID+"?notice="+h.noticeOnce(r, "The schedule "+s.Name+" is saved."), http.StatusSeeOther)
}

// deleteSchedule deletes a service schedule (DeleteSchedule); its work
// orders stay, as history.
func (h *Handler) deleteSchedule(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	s, err := h.svc.Schedule(ctx, us.Principal(), r.PathValue("schedule_id"))
	if err == nil {
		_, err = h.svc.DeleteSchedule(ctx, us.Principal(), s.ID)
	}
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	http.Redirect(w, r, "/maintenance?notice="+h.noticeOnce(r, "The schedule "+s.Name+" is deleted; its work orders stay."), http.StatusSeeOther)
}
