package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// The group commit of location writes on PostgreSQL (group_postgres.go),
// with two stores on one database standing for two servers: the invariants
// the store keeps at READ COMMITTED, under concurrency.

// twoServers opens two stores on one new PostgreSQL schema.
func twoServers(t *testing.T) (one, two *sqlstore.Store) {
	t.Helper()
	dsn := pgtest.NewSchema(t, pgtest.DSN(t))
	return MustOpen(t, dsn), MustOpen(t, dsn)
}

// asLocationWrite marks ctx as a location write's, as the service does,
// so that Update runs it in a group commit, which locks vehicles first.
func asLocationWrite(accountID string, vehicles ...string) context.Context {
	return fleet.WithWriteCost(ctx, fleet.WriteCost{AccountID: accountID, Points: 1, Vehicles: vehicles})
}

// odometer reads a vehicle's odometer.
func odometer(t *testing.T, s *sqlstore.Store, accountID, id string) float64 {
	t.Helper()
	var v fleet.Vehicle
	if err := s.View(ctx, func(tx fleet.Tx) (err error) { v, err = tx.Vehicle(accountID, id); return err }); err != nil {
		t.Fatal(err)
	}
	if v.OdometerKm == nil {
		return 0
	}
	return *v.OdometerKm
}

// addKm adds km to the vehicle's odometer, as a read-modify-write.
func addKm(tx fleet.Tx, accountID, id string, km float64) error {
	v, err := tx.Vehicle(accountID, id)
	if err != nil {
		return err
	}
	if v.OdometerKm != nil {
		km += *v.OdometerKm
	}
	v.OdometerKm = &km
	return tx.UpdateVehicle(v)
}

// TestPostgresGroupNoLostUpdates: members of groups on two servers that
// read two vehicles (in either order) and write both back, incremented,
// lose no increment: the groups lock the vehicles their members name, in id
// order, and the members read them FOR UPDATE.
func TestPostgresGroupNoLostUpdates(t *testing.T) {
	is := is.New(t)
	one, two := twoServers(t)
	a := storetest.MustAccount(t, one)
	va := storetest.MustVehicle(t, one, a.ID, "A")
	vb := storetest.MustVehicle(t, one, a.ID, "B")
	const writers, each = 8, 25
	start := odometer(t, one, a.ID, va.ID)
	var wg sync.WaitGroup
	for w := range writers {
		s := []*sqlstore.Store{one, two}[w%2]
		ids := []string{va.ID, vb.ID}
		if w%4 >= 2 {
			ids[0], ids[1] = ids[1], ids[0] // the other order
		}
		wg.Go(func() {
			for range each {
				err := s.Update(asLocationWrite(a.ID, va.ID, vb.ID), func(tx fleet.Tx) error {
					for _, id := range ids {
						if err := addKm(tx, a.ID, id, 1); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Errorf("update: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, id := range []string{va.ID, vb.ID} {
		is.Equal(odometer(t, two, a.ID, id), start+writers*each) // every increment, once
	}
	commits, members := one.WriteGroups()
	t.Logf("server one: %d members in %d group commits", members, commits)
	is.True(members >= writers/2*each) // every write of server one went through its groups
}

// TestPostgresGroupDeadlockRunsAgain: two members on two servers that lock
// two vehicles in opposite orders, without naming them to their groups,
// deadlock; PostgreSQL aborts one, which is rolled back to its savepoint
// and runs again, and both increments are kept, once.
func TestPostgresGroupDeadlockRunsAgain(t *testing.T) {
	is := is.New(t)
	one, two := twoServers(t)
	a := storetest.MustAccount(t, one)
	va := storetest.MustVehicle(t, one, a.ID, "A")
	vb := storetest.MustVehicle(t, one, a.ID, "B")
	start := odometer(t, one, a.ID, va.ID)
	var runs [2]int
	var holding sync.WaitGroup // each member holds its first vehicle
	holding.Add(2)
	var wg sync.WaitGroup
	for i, s := range []*sqlstore.Store{one, two} {
		ids := []string{va.ID, vb.ID}
		if i == 1 {
			ids[0], ids[1] = ids[1], ids[0]
		}
		wg.Go(func() {
			err := s.Update(asLocationWrite(a.ID), func(tx fleet.Tx) error {
				runs[i]++
				if err := addKm(tx, a.ID, ids[0], 1); err != nil {
					return err
				}
				if runs[i] == 1 {
					holding.Done()
					holding.Wait() // the other holds its first: each now waits for the other
				}
				return addKm(tx, a.ID, ids[1], 1)
			})
			is.NoErr(err)
		})
	}
	wg.Wait()
	// At least one of them ran again (a busy machine may have a rerun
	// meet the other's locks once more); each one's writes count once.
	is.True(runs[0]+runs[1] >= 3)
	is.Equal(odometer(t, one, a.ID, va.ID), start+2)
	is.Equal(odometer(t, one, a.ID, vb.ID), start+2)
}

// TestPostgresGroupMemberFailsAlone: in groups that form under load, a
// member whose function fails leaves nothing behind, and the members beside
// it commit theirs.
func TestPostgresGroupMemberFailsAlone(t *testing.T) {
	is := is.New(t)
	one, two := twoServers(t)
	a := storetest.MustAccount(t, one)
	v := storetest.MustVehicle(t, one, a.ID, "A")
	errRefused := errors.New("refused")
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		s := []*sqlstore.Store{one, two}[i%2]
		wg.Go(func() {
			pt := fleet.Point{VehicleID: v.ID, Latitude: 52, Longitude: 13, Timestamp: storetest.T0.Add(time.Duration(i) * time.Second)}
			err := s.Update(asLocationWrite(a.ID), func(tx fleet.Tx) error {
				if _, err := tx.InsertPoints(v.ID, []fleet.Point{pt}); err != nil {
					return err
				}
				if i%3 == 0 {
					return errRefused // after its write: rolled back to its savepoint
				}
				return nil
			})
			if i%3 == 0 {
				if !errors.Is(err, errRefused) {
					t.Errorf("member %d: got %v, want its own error", i, err)
				}
			} else if err != nil {
				t.Errorf("member %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	var pts []fleet.Point
	is.NoErr(one.View(ctx, func(tx fleet.Tx) (err error) {
		pts, err = tx.Points(v.ID, storetest.T0, storetest.T0.Add(time.Hour), 1000)
		return err
	}))
	is.Equal(len(pts), n-(n+2)/3) // the failed members' points are gone, the others' kept
	for _, p := range pts {
		is.True(int(p.Timestamp.Sub(storetest.T0)/time.Second)%3 != 0)
	}
}

// TestPostgresTwoServersIngestInvariants sends the same vehicles' points
// through two services on two stores at once, in a shuffled order, each
// batch twice: every point is stored once and the repeats are counted as
// duplicates, each vehicle's latest location is its newest point, and its
// trips are those of the same points stored one batch after another on a
// single server.
func TestPostgresTwoServersIngestInvariants(t *testing.T) {
	is := is.New(t)
	one, two := twoServers(t)
	now := storetest.T0.Add(2 * time.Hour)
	opts := fleet.Options{Now: func() time.Time { return now }}
	svcs := []*fleet.Service{fleet.NewService(one, opts), fleet.NewService(two, opts)}
	a := storetest.MustAccount(t, one)
	p := fleet.SystemPrincipal(a)

	const vehicles, perVehicle = 4, 90
	ids := make([]string, vehicles)
	var batches [][]fleet.Point
	all := map[string][]fleet.Point{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range ids {
		v, err := svcs[0].CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Truck %d", i)})
		is.NoErr(err)
		ids[i] = v.ID
		// A drive, a stop of 20 minutes, another drive.
		at := storetest.T0.Add(10 * time.Minute)
		for k := range perVehicle {
			speed := 50.0
			if k == perVehicle/2 {
				at = at.Add(20 * time.Minute)
			}
			pt := fleet.Point{VehicleID: v.ID, Latitude: 52 + float64(k)*0.001, Longitude: 13, Timestamp: at, Speed: &speed}
			all[v.ID] = append(all[v.ID], pt)
			at = at.Add(10 * time.Second)
		}
		for k := 0; k < perVehicle; {
			n := min(1+rng.IntN(3), perVehicle-k)
			batch := all[v.ID][k : k+n]
			batches = append(batches, batch, batch) // each twice: the second is duplicates
			k += n
		}
	}
	rng.Shuffle(len(batches), func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })

	var mu sync.Mutex
	accepted, duplicates := 0, 0
	work := make(chan []fleet.Point)
	var wg sync.WaitGroup
	for w := range 8 {
		svc := svcs[w%2]
		wg.Go(func() {
			for b := range work {
				res, err := svc.IngestLocations(ctx, p, b[0].VehicleID, append([]fleet.Point(nil), b...))
				if err != nil {
					t.Errorf("ingest: %v", err)
					continue
				}
				mu.Lock()
				accepted += res.Accepted
				duplicates += res.Duplicates
				mu.Unlock()
			}
		})
	}
	for _, b := range batches {
		work <- b
	}
	close(work)
	wg.Wait()
	is.Equal(accepted, vehicles*perVehicle)   // every point stored once
	is.Equal(duplicates, vehicles*perVehicle) // and every repeat skipped

	// The same points, one batch after another, in time order, on one
	// server of its own: what the trips must be.
	ref := MustOpen(t, pgtest.NewSchema(t, pgtest.DSN(t)))
	rsvc := fleet.NewService(ref, opts)
	ra := storetest.MustAccount(t, ref)
	rp := fleet.SystemPrincipal(ra)

	from, to := storetest.T0, now
	for _, id := range ids {
		hist, err := svcs[1].ListHistory(ctx, p, id, fleet.HistoryQuery{From: &from, To: &to, Limit: 1000})
		is.NoErr(err)
		is.Equal(len(hist.Items), perVehicle) // no point twice, none lost
		for k, pt := range hist.Items {
			is.True(pt.Timestamp.Equal(all[id][k].Timestamp))
		}
		v, err := svcs[1].Vehicle(ctx, p, id)
		is.NoErr(err)
		is.True(v.LastLocation != nil)
		is.True(v.LastLocation.Timestamp.Equal(all[id][perVehicle-1].Timestamp)) // the newest point, whatever the order

		rv, err := rsvc.CreateVehicle(ctx, rp, fleet.Vehicle{Name: "ref"})
		is.NoErr(err)
		for k := 0; k < perVehicle; k += 10 {
			b := append([]fleet.Point(nil), all[id][k:min(k+10, perVehicle)]...)
			for i := range b {
				b[i].VehicleID = rv.ID
			}
			_, err := rsvc.IngestLocations(ctx, rp, rv.ID, b)
			is.NoErr(err)
		}
		got, err := svcs[0].ListTrips(ctx, p, id, fleet.TripQuery{From: &from, To: &to})
		is.NoErr(err)
		want, err := rsvc.ListTrips(ctx, rp, rv.ID, fleet.TripQuery{From: &from, To: &to})
		is.NoErr(err)
		is.Equal(tripShapes(got.Items), tripShapes(want.Items)) // trips follow the points
	}
}

// tripShapes describes trips by what the points decide of them.
func tripShapes(ts []fleet.Trip) []string {
	out := make([]string, len(ts))
	for i, tr := range ts {
		out[i] = fmt.Sprintf("%s %s-%s points=%d km=%.3f", tr.Status, tr.Start.Timestamp.Format(time.TimeOnly),
			tr.End.Timestamp.Format(time.TimeOnly), tr.Points, tr.DistanceKm)
	}
	return out
}

// TestPostgresGroupMemberSeesItsWrites: a group member's update of a
// vehicle its group locked and cached is what every later statement of the
// member reads, the cached row and the table alike; a statement that fails
// in a savepoint of its own does not undo it; and a member that fails
// leaves the vehicle as it was.
func TestPostgresGroupMemberSeesItsWrites(t *testing.T) {
	is := is.New(t)
	one, _ := twoServers(t)
	a := storetest.MustAccount(t, one)
	va := storetest.MustVehicle(t, one, a.ID, "A")
	vb := storetest.MustVehicle(t, one, a.ID, "B")
	start := odometer(t, one, a.ID, va.ID)
	err := one.Update(asLocationWrite(a.ID, va.ID), func(tx fleet.Tx) error {
		if err := addKm(tx, a.ID, va.ID, 5); err != nil {
			return err
		}
		// A statement that reads the table, not the cached row.
		vs, err := tx.Vehicles(a.ID, fleet.VehicleFilter{}, fleet.Page{Limit: 10})
		if err != nil {
			return err
		}
		for _, v := range vs {
			if v.ID == va.ID && (v.OdometerKm == nil || *v.OdometerKm != start+5) {
				t.Errorf("the list read %v km, want %v", v.OdometerKm, start+5)
			}
		}
		if err := addKm(tx, a.ID, va.ID, 1); err != nil {
			return err
		}
		// A write that fails alone, in a savepoint of its own.
		dup := vb
		if err := tx.CreateVehicle(dup); fleet.ErrorCode(err) != fleet.CodeConflict {
			t.Errorf("create a vehicle twice: %v", err)
		}
		return nil
	})
	is.NoErr(err)
	is.Equal(odometer(t, one, a.ID, va.ID), start+6) // both updates

	errRefused := errors.New("refused")
	err = one.Update(asLocationWrite(a.ID, va.ID), func(tx fleet.Tx) error {
		if err := addKm(tx, a.ID, va.ID, 100); err != nil {
			return err
		}
		return errRefused
	})
	is.True(errors.Is(err, errRefused))
	is.Equal(odometer(t, one, a.ID, va.ID), start+6) // the failed member's update is gone
}
