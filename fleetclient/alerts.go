package fleetclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Alerts walks the account's alerts that f selects, oldest first.
func (c *Client) Alerts(ctx context.Context, f fleet.AlertFilter) iter.Seq2[fleet.Alert, error] {
	q := url.Values{}
	for k, v := range map[string]string{"status": string(f.Status), "type": string(f.Type), "severity": string(f.Severity), "vehicle_id": f.VehicleID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !f.From.IsZero() {
		q.Set("from", f.From.UTC().Format(time.RFC3339Nano))
	}
	if !f.To.IsZero() {
		q.Set("to", f.To.UTC().Format(time.RFC3339Nano))
	}
	return walk[fleet.Alert](ctx, c, "/alerts", q, fleet.MaxPageLimit)
}

// CreateAlert opens a custom alert from a's VehicleID, Severity, Message and
// Data.
func (c *Client) CreateAlert(ctx context.Context, a fleet.Alert) (fleet.Alert, error) {
	var out fleet.Alert
	_, err := c.do(ctx, http.MethodPost, "/alerts", nil, fleetwire.AlertInput{VehicleID: nullIfEmpty(a.VehicleID),
		Severity: nullIfEmpty(string(a.Severity)), Message: a.Message, Data: fleetwire.JSONObject(a.Data)}, &out)
	return out, err
}

// Alert returns one alert.
func (c *Client) Alert(ctx context.Context, id string) (fleet.Alert, error) {
	var out fleet.Alert
	_, err := c.do(ctx, http.MethodGet, "/alerts/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// AcknowledgeAlert moves an open alert to acknowledged
// (invalid_state_transition otherwise).
func (c *Client) AcknowledgeAlert(ctx context.Context, id string) (fleet.Alert, error) {
	var out fleet.Alert
	_, err := c.do(ctx, http.MethodPost, "/alerts/"+url.PathEscape(id)+"/acknowledge", nil, struct{}{}, &out)
	return out, err
}

// ResolveAlert moves an open or acknowledged alert to resolved
// (invalid_state_transition otherwise).
func (c *Client) ResolveAlert(ctx context.Context, id string) (fleet.Alert, error) {
	var out fleet.Alert
	_, err := c.do(ctx, http.MethodPost, "/alerts/"+url.PathEscape(id)+"/resolve", nil, struct{}{}, &out)
	return out, err
}

// AlertRules walks the account's alert rules that f selects.
func (c *Client) AlertRules(ctx context.Context, f fleet.AlertRuleFilter) iter.Seq2[fleet.AlertRule, error] {
	q := url.Values{}
	if f.Type != "" {
		q.Set("type", string(f.Type))
	}
	if f.GeofenceID != "" {
		q.Set("geofence_id", f.GeofenceID)
	}
	return walk[fleet.AlertRule](ctx, c, "/alerts/rules", q, fleet.MaxPageLimit)
}

// CreateAlertRule creates a rule from r's Type, Severity, ThresholdKmh,
// AfterMinutes, GeofenceID, the telematics settings (RuleParams: Alarms,
// OutsideHours, ThresholdPercent, ThresholdL, Types, ThresholdG,
// ThresholdV) and VehicleIDs. A new rule is enabled (r.Enabled
// is not sent); UpdateAlertRule turns it off.
func (c *Client) CreateAlertRule(ctx context.Context, r fleet.AlertRule) (fleet.AlertRule, error) {
	var out fleet.AlertRule
	_, err := c.do(ctx, http.MethodPost, "/alerts/rules", nil, fleetwire.AlertRuleInput{Type: string(r.Type), Severity: nullIfEmpty(string(r.Severity)),
		ThresholdKmh: r.ThresholdKmh, AfterMinutes: r.AfterMinutes, GeofenceID: nullIfEmpty(r.GeofenceID), RuleParams: r.RuleParams, VehicleIDs: r.VehicleIDs}, &out)
	return out, err
}

// AlertRule returns one alert rule.
func (c *Client) AlertRule(ctx context.Context, id string) (fleet.AlertRule, error) {
	var out fleet.AlertRule
	_, err := c.do(ctx, http.MethodGet, "/alerts/rules/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// UpdateAlertRule sends a merge patch of a rule.
func (c *Client) UpdateAlertRule(ctx context.Context, id string, p fleet.AlertRulePatch) (fleet.AlertRule, error) {
	var out fleet.AlertRule
	_, err := c.do(ctx, http.MethodPatch, "/alerts/rules/"+url.PathEscape(id), nil, p, &out)
	return out, err
}

// DeleteAlertRule deletes a rule; the alerts it opened stay.
func (c *Client) DeleteAlertRule(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/alerts/rules/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// Geofences walks the account's geofences.
func (c *Client) Geofences(ctx context.Context) iter.Seq2[fleet.Geofence, error] {
	return walk[fleet.Geofence](ctx, c, "/geofences", nil, fleet.MaxPageLimit)
}

// CreateGeofence creates a geofence from g's Name, Geometry and RadiusM.
func (c *Client) CreateGeofence(ctx context.Context, g fleet.Geofence) (fleet.Geofence, error) {
	geom := g.Geometry
	var out fleet.Geofence
	_, err := c.do(ctx, http.MethodPost, "/geofences", nil, fleetwire.GeofenceInput{Name: g.Name, Geometry: &geom, RadiusM: g.RadiusM}, &out)
	return out, err
}

// Geofence returns one geofence.
func (c *Client) Geofence(ctx context.Context, id string) (fleet.Geofence, error) {
	var out fleet.Geofence
	_, err := c.do(ctx, http.MethodGet, "/geofences/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// UpdateGeofence sends a merge patch of a geofence.
func (c *Client) UpdateGeofence(ctx context.Context, id string, p fleet.GeofencePatch) (fleet.Geofence, error) {
	var out fleet.Geofence
	_, err := c.do(ctx, http.MethodPatch, "/geofences/"+url.PathEscape(id), nil, p, &out)
	return out, err
}

// DeleteGeofence deletes a geofence that no rule names (conflict, naming
// the rules, otherwise).
func (c *Client) DeleteGeofence(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/geofences/"+url.PathEscape(id), nil, nil, nil)
	return err
}
