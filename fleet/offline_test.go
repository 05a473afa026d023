package fleet_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// countingStore counts what the offline check reads: the vehicles store
// reads return (examined), and the latest-alert lookups.
type countingStore struct {
	fleet.Store
	c *counts
}

type counts struct {
	mu               sync.Mutex
	examined, latest int
}

func (c *counts) add(examined, latest int) {
	c.mu.Lock()
	c.examined += examined
	c.latest += latest
	c.mu.Unlock()
}

func (c *counts) take() (examined, latest int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	examined, latest = c.examined, c.latest
	c.examined, c.latest = 0, 0
	return examined, latest
}

func (s countingStore) View(ctx context.Context, fn func(fleet.Tx) error) error {
	return s.Store.View(ctx, func(tx fleet.Tx) error { return fn(countingTx{tx, s.c}) })
}

func (s countingStore) Update(ctx context.Context, fn func(fleet.Tx) error) error {
	return s.Store.Update(ctx, func(tx fleet.Tx) error { return fn(countingTx{tx, s.c}) })
}

type countingTx struct {
	fleet.Tx
	c *counts
}

func (t countingTx) Vehicles(accountID string, f fleet.VehicleFilter, p fleet.Page) ([]fleet.Vehicle, error) {
	vs, err := t.Tx.Vehicles(accountID, f, p)
	t.c.add(len(vs), 0)
	return vs, err
}

func (t countingTx) VehiclesGoneSilent(since, now time.Time, minutes []int, after string, limit int) ([]fleet.Vehicle, error) {
	vs, err := t.Tx.VehiclesGoneSilent(since, now, minutes, after, limit)
	t.c.add(len(vs), 0)
	return vs, err
}

func (t countingTx) LatestAlert(accountID, key string) (fleet.Alert, error) {
	t.c.add(0, 1)
	return t.Tx.LatestAlert(accountID, key)
}

// TestOfflineCheckCostFollowsSilences: a free account at its cap of
// vehicle_offline rules (20) with 200 vehicles. After a server's first
// pass, which checks every rule against every vehicle once, a pass reads
// only the vehicles whose silence reached a rule's after_minutes since the
// previous pass: none while no silence does, about ten a pass while they
// do, not 20 x 200 every five seconds.
func TestOfflineCheckCostFollowsSilences(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	c := &counts{}
	svc := fleet.NewService(countingStore{memstore.New(), c}, fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanFree})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	rules := fleet.PlanFree.Limits().AlertRules
	for i := range rules {
		m := 30 + 30*i // 30 minutes, then an hour, ...
		_, err := svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertVehicleOffline, AfterMinutes: &m}, nil)
		is.NoErr(err)
	}
	t0 := clock.Now()
	const vehicles = 200
	for i := range vehicles {
		v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck"})
		is.NoErr(err)
		// Last reports half a second apart: 100 seconds for all.
		_, err = svc.IngestLocations(ctx, p, v.ID, []fleet.Point{{Latitude: 1, Longitude: 1, Timestamp: t0.Add(time.Duration(i) * 500 * time.Millisecond)}})
		is.NoErr(err)
	}
	pass := func() (examined, latest, opened int) {
		t.Helper()
		c.take()
		opened, err := svc.Jobs().CheckOfflineAlerts(ctx)
		is.NoErr(err)
		examined, latest = c.take()
		return examined, latest, opened
	}
	clock.Set(t0.Add(2 * time.Minute))
	examined, _, _ := pass()
	is.Equal(examined, rules*vehicles) // the first pass: every rule, every vehicle, once

	// Quiet: no silence reaches 30 minutes.
	for clock.Now().Before(t0.Add(29 * time.Minute)) {
		clock.Advance(time.Minute)
		examined, latest, opened := pass()
		is.Equal(examined, 0)
		is.Equal(latest, 0)
		is.Equal(opened, 0)
	}
	// Every five seconds, the vehicles whose silence reached 30 minutes
	// in them: about ten each.
	clock.Set(t0.Add(30 * time.Minute))
	examined, _, total := pass()
	is.Equal(examined, 1) // the first vehicle, at 30 minutes exactly
	for clock.Now().Before(t0.Add(30*time.Minute + 110*time.Second)) {
		clock.Advance(5 * time.Second)
		examined, latest, opened := pass()
		is.True(examined <= 11)
		is.Equal(opened, examined)    // each owes its alert
		is.True(latest <= 2*examined) // looked up before and in the write
		total += opened
	}
	is.Equal(total, vehicles)
	l, err := svc.ListAlerts(ctx, p, fleet.AlertFilter{Type: fleet.AlertVehicleOffline}, fleet.ListQuery{Limit: 500})
	is.NoErr(err)
	is.Equal(len(l.Items), vehicles) // one per vehicle, of the 30-minute rule
}

// offlineEnv is an account with one vehicle that reported at t0 and a
// service whose offline check runs every 30 seconds of the clock, so that
// every pass but the first looks only at the silences reached since the
// previous one.
type offlineEnv struct {
	t     *testing.T
	svc   *fleet.Service
	clock *testclock.Clock
	p     fleet.Principal
	v     fleet.Vehicle
	t0    time.Time
}

func newOfflineEnv(t *testing.T) *offlineEnv {
	t.Helper()
	e := &offlineEnv{t: t}
	e.svc, e.clock = newService(t)
	a, _, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	e.p = fleet.SystemPrincipal(a)
	if e.v, err = e.svc.CreateVehicle(ctx, e.p, fleet.Vehicle{Name: "Truck"}); err != nil {
		t.Fatal(err)
	}
	e.t0 = e.clock.Now()
	e.report(e.t0)
	e.pass()
	return e
}

func (e *offlineEnv) report(at time.Time) {
	e.t.Helper()
	if _, err := e.svc.IngestLocations(ctx, e.p, e.v.ID, []fleet.Point{{Latitude: 1, Longitude: 1, Timestamp: at}}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *offlineEnv) pass() {
	e.t.Helper()
	if _, err := e.svc.Jobs().CheckOfflineAlerts(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// until runs the check every 30 seconds of the clock up to d after t0.
func (e *offlineEnv) until(d time.Duration) {
	e.t.Helper()
	for e.clock.Now().Before(e.t0.Add(d)) {
		e.clock.Advance(30 * time.Second)
		e.pass()
	}
}

func (e *offlineEnv) offline() []fleet.Alert {
	e.t.Helper()
	l, err := e.svc.ListAlerts(ctx, e.p, fleet.AlertFilter{Type: fleet.AlertVehicleOffline}, fleet.ListQuery{Limit: 500})
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

func (e *offlineEnv) rule(minutes int) fleet.AlertRule {
	e.t.Helper()
	r, err := e.svc.CreateAlertRule(ctx, e.p, fleet.AlertRule{Type: fleet.AlertVehicleOffline, AfterMinutes: &minutes}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// TestOfflineCheckBetweenPasses: the passes that look only at silences
// reached since the previous pass find what checking every vehicle would:
// a silence reaching after_minutes, once; a rule created, or changed, when
// a vehicle is already silent that long; a new silence after a report.
func TestOfflineCheckBetweenPasses(t *testing.T) {
	is := is.New(t)
	e := newOfflineEnv(t)
	r := e.rule(10)
	e.until(9 * time.Minute)
	is.Equal(len(e.offline()), 0)
	e.until(11 * time.Minute)
	is.Equal(len(e.offline()), 1) // reached 10 minutes
	e.until(15 * time.Minute)
	is.Equal(len(e.offline()), 1) // once

	// A rule created when the vehicle is already silent for longer.
	late := e.rule(12)
	e.until(16 * time.Minute)
	as := e.offline()
	is.Equal(len(as), 2)
	is.Equal(as[1].RuleID, late.ID)

	// A rule changed to a silence the vehicle has passed already.
	m := 40
	_, err := e.svc.UpdateAlertRule(ctx, e.p, late.ID, fleet.AlertRulePatch{AfterMinutes: fleet.Optional[*int]{Set: true, Value: &m}})
	is.NoErr(err)
	_, err = e.svc.ResolveAlert(ctx, e.p, as[1].ID)
	is.NoErr(err)
	e.until(20 * time.Minute)
	is.Equal(len(e.offline()), 2) // not silent 40 minutes: nothing more
	m = 15
	_, err = e.svc.UpdateAlertRule(ctx, e.p, late.ID, fleet.AlertRulePatch{AfterMinutes: fleet.Optional[*int]{Set: true, Value: &m}})
	is.NoErr(err)
	e.until(21 * time.Minute)
	is.Equal(len(e.offline()), 2) // silent past 15 minutes, but this silence had its alert

	// A report, then a new silence.
	for _, a := range e.offline() {
		if a.Status != fleet.AlertResolved {
			_, err := e.svc.ResolveAlert(ctx, e.p, a.ID)
			is.NoErr(err)
		}
	}
	e.report(e.t0.Add(21 * time.Minute))
	e.until(30 * time.Minute)
	is.Equal(len(e.offline()), 2)
	e.until(32 * time.Minute)
	as = e.offline()
	is.Equal(len(as), 3) // the 10-minute rule's, at 31 minutes
	is.Equal(as[2].RuleID, r.ID)
	e.until(37 * time.Minute)
	is.Equal(len(e.offline()), 4) // and the 15-minute rule's
}

// TestOfflineSilenceOfOldReports: a batch of reports that leaves a vehicle
// silent for longer than a rule's after_minutes already (a device sending
// its backlog) opens that alert with the batch: no pass would see that
// silence reach the rule's minutes.
func TestOfflineSilenceOfOldReports(t *testing.T) {
	is := is.New(t)
	e := newOfflineEnv(t)
	e.rule(30)
	e.until(70 * time.Minute)
	as := e.offline()
	is.Equal(len(as), 1) // opened at 30 minutes
	_, err := e.svc.ResolveAlert(ctx, e.p, as[0].ID)
	is.NoErr(err)
	e.report(e.t0.Add(20 * time.Minute)) // a backlog older than that alert: the same silence
	is.Equal(len(e.offline()), 1)
	e.report(e.t0.Add(35 * time.Minute)) // the backlog goes on: last report 35 minutes ago
	as = e.offline()
	is.Equal(len(as), 2) // a new silence, already past 30 minutes
	is.Equal(dataOf(t, as[1])["last_reported_at"], e.t0.Add(35*time.Minute).Format(time.RFC3339))
	e.until(90 * time.Minute)
	is.Equal(len(e.offline()), 2)
}

// TestOfflineResolvedDuringANewSilence: while a vehicle_offline alert is
// open, the vehicle reports and goes silent again; that silence opens no
// alert while the first is open, and its alert once the first is resolved.
func TestOfflineResolvedDuringANewSilence(t *testing.T) {
	is := is.New(t)
	e := newOfflineEnv(t)
	e.rule(10)
	e.until(11 * time.Minute)
	as := e.offline()
	is.Equal(len(as), 1)
	e.report(e.t0.Add(11 * time.Minute))
	e.until(25 * time.Minute)
	is.Equal(len(e.offline()), 1) // the first is still open
	_, err := e.svc.ResolveAlert(ctx, e.p, as[0].ID)
	is.NoErr(err)
	as = e.offline()
	is.Equal(len(as), 2)
	is.Equal(as[1].Status, fleet.AlertOpen)
	is.Equal(dataOf(t, as[1])["last_reported_at"], e.t0.Add(11*time.Minute).Format(time.RFC3339))
	e.until(40 * time.Minute)
	is.Equal(len(e.offline()), 2)
}
