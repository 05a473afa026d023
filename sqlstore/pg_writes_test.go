package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/jackc/pgx/v5/pgconn"
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

// liveFeed returns what s's live feed holds since since, as a server that
// starts following it reads it back.
func liveFeed(t *testing.T, s *sqlstore.Store, since time.Time) []fleet.LiveBatch {
	t.Helper()
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var got []fleet.LiveBatch
	err := s.FollowLive(fctx, since, func(bs []fleet.LiveBatch) {
		if got == nil {
			got = append([]fleet.LiveBatch{}, bs...)
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("follow the live feed: %v", err)
	}
	return got
}

// liveWrite is a write-set of one forward point of vehicle id, with its
// live report.
func liveWrite(accountID, id string, sec int) fleet.IngestWrites {
	p := point(id, sec)
	return fleet.IngestWrites{
		Points: []fleet.VehiclePoints{{VehicleID: id, Points: []fleet.Point{p}}},
		Live: &fleet.LiveAppend{AccountID: accountID, At: storetest.T0,
			Items: []fleet.StreamItem{{VehicleID: id, Record: fleet.LocationRecord{VehicleID: id, Name: "x", Status: fleet.StatusMoving}}}},
	}
}

// inOneGroup applies writes, each as a location write of its first
// vehicle, in one group of s, in their order, and returns their errors.
func inOneGroup(t *testing.T, s *sqlstore.Store, accountID string, writes ...fleet.IngestWrites) []error {
	t.Helper()
	release := holdRunners(t, s, accountID)
	errs := make([]chan error, len(writes))
	for i, w := range writes {
		errs[i] = make(chan error, 1)
		go func() {
			errs[i] <- s.Update(asLocationWrite(accountID, w.Points[0].VehicleID), func(tx fleet.Tx) error { return tx.ApplyIngest(w) })
		}()
		waitQueued(t, s, i+1) // in this order
	}
	release()
	out := make([]error, len(writes))
	for i := range writes {
		out[i] = <-errs[i]
	}
	return out
}

// twoVehicles opens a store on a schema of its own with an account and
// two of its vehicles.
func twoVehicles(t *testing.T) (*sqlstore.Store, fleet.Account, fleet.Vehicle, fleet.Vehicle) {
	t.Helper()
	s := MustOpen(t, pgtest.NewSchema(t, pgtest.DSN(t)))
	a := storetest.MustAccount(t, s)
	return s, a, storetest.MustVehicle(t, s, a.ID, "one"), storetest.MustVehicle(t, s, a.ID, "two")
}

// TestPostgresWriteSetAppendsLive: a group's members' live reports are
// appended to the shared feed in the group's write-set statement (no
// statement of their own), with consecutive ids; in a group that falls
// back to one by one, those of the members that commit, and only theirs.
func TestPostgresWriteSetAppendsLive(t *testing.T) {
	is := is.New(t)
	s, a, v1, v2 := twoVehicles(t)
	is.True(s.AppendsLiveWithIngest())
	bad := storetest.MustVehicle(t, s, a.ID, "bad")
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { // a point the bad write-set claims is new
		_, err := tx.InsertPoints(bad.ID, []fleet.Point{point(bad.ID, 30)})
		return err
	}))
	before := s.RoundTrips()
	errs := inOneGroup(t, s, a.ID, liveWrite(a.ID, v1.ID, 10), liveWrite(a.ID, v2.ID, 10))
	is.NoErr(errs[0])
	is.NoErr(errs[1])
	after := s.RoundTrips()
	// The held runners' two commits, and one group's: BEGIN, its reads
	// (the vehicles locked, their latest trips and schedules, the alert
	// configuration), its write-sets' statement, COMMIT; no append of its
	// own.
	is.Equal(after["statement"]-before["statement"], int64(5))
	errs = inOneGroup(t, s, a.ID, liveWrite(a.ID, v1.ID, 20), liveWrite(a.ID, bad.ID, 30)) // falls back
	is.NoErr(errs[0])
	is.Equal(fleet.ErrorCode(errs[1]), fleet.CodeConflict) // the bad one alone
	feed := liveFeed(t, s, storetest.T0)
	var ids []uint64
	var vehicles []string
	for _, b := range feed {
		is.Equal(b.AccountID, a.ID)
		for i, it := range b.Items {
			ids = append(ids, b.FirstID+uint64(i))
			vehicles = append(vehicles, it.VehicleID)
		}
	}
	is.Equal(len(ids), 3)           // the first group's two, the good one's of the second
	is.Equal(len(feed), 2)          // one row for the first group's members of the account
	is.Equal(len(feed[0].Items), 2) // both in it
	is.Equal(ids[1], ids[0]+1)
	is.Equal(ids[2], ids[1]+1)
	is.True(vehicles[0] != vehicles[1])
	is.Equal(vehicles[2], v1.ID)
}

// TestPostgresWriteSetCountsQuota: a group's members' takes of an
// allowance are counted in its write-set statement, together; when their
// sum does not fit, the group runs one by one and each counts its own,
// so the members that fit commit and the first that does not fails alone,
// with the window as it stands, writing nothing.
func TestPostgresWriteSetCountsQuota(t *testing.T) {
	is := is.New(t)
	s, a, v1, v2 := twoVehicles(t)
	is.True(s.TakesQuotaWithIngest())
	subject := "points:" + a.ID
	const limit = 5
	take := func(id string, sec, n int) fleet.IngestWrites {
		w := liveWrite(a.ID, id, sec)
		w.Quota = []fleet.QuotaTake{{Subject: subject, N: n, Limit: limit, Now: storetest.T0}}
		return w
	}
	_, fallbacks := sqlstore.WriteSetCounts(s)
	errs := inOneGroup(t, s, a.ID, take(v1.ID, 10, 1), take(v2.ID, 10, 2)) // 3 of 5: fit together
	is.NoErr(errs[0])
	is.NoErr(errs[1])
	_, after := sqlstore.WriteSetCounts(s)
	is.Equal(after, fallbacks)                                            // no fallback
	errs = inOneGroup(t, s, a.ID, take(v1.ID, 20, 1), take(v2.ID, 20, 2)) // 6 of 5: the second does not fit
	is.NoErr(errs[0])
	var refused *fleet.QuotaRefused
	is.True(errors.As(errs[1], &refused))
	is.Equal(refused.Subject, subject)
	is.Equal(refused.Quota.Used, 4)
	is.Equal(refused.Quota.Remaining, 1)
	_, last := sqlstore.WriteSetCounts(s)
	is.Equal(last-after, int64(1)) // one by one
	q, err := s.TakeQuotaN(ctx, subject, 1, limit, storetest.T0)
	is.NoErr(err)
	is.True(q.Allowed)
	is.Equal(q.Used, 5) // 3 + 1, and this one
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		pts, err := tx.Points(v2.ID, storetest.T0, storetest.T0.Add(time.Hour), 10)
		is.Equal(len(pts), 1) // the refused member's point is not stored
		return err
	}))
}

// TestPostgresGroupReadsSchedulesOnce: a group reads its vehicles'
// maintenance schedules with the vehicles, in the group's reads, and
// locked: a member that reviews its vehicle's schedules (as a report whose
// odometer moved does) costs the group no statement, finds them as stored
// (none for a vehicle without), and a schedule another transaction would
// change waits for the group; one the member changes is read again after.
func TestPostgresGroupReadsSchedulesOnce(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.NewSchema(t, pgtest.DSN(t))
	s := MustOpen(t, dsn)
	a := storetest.MustAccount(t, s)
	v1, v2 := storetest.MustVehicle(t, s, a.ID, "one"), storetest.MustVehicle(t, s, a.ID, "two")
	sch := storetest.MustSchedule(t, s, a.ID, v1.ID, "2027-01-01", fleet.ScheduleOK)
	other, err := sql.Open("pgx", dsn)
	is.NoErr(err)
	defer other.Close()

	statements := func(member func(tx fleet.Tx, v string, sec int) error) int64 {
		release := holdRunners(t, s, a.ID)
		before := s.RoundTrips()
		errs := make([]chan error, 2)
		for i, v := range []string{v1.ID, v2.ID} {
			errs[i] = make(chan error, 1)
			go func() {
				errs[i] <- s.Update(asLocationWrite(a.ID, v), func(tx fleet.Tx) error { return member(tx, v, 10*(i+1)) })
			}()
			waitQueued(t, s, i+1)
		}
		release()
		for i := range errs {
			is.NoErr(<-errs[i])
		}
		return s.RoundTrips()["statement"] - before["statement"]
	}
	var sec int
	plain := statements(func(tx fleet.Tx, v string, i int) error {
		return tx.ApplyIngest(liveWrite(a.ID, v, sec+i))
	})
	sec += 100
	got := map[string][]fleet.Schedule{}
	var mu sync.Mutex
	var lockErr error
	reviewing := statements(func(tx fleet.Tx, v string, i int) error {
		schs, err := tx.SchedulesOfVehicle(v)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if v == v1.ID { // locked by the group: another transaction cannot take it
			_, lockErr = other.ExecContext(ctx, `SELECT 1 FROM schedules WHERE id = $1 FOR UPDATE NOWAIT`, sch.ID)
		}
		got[v] = schs
		return tx.ApplyIngest(liveWrite(a.ID, v, sec+i))
	})
	var pe *pgconn.PgError
	is.True(errors.As(lockErr, &pe))
	is.Equal(pe.Code, "55P03") // lock_not_available
	is.Equal(reviewing, plain) // no statement of the members' own
	is.Equal(len(got[v1.ID]), 1)
	is.Equal(got[v1.ID][0].ID, sch.ID)
	is.Equal(got[v1.ID][0].NextDueDate, "2027-01-01")
	is.Equal(len(got[v2.ID]), 0)

	sec += 100
	var after []fleet.Schedule
	statements(func(tx fleet.Tx, v string, i int) error {
		if v == v1.ID {
			changed := sch
			changed.Name = "changed"
			if err := tx.UpdateSchedule(changed); err != nil {
				return err
			}
			var err error
			if after, err = tx.SchedulesOfVehicle(v); err != nil {
				return err
			}
		}
		return tx.ApplyIngest(liveWrite(a.ID, v, sec+i))
	})
	is.Equal(len(after), 1)
	is.Equal(after[0].Name, "changed") // read again, not the group's copy
}
