package sqlstore_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// The write-sets of PostgreSQL's groups (group_writes.go).

// holdRunners occupies both of s's group runners with members that wait
// for release, so that the writes sent meanwhile form one group; it
// returns when both run, and the function that lets them go.
func holdRunners(t *testing.T, s *sqlstore.Store, accountID string) (release func()) {
	t.Helper()
	const runners = 2
	entered, done := make(chan struct{}, runners), make(chan struct{})
	var wg sync.WaitGroup
	for range runners {
		wg.Go(func() {
			err := s.Update(asLocationWrite(accountID), func(tx fleet.Tx) error {
				entered <- struct{}{}
				<-done
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	for range runners {
		<-entered
	}
	return func() { close(done); wg.Wait() }
}

// waitQueued waits until n writes wait for s's writer.
func waitQueued(t *testing.T, s *sqlstore.Store, n int) {
	t.Helper()
	for sqlstore.Waiting(s) < n {
		runtime.Gosched()
	}
}

func point(id string, sec int) fleet.Point {
	return fleet.Point{VehicleID: id, Latitude: 52, Longitude: 13, Timestamp: storetest.T0.Add(time.Duration(sec) * time.Second)}
}

// TestPostgresWriteSetTakesNoSavepoint: a single-point report, newer than
// its vehicle's latest, costs its group no savepoint and no statement of
// its own but the group's one write.
func TestPostgresWriteSetTakesNoSavepoint(t *testing.T) {
	is := is.New(t)
	s := MustOpen(t, pgtest.NewSchema(t, pgtest.DSN(t)))
	now := storetest.T0.Add(time.Hour)
	svc := fleet.NewService(s, fleet.Options{Now: func() time.Time { return now }})
	a := storetest.MustAccount(t, s)
	p := fleet.SystemPrincipal(a)
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "A"})
	is.NoErr(err)
	recent := func(sec int) fleet.Point { // a report of now, of a vehicle standing: no status changes
		return fleet.Point{Latitude: 52, Longitude: 13, Timestamp: now.Add(time.Duration(sec) * time.Second)}
	}
	_, err = svc.IngestLocations(ctx, p, v.ID, []fleet.Point{recent(-20)}) // warm: the alert rules compiled
	is.NoErr(err)
	before := s.RoundTrips()
	res, err := svc.IngestLocations(ctx, p, v.ID, []fleet.Point{recent(-10)})
	is.NoErr(err)
	is.Equal(res.Accepted, 1)
	after := s.RoundTrips()
	is.Equal(after["savepoint"]-before["savepoint"], int64(0)) // none
	is.Equal(after["commit"]-before["commit"], int64(1))
	got, err := svc.Vehicle(ctx, p, v.ID)
	is.NoErr(err)
	is.True(got.LastLocation.Timestamp.Equal(now.Add(-10 * time.Second)))
}

// TestPostgresWriteSetFallsBackOneByOne: in one group, a member whose
// write-set cannot be applied (its point is stored already, which the
// rule of forward points forbids) fails the group's write; the group runs
// again one by one, and that member alone fails, with its own error.
func TestPostgresWriteSetFallsBackOneByOne(t *testing.T) {
	is := is.New(t)
	s := MustOpen(t, pgtest.NewSchema(t, pgtest.DSN(t)))
	a := storetest.MustAccount(t, s)
	good := storetest.MustVehicle(t, s, a.ID, "good")
	bad := storetest.MustVehicle(t, s, a.ID, "bad")
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error {
		_, err := tx.InsertPoints(bad.ID, []fleet.Point{point(bad.ID, 5)})
		return err
	}))
	release := holdRunners(t, s, a.ID)
	errs := make(chan error, 2)
	for _, v := range []fleet.Vehicle{good, bad} {
		go func() {
			errs <- s.Update(asLocationWrite(a.ID, v.ID), func(tx fleet.Tx) error {
				return tx.ApplyIngest(fleet.IngestWrites{Points: []fleet.VehiclePoints{{VehicleID: v.ID, Points: []fleet.Point{point(v.ID, 5)}}}})
			})
		}()
	}
	waitQueued(t, s, 2)
	_, fallbacks := sqlstore.WriteSetCounts(s)
	release()
	var failed int
	for range 2 {
		if err := <-errs; err != nil {
			failed++
			is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
		}
	}
	is.Equal(failed, 1) // the bad one alone
	_, after := sqlstore.WriteSetCounts(s)
	is.Equal(after-fallbacks, int64(1))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		pts, err := tx.Points(good.ID, storetest.T0, storetest.T0.Add(time.Hour), 10)
		is.Equal(len(pts), 1) // the good one's point
		return err
	}))
}

// TestPostgresWriteSetDefersAVehicleTwice: two writes of one vehicle that
// meet in a group run in two groups, one after the other, and both are
// kept.
func TestPostgresWriteSetDefersAVehicleTwice(t *testing.T) {
	is := is.New(t)
	s := MustOpen(t, pgtest.NewSchema(t, pgtest.DSN(t)))
	a := storetest.MustAccount(t, s)
	v := storetest.MustVehicle(t, s, a.ID, "A")
	start := odometer(t, s, a.ID, v.ID)
	release := holdRunners(t, s, a.ID)
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			errs <- s.Update(asLocationWrite(a.ID, v.ID), func(tx fleet.Tx) error {
				cur, err := tx.Vehicle(a.ID, v.ID)
				if err != nil {
					return err
				}
				km := *cur.OdometerKm + 1
				cur.OdometerKm = &km
				return tx.ApplyIngest(fleet.IngestWrites{
					Points:   []fleet.VehiclePoints{{VehicleID: v.ID, Points: []fleet.Point{point(v.ID, 10+i)}}},
					Vehicles: []fleet.Vehicle{cur},
				})
			})
		}()
	}
	waitQueued(t, s, 2)
	deferred, _ := sqlstore.WriteSetCounts(s)
	release()
	is.NoErr(<-errs)
	is.NoErr(<-errs)
	after, _ := sqlstore.WriteSetCounts(s)
	is.Equal(after-deferred, int64(1))            // the second waited for the next group
	is.Equal(odometer(t, s, a.ID, v.ID), start+2) // each saw the other's
}

// errNo is an error of a member's own.
var errNo = errors.New("no")

// TestPostgresWriteSetMemberFailsAlone: a member that fails after staging
// its write-set leaves nothing, beside one that commits, with no
// savepoint taken.
func TestPostgresWriteSetMemberFailsAlone(t *testing.T) {
	is := is.New(t)
	s := MustOpen(t, pgtest.NewSchema(t, pgtest.DSN(t)))
	a := storetest.MustAccount(t, s)
	vs := []fleet.Vehicle{storetest.MustVehicle(t, s, a.ID, "A"), storetest.MustVehicle(t, s, a.ID, "B")}
	release := holdRunners(t, s, a.ID)
	errs := make(chan error, 2)
	for i, v := range vs {
		go func() {
			errs <- s.Update(asLocationWrite(a.ID, v.ID), func(tx fleet.Tx) error {
				err := tx.ApplyIngest(fleet.IngestWrites{Points: []fleet.VehiclePoints{{VehicleID: v.ID, Points: []fleet.Point{point(v.ID, 1)}}}})
				if i == 1 {
					return errNo
				}
				return err
			})
		}()
	}
	waitQueued(t, s, 2)
	before := s.RoundTrips()
	release()
	e1, e2 := <-errs, <-errs
	is.True(errors.Is(e1, errNo) != errors.Is(e2, errNo)) // one failed, with its own error
	is.True(e1 == nil || e2 == nil)
	is.Equal(s.RoundTrips()["savepoint"]-before["savepoint"], int64(0))
	for i, v := range vs {
		is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
			pts, err := tx.Points(v.ID, storetest.T0, storetest.T0.Add(time.Hour), 10)
			is.Equal(len(pts), 1-i)
			return err
		}))
	}
}
