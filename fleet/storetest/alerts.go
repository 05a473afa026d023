package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// NewGeofence returns a polygon geofence with a hole, not stored yet.
func NewGeofence(accountID, name string) fleet.Geofence {
	return fleet.Geofence{
		ID: fleet.NewID(fleet.PrefixGeofence), AccountID: accountID, Name: name,
		Geometry: fleet.Geometry{Type: fleet.GeometryPolygon, Rings: [][][]float64{
			{{13.0, 52.0}, {13.5, 52.0}, {13.5, 52.5}, {13.0, 52.5}, {13.0, 52.0}},
			{{13.1, 52.1}, {13.1, 52.2}, {13.2, 52.2}, {13.2, 52.1}, {13.1, 52.1}},
		}},
		CreatedAt: T0, UpdatedAt: T0.Add(time.Second),
	}
}

// NewRule returns a speeding rule of the account, not stored yet.
func NewRule(accountID string, typ fleet.AlertType) fleet.AlertRule {
	r := fleet.AlertRule{ID: fleet.NewID(fleet.PrefixRule), AccountID: accountID, Type: typ, Severity: fleet.SeverityCritical,
		VehicleIDs: []string{}, Enabled: true, CreatedAt: T0, UpdatedAt: T0}
	switch typ {
	case fleet.AlertSpeeding:
		r.ThresholdKmh = f64(90.5)
	case fleet.AlertVehicleOffline:
		m := 30
		r.AfterMinutes = &m
	}
	return r
}

// NewAlert returns an open alert of the account, not stored yet.
func NewAlert(accountID, vehicleID, key string) fleet.Alert {
	return fleet.Alert{ID: fleet.NewID(fleet.PrefixAlert), AccountID: accountID, Type: fleet.AlertSpeeding,
		Severity: fleet.SeverityWarning, Status: fleet.AlertOpen, VehicleID: vehicleID, RuleID: fleet.NewID(fleet.PrefixRule),
		Message: "fast", Data: json.RawMessage(`{"speed":95.5}`), Key: key, CreatedAt: T0}
}

// RunAlerts checks the alerts area (fleet.AlertTx): rules, geofences and
// alerts scoped by account, filters, counts for the plan's caps, the rules
// ingest evaluates, and the configuration version.
func RunAlerts(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"GeofenceRoundTrip", testGeofenceRoundTrip},
		{"AlertRuleRoundTrip", testAlertRuleRoundTrip},
		{"TelematicsRuleRoundTrip", testTelematicsRuleRoundTrip},
		{"AlertRulesByVehicle", testAlertRulesByVehicle},
		{"CountAlertRulesAndGeofences", testCountAlertRulesAndGeofences},
		{"EnabledAlertRules", testEnabledAlertRules},
		{"AlertRoundTrip", testAlertRoundTrip},
		{"AlertFilters", testAlertFilters},
		{"LatestAlert", testLatestAlert},
		{"AlertConfigVersion", testAlertConfigVersion},
	})
}

func mustUpdate(t *testing.T, s fleet.Store, fn func(tx fleet.Tx) error) {
	t.Helper()
	if err := s.Update(ctx, fn); err != nil {
		t.Fatal(err)
	}
}

func testGeofenceRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	g := NewGeofence(a.ID, "Depot")
	r := 250.5
	c := fleet.Geofence{ID: fleet.NewID(fleet.PrefixGeofence), AccountID: a.ID, Name: "Yard",
		Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{-179.5, -45.25}}, RadiusM: &r, CreatedAt: T0, UpdatedAt: T0}
	mustUpdate(t, s, func(tx fleet.Tx) error {
		if err := tx.CreateGeofence(g); err != nil {
			return err
		}
		return tx.CreateGeofence(c)
	})
	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateGeofence(g) })
	is.Equal(code(err), fleet.CodeConflict) // same id
	var got, gotC fleet.Geofence
	var list []fleet.Geofence
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		if got, err = tx.Geofence(a.ID, g.ID); err != nil {
			return err
		}
		if gotC, err = tx.Geofence(a.ID, c.ID); err != nil {
			return err
		}
		list, err = tx.Geofences(a.ID, fleet.Page{Limit: 10})
		return err
	}))
	is.Equal(got, g)
	is.Equal(gotC, c)
	is.Equal(len(list), 2)
	is.Equal(list[0].ID, g.ID)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Geofence(b.ID, g.ID)
		is.Equal(code(err), fleet.CodeNotFound) // another account's
		l, err := tx.Geofences(b.ID, fleet.Page{Limit: 10})
		is.NoErr(err) // another account's geofences: none, and no error
		is.Equal(len(l), 0)
		l, err = tx.Geofences(a.ID, fleet.Page{After: g.ID, Limit: 10})
		is.Equal(len(l), 1)
		return err
	}))
	g.Name, g.Geometry.Rings = "Depot 2", g.Geometry.Rings[:1]
	g.UpdatedAt = T0.Add(time.Hour)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateGeofence(g) })
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Geofence(a.ID, g.ID); return err }))
	is.Equal(got, g)
	wrong := g
	wrong.AccountID = b.ID
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateGeofence(wrong) })), fleet.CodeNotFound)
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteGeofence(b.ID, g.ID) })), fleet.CodeNotFound)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.DeleteGeofence(a.ID, g.ID) })
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Geofence(a.ID, g.ID)
		is.Equal(code(err), fleet.CodeNotFound)
		return nil
	}))
}

func testAlertRuleRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "Truck")
	g := NewGeofence(a.ID, "Depot")
	speed := NewRule(a.ID, fleet.AlertSpeeding)
	speed.VehicleIDs = []string{v.ID}
	enter := NewRule(a.ID, fleet.AlertGeofenceEnter)
	enter.GeofenceID = g.ID
	mustUpdate(t, s, func(tx fleet.Tx) error {
		if err := tx.CreateGeofence(g); err != nil {
			return err
		}
		if err := tx.CreateAlertRule(speed); err != nil {
			return err
		}
		return tx.CreateAlertRule(enter)
	})
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateAlertRule(speed) })), fleet.CodeConflict)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.AlertRule(a.ID, speed.ID)
		is.NoErr(err)
		is.Equal(got, speed)
		got, err = tx.AlertRule(a.ID, enter.ID)
		is.NoErr(err)
		is.Equal(got, enter)
		_, err = tx.AlertRule(b.ID, speed.ID)
		is.Equal(code(err), fleet.CodeNotFound)
		all, err := tx.AlertRules(a.ID, fleet.AlertRuleFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(all), 2)
		byFence, err := tx.AlertRules(a.ID, fleet.AlertRuleFilter{GeofenceID: g.ID}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(byFence), 1)
		is.Equal(byFence[0].ID, enter.ID)
		byType, err := tx.AlertRules(a.ID, fleet.AlertRuleFilter{Type: fleet.AlertSpeeding}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(byType), 1)
		other, err := tx.AlertRules(b.ID, fleet.AlertRuleFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(other), 0)
		return nil
	}))
	speed.Enabled, speed.Severity, speed.ThresholdKmh, speed.VehicleIDs = false, fleet.SeverityInfo, f64(120), []string{}
	speed.UpdatedAt = T0.Add(time.Hour)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateAlertRule(speed) })
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.AlertRule(a.ID, speed.ID)
		is.Equal(got, speed)
		return err
	}))
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteAlertRule(b.ID, speed.ID) })), fleet.CodeNotFound)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.DeleteAlertRule(a.ID, speed.ID) })
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.AlertRule(a.ID, speed.ID)
		is.Equal(code(err), fleet.CodeNotFound)
		return nil
	}))
}

// testAlertRulesByVehicle: the VehicleID filter finds the rules whose
// vehicle_ids list the vehicle, exactly (no prefix, no wildcard), not the
// rules that watch every vehicle, and pages like any list.
// testTelematicsRuleRoundTrip: the settings of the telematics rule types
// come back as they went in, an empty list (every alarm) as an empty list
// and an unset setting as nil, through create, update and the enabled
// rules ingest reads.
func testTelematicsRuleRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	alarm := NewRule(a.ID, fleet.AlertAlarm)
	alarm.Alarms = []string{}
	hours := NewRule(a.ID, fleet.AlertIgnitionOn)
	hours.OutsideHours = &fleet.WorkingHours{TZ: "Europe/Berlin", Days: []string{"mon", "fri"}, From: "22:00", To: "06:00"}
	idle := NewRule(a.ID, fleet.AlertIdling)
	m := 15
	idle.AfterMinutes = &m
	fuel := NewRule(a.ID, fleet.AlertFuelDrop)
	fuel.ThresholdL = f64(12.5)
	harsh := NewRule(a.ID, fleet.AlertHarshDriving)
	harsh.Types, harsh.ThresholdG = []string{"hard_braking"}, f64(0.35)
	power := NewRule(a.ID, fleet.AlertPowerCut)
	power.ThresholdV = f64(11.5)
	rules := []fleet.AlertRule{alarm, hours, idle, fuel, harsh, power}
	mustUpdate(t, s, func(tx fleet.Tx) error {
		for _, r := range rules {
			if err := tx.CreateAlertRule(r); err != nil {
				return err
			}
		}
		return nil
	})
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		for _, r := range rules {
			got, err := tx.AlertRule(a.ID, r.ID)
			is.NoErr(err)
			is.Equal(got, r) // read back as written
		}
		enabled, _, err := tx.EnabledAlertRules(a.ID)
		is.NoErr(err)
		is.Equal(enabled, rules) // in id order, as created
		return nil
	}))
	alarm.Alarms = []string{"sos", "tow"}
	hours.OutsideHours = nil
	fuel.ThresholdL, fuel.ThresholdPercent = nil, f64(7)
	mustUpdate(t, s, func(tx fleet.Tx) error {
		for _, r := range []fleet.AlertRule{alarm, hours, fuel} {
			if err := tx.UpdateAlertRule(r); err != nil {
				return err
			}
		}
		return nil
	})
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		for _, r := range []fleet.AlertRule{alarm, hours, fuel} {
			got, err := tx.AlertRule(a.ID, r.ID)
			is.NoErr(err)
			is.Equal(got, r) // updated
		}
		return nil
	}))
}

func testAlertRulesByVehicle(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	const v1, v2 = "veh_ab", "veh_cd"
	rule := func(acc string, ids ...string) fleet.AlertRule {
		r := NewRule(acc, fleet.AlertSpeeding)
		r.VehicleIDs = append([]string{}, ids...)
		return r
	}
	only1, both, only2, every := rule(a.ID, v1), rule(a.ID, v2, v1), rule(a.ID, v2), rule(a.ID)
	lookalikes := rule(a.ID, "veh_abc", "vehxab", "veh_a", `veh_ab\`)
	theirs := rule(b.ID, v1)
	mustUpdate(t, s, func(tx fleet.Tx) error {
		for _, r := range []fleet.AlertRule{only1, both, only2, every, lookalikes, theirs} {
			if err := tx.CreateAlertRule(r); err != nil {
				return err
			}
		}
		return nil
	})
	ids := func(acc, vehicleID string, p fleet.Page) []string {
		out := []string{}
		is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
			rs, err := tx.AlertRules(acc, fleet.AlertRuleFilter{VehicleID: vehicleID}, p)
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return err
		}))
		return out
	}
	all := fleet.Page{Limit: 10}
	is.Equal(ids(a.ID, v1, all), []string{only1.ID, both.ID})
	is.Equal(ids(a.ID, v2, all), []string{both.ID, only2.ID})
	is.Equal(ids(b.ID, v1, all), []string{theirs.ID}) // per account
	is.Equal(ids(a.ID, "veh_zz", all), []string{})
	is.Equal(ids(a.ID, "veh_%", all), []string{}) // no wildcard
	is.Equal(ids(a.ID, v1, fleet.Page{Limit: 1}), []string{only1.ID})
	is.Equal(ids(a.ID, v1, fleet.Page{After: only1.ID, Limit: 10}), []string{both.ID})
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		rs, err := tx.AlertRules(a.ID, fleet.AlertRuleFilter{Type: fleet.AlertVehicleOffline, VehicleID: v1}, all)
		is.Equal(len(rs), 0) // filters combine
		return err
	}))
}

// testCountAlertRulesAndGeofences: counts are per account, include
// disabled rules, see the transaction's own writes and follow deletes and
// rollbacks.
func testCountAlertRulesAndGeofences(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	counts := func(acc string) (rules, geos int) {
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
			if rules, err = tx.CountAlertRules(acc); err != nil {
				return err
			}
			geos, err = tx.CountGeofences(acc)
			return err
		}))
		return rules, geos
	}
	r, g := counts(a.ID)
	is.Equal(r+g, 0)
	off := NewRule(a.ID, fleet.AlertVehicleOffline)
	off.Enabled = false
	g1 := NewGeofence(a.ID, "one")
	mustUpdate(t, s, func(tx fleet.Tx) error {
		for _, r := range []fleet.AlertRule{NewRule(a.ID, fleet.AlertSpeeding), off, NewRule(b.ID, fleet.AlertSpeeding)} {
			if err := tx.CreateAlertRule(r); err != nil {
				return err
			}
		}
		for _, g := range []fleet.Geofence{g1, NewGeofence(a.ID, "two"), NewGeofence(a.ID, "three")} {
			if err := tx.CreateGeofence(g); err != nil {
				return err
			}
		}
		n, err := tx.CountGeofences(a.ID) // the transaction sees its own writes
		is.Equal(n, 3)
		return err
	})
	r, g = counts(a.ID)
	is.Equal(r, 2) // the disabled rule counts
	is.Equal(g, 3)
	r, g = counts(b.ID)
	is.Equal(r, 1) // per account
	is.Equal(g, 0)
	errBoom := errors.New("boom")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.CreateAlertRule(NewRule(a.ID, fleet.AlertSpeeding)); err != nil {
			return err
		}
		if err := tx.CreateGeofence(NewGeofence(a.ID, "four")); err != nil {
			return err
		}
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	mustUpdate(t, s, func(tx fleet.Tx) error {
		if err := tx.DeleteAlertRule(a.ID, off.ID); err != nil {
			return err
		}
		return tx.DeleteGeofence(a.ID, g1.ID)
	})
	r, g = counts(a.ID)
	is.Equal(r, 1) // rolled back, then one deleted
	is.Equal(g, 2)
}

func testEnabledAlertRules(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	g1, g2, unused := NewGeofence(a.ID, "one"), NewGeofence(a.ID, "two"), NewGeofence(a.ID, "unused")
	enter := NewRule(a.ID, fleet.AlertGeofenceEnter)
	enter.GeofenceID = g1.ID
	exit := NewRule(a.ID, fleet.AlertGeofenceExit)
	exit.GeofenceID = g1.ID
	off := NewRule(a.ID, fleet.AlertGeofenceExit)
	off.GeofenceID, off.Enabled = g2.ID, false
	speed := NewRule(a.ID, fleet.AlertSpeeding)
	offline := NewRule(a.ID, fleet.AlertVehicleOffline)
	offlineB := NewRule(b.ID, fleet.AlertVehicleOffline)
	offlineOff := NewRule(b.ID, fleet.AlertVehicleOffline)
	offlineOff.Enabled = false
	mustUpdate(t, s, func(tx fleet.Tx) error {
		for _, g := range []fleet.Geofence{g1, g2, unused} {
			if err := tx.CreateGeofence(g); err != nil {
				return err
			}
		}
		for _, r := range []fleet.AlertRule{enter, exit, off, speed, offline, offlineB, offlineOff} {
			if err := tx.CreateAlertRule(r); err != nil {
				return err
			}
		}
		return nil
	})
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		rules, geos, err := tx.EnabledAlertRules(a.ID)
		is.NoErr(err)
		is.Equal(len(rules), 4) // not the disabled one
		for i, want := range []string{enter.ID, exit.ID, speed.ID, offline.ID} {
			is.Equal(rules[i].ID, want)
		}
		is.Equal(len(geos), 1) // only the geofence an enabled rule names
		is.Equal(geos[0], g1)
		rules, geos, err = tx.EnabledAlertRules(fleet.NewID(fleet.PrefixAccount))
		is.NoErr(err)
		is.Equal(len(rules)+len(geos), 0)

		rs, err := tx.EnabledRulesOfType(fleet.AlertVehicleOffline, "", 10)
		is.NoErr(err)
		is.Equal(len(rs), 2) // of both accounts, enabled only
		is.Equal(rs[0].ID, offline.ID)
		is.Equal(rs[1].ID, offlineB.ID)
		rs, err = tx.EnabledRulesOfType(fleet.AlertVehicleOffline, offline.ID, 10)
		is.NoErr(err)
		is.Equal(len(rs), 1)
		rs, err = tx.EnabledRulesOfType(fleet.AlertVehicleOffline, "", 1)
		is.NoErr(err)
		is.Equal(len(rs), 1)
		return nil
	}))
}

func testAlertRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	al := NewAlert(a.ID, "veh_x", "k1")
	custom := fleet.Alert{ID: fleet.NewID(fleet.PrefixAlert), AccountID: a.ID, Type: fleet.AlertCustom, Severity: fleet.SeverityInfo,
		Status: fleet.AlertOpen, Message: "note", Data: json.RawMessage(`{}`), CreatedAt: T0.Add(time.Microsecond)}
	mustUpdate(t, s, func(tx fleet.Tx) error {
		if err := tx.CreateAlert(al); err != nil {
			return err
		}
		return tx.CreateAlert(custom)
	})
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateAlert(al) })), fleet.CodeConflict)
	get := func(acc, id string) (fleet.Alert, error) {
		var got fleet.Alert
		err := s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Alert(acc, id); return err })
		return got, err
	}
	got, err := get(a.ID, al.ID)
	is.NoErr(err)
	is.Equal(got, al)
	got, err = get(a.ID, custom.ID)
	is.NoErr(err)
	is.Equal(got, custom)
	_, err = get(b.ID, al.ID)
	is.Equal(code(err), fleet.CodeNotFound)

	ack, res := T0.Add(time.Minute), T0.Add(time.Hour+time.Microsecond)
	moved := al
	moved.Status, moved.AcknowledgedAt, moved.ResolvedAt = fleet.AlertResolved, &ack, &res
	moved.Message = "ignored: only the status fields change"
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateAlert(moved) })
	got, err = get(a.ID, al.ID)
	is.NoErr(err)
	want := al
	want.Status, want.AcknowledgedAt, want.ResolvedAt = fleet.AlertResolved, &ack, &res
	is.Equal(got, want)
	wrong := moved
	wrong.AccountID = b.ID
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateAlert(wrong) })), fleet.CodeNotFound)
}

func testAlertFilters(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	var all []fleet.Alert
	for i := range 6 {
		al := NewAlert(a.ID, []string{"veh_a", "veh_b"}[i%2], "")
		al.CreatedAt = T0.Add(time.Duration(i) * time.Hour)
		al.Severity = []fleet.Severity{fleet.SeverityInfo, fleet.SeverityWarning, fleet.SeverityCritical}[i%3]
		if i >= 4 {
			al.Status, al.Type = fleet.AlertResolved, fleet.AlertCustom
		}
		all = append(all, al)
	}
	mustUpdate(t, s, func(tx fleet.Tx) error {
		for _, al := range all {
			if err := tx.CreateAlert(al); err != nil {
				return err
			}
		}
		return tx.CreateAlert(NewAlert(b.ID, "veh_a", ""))
	})
	count := func(f fleet.AlertFilter, p fleet.Page) int {
		var n int
		is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
			l, err := tx.Alerts(a.ID, f, p)
			for i := range l {
				is.True(f.Match(&l[i]))
			}
			n = len(l)
			return err
		}))
		return n
	}
	page := fleet.Page{Limit: 100}
	is.Equal(count(fleet.AlertFilter{}, page), 6)
	is.Equal(count(fleet.AlertFilter{Status: fleet.AlertOpen}, page), 4)
	is.Equal(count(fleet.AlertFilter{Type: fleet.AlertCustom}, page), 2)
	is.Equal(count(fleet.AlertFilter{Severity: fleet.SeverityCritical}, page), 2)
	is.Equal(count(fleet.AlertFilter{VehicleID: "veh_a"}, page), 3)
	is.Equal(count(fleet.AlertFilter{From: T0.Add(time.Hour), To: T0.Add(3 * time.Hour)}, page), 3) // both bounds inclusive
	is.Equal(count(fleet.AlertFilter{Status: fleet.AlertOpen, VehicleID: "veh_b"}, page), 2)
	is.Equal(count(fleet.AlertFilter{}, fleet.Page{After: all[1].ID, Limit: 3}), 3)
	is.Equal(count(fleet.AlertFilter{Status: fleet.AlertResolved}, fleet.Page{After: all[1].ID, Limit: 1}), 1)

	// Newest first: descending ids, before the cursor, the filter and the
	// account kept (the other account's alert is the newest of all).
	newest := func(f fleet.AlertFilter, after string, limit int) []string {
		ids := []string{}
		is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
			l, err := tx.Alerts(a.ID, f, fleet.Page{After: after, Limit: limit, Newest: true})
			for _, al := range l {
				ids = append(ids, al.ID)
			}
			return err
		}))
		return ids
	}
	is.Equal(newest(fleet.AlertFilter{}, "", 3), []string{all[5].ID, all[4].ID, all[3].ID})
	is.Equal(newest(fleet.AlertFilter{}, all[3].ID, 10), []string{all[2].ID, all[1].ID, all[0].ID})
	is.Equal(newest(fleet.AlertFilter{Status: fleet.AlertOpen}, "", 3), []string{all[3].ID, all[2].ID, all[1].ID})
	is.Equal(newest(fleet.AlertFilter{Status: fleet.AlertOpen, VehicleID: "veh_a"}, all[3].ID, 10), []string{all[2].ID, all[0].ID})
	is.Equal(newest(fleet.AlertFilter{}, all[0].ID, 10), []string{})
}

func testLatestAlert(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	first, second := NewAlert(a.ID, "veh_a", "rule_x/veh_a"), NewAlert(a.ID, "veh_a", "rule_x/veh_a")
	second.Status = fleet.AlertAcknowledged
	latest := func(acc, key string) (fleet.Alert, error) {
		var got fleet.Alert
		err := s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.LatestAlert(acc, key); return err })
		return got, err
	}
	_, err := latest(a.ID, first.Key)
	is.Equal(code(err), fleet.CodeNotFound)
	mustUpdate(t, s, func(tx fleet.Tx) error {
		if err := tx.CreateAlert(first); err != nil {
			return err
		}
		got, err := tx.LatestAlert(a.ID, first.Key) // the transaction sees its own write
		is.NoErr(err)
		is.Equal(got.ID, first.ID)
		return tx.CreateAlert(second)
	})
	got, err := latest(a.ID, first.Key)
	is.NoErr(err)
	is.Equal(got, second)
	_, err = latest(b.ID, first.Key)
	is.Equal(code(err), fleet.CodeNotFound) // keys are per account
	_, err = latest(a.ID, "rule_x/veh_b")
	is.Equal(code(err), fleet.CodeNotFound)

	// A rolled-back alert is not the latest.
	third := NewAlert(a.ID, "veh_a", first.Key)
	errBoom := errors.New("boom")
	err = s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.CreateAlert(third); err != nil {
			return err
		}
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	got, err = latest(a.ID, first.Key)
	is.NoErr(err)
	is.Equal(got.ID, second.ID)
}

func testAlertConfigVersion(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	version := func(acc string) int64 {
		var v int64
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { v, err = tx.AlertConfigVersion(acc); return err }))
		return v
	}
	is.Equal(version(a.ID), int64(0))
	mustUpdate(t, s, func(tx fleet.Tx) error {
		if err := tx.BumpAlertConfig(a.ID); err != nil {
			return err
		}
		v, err := tx.AlertConfigVersion(a.ID) // the transaction sees its own bump
		is.Equal(v, int64(1))
		if err != nil {
			return err
		}
		return tx.BumpAlertConfig(a.ID)
	})
	is.Equal(version(a.ID), int64(2))
	is.Equal(version(b.ID), int64(0)) // per account
	errBoom := errors.New("boom")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.BumpAlertConfig(a.ID); err != nil {
			return err
		}
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	is.Equal(version(a.ID), int64(2)) // rolled back
}
