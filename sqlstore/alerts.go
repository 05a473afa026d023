package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

const geofenceColumns = `g.id, g.account_id, g.name, g.geometry, g.radius_m, g.created_at, g.updated_at`

func scanGeofence(r scanner) (fleet.Geofence, error) {
	var g fleet.Geofence
	var geom []byte
	var radius sql.NullFloat64
	var created, updated int64
	if err := r.Scan(&g.ID, &g.AccountID, &g.Name, &geom, &radius, &created, &updated); err != nil {
		return fleet.Geofence{}, err
	}
	if err := json.Unmarshal(geom, &g.Geometry); err != nil {
		return fleet.Geofence{}, fmt.Errorf("sqlstore: decode geometry of %s: %w", g.ID, err)
	}
	g.RadiusM = nullFloat(radius)
	g.CreatedAt, g.UpdatedAt = fromDB(created), fromDB(updated)
	return g, nil
}

// CreateGeofence implements fleet.Tx.
func (t *tx) CreateGeofence(g fleet.Geofence) error {
	geom, err := json.Marshal(g.Geometry)
	if err != nil {
		return wrap(err, "encode geometry")
	}
	err = t.insert(`INSERT INTO geofences (id, account_id, name, geometry, radius_m, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		g.ID, g.AccountID, g.Name, string(geom), floatArg(g.RadiusM), toDB(g.CreatedAt), toDB(g.UpdatedAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A geofence with id %q exists.", g.ID)
	case errForeignKey:
		return notFound(err, "account", g.AccountID)
	}
	return wrap(err, "create geofence")
}

// Geofence implements fleet.Tx.
func (t *tx) Geofence(accountID, id string) (fleet.Geofence, error) {
	g, err := scanGeofence(t.queryRow(`SELECT `+geofenceColumns+` FROM geofences g WHERE g.id = ? AND g.account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Geofence{}, fleet.NotFound("geofence", id)
	}
	return g, wrap(t.failed(err), "read geofence")
}

func (t *tx) geofences(doing, where string, args ...any) ([]fleet.Geofence, error) {
	return queryAll(t, doing, scanGeofence, `SELECT `+geofenceColumns+` FROM geofences g WHERE `+where, args...)
}

// Geofences implements fleet.Tx.
func (t *tx) Geofences(accountID string, p fleet.Page) ([]fleet.Geofence, error) {
	if p.Limit <= 0 {
		return []fleet.Geofence{}, nil
	}
	return t.geofences("list geofences", "g.account_id = ? AND g.id > ? ORDER BY g.id LIMIT ?", accountID, p.After, int64(p.Limit))
}

// CountGeofences implements fleet.Tx.
func (t *tx) CountGeofences(accountID string) (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM geofences WHERE account_id = ?`, accountID).Scan(&n)
	return n, wrap(t.failed(err), "count geofences")
}

// UpdateGeofence implements fleet.Tx.
func (t *tx) UpdateGeofence(g fleet.Geofence) error {
	geom, err := json.Marshal(g.Geometry)
	if err != nil {
		return wrap(err, "encode geometry")
	}
	n, err := t.update(`UPDATE geofences SET name = ?, geometry = ?, radius_m = ?, updated_at = ? WHERE id = ? AND account_id = ?`,
		g.Name, string(geom), floatArg(g.RadiusM), toDB(g.UpdatedAt), g.ID, g.AccountID)
	if err != nil {
		return wrap(err, "update geofence")
	}
	if n == 0 {
		return fleet.NotFound("geofence", g.ID)
	}
	return nil
}

// DeleteGeofence implements fleet.Tx.
func (t *tx) DeleteGeofence(accountID, id string) error {
	n, err := t.update(`DELETE FROM geofences WHERE id = ? AND account_id = ?`, id, accountID)
	if err != nil {
		return wrap(err, "delete geofence")
	}
	if n == 0 {
		return fleet.NotFound("geofence", id)
	}
	return nil
}

const ruleColumns = `r.id, r.account_id, r.type, r.severity, r.threshold_kmh, r.after_minutes, r.geofence_id, r.vehicle_ids,
	r.enabled, r.created_at, r.updated_at, r.params`

func scanRule(s scanner) (fleet.AlertRule, error) {
	var r fleet.AlertRule
	var typ, sev string
	var threshold sql.NullFloat64
	var after sql.NullInt64
	var ids, params []byte
	var created, updated int64
	if err := s.Scan(&r.ID, &r.AccountID, &typ, &sev, &threshold, &after, &r.GeofenceID, &ids, &r.Enabled, &created, &updated, &params); err != nil {
		return fleet.AlertRule{}, err
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &r.RuleParams); err != nil {
			return fleet.AlertRule{}, fmt.Errorf("sqlstore: decode params of %s: %w", r.ID, err)
		}
	}
	r.Type, r.Severity = fleet.AlertType(typ), fleet.Severity(sev)
	r.ThresholdKmh = nullFloat(threshold)
	if after.Valid {
		m := int(after.Int64)
		r.AfterMinutes = &m
	}
	if err := json.Unmarshal(ids, &r.VehicleIDs); err != nil {
		return fleet.AlertRule{}, fmt.Errorf("sqlstore: decode vehicle_ids of %s: %w", r.ID, err)
	}
	if r.VehicleIDs == nil {
		r.VehicleIDs = []string{}
	}
	r.CreatedAt, r.UpdatedAt = fromDB(created), fromDB(updated)
	return r, nil
}

// paramsArg is the telematics settings of a rule as the params column
// holds them: a JSON object of the settings that are set ("{}" for the
// other rule types).
func paramsArg(p fleet.RuleParams) (string, error) {
	b, err := json.Marshal(storedParams(p))
	return string(b), wrap(err, "encode rule params")
}

// storedParams is fleet.RuleParams with the members that are not set left
// out; an empty list stays [] (every alarm, every type).
type storedParams struct {
	Alarms           []string            `json:"alarms,omitzero"`
	OutsideHours     *fleet.WorkingHours `json:"outside_hours,omitempty"`
	ThresholdPercent *float64            `json:"threshold_percent,omitempty"`
	ThresholdL       *float64            `json:"threshold_l,omitempty"`
	Types            []string            `json:"types,omitzero"`
	ThresholdG       *float64            `json:"threshold_g,omitempty"`
	ThresholdV       *float64            `json:"threshold_v,omitempty"`
}

func vehicleIDsArg(ids []string) (string, error) {
	if ids == nil {
		ids = []string{}
	}
	b, err := json.Marshal(ids)
	return string(b), wrap(err, "encode vehicle_ids")
}

// vehicleIDPattern is the LIKE pattern that finds id as an element of the
// JSON array in vehicle_ids: its JSON string, quotes included, with the
// pattern's own characters escaped by '!'.
func vehicleIDPattern(id string) (string, error) {
	b, err := json.Marshal(id)
	if err != nil {
		return "", wrap(err, "encode vehicle id")
	}
	esc := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(string(b))
	return "%" + esc + "%", nil
}

// CreateAlertRule implements fleet.Tx.
func (t *tx) CreateAlertRule(r fleet.AlertRule) error {
	ids, err := vehicleIDsArg(r.VehicleIDs)
	if err != nil {
		return err
	}
	params, err := paramsArg(r.RuleParams)
	if err != nil {
		return err
	}
	err = t.insert(`INSERT INTO alert_rules (id, account_id, type, severity, threshold_kmh, after_minutes, geofence_id, vehicle_ids,
			enabled, created_at, updated_at, params)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.AccountID, string(r.Type), string(r.Severity), floatArg(r.ThresholdKmh), intArg(r.AfterMinutes), r.GeofenceID, ids,
		r.Enabled, toDB(r.CreatedAt), toDB(r.UpdatedAt), params)
	switch classify(err) {
	case errUnique:
		return conflict(err, "An alert rule with id %q exists.", r.ID)
	case errForeignKey:
		return notFound(err, "account", r.AccountID)
	}
	return wrap(err, "create alert rule")
}

// AlertRule implements fleet.Tx.
func (t *tx) AlertRule(accountID, id string) (fleet.AlertRule, error) {
	r, err := scanRule(t.queryRow(`SELECT `+ruleColumns+` FROM alert_rules r WHERE r.id = ? AND r.account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.AlertRule{}, fleet.NotFound("alert rule", id)
	}
	return r, wrap(t.failed(err), "read alert rule")
}

func (t *tx) rules(doing, where string, args ...any) ([]fleet.AlertRule, error) {
	return queryAll(t, doing, scanRule, `SELECT `+ruleColumns+` FROM alert_rules r WHERE `+where, args...)
}

// AlertRules implements fleet.Tx.
func (t *tx) AlertRules(accountID string, f fleet.AlertRuleFilter, p fleet.Page) ([]fleet.AlertRule, error) {
	if p.Limit <= 0 {
		return []fleet.AlertRule{}, nil
	}
	where, args := "r.account_id = ? AND r.id > ?", []any{accountID, p.After}
	if f.Type != "" {
		where, args = where+" AND r.type = ?", append(args, string(f.Type))
	}
	if f.GeofenceID != "" {
		where, args = where+" AND r.geofence_id = ?", append(args, f.GeofenceID)
	}
	if f.VehicleID != "" {
		pattern, err := vehicleIDPattern(f.VehicleID)
		if err != nil {
			return nil, err
		}
		where, args = where+` AND r.vehicle_ids LIKE ? ESCAPE '!'`, append(args, pattern)
	}
	return t.rules("list alert rules", where+" ORDER BY r.id LIMIT ?", append(args, int64(p.Limit))...)
}

// CountAlertRules implements fleet.Tx.
func (t *tx) CountAlertRules(accountID string) (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM alert_rules WHERE account_id = ?`, accountID).Scan(&n)
	return n, wrap(t.failed(err), "count alert rules")
}

// UpdateAlertRule implements fleet.Tx.
func (t *tx) UpdateAlertRule(r fleet.AlertRule) error {
	ids, err := vehicleIDsArg(r.VehicleIDs)
	if err != nil {
		return err
	}
	params, err := paramsArg(r.RuleParams)
	if err != nil {
		return err
	}
	n, err := t.update(`UPDATE alert_rules SET severity = ?, threshold_kmh = ?, after_minutes = ?, geofence_id = ?, vehicle_ids = ?,
			enabled = ?, updated_at = ?, params = ?
		WHERE id = ? AND account_id = ?`,
		string(r.Severity), floatArg(r.ThresholdKmh), intArg(r.AfterMinutes), r.GeofenceID, ids, r.Enabled, toDB(r.UpdatedAt),
		params, r.ID, r.AccountID)
	if err != nil {
		return wrap(err, "update alert rule")
	}
	if n == 0 {
		return fleet.NotFound("alert rule", r.ID)
	}
	return nil
}

// DeleteAlertRule implements fleet.Tx.
func (t *tx) DeleteAlertRule(accountID, id string) error {
	n, err := t.update(`DELETE FROM alert_rules WHERE id = ? AND account_id = ?`, id, accountID)
	if err != nil {
		return wrap(err, "delete alert rule")
	}
	if n == 0 {
		return fleet.NotFound("alert rule", id)
	}
	return nil
}

// EnabledAlertRules implements fleet.Tx: one query for the rules and, when
// any names a geofence, one for those geofences.
func (t *tx) EnabledAlertRules(accountID string) ([]fleet.AlertRule, []fleet.Geofence, error) {
	rules, err := t.rules("read enabled alert rules", "r.account_id = ? AND r.enabled = ? ORDER BY r.id", accountID, true)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range rules {
		if r.GeofenceID != "" {
			geos, err := t.geofences("read geofences of rules", `g.account_id = ? AND g.id IN
				(SELECT r.geofence_id FROM alert_rules r WHERE r.account_id = ? AND r.enabled = ? AND r.geofence_id <> '')
				ORDER BY g.id`, accountID, accountID, true)
			return rules, geos, err
		}
	}
	return rules, nil, nil
}

// EnabledRulesOfType implements fleet.Tx.
func (t *tx) EnabledRulesOfType(typ fleet.AlertType, after string, limit int) ([]fleet.AlertRule, error) {
	return t.rules("read alert rules of a type", "r.type = ? AND r.enabled = ? AND r.id > ? ORDER BY r.id LIMIT ?",
		string(typ), true, after, int64(limit))
}

const alertColumns = `a.id, a.account_id, a.type, a.severity, a.status, a.vehicle_id, a.rule_id, a.message, a.data, a.dedup_key,
	a.created_at, a.acknowledged_at, a.resolved_at`

func scanAlert(s scanner) (fleet.Alert, error) {
	var a fleet.Alert
	var typ, sev, status string
	var data []byte
	var created int64
	var ack, res sql.NullInt64
	if err := s.Scan(&a.ID, &a.AccountID, &typ, &sev, &status, &a.VehicleID, &a.RuleID, &a.Message, &data, &a.Key,
		&created, &ack, &res); err != nil {
		return fleet.Alert{}, err
	}
	a.Type, a.Severity, a.Status = fleet.AlertType(typ), fleet.Severity(sev), fleet.AlertStatus(status)
	a.Data = json.RawMessage(data)
	a.CreatedAt, a.AcknowledgedAt, a.ResolvedAt = fromDB(created), fromNullDB(ack), fromNullDB(res)
	return a, nil
}

// CreateAlert implements fleet.Tx.
func (t *tx) CreateAlert(a fleet.Alert) error {
	data := string(a.Data)
	if data == "" {
		data = "{}"
	}
	err := t.insert(`INSERT INTO alerts (id, account_id, type, severity, status, vehicle_id, rule_id, message, data, dedup_key,
			created_at, acknowledged_at, resolved_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.AccountID, string(a.Type), string(a.Severity), string(a.Status), a.VehicleID, a.RuleID, a.Message, data, a.Key,
		toDB(a.CreatedAt), toNullDB(a.AcknowledgedAt), toNullDB(a.ResolvedAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "An alert with id %q exists.", a.ID)
	case errForeignKey:
		return notFound(err, "account", a.AccountID)
	}
	return wrap(err, "create alert")
}

// Alert implements fleet.Tx.
func (t *tx) Alert(accountID, id string) (fleet.Alert, error) {
	a, err := scanAlert(t.queryRow(`SELECT `+alertColumns+` FROM alerts a WHERE a.id = ? AND a.account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Alert{}, fleet.NotFound("alert", id)
	}
	return a, wrap(t.failed(err), "read alert")
}

// Alerts implements fleet.Tx.
func (t *tx) Alerts(accountID string, f fleet.AlertFilter, p fleet.Page) ([]fleet.Alert, error) {
	out := []fleet.Alert{}
	if p.Limit <= 0 {
		return out, nil
	}
	where, args, order := []string{"a.account_id = ?", "a.id > ?"}, []any{accountID, p.After}, "a.id"
	if p.Newest {
		where, args, order = where[:1], args[:1], "a.id DESC"
		if p.After != "" {
			where, args = append(where, "a.id < ?"), append(args, p.After)
		}
	}
	for _, c := range []struct{ col, v string }{{"a.status", string(f.Status)}, {"a.type", string(f.Type)},
		{"a.severity", string(f.Severity)}, {"a.vehicle_id", f.VehicleID}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.v)
		}
	}
	if !f.From.IsZero() {
		where, args = append(where, "a.created_at >= ?"), append(args, toDB(f.From))
	}
	if !f.To.IsZero() {
		where, args = append(where, "a.created_at <= ?"), append(args, toDB(f.To))
	}
	rows, err := t.query(t.d.q(`SELECT `+alertColumns+` FROM alerts a WHERE `+
		strings.Join(where, " AND ")+` ORDER BY `+order+` LIMIT ?`), append(args, int64(p.Limit))...)
	if err != nil {
		return nil, wrap(t.failed(err), "list alerts")
	}
	defer rows.Close()
	for rows.Next() {
		a, err := scanAlert(rows)
		if err != nil {
			return nil, wrap(err, "list alerts")
		}
		if f.Match(&a) {
			out = append(out, a)
		}
	}
	return out, wrap(t.failed(rows.Err()), "list alerts")
}

// UpdateAlert implements fleet.Tx.
func (t *tx) UpdateAlert(a fleet.Alert) error {
	n, err := t.update(`UPDATE alerts SET status = ?, acknowledged_at = ?, resolved_at = ? WHERE id = ? AND account_id = ?`,
		string(a.Status), toNullDB(a.AcknowledgedAt), toNullDB(a.ResolvedAt), a.ID, a.AccountID)
	if err != nil {
		return wrap(err, "update alert")
	}
	if n == 0 {
		return fleet.NotFound("alert", a.ID)
	}
	return nil
}

// LatestAlert implements fleet.Tx.
func (t *tx) LatestAlert(accountID, key string) (fleet.Alert, error) {
	a, err := scanAlert(t.queryRow(`SELECT `+alertColumns+` FROM alerts a WHERE a.account_id = ? AND a.dedup_key = ?
		ORDER BY a.id DESC LIMIT 1`, accountID, key))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Alert{}, fleet.NotFound("alert", key)
	}
	return a, wrap(t.failed(err), "read latest alert")
}

// AlertConfigVersion implements fleet.Tx.
func (t *tx) AlertConfigVersion(accountID string) (int64, error) {
	if t.cache != nil {
		if v, ok := t.cache.alerts[accountID]; ok {
			return v, nil
		}
	}
	var v int64
	lock := ""
	if t.lockRows {
		lock = " FOR SHARE" // group_postgres.go
	}
	err := t.queryRow(`SELECT version FROM alert_config WHERE account_id = ?`+lock, accountID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		v, err = 0, nil
	}
	if err == nil && t.cache != nil {
		t.cache.setAlerts(accountID, v)
	}
	return v, wrap(t.failed(err), "read alert configuration version")
}

// BumpAlertConfig implements fleet.Tx.
func (t *tx) BumpAlertConfig(accountID string) error {
	err := t.keeping(cachedAlertConfig, func() error {
		_, err := t.update(`INSERT INTO alert_config (account_id, version) VALUES (?, 1)
		ON CONFLICT (account_id) DO UPDATE SET version = alert_config.version + 1`, accountID)
		return err
	})
	if t.cache != nil {
		t.cache.forgetAlerts(accountID)
	}
	return wrap(err, "move alert configuration version")
}
