package memstore

import (
	"slices"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// alertTables hold alert rules, geofences and alerts, with an index of the
// newest alert per account and key.
type alertTables struct {
	rules     *table[fleet.AlertRule]
	geofences *table[fleet.Geofence]
	alerts    *table[fleet.Alert]
	latest    map[string]string // account + "\x00" + key -> newest alert id
	versions  map[string]int64  // account -> alert configuration version
}

func newAlertTables() alertTables {
	return alertTables{
		rules: newTable("alert rule", func(r fleet.AlertRule) string { return r.ID },
			func(r fleet.AlertRule) string { return r.AccountID }, cloneRule),
		geofences: newTable("geofence", func(g fleet.Geofence) string { return g.ID },
			func(g fleet.Geofence) string { return g.AccountID }, cloneGeofence),
		alerts: newTable("alert", func(a fleet.Alert) string { return a.ID },
			func(a fleet.Alert) string { return a.AccountID }, cloneAlert),
		latest:   map[string]string{},
		versions: map[string]int64{},
	}
}

func cloneRule(r fleet.AlertRule) fleet.AlertRule {
	r.ThresholdKmh = clonePtr(r.ThresholdKmh)
	r.AfterMinutes = clonePtr(r.AfterMinutes)
	r.RuleParams = r.RuleParams.Clone()
	r.VehicleIDs = slices.Clone(r.VehicleIDs)
	if r.VehicleIDs == nil {
		r.VehicleIDs = []string{}
	}
	return r
}

func cloneGeofence(g fleet.Geofence) fleet.Geofence {
	g.RadiusM = clonePtr(g.RadiusM)
	g.Geometry.Point = slices.Clone(g.Geometry.Point)
	rings := make([][][]float64, len(g.Geometry.Rings))
	for i, r := range g.Geometry.Rings {
		rings[i] = make([][]float64, len(r))
		for j, p := range r {
			rings[i][j] = slices.Clone(p)
		}
	}
	if g.Geometry.Rings == nil {
		rings = nil
	}
	g.Geometry.Rings = rings
	return g
}

func cloneAlert(a fleet.Alert) fleet.Alert {
	a.Data = slices.Clone(a.Data)
	a.AcknowledgedAt = clonePtr(a.AcknowledgedAt)
	a.ResolvedAt = clonePtr(a.ResolvedAt)
	return a
}

func (t *tx) CreateAlertRule(r fleet.AlertRule) error {
	if err := t.writable(); err != nil {
		return err
	}
	return t.s.al.rules.insert(t.txn, r)
}

func (t *tx) AlertRule(accountID, id string) (fleet.AlertRule, error) {
	return t.s.al.rules.get(accountID, id)
}

func (t *tx) AlertRules(accountID string, f fleet.AlertRuleFilter, p fleet.Page) ([]fleet.AlertRule, error) {
	return t.s.al.rules.list(accountID, p, func(r fleet.AlertRule) bool { return f.Match(&r) }), nil
}

func (t *tx) CountAlertRules(accountID string) (int, error) {
	return len(t.s.al.rules.order[accountID]), nil
}

func (t *tx) UpdateAlertRule(r fleet.AlertRule) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.al.rules.get(r.AccountID, r.ID)
	if err != nil {
		return err
	}
	r.Type, r.CreatedAt = old.Type, old.CreatedAt
	return t.s.al.rules.put(t.txn, r)
}

func (t *tx) DeleteAlertRule(accountID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	return t.s.al.rules.delete(t.txn, accountID, id)
}

func (t *tx) EnabledAlertRules(accountID string) ([]fleet.AlertRule, []fleet.Geofence, error) {
	var rules []fleet.AlertRule
	var geos []fleet.Geofence
	seen := map[string]bool{}
	for _, id := range t.s.al.rules.order[accountID] {
		r := t.s.al.rules.byID[id]
		if !r.Enabled {
			continue
		}
		rules = append(rules, cloneRule(r))
		if r.GeofenceID != "" && !seen[r.GeofenceID] {
			seen[r.GeofenceID] = true
			if g, err := t.s.al.geofences.get(accountID, r.GeofenceID); err == nil {
				geos = append(geos, g)
			}
		}
	}
	slices.SortFunc(geos, func(a, b fleet.Geofence) int { return strings.Compare(a.ID, b.ID) })
	return rules, geos, nil
}

func (t *tx) EnabledRulesOfType(typ fleet.AlertType, after string, limit int) ([]fleet.AlertRule, error) {
	var out []fleet.AlertRule
	for _, r := range t.s.al.rules.byID {
		if r.Enabled && r.Type == typ && r.ID > after {
			out = append(out, cloneRule(r))
		}
	}
	slices.SortFunc(out, func(a, b fleet.AlertRule) int { return strings.Compare(a.ID, b.ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (t *tx) CreateGeofence(g fleet.Geofence) error {
	if err := t.writable(); err != nil {
		return err
	}
	return t.s.al.geofences.insert(t.txn, g)
}

func (t *tx) Geofence(accountID, id string) (fleet.Geofence, error) {
	return t.s.al.geofences.get(accountID, id)
}

func (t *tx) Geofences(accountID string, p fleet.Page) ([]fleet.Geofence, error) {
	return t.s.al.geofences.list(accountID, p, nil), nil
}

func (t *tx) CountGeofences(accountID string) (int, error) {
	return len(t.s.al.geofences.order[accountID]), nil
}

func (t *tx) UpdateGeofence(g fleet.Geofence) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.al.geofences.get(g.AccountID, g.ID)
	if err != nil {
		return err
	}
	g.CreatedAt = old.CreatedAt
	return t.s.al.geofences.put(t.txn, g)
}

func (t *tx) DeleteGeofence(accountID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	return t.s.al.geofences.delete(t.txn, accountID, id)
}

func (t *tx) CreateAlert(a fleet.Alert) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := t.s.al.alerts.insert(t.txn, a); err != nil {
		return err
	}
	if a.Key != "" {
		k := a.AccountID + "\x00" + a.Key
		prev, ok := t.s.al.latest[k]
		if !ok || a.ID > prev {
			t.s.al.latest[k] = a.ID
			t.undo(func() {
				if ok {
					t.s.al.latest[k] = prev
				} else {
					delete(t.s.al.latest, k)
				}
			})
		}
	}
	return nil
}

func (t *tx) Alert(accountID, id string) (fleet.Alert, error) {
	return t.s.al.alerts.get(accountID, id)
}

func (t *tx) Alerts(accountID string, f fleet.AlertFilter, p fleet.Page) ([]fleet.Alert, error) {
	return t.s.al.alerts.list(accountID, p, func(a fleet.Alert) bool { return f.Match(&a) }), nil
}

func (t *tx) UpdateAlert(a fleet.Alert) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.al.alerts.get(a.AccountID, a.ID)
	if err != nil {
		return err
	}
	old.Status, old.AcknowledgedAt, old.ResolvedAt = a.Status, a.AcknowledgedAt, a.ResolvedAt
	return t.s.al.alerts.put(t.txn, old)
}

func (t *tx) LatestAlert(accountID, key string) (fleet.Alert, error) {
	id, ok := t.s.al.latest[accountID+"\x00"+key]
	if !ok {
		return fleet.Alert{}, fleet.NotFound("alert", key)
	}
	return t.s.al.alerts.get(accountID, id)
}

func (t *tx) AlertConfigVersion(accountID string) (int64, error) {
	return t.s.al.versions[accountID], nil
}

func (t *tx) BumpAlertConfig(accountID string) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, ok := t.s.al.versions[accountID]
	t.s.al.versions[accountID] = old + 1
	t.undo(func() {
		if ok {
			t.s.al.versions[accountID] = old
		} else {
			delete(t.s.al.versions, accountID)
		}
	})
	return nil
}
