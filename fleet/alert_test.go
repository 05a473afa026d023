package fleet_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// alertMovesContract is the alert state machine as API.md §7 writes it.
var alertMovesContract = map[[2]fleet.AlertStatus]bool{
	{"open", "acknowledged"}:     true,
	{"open", "resolved"}:         true,
	{"acknowledged", "resolved"}: true,
}

func TestAlertTransitionTable(t *testing.T) {
	all := []fleet.AlertStatus{fleet.AlertOpen, fleet.AlertAcknowledged, fleet.AlertResolved, "bogus"}
	for _, from := range all {
		for _, to := range all {
			is := is.New(t)
			err := fleet.CheckAlertTransition(from, to)
			if alertMovesContract[[2]fleet.AlertStatus{from, to}] {
				is.NoErr(err) // allowed by the contract
				continue
			}
			is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition)
			is.True(strings.Contains(fleet.ErrorMessage(err), "from "+string(from)+" to "+string(to)))
		}
		var want []fleet.AlertStatus // AlertMoves lists exactly the allowed moves
		for _, to := range all {
			if alertMovesContract[[2]fleet.AlertStatus{from, to}] {
				want = append(want, to)
			}
		}
		got := fleet.AlertMoves(from)
		slices.Sort(got)
		slices.Sort(want)
		is.New(t).Equal(got, want)
	}
}

func newAlerts(t *testing.T) *maint {
	t.Helper()
	return newMaint(t, 1000)
}

func (m *maint) ingest(pts ...fleet.Point) {
	m.t.Helper()
	if _, err := m.svc.IngestLocations(ctx, m.p, m.v.ID, pts); err != nil {
		m.t.Fatal(err)
	}
}

func (m *maint) alerts(f fleet.AlertFilter) []fleet.Alert {
	m.t.Helper()
	l, err := m.svc.ListAlerts(ctx, m.p, f, fleet.ListQuery{Limit: 500})
	if err != nil {
		m.t.Fatal(err)
	}
	return l.Items
}

func (m *maint) rule(in fleet.AlertRule) fleet.AlertRule {
	m.t.Helper()
	r, err := m.svc.CreateAlertRule(ctx, m.p, in, nil)
	if err != nil {
		m.t.Fatal(err)
	}
	return r
}

func spd(v float64) *float64 { return &v }

func dataOf(t *testing.T, a fleet.Alert) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.Data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSpeedingOneBatchOpensOneAlert: a rule at 90 km/h and one batch at 80,
// 95, 100, 85 km/h open exactly one alert, at the first point above.
func TestSpeedingOneBatchOpensOneAlert(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	r := m.rule(fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: spd(90), Severity: fleet.SeverityCritical})
	t0 := m.clk.Now().Add(-time.Minute)
	var pts []fleet.Point
	for i, s := range []float64{80, 95, 100, 85} {
		pts = append(pts, fleet.Point{Latitude: 52.5, Longitude: 13.4, Timestamp: t0.Add(time.Duration(i) * time.Second), Speed: spd(s)})
	}
	m.ingest(pts...)
	as := m.alerts(fleet.AlertFilter{})
	is.Equal(len(as), 1)
	a := as[0]
	is.Equal(a.Type, fleet.AlertSpeeding)
	is.Equal(a.RuleID, r.ID)
	is.Equal(a.VehicleID, m.v.ID)
	is.Equal(a.Severity, fleet.SeverityCritical)
	is.Equal(a.Status, fleet.AlertOpen)
	d := dataOf(t, a)
	is.Equal(d["speed"], 95.0)
	is.Equal(d["timestamp"], t0.Add(time.Second).Format(time.RFC3339Nano))
	is.Equal(len(m.events(fleet.EventAlertCreated)), 1)

	// While it is open (or acknowledged), more speeding opens nothing.
	m.ingest(fleet.Point{Latitude: 52.5, Longitude: 13.4, Timestamp: t0.Add(10 * time.Second), Speed: spd(120)})
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 1)
	_, err := m.svc.AcknowledgeAlert(ctx, m.p, a.ID)
	is.NoErr(err)
	m.ingest(fleet.Point{Latitude: 52.5, Longitude: 13.4, Timestamp: t0.Add(11 * time.Second), Speed: spd(120)})
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 1)
	// Once resolved, the next speeding point opens a new one.
	_, err = m.svc.ResolveAlert(ctx, m.p, a.ID)
	is.NoErr(err)
	m.ingest(fleet.Point{Latitude: 52.5, Longitude: 13.4, Timestamp: t0.Add(12 * time.Second), Speed: spd(89)})
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 1) // at or under the limit: nothing
	m.ingest(fleet.Point{Latitude: 52.5, Longitude: 13.4, Timestamp: t0.Add(13 * time.Second), Speed: spd(91)})
	is.Equal(len(m.alerts(fleet.AlertFilter{Status: fleet.AlertOpen})), 1)
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 2)
}

func TestRuleForOtherVehiclesIgnoresThisOne(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	other, err := m.svc.CreateVehicle(ctx, m.p, fleet.Vehicle{Name: "Van"})
	is.NoErr(err)
	m.rule(fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: spd(50), VehicleIDs: []string{other.ID}})
	disabled := false
	_, err = m.svc.CreateAlertRule(ctx, m.p, fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: spd(50)}, &disabled)
	is.NoErr(err)
	m.ingest(fleet.Point{Latitude: 1, Longitude: 1, Timestamp: m.clk.Now(), Speed: spd(130)})
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 0) // the rule watches another vehicle; the other is disabled
}

// TestGeofenceDriveThrough: a vehicle driving west to east through a
// polygon opens one enter alert at the first point inside and one exit
// alert at the first point outside again.
func TestGeofenceDriveThrough(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	g, err := m.svc.CreateGeofence(ctx, m.p, polygon([][]float64{{13.0, 52.0}, {13.2, 52.0}, {13.2, 52.2}, {13.0, 52.2}, {13.0, 52.0}}))
	is.NoErr(err)
	enter := m.rule(fleet.AlertRule{Type: fleet.AlertGeofenceEnter, GeofenceID: g.ID})
	exit := m.rule(fleet.AlertRule{Type: fleet.AlertGeofenceExit, GeofenceID: g.ID, Severity: fleet.SeverityInfo})
	t0 := m.clk.Now().Add(-time.Hour)
	var pts []fleet.Point
	for i, lon := range []float64{12.8, 12.9, 13.05, 13.1, 13.15, 13.3, 13.4} {
		pts = append(pts, fleet.Point{Latitude: 52.1, Longitude: lon, Timestamp: t0.Add(time.Duration(i) * time.Minute), Speed: spd(50)})
	}
	m.ingest(pts...)
	as := m.alerts(fleet.AlertFilter{})
	is.Equal(len(as), 2)
	is.Equal(as[0].Type, fleet.AlertGeofenceEnter)
	is.Equal(as[0].RuleID, enter.ID)
	is.Equal(dataOf(t, as[0])["timestamp"], t0.Add(2*time.Minute).Format(time.RFC3339))
	is.Equal(dataOf(t, as[0])["longitude"], 13.05)
	is.Equal(dataOf(t, as[0])["geofence_id"], g.ID)
	is.Equal(as[1].Type, fleet.AlertGeofenceExit)
	is.Equal(as[1].RuleID, exit.ID)
	is.Equal(as[1].Severity, fleet.SeverityInfo)
	is.Equal(dataOf(t, as[1])["timestamp"], t0.Add(5*time.Minute).Format(time.RFC3339))

	// A late point inside decides no crossing.
	m.ingest(fleet.Point{Latitude: 52.1, Longitude: 13.1, Timestamp: t0.Add(30 * time.Second)})
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 2)
}

// TestGeofenceCrossingAcrossBatches: the previous position is the
// vehicle's last location, so a crossing between two batches counts; the
// first position ever decides nothing.
func TestGeofenceCrossingAcrossBatches(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	g, err := m.svc.CreateGeofence(ctx, m.p, circle(13.4, 52.5, 500))
	is.NoErr(err)
	m.rule(fleet.AlertRule{Type: fleet.AlertGeofenceEnter, GeofenceID: g.ID})
	m.rule(fleet.AlertRule{Type: fleet.AlertGeofenceExit, GeofenceID: g.ID})
	t0 := m.clk.Now().Add(-time.Hour)
	m.ingest(fleet.Point{Latitude: 52.5, Longitude: 13.4, Timestamp: t0}) // first ever: inside, decides nothing
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 0)
	m.ingest(fleet.Point{Latitude: 52.6, Longitude: 13.4, Timestamp: t0.Add(time.Minute)}) // out
	as := m.alerts(fleet.AlertFilter{})
	is.Equal(len(as), 1)
	is.Equal(as[0].Type, fleet.AlertGeofenceExit)
	m.ingest(fleet.Point{Latitude: 52.501, Longitude: 13.4, Timestamp: t0.Add(2 * time.Minute)}) // back in
	is.Equal(len(m.alerts(fleet.AlertFilter{Type: fleet.AlertGeofenceEnter})), 1)
}

// TestOfflineAlertByTheClock: a vehicle silent past after_minutes raises
// vehicle_offline with no request, once per silence.
func TestOfflineAlertByTheClock(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	r := m.rule(fleet.AlertRule{Type: fleet.AlertVehicleOffline, AfterMinutes: ptrInt(30)})
	m.ingest(fleet.Point{Latitude: 1, Longitude: 1, Timestamp: m.clk.Now()})
	sweep := func() {
		t.Helper()
		_, err := m.svc.Jobs().Sweep(ctx)
		is.NoErr(err)
	}
	m.clk.Advance(29 * time.Minute)
	sweep()
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 0)
	m.clk.Advance(time.Minute) // 30 minutes of silence
	sweep()
	as := m.alerts(fleet.AlertFilter{})
	is.Equal(len(as), 1)
	is.Equal(as[0].Type, fleet.AlertVehicleOffline)
	is.Equal(as[0].RuleID, r.ID)
	is.Equal(as[0].VehicleID, m.v.ID)
	sweep()
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 1) // open: nothing new
	_, err := m.svc.ResolveAlert(ctx, m.p, as[0].ID)
	is.NoErr(err)
	m.clk.Advance(time.Hour)
	sweep()
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 1) // resolved, but the same silence
	m.ingest(fleet.Point{Latitude: 1, Longitude: 1, Timestamp: m.clk.Now()})
	m.clk.Advance(31 * time.Minute)
	sweep()
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 2) // a new silence
}

func ptrInt(i int) *int { return &i }

// TestMaintenanceAlertsOncePerCycle: due_soon and overdue each open one
// alert per service cycle.
func TestMaintenanceAlertsOncePerCycle(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	days := 30
	s, err := m.svc.CreateSchedule(ctx, m.p, fleet.Schedule{VehicleID: m.v.ID, Name: "Inspection", IntervalDays: &days})
	is.NoErr(err)
	m.clk.Advance(23 * 24 * time.Hour)
	_, err = m.svc.Jobs().CheckMaintenance(ctx)
	is.NoErr(err)
	soon := m.alerts(fleet.AlertFilter{Type: fleet.AlertMaintenanceDueSoon})
	is.Equal(len(soon), 1)
	is.Equal(soon[0].VehicleID, m.v.ID)
	is.Equal(soon[0].Severity, fleet.SeverityWarning)
	is.Equal(dataOf(t, soon[0])["schedule_id"], s.ID)
	m.clk.Advance(8 * 24 * time.Hour)
	_, err = m.svc.Jobs().CheckMaintenance(ctx)
	is.NoErr(err)
	_, err = m.svc.Jobs().CheckMaintenance(ctx)
	is.NoErr(err)
	over := m.alerts(fleet.AlertFilter{Type: fleet.AlertMaintenanceOverdue})
	is.Equal(len(over), 1)
	is.Equal(over[0].Severity, fleet.SeverityCritical)
	is.Equal(len(m.alerts(fleet.AlertFilter{})), 2)
}

func TestCustomAlertLifecycle(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	a, err := m.svc.CreateAlert(ctx, m.p, fleet.Alert{VehicleID: m.v.ID, Message: "Driver reports a flat tyre", Data: json.RawMessage(`{"axle":2}`)})
	is.NoErr(err)
	is.Equal(a.Type, fleet.AlertCustom)
	is.Equal(a.Severity, fleet.SeverityWarning)
	is.Equal(a.Status, fleet.AlertOpen)
	a, err = m.svc.AcknowledgeAlert(ctx, m.p, a.ID)
	is.NoErr(err)
	is.Equal(a.Status, fleet.AlertAcknowledged)
	is.Equal(*a.AcknowledgedAt, m.clk.Now())
	_, err = m.svc.AcknowledgeAlert(ctx, m.p, a.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition)
	a, err = m.svc.ResolveAlert(ctx, m.p, a.ID)
	is.NoErr(err)
	is.Equal(a.Status, fleet.AlertResolved)
	_, err = m.svc.ResolveAlert(ctx, m.p, a.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition)
	is.True(strings.Contains(fleet.ErrorMessage(err), "from resolved to resolved"))
	is.Equal(len(m.events(fleet.EventAlertCreated)), 1)
	is.Equal(len(m.events(fleet.EventAlertAcknowledged)), 1)
	ev := m.events(fleet.EventAlertResolved)
	is.Equal(len(ev), 1)
	is.True(strings.Contains(string(ev[0].Data), `"status":"resolved"`))

	_, err = m.svc.CreateAlert(ctx, m.p, fleet.Alert{Message: " ", Severity: "loud", VehicleID: "veh_nope", Data: json.RawMessage(`[1]`)})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	is.Equal(len(err.(*fleet.Error).Details), 4) // message, severity, data, vehicle_id
}

func TestDeleteGeofenceNamedByARuleIsAConflict(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	g, err := m.svc.CreateGeofence(ctx, m.p, circle(0, 0, 100))
	is.NoErr(err)
	r := m.rule(fleet.AlertRule{Type: fleet.AlertGeofenceExit, GeofenceID: g.ID})
	_, err = m.svc.DeleteGeofence(ctx, m.p, g.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
	is.True(strings.Contains(fleet.ErrorMessage(err), r.ID))
	_, err = m.svc.DeleteAlertRule(ctx, m.p, r.ID)
	is.NoErr(err)
	_, err = m.svc.DeleteGeofence(ctx, m.p, g.ID)
	is.NoErr(err)
	_, err = m.svc.Geofence(ctx, m.p, g.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}

func TestRuleValidationNamesEveryField(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	_, err := m.svc.CreateAlertRule(ctx, m.p, fleet.AlertRule{Type: fleet.AlertSpeeding, Severity: "loud", AfterMinutes: ptrInt(5),
		VehicleIDs: []string{"nope", "veh_0000000000000000000000000a"}}, nil)
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	var fields []string
	for _, d := range err.(*fleet.Error).Details {
		fields = append(fields, d.Field)
	}
	is.Equal(fields, []string{"severity", "threshold_kmh", "after_minutes", "vehicle_ids[0]", "vehicle_ids[1]"})
	_, err = m.svc.CreateAlertRule(ctx, m.p, fleet.AlertRule{Type: fleet.AlertGeofenceEnter, GeofenceID: "geo_nope"}, nil)
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	_, err = m.svc.CreateAlertRule(ctx, m.p, fleet.AlertRule{Type: fleet.AlertCustom}, nil)
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
}

// TestCrossingsNearTheAntimeridianAndPoles: the ingest path (its grid of
// cells, its bounding boxes) finds crossings of a ring drawn across ±180
// and of a circle around a pole.
func TestCrossingsNearTheAntimeridianAndPoles(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	g, err := m.svc.CreateGeofence(ctx, m.p, polygon(wrapped))
	is.NoErr(err)
	pole, err := m.svc.CreateGeofence(ctx, m.p, circle(0, 90, 50_000))
	is.NoErr(err)
	for _, id := range []string{g.ID, pole.ID} {
		m.rule(fleet.AlertRule{Type: fleet.AlertGeofenceEnter, GeofenceID: id})
		m.rule(fleet.AlertRule{Type: fleet.AlertGeofenceExit, GeofenceID: id})
	}
	t0 := m.clk.Now().Add(-time.Hour)
	var pts []fleet.Point
	for i, p := range [][2]float64{{0, 160}, {0, 175}, {0, -179.99}, {0, -165}, {89.0, 10}, {89.9, 10}, {89.9, -170}, {89.0, -170}} {
		pts = append(pts, fleet.Point{Latitude: p[0], Longitude: p[1], Timestamp: t0.Add(time.Duration(i) * time.Minute)})
	}
	m.ingest(pts...)
	as := m.alerts(fleet.AlertFilter{})
	is.Equal(len(as), 4)
	want := []struct {
		typ fleet.AlertType
		geo string
		lon float64
	}{{fleet.AlertGeofenceEnter, g.ID, 175}, {fleet.AlertGeofenceExit, g.ID, -165}, {fleet.AlertGeofenceEnter, pole.ID, 10}, {fleet.AlertGeofenceExit, pole.ID, -170}}
	for i, w := range want {
		is.Equal(as[i].Type, w.typ)
		is.Equal(dataOf(t, as[i])["geofence_id"], w.geo)
		is.Equal(dataOf(t, as[i])["longitude"], w.lon)
	}
}

// TestRulesChangedByAnotherServerApplyAtOnce: two services on one store
// (two servers); each keeps compiled rules, and a change through one is
// judged by the other's next ingest.
func TestRulesChangedByAnotherServerApplyAtOnce(t *testing.T) {
	is := is.New(t)
	store := memstore.New()
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	one := fleet.NewService(store, fleet.Options{Now: clock.Now})
	two := fleet.NewService(store, fleet.Options{Now: clock.Now})
	a, _, err := one.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	v, err := one.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck"})
	is.NoErr(err)
	r, err := one.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: spd(100)}, nil)
	is.NoErr(err)
	n := 0
	ingest := func(svc *fleet.Service, speed float64) int {
		t.Helper()
		n++
		_, err := svc.IngestLocations(ctx, p, v.ID, []fleet.Point{{Latitude: 1, Longitude: 1, Timestamp: clock.Now().Add(time.Duration(n-100) * time.Second), Speed: spd(speed)}})
		is.NoErr(err)
		l, err := svc.ListAlerts(ctx, p, fleet.AlertFilter{Status: fleet.AlertOpen}, fleet.ListQuery{})
		is.NoErr(err)
		return len(l.Items)
	}
	is.Equal(ingest(two, 95), 0) // two compiles the rule at 100
	_, err = one.UpdateAlertRule(ctx, p, r.ID, fleet.AlertRulePatch{ThresholdKmh: fleet.Optional[*float64]{Set: true, Value: spd(90)}})
	is.NoErr(err)
	is.Equal(ingest(two, 95), 1) // two sees the rule at 90 at once
	off := false
	_, err = one.UpdateAlertRule(ctx, p, r.ID, fleet.AlertRulePatch{Enabled: fleet.Optional[*bool]{Set: true, Value: &off}})
	is.NoErr(err)
	l, err := two.ListAlerts(ctx, p, fleet.AlertFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	_, err = two.ResolveAlert(ctx, p, l.Items[0].ID)
	is.NoErr(err)
	is.Equal(ingest(two, 150), 0) // disabled through one: two opens nothing
}

// TestDeleteVehicleDropsItFromManyRules: more rules list the vehicle than
// one page holds; every one drops it, and only those left with no vehicle
// are disabled.
func TestDeleteVehicleDropsItFromManyRules(t *testing.T) {
	is := is.New(t)
	m := newMaintOn(t, 1000, fleet.PlanEnterprise)
	other, err := m.svc.CreateVehicle(ctx, m.p, fleet.Vehicle{Name: "Other"})
	is.NoErr(err)
	const n = fleet.MaxPageLimit + 100
	for i := range n {
		ids := []string{m.v.ID}
		if i%2 == 1 {
			ids = append(ids, other.ID)
		}
		m.rule(fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: spd(90), VehicleIDs: ids})
	}
	_, err = m.svc.DeleteVehicle(ctx, m.p, m.v.ID)
	is.NoErr(err)
	seen, disabled := 0, 0
	q := fleet.ListQuery{Limit: fleet.MaxPageLimit}
	for {
		l, err := m.svc.ListAlertRules(ctx, m.p, fleet.AlertRuleFilter{}, q)
		is.NoErr(err)
		for _, r := range l.Items {
			seen++
			if len(r.VehicleIDs) == 0 {
				disabled++
				is.True(!r.Enabled) // not widened to every vehicle
			} else {
				is.Equal(r.VehicleIDs, []string{other.ID})
				is.True(r.Enabled)
			}
		}
		if !l.HasMore {
			break
		}
		q.Cursor = l.NextCursor
	}
	is.Equal(seen, n)
	is.Equal(disabled, n/2)
}
