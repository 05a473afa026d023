package sqlstore

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

var bg = context.Background()

// cacheFixture is an account with one vehicle on a SQLite file.
func cacheFixture(t *testing.T) (s *Store, path string, v fleet.Vehicle) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "fleet.db")
	s, err := Open(bg, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a := newAccount("cache")
	at := time.Unix(1700000000, 0).UTC()
	v = fleet.Vehicle{ID: fleet.NewID(fleet.PrefixVehicle), AccountID: a.ID, Name: "Van", Status: fleet.StatusOffline, Tags: []string{}, CreatedAt: at, UpdatedAt: at}
	err = s.Update(bg, func(tx fleet.Tx) error {
		if err := tx.CreateAccount(a); err != nil {
			return err
		}
		return tx.CreateVehicle(v)
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, path, v
}

// readInUpdate reads the vehicle, its latest trip and the account's alert
// configuration version the way a report's write transaction does (from
// the writer's cache once it holds them).
func readInUpdate(t *testing.T, s *Store, v fleet.Vehicle) (got fleet.Vehicle, trip fleet.Trip, hasTrip bool, alerts int64) {
	t.Helper()
	err := s.Update(bg, func(tx fleet.Tx) error {
		var err error
		if got, err = tx.Vehicle(v.AccountID, v.ID); err != nil {
			return err
		}
		trips, err := tx.LatestTrips([]string{v.ID})
		if err != nil {
			return err
		}
		trip, hasTrip = trips[v.ID]
		alerts, err = tx.AlertConfigVersion(v.AccountID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, trip, hasTrip, alerts
}

func tripOf(v fleet.Vehicle, start time.Time, points int) fleet.Trip {
	return fleet.Trip{ID: fleet.NewID(fleet.PrefixTrip), AccountID: v.AccountID, VehicleID: v.ID, Status: fleet.TripInProgress,
		Start: fleet.TripPlace{Latitude: 48.1, Longitude: 2.1, Timestamp: start}, End: fleet.TripPlace{Latitude: 48.2, Longitude: 2.2, Timestamp: start.Add(time.Minute)},
		DistanceKm: 1.5, Points: points, LastAt: start.Add(time.Minute)}
}

// TestRowCacheSeesAnotherProcessWrite: a second store on the same file (as
// another process would be) changes the vehicle, its trips and the alert
// configuration; the first store's next write transaction reads the new
// rows, not what its writer kept.
func TestRowCacheSeesAnotherProcessWrite(t *testing.T) {
	is := is.New(t)
	s, path, v := cacheFixture(t)
	got, _, hasTrip, alerts := readInUpdate(t, s, v) // now kept by s's writer
	is.Equal(got.Name, "Van")
	is.True(!hasTrip)
	is.Equal(alerts, int64(0))

	other, err := Open(bg, "sqlite:"+path)
	is.NoErr(err)
	defer other.Close()
	renamed := v
	renamed.Name = "Renamed"
	trip := tripOf(v, time.Unix(1700000100, 0).UTC(), 3)
	is.NoErr(other.Update(bg, func(tx fleet.Tx) error {
		if err := tx.UpdateVehicle(renamed); err != nil {
			return err
		}
		if err := tx.PutTrips([]fleet.Trip{trip}); err != nil {
			return err
		}
		return tx.BumpAlertConfig(v.AccountID)
	}))

	got, gotTrip, hasTrip, alerts := readInUpdate(t, s, v)
	is.Equal(got.Name, "Renamed")
	is.True(hasTrip)
	is.Equal(gotTrip.ID, trip.ID)
	is.Equal(alerts, int64(1))
}

// TestRowCacheUndoneWithItsMember: a write transaction that fails leaves
// nothing of its writes in the cache.
func TestRowCacheUndoneWithItsMember(t *testing.T) {
	is := is.New(t)
	s, _, v := cacheFixture(t)
	first := tripOf(v, time.Unix(1700000100, 0).UTC(), 3)
	is.NoErr(s.Update(bg, func(tx fleet.Tx) error { return tx.PutTrips([]fleet.Trip{first}) }))
	readInUpdate(t, s, v)

	boom := errors.New("boom")
	err := s.Update(bg, func(tx fleet.Tx) error {
		changed := v
		changed.Name = "Never"
		if err := tx.UpdateVehicle(changed); err != nil {
			return err
		}
		later := tripOf(v, time.Unix(1700000500, 0).UTC(), 1)
		if err := tx.PutTrips([]fleet.Trip{later}); err != nil {
			return err
		}
		if err := tx.DeleteTrip(v.ID, first.ID); err != nil {
			return err
		}
		if err := tx.BumpAlertConfig(v.AccountID); err != nil {
			return err
		}
		return boom
	})
	is.Equal(err, boom)

	got, trip, hasTrip, alerts := readInUpdate(t, s, v)
	is.Equal(got.Name, "Van")
	is.True(hasTrip)
	is.Equal(trip.ID, first.ID)
	is.Equal(alerts, int64(0))
}

// TestRowCacheForgetsWhatItDoesNotFollow: a write statement to a cached
// table that does not keep the cache itself empties it.
func TestRowCacheForgetsWhatItDoesNotFollow(t *testing.T) {
	is := is.New(t)
	s, _, v := cacheFixture(t)
	readInUpdate(t, s, v)
	is.NoErr(s.Update(bg, func(ftx fleet.Tx) error {
		_, err := ftx.(*tx).update(`UPDATE vehicles SET name = 'Raw' WHERE id = ?`, v.ID)
		return err
	}))
	got, _, _, _ := readInUpdate(t, s, v)
	is.Equal(got.Name, "Raw")
}

// TestRowCacheForgetsWritesOnEveryPath: a statement that writes a cached
// table empties the cache whichever way it runs (exec, query, queryRow)
// and however it spells the table.
func TestRowCacheForgetsWritesOnEveryPath(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(t *tx, v fleet.Vehicle) error
		// want is the vehicle's name, whether it has a trip and the
		// alert configuration version after the statement.
		wantName string
		hasTrip  bool
		alerts   int64
	}{
		{"query, RETURNING", func(t *tx, v fleet.Vehicle) error {
			rows, err := t.query(t.d.q(`UPDATE vehicles SET name = ? WHERE id = ? RETURNING id`), "Returned", v.ID)
			if err != nil {
				return err
			}
			return rows.Close()
		}, "Returned", true, 0},
		{"queryRow, RETURNING", func(t *tx, v fleet.Vehicle) error {
			var id string
			return t.queryRow(`DELETE FROM trips WHERE vehicle_id = ? RETURNING id`, v.ID).Scan(&id)
		}, "Van", false, 0},
		{"exec, upper case", func(t *tx, v fleet.Vehicle) error {
			_, err := t.exec(`UPDATE VEHICLES SET NAME = 'Upper' WHERE ID = ?`, v.ID)
			return err
		}, "Upper", true, 0},
		{"exec, a comment and a capital", func(t *tx, v fleet.Vehicle) error {
			_, err := t.exec(`UPDATE /* the fleet */ Vehicles SET name = 'Commented' WHERE id = ?`, v.ID)
			return err
		}, "Commented", true, 0},
		{"exec, schema and quotes", func(t *tx, v fleet.Vehicle) error {
			_, err := t.exec(`UPDATE main."vehicles" SET name = 'Quoted' WHERE id = ?`, v.ID)
			return err
		}, "Quoted", true, 0},
		{"exec, an upsert of the alert configuration", func(t *tx, v fleet.Vehicle) error {
			_, err := t.exec(`INSERT INTO alert_config (account_id, version) VALUES (?, 7)
				ON CONFLICT (account_id) DO UPDATE SET version = 7`, v.AccountID)
			return err
		}, "Van", true, 7},
		{"exec, a WITH before the write", func(t *tx, v fleet.Vehicle) error {
			_, err := t.exec(`WITH gone AS (SELECT ? AS id) DELETE FROM Trips WHERE vehicle_id IN (SELECT id FROM gone)`, v.ID)
			return err
		}, "Van", false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			s, _, v := cacheFixture(t)
			is.NoErr(s.Update(bg, func(tx fleet.Tx) error {
				return tx.PutTrips([]fleet.Trip{tripOf(v, time.Unix(1700000100, 0).UTC(), 3)})
			}))
			readInUpdate(t, s, v) // now kept by the writer
			is.NoErr(s.Update(bg, func(ftx fleet.Tx) error { return c.run(ftx.(*tx), v) }))
			got, _, hasTrip, alerts := readInUpdate(t, s, v)
			is.Equal(got.Name, c.wantName)
			is.Equal(hasTrip, c.hasTrip)
			is.Equal(alerts, c.alerts)
		})
	}
}

// TestRowCacheGuardsPreparedStatements: a statement prepared for the
// transaction, or on the writer beforehand (as the claim's are), that
// writes a cached table empties the cache too.
func TestRowCacheGuardsPreparedStatements(t *testing.T) {
	is := is.New(t)
	s, _, v := cacheFixture(t)
	readInUpdate(t, s, v)
	is.NoErr(s.Update(bg, func(ftx fleet.Tx) error {
		st, err := ftx.(*tx).prepare(`UPDATE vehicles SET name = 'Prepared' WHERE id = ?`)
		if err != nil {
			return err
		}
		defer st.Close()
		_, err = st.Exec(v.ID)
		return err
	}))
	got, _, _, _ := readInUpdate(t, s, v)
	is.Equal(got.Name, "Prepared")

	var p preparedStmt
	is.NoErr(p.prepare(bg, s.wdb, `UPDATE vehicles SET name = 'On the writer' WHERE id = ?`))
	defer p.Close()
	is.NoErr(s.Update(bg, func(ftx fleet.Tx) error {
		_, err := ftx.(*tx).prepared(p).Exec(v.ID)
		return err
	}))
	got, _, _, _ = readInUpdate(t, s, v)
	is.Equal(got.Name, "On the writer")
}

// TestRowCacheForgottenWhenTheGroupBreaks: when the group's transaction
// is rolled back under its members, what they wrote is not kept, even by a
// member whose second run writes nothing.
func TestRowCacheForgottenWhenTheGroupBreaks(t *testing.T) {
	is := is.New(t)
	s, _, v := cacheFixture(t)
	readInUpdate(t, s, v)
	release := make(chan struct{})
	holder := holdWriter(t, s, release)
	runs := 0
	var errA, errB error
	var wg sync.WaitGroup
	wg.Go(func() {
		errA = s.Update(bg, func(tx fleet.Tx) error {
			runs++
			if runs > 1 {
				return nil
			}
			changed := v
			changed.Name = "Lost"
			return tx.UpdateVehicle(changed)
		})
	})
	waitForWaiting(t, s, 1)
	wg.Go(func() {
		errB = s.Update(bg, func(ftx fleet.Tx) error {
			if _, err := ftx.(*tx).tx.ExecContext(bg, "ROLLBACK"); err != nil {
				return err
			}
			return errors.New("broke it")
		})
	})
	waitForWaiting(t, s, 2)
	close(release)
	wg.Wait()
	is.NoErr(<-holder)
	is.NoErr(errA)
	is.True(errB != nil)
	is.Equal(runs, 2)
	got, _, _, _ := readInUpdate(t, s, v)
	is.Equal(got.Name, "Van")
}

// TestRowCacheHoldsWhatAReadReturns: after writes through the cache, what a
// write transaction reads from it equals what a read of the rows returns,
// field by field, for vehicles and trips with and without their optional
// values.
func TestRowCacheHoldsWhatAReadReturns(t *testing.T) {
	is := is.New(t)
	s, _, v := cacheFixture(t)
	year, odo, speed, heading := 2021, 12345.6, 42.5, 270.0
	since := time.Unix(1700000200, 123456000).UTC()
	full := v
	full.Name, full.VIN, full.Make, full.Model, full.LicensePlate, full.ExternalID = "Truck 7", "1HGCM82633A004352", "Volvo", "FH", "AB-123", "ext-7"
	full.Year, full.OdometerKm, full.Speed, full.Tags = &year, &odo, &speed, []string{"north", "cold"}
	full.Status = fleet.StatusIdle
	full.LastLocation = &fleet.Position{Latitude: 48.123456, Longitude: 2.654321, Timestamp: time.Unix(1700000300, 999000).UTC(), Heading: &heading}
	full.StationarySince = &since
	full.UpdatedAt = time.Unix(1700000400, 5000).UTC()
	full.AlertsVersion = 7
	bare := v
	bare.Status = fleet.StatusMoving
	bare.Tags = nil
	bare.UpdatedAt = time.Unix(1700000500, 0).UTC()

	startOdo, endOdo := 100.0, 101.5
	t1 := tripOf(v, time.Unix(1700001000, 0).UTC(), 5)
	t1.StartOdometerKm, t1.EndOdometerKm, t1.OdometerAll = &startOdo, &endOdo, true
	t1.Slices = []fleet.TripSlice{{Start: 1700001000, Km: 1, MovingSeconds: 60}, {Start: 1700004600, Km: 0.5, MovingSeconds: 30}}
	t1.StationarySince = &since
	t1.MovingSeconds, t1.MaxSpeed, t1.GreatCircleKm = 90, 55.5, 1.4
	t2 := t1
	t2.Status, t2.Points, t2.Slices, t2.StartOdometerKm, t2.EndOdometerKm, t2.StationarySince = fleet.TripCompleted, 9, nil, nil, nil, nil

	for _, step := range []struct {
		v fleet.Vehicle
		t fleet.Trip
	}{{full, t1}, {bare, t2}} {
		readInUpdate(t, s, v) // the rows are kept
		is.NoErr(s.Update(bg, func(tx fleet.Tx) error {
			if err := tx.UpdateVehicle(step.v); err != nil {
				return err
			}
			return tx.PutTrips([]fleet.Trip{step.t})
		}))
		cachedV, cachedT, ok, _ := readInUpdate(t, s, v)
		is.True(ok)
		var readV fleet.Vehicle
		var readT map[string]fleet.Trip
		is.NoErr(s.View(bg, func(tx fleet.Tx) error { // readers never use the cache
			var err error
			if readV, err = tx.Vehicle(v.AccountID, v.ID); err != nil {
				return err
			}
			readT, err = tx.LatestTrips([]string{v.ID})
			return err
		}))
		is.Equal(cachedV, readV)
		is.Equal(cachedT, readT[v.ID])
	}
}

// TestRowCacheLatestTripFollowsWrites: the latest trip the cache keeps
// moves to a later trip, stays on it when an earlier one is rewritten, and
// is read again when it is deleted.
func TestRowCacheLatestTripFollowsWrites(t *testing.T) {
	is := is.New(t)
	s, _, v := cacheFixture(t)
	early := tripOf(v, time.Unix(1700000100, 0).UTC(), 2)
	late := tripOf(v, time.Unix(1700009000, 0).UTC(), 2)
	put := func(tr fleet.Trip) {
		is.NoErr(s.Update(bg, func(tx fleet.Tx) error { return tx.PutTrips([]fleet.Trip{tr}) }))
	}
	put(early)
	readInUpdate(t, s, v)
	put(late)
	_, got, _, _ := readInUpdate(t, s, v)
	is.Equal(got.ID, late.ID)
	early.Points = 3
	put(early) // an earlier trip rewritten: still not the latest
	_, got, _, _ = readInUpdate(t, s, v)
	is.Equal(got.ID, late.ID)
	is.NoErr(s.Update(bg, func(tx fleet.Tx) error { return tx.DeleteTrip(v.ID, late.ID) }))
	_, got, _, _ = readInUpdate(t, s, v)
	is.Equal(got.ID, early.ID)
	is.Equal(got.Points, 3)
}
