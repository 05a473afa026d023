package fleethttp

import (
	"net/http"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Work orders and schedules go out as fleet.WorkOrder and fleet.Schedule,
// whose JSON is the API's (unset optional fields are null); the same JSON is
// the data of their events.

func (h *Handler) createWorkOrder(c *call) error {
	req, err := decode[fleetwire.WorkOrderInput](c.body, false)
	if err != nil {
		return err
	}
	w, err := h.svc.CreateWorkOrder(c.r.Context(), c.p, fleet.WorkOrder{
		VehicleID: req.VehicleID, Title: req.Title, Description: deref(req.Description), Priority: fleet.Priority(deref(req.Priority)),
		DueDate: deref(req.DueDate), AssignedTo: deref(req.AssignedTo), OdometerKm: req.OdometerKm, CostCents: req.CostCents,
		Currency: deref(req.Currency), ScheduleID: deref(req.ScheduleID),
	})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, w)
}

func (h *Handler) getWorkOrder(c *call) error {
	w, err := h.svc.WorkOrder(c.r.Context(), c.p, c.r.PathValue("work_order_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, w)
}

func (h *Handler) listWorkOrders(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	f := fleet.WorkOrderFilter{VehicleID: q.Get("vehicle_id"), Status: fleet.WorkOrderStatus(q.Get("status")), Priority: fleet.Priority(q.Get("priority"))}
	l, err := h.svc.ListWorkOrders(c.r.Context(), c.p, f, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) patchWorkOrder(c *call) error {
	p, err := decode[fleet.WorkOrderPatch](c.body, false)
	if err != nil {
		return err
	}
	w, err := h.svc.UpdateWorkOrder(c.r.Context(), c.p, c.r.PathValue("work_order_id"), p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, w)
}

func (h *Handler) createSchedule(c *call) error {
	req, err := decode[fleetwire.ScheduleInput](c.body, false)
	if err != nil {
		return err
	}
	s, err := h.svc.CreateSchedule(c.r.Context(), c.p, fleet.Schedule{
		VehicleID: req.VehicleID, Name: req.Name, IntervalDays: req.IntervalDays, IntervalKm: req.IntervalKm,
		LastServiceDate: deref(req.LastServiceDate), LastServiceOdometerKm: req.LastServiceOdometerKm,
		AutoCreateWorkOrder: req.AutoCreateWorkOrder != nil && *req.AutoCreateWorkOrder,
		IntervalEngineHours: req.IntervalEngineHours, LastServiceEngineHours: req.LastServiceEngineHours,
	})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, s)
}

func (h *Handler) getSchedule(c *call) error {
	s, err := h.svc.Schedule(c.r.Context(), c.p, c.r.PathValue("schedule_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, s)
}

func (h *Handler) listSchedules(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	f := fleet.ScheduleFilter{VehicleID: q.Get("vehicle_id"), Status: fleet.ScheduleStatus(q.Get("status"))}
	l, err := h.svc.ListSchedules(c.r.Context(), c.p, f, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) patchSchedule(c *call) error {
	p, err := decode[fleet.SchedulePatch](c.body, false)
	if err != nil {
		return err
	}
	s, err := h.svc.UpdateSchedule(c.r.Context(), c.p, c.r.PathValue("schedule_id"), p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, s)
}

func (h *Handler) deleteSchedule(c *call) error {
	d, err := h.svc.DeleteSchedule(c.r.Context(), c.p, c.r.PathValue("schedule_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}
