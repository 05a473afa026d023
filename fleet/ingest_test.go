package fleet_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/internal/geo/geotest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// onStores runs test on memstore and on the SQLite store in a file.
func onStores(t *testing.T, test func(t *testing.T, store fleet.Store)) {
	t.Run("memstore", func(t *testing.T) { test(t, memstore.New()) })
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		test(t, s)
	})
}

// fenced is an account with a geofence (a square, 13.0..13.2 E, 52.0..52.2
// N) watched by an enter and an exit rule, and a vehicle last seen west of
// it at t0.
type fenced struct {
	p     fleet.Principal
	v     fleet.Vehicle
	enter fleet.AlertRule
	exit  fleet.AlertRule
	t0    time.Time
}

func newFenced(t *testing.T, svc *fleet.Service, clock *testclock.Clock) *fenced {
	t.Helper()
	is := is.New(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	f := &fenced{p: fleet.SystemPrincipal(a), t0: clock.Now().Add(-time.Hour)}
	f.v, err = svc.CreateVehicle(ctx, f.p, fleet.Vehicle{Name: "Truck"})
	is.NoErr(err)
	g, err := svc.CreateGeofence(ctx, f.p, polygon([][]float64{{13.0, 52.0}, {13.2, 52.0}, {13.2, 52.2}, {13.0, 52.2}, {13.0, 52.0}}))
	is.NoErr(err)
	f.enter, err = svc.CreateAlertRule(ctx, f.p, fleet.AlertRule{Type: fleet.AlertGeofenceEnter, GeofenceID: g.ID}, nil)
	is.NoErr(err)
	f.exit, err = svc.CreateAlertRule(ctx, f.p, fleet.AlertRule{Type: fleet.AlertGeofenceExit, GeofenceID: g.ID}, nil)
	is.NoErr(err)
	_, err = svc.IngestLocations(ctx, f.p, f.v.ID, []fleet.Point{f.at(0, false)})
	is.NoErr(err)
	return f
}

// at is a point m minutes after t0, inside the fence or west of it.
func (f *fenced) at(m int, inside bool) fleet.Point {
	lon := 12.9
	if inside {
		lon = 13.1
	}
	return fleet.Point{Latitude: 52.1, Longitude: lon, Timestamp: f.t0.Add(time.Duration(m) * time.Minute)}
}

// alertsOf lists the account's alerts as comparable lines.
func alertsOf(t *testing.T, svc *fleet.Service, p fleet.Principal) []string {
	t.Helper()
	l, err := svc.ListAlerts(ctx, p, fleet.AlertFilter{}, fleet.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range l.Items {
		d := dataOf(t, a)
		out = append(out, fmt.Sprintf("%s %s %v %v", a.Type, a.Status, d["timestamp"], d["longitude"]))
	}
	return out
}

// TestHeavyBatchIsJudgedOutsideTheWriteLock: while one account's batch is
// being judged, another account's writes go through. Judging blocks on a
// hook here; if it held the store's write transaction, the other account's
// write would wait for it and the test would time out.
func TestHeavyBatchIsJudgedOutsideTheWriteLock(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
		svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
		heavy := newFenced(t, svc, clock)
		other := newFenced(t, svc, clock)
		fleet.SetJudgeBudget(svc, 0) // judged as a batch too heavy for the write transaction is
		judging, release := make(chan struct{}), make(chan struct{})
		fleet.SetJudging(svc, func(accountID string) {
			if accountID == heavy.p.Account.ID {
				judging <- struct{}{}
				<-release
			}
		})
		done := make(chan error, 1)
		go func() {
			_, err := svc.IngestLocations(ctx, heavy.p, heavy.v.ID, []fleet.Point{heavy.at(1, true), heavy.at(2, false)})
			done <- err
		}()
		waitFor(t, judging, "the heavy batch to be judged")

		// The other account writes: a vehicle, and a batch that opens an
		// alert, both committed while the heavy batch is being judged.
		wrote := make(chan error, 1)
		go func() {
			_, err := svc.CreateVehicle(ctx, other.p, fleet.Vehicle{Name: "Van"})
			if err == nil {
				_, err = svc.IngestLocations(ctx, other.p, other.v.ID, []fleet.Point{other.at(1, true)})
			}
			wrote <- err
		}()
		select {
		case err := <-wrote:
			is.NoErr(err)
		case <-time.After(20 * time.Second):
			close(release)
			t.Fatal("another account's writes waited for the heavy batch's judgement")
		}
		is.Equal(alertsOf(t, svc, other.p), []string{"geofence_enter open " + other.at(1, true).Timestamp.Format(time.RFC3339) + " 13.1"})
		is.Equal(len(alertsOf(t, svc, heavy.p)), 0) // nothing of the heavy batch yet

		close(release)
		is.NoErr(<-done)
		is.Equal(alertsOf(t, svc, heavy.p), []string{
			"geofence_enter open " + heavy.at(1, true).Timestamp.Format(time.RFC3339) + " 13.1",
			"geofence_exit open " + heavy.at(2, false).Timestamp.Format(time.RFC3339) + " 12.9"})
	})
}

func waitFor(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestBatchesJudgedConcurrentlyDecideAsIfSerial: a batch judged outside the
// write transaction while another server commits a batch of the same
// vehicle, a rule change or a resolved alert, is judged again and decides
// what it would have decided after it; if that keeps happening, it is
// judged inside the write transaction in the end. Each case is compared
// with the same two writes made one after the other on a fresh store.
func TestBatchesJudgedConcurrentlyDecideAsIfSerial(t *testing.T) {
	type step func(svc *fleet.Service, f *fenced) error
	ingest := func(pts ...fleet.Point) step {
		return func(svc *fleet.Service, f *fenced) error {
			batch := make([]fleet.Point, len(pts))
			for i, p := range pts {
				p.Timestamp = f.t0.Add(p.Timestamp.Sub(time.Time{}))
				batch[i] = p
			}
			_, err := svc.IngestLocations(ctx, f.p, f.v.ID, batch)
			return err
		}
	}
	pt := func(m int, inside bool) fleet.Point {
		lon := 12.9
		if inside {
			lon = 13.1
		}
		return fleet.Point{Latitude: 52.1, Longitude: lon, Timestamp: time.Time{}.Add(time.Duration(m) * time.Minute)}
	}
	disableEnter := func(svc *fleet.Service, f *fenced) error {
		off := false
		_, err := svc.UpdateAlertRule(ctx, f.p, f.enter.ID, fleet.AlertRulePatch{Enabled: fleet.Optional[*bool]{Set: true, Value: &off}})
		return err
	}
	resolveAll := func(svc *fleet.Service, f *fenced) error {
		l, err := svc.ListAlerts(ctx, f.p, fleet.AlertFilter{Status: fleet.AlertOpen}, fleet.ListQuery{Limit: 500})
		if err != nil {
			return err
		}
		for _, a := range l.Items {
			if _, err := svc.ResolveAlert(ctx, f.p, a.ID); err != nil {
				return err
			}
		}
		return nil
	}
	cases := []struct {
		name   string
		before step   // made first, serially
		judged step   // judged on server one...
		others []step // ...while server two commits these, one per judgement
	}{
		// Judged against the position before the other batch, the vehicle
		// would enter again at minute 20; after it, it was inside already.
		{"the other batch moved the vehicle", nil, ingest(pt(20, true)), []step{ingest(pt(10, true))}},
		// The other batch left it inside: the exit is at minute 20.
		{"the other batch moved it in", nil, ingest(pt(20, false)), []step{ingest(pt(10, true))}},
		// The enter rule was disabled meanwhile: no enter alert.
		{"the rules changed", nil, ingest(pt(20, true)), []step{disableEnter}},
		// The enter alert was resolved meanwhile: a new one opens.
		{"an alert was resolved", ingest(pt(5, true), pt(6, false)), ingest(pt(20, true)), []step{resolveAll}},
		// Moved again before each of the outside judgements: in the end
		// the batch is judged inside the write transaction.
		{"it keeps moving", nil, ingest(pt(30, false)), []step{ingest(pt(10, true)), ingest(pt(11, false)), ingest(pt(12, true))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			onStores(t, func(t *testing.T, store fleet.Store) {
				is := is.New(t)
				// Serially, on a store of its own.
				clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
				ref := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now})
				rf := newFenced(t, ref, clock)
				if c.before != nil {
					is.NoErr(c.before(ref, rf))
				}
				for _, o := range c.others {
					is.NoErr(o(ref, rf))
				}
				is.NoErr(c.judged(ref, rf))
				want := alertsOf(t, ref, rf.p)

				// Concurrently, on two servers sharing the store.
				one := fleet.NewService(store, fleet.Options{Now: clock.Now})
				two := fleet.NewService(store, fleet.Options{Now: clock.Now})
				f := newFenced(t, one, clock)
				if c.before != nil {
					is.NoErr(c.before(one, f))
				}
				fleet.SetJudgeBudget(one, 0)
				var judgements atomic.Int32
				judging, proceed := make(chan struct{}), make(chan struct{})
				fleet.SetJudging(one, func(string) {
					if int(judgements.Add(1)) <= len(c.others) {
						judging <- struct{}{}
						<-proceed
					}
				})
				done := make(chan error, 1)
				go func() { done <- c.judged(one, f) }()
				for _, o := range c.others {
					waitFor(t, judging, "a judgement")
					is.NoErr(o(two, f))
					proceed <- struct{}{}
				}
				is.NoErr(<-done)
				is.Equal(alertsOf(t, one, f.p), want)
				// Judged again after each move; after three judgements
				// outside, inside the write transaction.
				is.Equal(int(judgements.Load()), min(len(c.others)+1, 3))
			})
		})
	}
}

// TestCompiledRulesStayWithinTheirBudget: a server keeps accounts' compiled
// rules within Options.AlertCacheBytes, dropping the least recently used,
// and an account whose rules were dropped is judged as before: its rules
// are compiled again.
func TestCompiledRulesStayWithinTheirBudget(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	probe := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now})
	newFenced(t, probe, clock)
	_, one := fleet.AlertCacheStats(probe) // what one account's rules take
	is.True(one > 0)

	const budget = 2.5 // accounts' worth
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now, AlertCacheBytes: int(budget * float64(one))})
	var accounts []*fenced
	for i := range 5 {
		f := newFenced(t, svc, clock)
		accounts = append(accounts, f)
		n, bytes := fleet.AlertCacheStats(svc)
		is.Equal(n, min(i+1, 2)) // the least recently used go
		is.True(bytes <= int(budget*float64(one)))
	}
	// The first account's rules were dropped long ago; it is judged as
	// ever.
	f := accounts[0]
	_, err := svc.IngestLocations(ctx, f.p, f.v.ID, []fleet.Point{f.at(1, true)})
	is.NoErr(err)
	is.Equal(alertsOf(t, svc, f.p), []string{"geofence_enter open " + f.at(1, true).Timestamp.Format(time.RFC3339) + " 13.1"})
	n, _ := fleet.AlertCacheStats(svc)
	is.Equal(n, 2)
}

// TestOnlyHeavyBatchesAreJudgedOutside: a batch whose judgement takes
// little work is judged inside the write transaction, in one transaction;
// one over the budget, or whose rules are not compiled yet, outside it.
func TestOnlyHeavyBatchesAreJudgedOutside(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now})
	f := newFenced(t, svc, clock)
	var outside atomic.Int32
	fleet.SetJudging(svc, func(string) { outside.Add(1) })
	ingest := func(pts ...fleet.Point) int {
		t.Helper()
		outside.Store(0)
		_, err := svc.IngestLocations(ctx, f.p, f.v.ID, pts)
		is.NoErr(err)
		return int(outside.Load())
	}
	is.Equal(ingest(f.at(1, true)), 0) // rules compiled, a point: inside
	for range 10 {
		g, err := svc.CreateGeofence(ctx, f.p, polygon(geotest.Comb(13.1, 52.1, 0.1, 0.1, fleet.MaxRingVertices)))
		is.NoErr(err)
		_, err = svc.CreateAlertRule(ctx, f.p, fleet.AlertRule{Type: fleet.AlertGeofenceExit, GeofenceID: g.ID}, nil)
		is.NoErr(err)
	}
	is.Equal(ingest(f.at(2, true)), 1) // the rules changed: compiled outside
	is.Equal(ingest(f.at(3, true)), 0) // then a point is light again
	var many []fleet.Point
	for i := range 1000 {
		many = append(many, fleet.Point{Latitude: 52.05 + 0.0001*float64(i), Longitude: 13.1, Timestamp: f.t0.Add(4*time.Minute + time.Duration(i)*time.Second)})
	}
	is.Equal(ingest(many...), 1) // a thousand points in ten combs: outside
}
