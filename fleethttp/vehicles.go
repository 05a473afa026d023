package fleethttp

import (
	"net/http"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Vehicles go out as fleet.Vehicle, whose JSON is the API's; the same JSON
// is the data of their events.

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (h *Handler) createVehicle(c *call) error {
	req, err := decode[fleetwire.VehicleInput](c.body, false)
	if err != nil {
		return err
	}
	v, err := h.svc.CreateVehicle(c.r.Context(), c.p, fleet.Vehicle{
		Name: req.Name, VIN: deref(req.VIN), Make: deref(req.Make), Model: deref(req.Model), Year: req.Year,
		LicensePlate: deref(req.LicensePlate), ExternalID: deref(req.ExternalID), Tags: req.Tags, OdometerKm: req.OdometerKm,
	})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, v)
}

func (h *Handler) getVehicle(c *call) error {
	v, err := h.svc.Vehicle(c.r.Context(), c.p, c.r.PathValue("vehicle_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, v)
}

func (h *Handler) listVehicles(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	f := fleet.VehicleFilter{Status: fleet.VehicleStatus(q.Get("status")), Tag: q.Get("tag"), Query: q.Get("q")}
	l, err := h.svc.ListVehicles(c.r.Context(), c.p, f, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) patchVehicle(c *call) error {
	p, err := decode[fleet.VehiclePatch](c.body, false)
	if err != nil {
		return err
	}
	v, err := h.svc.UpdateVehicle(c.r.Context(), c.p, c.r.PathValue("vehicle_id"), p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, v)
}

func (h *Handler) deleteVehicle(c *call) error {
	d, err := h.svc.DeleteVehicle(c.r.Context(), c.p, c.r.PathValue("vehicle_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

func (h *Handler) listEvents(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	f := fleet.EventFilter{Type: q.Get("type")}
	if s := q.Get("from"); s != "" {
		t, err := parseTime("from", s)
		if err != nil {
			return err
		}
		f.From = t
	}
	l, err := h.svc.ListEvents(c.r.Context(), c.p, f, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) getEvent(c *call) error {
	e, err := h.svc.Event(c.r.Context(), c.p, c.r.PathValue("event_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, e)
}

// parseTime reads an RFC 3339 query parameter.
func parseTime(name, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fleet.Errorf(fleet.CodeInvalidRequest, "%s must be an RFC 3339 timestamp (2026-11-22T10:15:30Z).", name)
	}
	return fleet.Timestamp(t), nil
}
