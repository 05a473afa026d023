package fleethttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Alerts, alert rules and geofences go out as fleet.Alert, fleet.AlertRule
// and fleet.Geofence, whose JSON is the API's; the same JSON is the data of
// the alert events.

func (h *Handler) createAlert(c *call) error {
	req, err := decode[fleetwire.AlertInput](c.body, false)
	if err != nil {
		return err
	}
	data := json.RawMessage(req.Data)
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		data = nil
	}
	a, err := h.svc.CreateAlert(c.r.Context(), c.p, fleet.Alert{VehicleID: deref(req.VehicleID),
		Severity: fleet.Severity(deref(req.Severity)), Message: req.Message, Data: data})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, a)
}

func (h *Handler) getAlert(c *call) error {
	a, err := h.svc.Alert(c.r.Context(), c.p, c.r.PathValue("alert_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, a)
}

func (h *Handler) listAlerts(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	f := fleet.AlertFilter{Status: fleet.AlertStatus(q.Get("status")), Type: fleet.AlertType(q.Get("type")),
		Severity: fleet.Severity(q.Get("severity")), VehicleID: q.Get("vehicle_id")}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if s := q.Get(p.name); s != "" {
			t, err := parseTime(p.name, s)
			if err != nil {
				return err
			}
			*p.dst = t
		}
	}
	l, err := h.svc.ListAlerts(c.r.Context(), c.p, f, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) acknowledgeAlert(c *call) error {
	if _, err := decode[struct{}](c.body, true); err != nil {
		return err
	}
	a, err := h.svc.AcknowledgeAlert(c.r.Context(), c.p, c.r.PathValue("alert_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, a)
}

func (h *Handler) resolveAlert(c *call) error {
	if _, err := decode[struct{}](c.body, true); err != nil {
		return err
	}
	a, err := h.svc.ResolveAlert(c.r.Context(), c.p, c.r.PathValue("alert_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, a)
}

func (h *Handler) createRule(c *call) error {
	req, err := decode[fleetwire.AlertRuleInput](c.body, false)
	if err != nil {
		return err
	}
	r, err := h.svc.CreateAlertRule(c.r.Context(), c.p, fleet.AlertRule{Type: fleet.AlertType(req.Type),
		Severity: fleet.Severity(deref(req.Severity)), ThresholdKmh: req.ThresholdKmh, AfterMinutes: req.AfterMinutes,
		GeofenceID: deref(req.GeofenceID), RuleParams: req.RuleParams, VehicleIDs: req.VehicleIDs}, req.Enabled)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, r)
}

func (h *Handler) getRule(c *call) error {
	r, err := h.svc.AlertRule(c.r.Context(), c.p, c.r.PathValue("rule_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, r)
}

func (h *Handler) listRules(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	f := fleet.AlertRuleFilter{Type: fleet.AlertType(q.Get("type")), GeofenceID: q.Get("geofence_id")}
	l, err := h.svc.ListAlertRules(c.r.Context(), c.p, f, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) patchRule(c *call) error {
	p, err := decode[fleet.AlertRulePatch](c.body, false)
	if err != nil {
		return err
	}
	r, err := h.svc.UpdateAlertRule(c.r.Context(), c.p, c.r.PathValue("rule_id"), p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, r)
}

func (h *Handler) deleteRule(c *call) error {
	d, err := h.svc.DeleteAlertRule(c.r.Context(), c.p, c.r.PathValue("rule_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

func (h *Handler) createGeofence(c *call) error {
	req, err := decode[fleetwire.GeofenceInput](c.body, false)
	if err != nil {
		return err
	}
	g := fleet.Geofence{Name: req.Name, RadiusM: req.RadiusM}
	if req.Geometry != nil {
		g.Geometry = *req.Geometry
	}
	g, err = h.svc.CreateGeofence(c.r.Context(), c.p, g)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, g)
}

func (h *Handler) getGeofence(c *call) error {
	g, err := h.svc.Geofence(c.r.Context(), c.p, c.r.PathValue("geofence_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, g)
}

func (h *Handler) listGeofences(c *call) error {
	_, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	l, err := h.svc.ListGeofences(c.r.Context(), c.p, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) patchGeofence(c *call) error {
	p, err := decode[fleet.GeofencePatch](c.body, false)
	if err != nil {
		return err
	}
	g, err := h.svc.UpdateGeofence(c.r.Context(), c.p, c.r.PathValue("geofence_id"), p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, g)
}

func (h *Handler) deleteGeofence(c *call) error {
	d, err := h.svc.DeleteGeofence(c.r.Context(), c.p, c.r.PathValue("geofence_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}
