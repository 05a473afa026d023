package fleetweb

import (
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
// by field.
type orderForm struct {
	VehicleID, Title, Description, Priority, DueDate, AssignedTo string
	Errors                                                       map[string]string
}

type scheduleForm struct {
	VehicleID, Name, IntervalDays, IntervalKm, LastServiceDate, LastServiceOdometerKm string
	Auto                                                                              bool
	Errors                                                                            map[string]string
}

type maintenanceData struct {
	Status     string // the tab: a work order status, or "" for the open ones
	Tabs       []fleet.WorkOrderStatus
	Orders     []orderRow
	MoreOrders bool
	Schedules  []serviceScheduleRow
	Vehicles   []vehicleChoice
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
		if d.Vehicles, _, err = h.vehicleChoices(ctx, pr); err != nil {
			h.fail(w, r, &us, err)
			return
		}
	}
	p.Data = d
	h.render(w, status, "maintenance", p)
}

// addWorkOrder opens a work order with the CreateWorkOrder use case.
func (h *Handler) addWorkOrder(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	v := r.PostFormValue
	f := orderForm{VehicleID: v("vehicle_id"), Title: v("title"), Description: v("description"), Priority: v("priority"), DueDate: v("due_date"), AssignedTo: v("assigned_to")}
	o, err := h.svc.CreateWorkOrder(r.Context(), us.Principal(), fleet.WorkOrder{VehicleID: f.VehicleID, Title: f.Title, Description: f.Description,
		Priority: fleet.Priority(f.Priority), DueDate: f.DueDate, AssignedTo: f.AssignedTo})
	if err != nil {
		p := page{Title: "Maintenance", Nav: "maintenance", User: &us}
		errorPage(&p, err)
		f.Errors = errorsOf(p)
		h.showMaintenance(w, r, us, statusOf(err), p, f, scheduleForm{})
		return
	}
	http.Redirect(w, r, "/maintenance?notice="+h.noticeOnce(r, "The work order "+o.Title+" is open.")+"#order-"+o.ID, http.StatusSeeOther)
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
	v := r.PostFormValue
	f := scheduleForm{VehicleID: v("vehicle_id"), Name: v("name"), IntervalDays: v("interval_days"), IntervalKm: v("interval_km"),
		LastServiceDate: v("last_service_date"), LastServiceOdometerKm: v("last_service_odometer_km"), Auto: v("auto_create_work_order") != ""}
	s := fleet.Schedule{VehicleID: f.VehicleID, Name: f.Name, LastServiceDate: f.LastServiceDate, AutoCreateWorkOrder: f.Auto}
	var bad []fleet.FieldError
	if t := strings.TrimSpace(f.IntervalDays); t != "" {
		if n, err := strconv.Atoi(t); err != nil {
			bad = append(bad, fleet.FieldError{Field: "interval_days", Message: "must be a whole number of days, such as 180"})
		} else {
			s.IntervalDays = &n
		}
	}
	for _, num := range []struct {
		field, text string
		dst         **float64
	}{{"interval_km", f.IntervalKm, &s.IntervalKm}, {"last_service_odometer_km", f.LastServiceOdometerKm, &s.LastServiceOdometerKm}} {
		if t := strings.TrimSpace(num.text); t != "" {
			n, err := strconv.ParseFloat(t, 64)
			if err != nil || n != n {
				bad = append(bad, fleet.FieldError{Field: num.field, Message: "must be a number of kilometres, such as 15000"})
				continue
			}
			*num.dst = &n
		}
	}
	var err error
	if bad != nil {
		err = &fleet.Error{Code: fleet.CodeValidation, Message: "Please correct the form.", Details: bad}
	} else {
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
