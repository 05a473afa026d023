package fleet

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// AlertRulePatch is a JSON merge patch of a rule: fields not Set stay. The
// type is fixed at creation.
type AlertRulePatch struct {
	Severity     Optional[Severity] `json:"severity,omitzero"`
	ThresholdKmh Optional[*float64] `json:"threshold_kmh,omitzero"`
	AfterMinutes Optional[*int]     `json:"after_minutes,omitzero"`
	GeofenceID   Optional[string]   `json:"geofence_id,omitzero"`
	// The telematics types' settings (RuleParams).
	Alarms           Optional[[]string]      `json:"alarms,omitzero"`
	OutsideHours     Optional[*WorkingHours] `json:"outside_hours,omitzero"`
	ThresholdPercent Optional[*float64]      `json:"threshold_percent,omitzero"`
	ThresholdL       Optional[*float64]      `json:"threshold_l,omitzero"`
	Types            Optional[[]string]      `json:"types,omitzero"`
	ThresholdG       Optional[*float64]      `json:"threshold_g,omitzero"`
	ThresholdV       Optional[*float64]      `json:"threshold_v,omitzero"`
	VehicleIDs       Optional[[]string]      `json:"vehicle_ids,omitzero"`
	Enabled          Optional[*bool]         `json:"enabled,omitzero"`
}

// GeofencePatch is a JSON merge patch of a geofence: fields not Set stay.
type GeofencePatch struct {
	Name     Optional[string]    `json:"name,omitzero"`
	Geometry Optional[*Geometry] `json:"geometry,omitzero"`
	RadiusM  Optional[*float64]  `json:"radius_m,omitzero"`
}

// RuleDeleted is the answer to deleting a rule.
type RuleDeleted struct {
	RuleID  string `json:"rule_id"`
	Deleted bool   `json:"deleted"`
}

// GeofenceDeleted is the answer to deleting a geofence.
type GeofenceDeleted struct {
	GeofenceID string `json:"geofence_id"`
	Deleted    bool   `json:"deleted"`
}

func notFoundRule(id string) error     { return NotFound("alert rule", id) }
func notFoundGeofence(id string) error { return NotFound("geofence", id) }
func notFoundAlert(id string) error    { return NotFound("alert", id) }

func (s *Service) getRule(tx AlertTx, p Principal, id string) (AlertRule, error) {
	if !ValidID(PrefixRule, id) {
		return AlertRule{}, notFoundRule(id)
	}
	r, err := tx.AlertRule(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return AlertRule{}, notFoundRule(id)
	}
	return r, err
}

func (s *Service) getGeofence(tx AlertTx, p Principal, id string) (Geofence, error) {
	if !ValidID(PrefixGeofence, id) {
		return Geofence{}, notFoundGeofence(id)
	}
	g, err := tx.Geofence(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return Geofence{}, notFoundGeofence(id)
	}
	return g, err
}

func (s *Service) getAlert(tx AlertTx, p Principal, id string) (Alert, error) {
	if !ValidID(PrefixAlert, id) {
		return Alert{}, notFoundAlert(id)
	}
	a, err := tx.Alert(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return Alert{}, notFoundAlert(id)
	}
	return a, err
}

// checkRuleRefs names, in val, each vehicle and the geofence of a rule that
// are not the account's.
func (s *Service) checkRuleRefs(tx vehicleAlertTx, r *AlertRule, val *Validator) error {
	for i, id := range r.VehicleIDs {
		if !ValidID(PrefixVehicle, id) {
			continue // reported by validate
		}
		_, err := tx.Vehicle(r.AccountID, id)
		if ErrorCode(err) == CodeNotFound {
			val.Add("vehicle_ids["+itoa(i)+"]", "no vehicle %q in this account", id)
		} else if err != nil {
			return err
		}
	}
	if r.GeofenceID != "" {
		_, err := tx.Geofence(r.AccountID, r.GeofenceID)
		if ErrorCode(err) == CodeNotFound || !ValidID(PrefixGeofence, r.GeofenceID) {
			val.Add("geofence_id", "no geofence %q in this account", r.GeofenceID)
		} else if err != nil {
			return err
		}
	}
	return nil
}

func normaliseRule(r *AlertRule) {
	normaliseParams(r)
	if r.VehicleIDs == nil {
		r.VehicleIDs = []string{}
	}
	seen := map[string]bool{}
	out := r.VehicleIDs[:0:0]
	for _, id := range r.VehicleIDs {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	r.VehicleIDs = out
}

// CreateAlertRule creates a rule from the fields a client sets in in:
// severity defaults to warning and enabled to true (in.Enabled is ignored
// when enabled is nil). An account that holds as many rules as its plan
// allows (PlanLimits.AlertRules) is conflict.
func (s *Service) CreateAlertRule(ctx context.Context, p Principal, in AlertRule, enabled *bool) (AlertRule, error) {
	if err := p.allow("CreateAlertRule"); err != nil {
		return AlertRule{}, err
	}
	now := s.Now()
	r := AlertRule{
		ID: NewID(PrefixRule), AccountID: p.Account.ID, Type: in.Type, Severity: in.Severity, ThresholdKmh: in.ThresholdKmh,
		AfterMinutes: in.AfterMinutes, GeofenceID: in.GeofenceID, RuleParams: in.RuleParams.Clone(), VehicleIDs: in.VehicleIDs,
		Enabled:   enabled == nil || *enabled,
		CreatedAt: now, UpdatedAt: now,
	}
	if r.Severity == "" {
		r.Severity = DefaultSeverity
	}
	normaliseRule(&r)
	err := s.updateAlone(ctx, p.Account.ID, func(tx Tx) error {
		var val Validator
		r.validate(&val)
		if err := s.checkRuleRefs(tx, &r, &val); err != nil {
			return err
		}
		if err := val.Err(); err != nil {
			return err
		}
		n, err := tx.CountAlertRules(r.AccountID)
		if err != nil {
			return err
		}
		if limit := p.Account.Plan.Limits().AlertRules; n >= limit {
			return Errorf(CodeConflict, "An account on the %s plan may have at most %d alert rules and this account has %d; delete one first.",
				p.Account.Plan, limit, n)
		}
		if err := tx.CreateAlertRule(r); err != nil {
			return err
		}
		return tx.BumpAlertConfig(r.AccountID)
	})
	if err != nil {
		return AlertRule{}, err
	}
	return r, nil
}

// AlertRule returns one of the account's rules.
func (s *Service) AlertRule(ctx context.Context, p Principal, id string) (AlertRule, error) {
	if err := p.allow("AlertRule"); err != nil {
		return AlertRule{}, err
	}
	var r AlertRule
	err := s.view(ctx, func(tx Tx) (err error) { r, err = s.getRule(tx, p, id); return err })
	return r, err
}

// ListAlertRules lists the account's rules in creation order.
func (s *Service) ListAlertRules(ctx context.Context, p Principal, f AlertRuleFilter, q ListQuery) (List[AlertRule], error) {
	if err := p.allow("ListAlertRules"); err != nil {
		return List[AlertRule]{}, err
	}
	if f.Type != "" && !f.Type.RuleType() {
		return List[AlertRule]{}, Errorf(CodeInvalidRequest, "type must be one of %s.", ruleTypeList())
	}
	if err := CheckQueryText("geofence_id", f.GeofenceID); err != nil {
		return List[AlertRule]{}, err
	}
	if err := CheckQueryText("vehicle_id", f.VehicleID); err != nil {
		return List[AlertRule]{}, err
	}
	page, limit, err := q.page(PrefixRule, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[AlertRule]{}, err
	}
	var rs []AlertRule
	err = s.view(ctx, func(tx Tx) (err error) { rs, err = tx.AlertRules(p.Account.ID, f, page); return err })
	if err != nil {
		return List[AlertRule]{}, err
	}
	return finish(rs, limit, func(r AlertRule) string { return r.ID }), nil
}

// UpdateAlertRule applies a merge patch to a rule; the result is validated
// whole, and nothing changes if it is invalid.
func (s *Service) UpdateAlertRule(ctx context.Context, p Principal, id string, patch AlertRulePatch) (AlertRule, error) {
	if err := p.allow("UpdateAlertRule"); err != nil {
		return AlertRule{}, err
	}
	now := s.Now()
	var r AlertRule
	err := s.updateAlone(ctx, p.Account.ID, func(tx Tx) (err error) {
		r, err = s.getRule(tx, p, id)
		if err != nil {
			return err
		}
		var val Validator
		set(&r.Severity, patch.Severity)
		set(&r.ThresholdKmh, patch.ThresholdKmh)
		set(&r.AfterMinutes, patch.AfterMinutes)
		set(&r.GeofenceID, patch.GeofenceID)
		set(&r.Alarms, patch.Alarms)
		set(&r.OutsideHours, patch.OutsideHours)
		set(&r.ThresholdPercent, patch.ThresholdPercent)
		set(&r.ThresholdL, patch.ThresholdL)
		set(&r.Types, patch.Types)
		set(&r.ThresholdG, patch.ThresholdG)
		set(&r.ThresholdV, patch.ThresholdV)
		set(&r.VehicleIDs, patch.VehicleIDs)
		if patch.Enabled.Set {
			if patch.Enabled.Value == nil {
				val.Add("enabled", "must be true or false")
			} else {
				r.Enabled = *patch.Enabled.Value
			}
		}
		normaliseRule(&r)
		r.validate(&val)
		if err := s.checkRuleRefs(tx, &r, &val); err != nil {
			return err
		}
		if err := val.Err(); err != nil {
			return err
		}
		r.UpdatedAt = now
		if err := tx.UpdateAlertRule(r); err != nil {
			return err
		}
		return tx.BumpAlertConfig(r.AccountID)
	})
	if err != nil {
		return AlertRule{}, err
	}
	return r, nil
}

// dropVehicleFromRules takes a vehicle being deleted out of the vehicle_ids
// of every rule of the account that lists it. A rule left with no vehicle is
// disabled as well: empty vehicle_ids means every vehicle, and a rule that
// was scoped to that one vehicle must not widen to the whole fleet. The rule
// stays (with its id, settings and the alerts it opened) for the client to
// point at other vehicles or delete. Any change moves the account's alert
// configuration version, as every rule change does; rule changes emit no
// event.
func (s *Service) dropVehicleFromRules(tx AlertTx, accountID, vehicleID string, now time.Time) error {
	const batch = 500
	changed := false
	page := Page{Limit: batch}
	for {
		rules, err := tx.AlertRules(accountID, AlertRuleFilter{VehicleID: vehicleID}, page)
		if err != nil {
			return err
		}
		for _, r := range rules {
			r.VehicleIDs = slices.DeleteFunc(r.VehicleIDs, func(id string) bool { return id == vehicleID })
			if len(r.VehicleIDs) == 0 {
				r.Enabled = false
			}
			r.UpdatedAt = now
			if err := tx.UpdateAlertRule(r); err != nil {
				return err
			}
			changed = true
		}
		if len(rules) < batch {
			break
		}
		page.After = rules[len(rules)-1].ID
	}
	if !changed {
		return nil
	}
	return tx.BumpAlertConfig(accountID)
}

// DeleteAlertRule deletes a rule; the alerts it opened stay, with their
// rule_id, as history.
func (s *Service) DeleteAlertRule(ctx context.Context, p Principal, id string) (RuleDeleted, error) {
	if err := p.allow("DeleteAlertRule"); err != nil {
		return RuleDeleted{}, err
	}
	err := s.updateAlone(ctx, p.Account.ID, func(tx Tx) error {
		r, err := s.getRule(tx, p, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteAlertRule(r.AccountID, r.ID); err != nil {
			return err
		}
		return tx.BumpAlertConfig(r.AccountID)
	})
	if err != nil {
		return RuleDeleted{}, err
	}
	return RuleDeleted{RuleID: id, Deleted: true}, nil
}

// CreateGeofence creates a geofence from the fields a client sets in in.
// An account that holds as many geofences as its plan allows
// (PlanLimits.Geofences) is conflict.
func (s *Service) CreateGeofence(ctx context.Context, p Principal, in Geofence) (Geofence, error) {
	if err := p.allow("CreateGeofence"); err != nil {
		return Geofence{}, err
	}
	now := s.Now()
	g := Geofence{ID: NewID(PrefixGeofence), AccountID: p.Account.ID, Name: strings.TrimSpace(in.Name), Geometry: in.Geometry,
		RadiusM: in.RadiusM, CreatedAt: now, UpdatedAt: now}
	if err := g.Validate(); err != nil {
		return Geofence{}, err
	}
	err := s.updateAlone(ctx, p.Account.ID, func(tx Tx) error {
		n, err := tx.CountGeofences(g.AccountID)
		if err != nil {
			return err
		}
		if limit := p.Account.Plan.Limits().Geofences; n >= limit {
			return Errorf(CodeConflict, "An account on the %s plan may have at most %d geofences and this account has %d; delete one first.",
				p.Account.Plan, limit, n)
		}
		if err := tx.CreateGeofence(g); err != nil {
			return err
		}
		return tx.BumpAlertConfig(g.AccountID)
	})
	if err != nil {
		return Geofence{}, err
	}
	return g, nil
}

// Geofence returns one of the account's geofences.
func (s *Service) Geofence(ctx context.Context, p Principal, id string) (Geofence, error) {
	if err := p.allow("Geofence"); err != nil {
		return Geofence{}, err
	}
	var g Geofence
	err := s.view(ctx, func(tx Tx) (err error) { g, err = s.getGeofence(tx, p, id); return err })
	return g, err
}

// ListGeofences lists the account's geofences in creation order.
func (s *Service) ListGeofences(ctx context.Context, p Principal, q ListQuery) (List[Geofence], error) {
	if err := p.allow("ListGeofences"); err != nil {
		return List[Geofence]{}, err
	}
	page, limit, err := q.page(PrefixGeofence, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Geofence]{}, err
	}
	var gs []Geofence
	err = s.view(ctx, func(tx Tx) (err error) { gs, err = tx.Geofences(p.Account.ID, page); return err })
	if err != nil {
		return List[Geofence]{}, err
	}
	return finish(gs, limit, func(g Geofence) string { return g.ID }), nil
}

// UpdateGeofence applies a merge patch to a geofence; the result is
// validated whole. Vehicles' positions are judged against the new shape
// from the next report on.
func (s *Service) UpdateGeofence(ctx context.Context, p Principal, id string, patch GeofencePatch) (Geofence, error) {
	if err := p.allow("UpdateGeofence"); err != nil {
		return Geofence{}, err
	}
	now := s.Now()
	var g Geofence
	err := s.updateAlone(ctx, p.Account.ID, func(tx Tx) (err error) {
		g, err = s.getGeofence(tx, p, id)
		if err != nil {
			return err
		}
		var val Validator
		set(&g.Name, patch.Name)
		g.Name = strings.TrimSpace(g.Name)
		if patch.Geometry.Set {
			if patch.Geometry.Value == nil {
				val.Add("geometry", "cannot be cleared")
			} else {
				g.Geometry = *patch.Geometry.Value
			}
		}
		set(&g.RadiusM, patch.RadiusM)
		if val.Len() == 0 {
			g.validate(&val)
		}
		if err := val.Err(); err != nil {
			return err
		}
		g.UpdatedAt = now
		if err := tx.UpdateGeofence(g); err != nil {
			return err
		}
		return tx.BumpAlertConfig(g.AccountID)
	})
	if err != nil {
		return Geofence{}, err
	}
	return g, nil
}

// DeleteGeofence deletes a geofence that no rule names. While rules name
// it, it is a conflict naming them: delete or change those rules first.
func (s *Service) DeleteGeofence(ctx context.Context, p Principal, id string) (GeofenceDeleted, error) {
	if err := p.allow("DeleteGeofence"); err != nil {
		return GeofenceDeleted{}, err
	}
	err := s.updateAlone(ctx, p.Account.ID, func(tx Tx) error {
		g, err := s.getGeofence(tx, p, id)
		if err != nil {
			return err
		}
		rules, err := tx.AlertRules(g.AccountID, AlertRuleFilter{GeofenceID: g.ID}, Page{Limit: 11})
		if err != nil {
			return err
		}
		if len(rules) > 0 {
			names := make([]string, 0, len(rules))
			for i, r := range rules {
				if i == 10 {
					names = append(names, "...")
					break
				}
				names = append(names, r.ID)
			}
			e := Errorf(CodeConflict, "The geofence is used by alert rules %s: delete them or point them elsewhere first.", strings.Join(names, ", "))
			for _, r := range rules[:min(len(rules), 10)] {
				e.Details = append(e.Details, FieldError{Field: "rule_id", Message: r.ID + " names this geofence"})
			}
			return e
		}
		if err := tx.DeleteGeofence(g.AccountID, g.ID); err != nil {
			return err
		}
		return tx.BumpAlertConfig(g.AccountID)
	})
	if err != nil {
		return GeofenceDeleted{}, err
	}
	return GeofenceDeleted{GeofenceID: id, Deleted: true}, nil
}

// CreateAlert opens a custom alert from the fields a client sets in in
// (vehicle_id, severity, message, data). Severity defaults to warning; a
// vehicle_id must name a vehicle of the account. Emits alert.created.
func (s *Service) CreateAlert(ctx context.Context, p Principal, in Alert) (Alert, error) {
	if err := p.allow("CreateAlert"); err != nil {
		return Alert{}, err
	}
	now := s.Now()
	a := Alert{ID: NewID(PrefixAlert), AccountID: p.Account.ID, Type: AlertCustom, Severity: in.Severity, Status: AlertOpen,
		VehicleID: in.VehicleID, Message: strings.TrimSpace(in.Message), Data: in.Data, CreatedAt: now}
	if a.Severity == "" {
		a.Severity = DefaultSeverity
	}
	if len(a.Data) == 0 {
		a.Data = json.RawMessage("{}")
	}
	err := s.update(ctx, func(tx Tx) error {
		var val Validator
		a.validateCustom(&val)
		if _, err := s.vehicleOf(tx, a.AccountID, a.VehicleID, &val); err != nil {
			return err
		}
		if err := val.Err(); err != nil {
			return err
		}
		return s.openAlert(tx, a, now)
	})
	if err != nil {
		return Alert{}, err
	}
	return a, nil
}

// openAlert stores a new alert and its alert.created event.
func (s *Service) openAlert(tx openAlertTx, a Alert, now time.Time) error {
	if err := tx.CreateAlert(a); err != nil {
		return err
	}
	return s.emit(tx, a.AccountID, EventAlertCreated, now, a)
}

// Alert returns one of the account's alerts.
func (s *Service) Alert(ctx context.Context, p Principal, id string) (Alert, error) {
	if err := p.allow("Alert"); err != nil {
		return Alert{}, err
	}
	var a Alert
	err := s.view(ctx, func(tx Tx) (err error) { a, err = s.getAlert(tx, p, id); return err })
	return a, err
}

// ListAlerts lists the account's alerts, oldest first, or newest first with
// q.Newest.
func (s *Service) ListAlerts(ctx context.Context, p Principal, f AlertFilter, q ListQuery) (List[Alert], error) {
	if err := p.allow("ListAlerts"); err != nil {
		return List[Alert]{}, err
	}
	switch {
	case f.Status != "" && !f.Status.Valid():
		return List[Alert]{}, Errorf(CodeInvalidRequest, "status must be one of open, acknowledged, resolved.")
	case f.Type != "" && !f.Type.Valid():
		return List[Alert]{}, Errorf(CodeInvalidRequest, "type must be one of speeding, vehicle_offline, geofence_enter, geofence_exit, maintenance_due_soon, maintenance_overdue, custom.")
	case f.Severity != "" && !f.Severity.Valid():
		return List[Alert]{}, Errorf(CodeInvalidRequest, "severity must be one of info, warning, critical.")
	case f.VehicleID != "" && !ValidID(PrefixVehicle, f.VehicleID):
		return List[Alert]{}, Errorf(CodeInvalidRequest, "vehicle_id must be a vehicle id (veh_...).")
	case !f.From.IsZero() && !f.To.IsZero() && f.From.After(f.To):
		return List[Alert]{}, Errorf(CodeInvalidRequest, "from must not be after to.")
	}
	f.From, f.To = zeroOr(f.From), zeroOr(f.To)
	page, limit, err := q.pageEitherOrder(PrefixAlert, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Alert]{}, err
	}
	var as []Alert
	err = s.view(ctx, func(tx Tx) (err error) { as, err = tx.Alerts(p.Account.ID, f, page); return err })
	if err != nil {
		return List[Alert]{}, err
	}
	return finish(as, limit, func(a Alert) string { return a.ID }), nil
}

func zeroOr(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return Timestamp(t)
}

// AcknowledgeAlert moves an open alert to acknowledged: someone is on it.
// Emits alert.acknowledged with the alert after the change.
func (s *Service) AcknowledgeAlert(ctx context.Context, p Principal, id string) (Alert, error) {
	return s.moveAlert(ctx, p, "AcknowledgeAlert", id, AlertAcknowledged)
}

// MaxAlertsAtOnce is how many alerts AcknowledgeAlerts takes in one call.
const MaxAlertsAtOnce = 100

// AlertsAcknowledged is what AcknowledgeAlerts did: the alerts it moved
// from open to acknowledged, and those it found acknowledged or resolved
// already (by someone else since the caller's list was read), left as
// they were. Both keep the order of the ids given.
type AlertsAcknowledged struct {
	Acknowledged []Alert `json:"acknowledged"`
	Unchanged    []Alert `json:"unchanged"`
}

// AcknowledgeAlerts acknowledges several of the account's alerts at once,
// in one transaction: each open one moves as AcknowledgeAlert moves it and
// emits alert.acknowledged; one that is no longer open is left as it is
// and returned in Unchanged. ids name 1 to MaxAlertsAtOnce alerts (an id
// given twice counts once); an id that names none of the account's alerts
// is not_found, and then nothing changes.
func (s *Service) AcknowledgeAlerts(ctx context.Context, p Principal, ids []string) (AlertsAcknowledged, error) {
	if err := p.allow("AcknowledgeAlerts"); err != nil {
		return AlertsAcknowledged{}, err
	}
	var unique []string
	for _, id := range ids {
		if !slices.Contains(unique, id) {
			unique = append(unique, id)
		}
	}
	if len(unique) == 0 || len(unique) > MaxAlertsAtOnce {
		var v Validator
		v.Add("alert_ids", "must name 1 to %d alerts", MaxAlertsAtOnce)
		return AlertsAcknowledged{}, v.Err()
	}
	now := s.Now()
	var out AlertsAcknowledged
	err := s.update(ctx, func(tx Tx) error {
		out = AlertsAcknowledged{Acknowledged: []Alert{}, Unchanged: []Alert{}}
		for _, id := range unique {
			a, err := s.getAlert(tx, p, id)
			if err != nil {
				return err
			}
			if a.Status != AlertOpen {
				out.Unchanged = append(out.Unchanged, a)
				continue
			}
			a.Status, a.AcknowledgedAt = AlertAcknowledged, &now
			if err := tx.UpdateAlert(a); err != nil {
				return err
			}
			if err := s.emit(tx, a.AccountID, EventAlertAcknowledged, now, a); err != nil {
				return err
			}
			out.Acknowledged = append(out.Acknowledged, a)
		}
		return nil
	})
	if err != nil {
		return AlertsAcknowledged{}, err
	}
	return out, nil
}

// ResolveAlert moves an open or acknowledged alert to resolved. Emits
// alert.resolved with the alert after the change. A rule's condition may
// open a new alert once the last one is resolved.
func (s *Service) ResolveAlert(ctx context.Context, p Principal, id string) (Alert, error) {
	return s.moveAlert(ctx, p, "ResolveAlert", id, AlertResolved)
}

func (s *Service) moveAlert(ctx context.Context, p Principal, useCase, id string, to AlertStatus) (Alert, error) {
	if err := p.allow(useCase); err != nil {
		return Alert{}, err
	}
	now := s.Now()
	var a Alert
	err := s.view(ctx, func(tx Tx) (err error) { a, err = s.getAlert(tx, p, id); return err })
	if err != nil {
		return Alert{}, err
	}
	if to == AlertResolved && a.RuleID != "" && a.VehicleID != "" {
		// Ingest judges against the vehicle's rule alerts.
		release, err := s.gates.vehicle(ctx, a.VehicleID)
		if err != nil {
			return Alert{}, err
		}
		defer release()
	}
	err = s.update(ctx, func(tx Tx) (err error) {
		a, err = s.getAlert(tx, p, id)
		if err != nil {
			return err
		}
		if err := CheckAlertTransition(a.Status, to); err != nil {
			return err
		}
		a.Status = to
		event := EventAlertResolved
		if to == AlertAcknowledged {
			a.AcknowledgedAt, event = &now, EventAlertAcknowledged
		} else {
			a.ResolvedAt = &now
		}
		if err := tx.UpdateAlert(a); err != nil {
			return err
		}
		if err := s.emit(tx, a.AccountID, event, now, a); err != nil {
			return err
		}
		if to == AlertResolved && a.RuleID != "" && a.VehicleID != "" {
			return s.ruleAlertResolved(tx, a, now)
		}
		return nil
	})
	if err != nil {
		return Alert{}, err
	}
	return a, nil
}

// ruleAlertResolved moves the vehicle's AlertsVersion, as its rule alerts
// changed. For a vehicle_offline alert whose vehicle has since reported and
// gone silent again for the rule's after_minutes, it opens that silence's
// alert at once: while the resolved alert was open, that silence opened
// none, and the clock's sweep looks only at silences as they reach a rule's
// after_minutes.
func (s *Service) ruleAlertResolved(tx resolveTx, a Alert, now time.Time) error {
	v, err := tx.Vehicle(a.AccountID, a.VehicleID)
	if ErrorCode(err) == CodeNotFound {
		return nil // alerts outlive their vehicle
	}
	if err != nil {
		return err
	}
	v.AlertsVersion++
	if a.Type == AlertVehicleOffline && v.LastLocation != nil && a.CreatedAt.Before(v.LastLocation.Timestamp) {
		r, err := tx.AlertRule(a.AccountID, a.RuleID)
		switch {
		case ErrorCode(err) == CodeNotFound:
		case err != nil:
			return err
		case r.Enabled && r.Type == AlertVehicleOffline && r.Applies(v.ID) &&
			now.Sub(v.LastLocation.Timestamp) >= time.Duration(*r.AfterMinutes)*time.Minute:
			msg, data := offlineAlert(&r, &v, now)
			if err := s.openRuleAlert(tx, &r, &v, msg, data, now); err != nil {
				return err
			}
		}
	}
	return tx.UpdateVehicle(v)
}
