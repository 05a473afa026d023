package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// RunTrips checks the trips area (fleet.TripTx): every field round trips,
// replacing by id, the open trip, ranges and order, scoping by account,
// rollback, and deleting a vehicle.
func RunTrips(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"TripRoundTrip", testTripRoundTrip},
		{"TripRanges", testTripRanges},
		{"TripsScopedByAccount", testTripsScoped},
		{"TripRollbackAndCascade", testTripRollbackAndCascade},
	})
}

// NewTrip returns a trip of the account's vehicle starting at start and
// lasting d, every field set, that is not stored yet.
func NewTrip(accountID, vehicleID string, start time.Time, d time.Duration) fleet.Trip {
	ss := start.Add(d + time.Minute)
	return fleet.Trip{
		ID: fleet.NewID(fleet.PrefixTrip), AccountID: accountID, VehicleID: vehicleID, Status: fleet.TripCompleted,
		Start:      fleet.TripPlace{Latitude: 52.5, Longitude: 13.4, Timestamp: start},
		End:        fleet.TripPlace{Latitude: 52.6, Longitude: -13.5, Timestamp: start.Add(d)},
		DistanceKm: 12.25, GreatCircleKm: 12.5, MovingSeconds: d.Seconds() - 60, MaxSpeed: 88.5,
		StartOdometerKm: f64(1000.125), EndOdometerKm: f64(1012.375), OdometerAll: true,
		Points: 123456, IgnoredPoints: 2, PendingIgnored: 1, LastAt: start.Add(d + 2*time.Minute), StationarySince: &ss,
		Slices: []fleet.TripSlice{{Start: start.Unix() - start.Unix()%900, Km: 12.5, MovingSeconds: d.Seconds() - 60, IdleSeconds: 45.5}},
	}
}

func putTrip(t *testing.T, s fleet.Store, tr fleet.Trip) {
	t.Helper()
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.PutTrips([]fleet.Trip{tr}) }); err != nil {
		t.Fatalf("put trip: %v", err)
	}
}

func testTripRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	tr := NewTrip(a.ID, v.ID, T0.Add(123456*time.Microsecond), 30*time.Minute)
	putTrip(t, s, tr)
	var got fleet.Trip
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Trip(a.ID, tr.ID); return err }))
	is.Equal(got.ID, tr.ID)
	is.Equal(got.AccountID, a.ID)
	is.Equal(got.VehicleID, v.ID)
	is.Equal(got.Status, fleet.TripCompleted)
	is.Equal(got.Start.Latitude, 52.5)
	is.True(got.Start.Timestamp.Equal(tr.Start.Timestamp)) // microseconds kept
	is.Equal(got.End.Longitude, -13.5)
	is.True(got.End.Timestamp.Equal(tr.End.Timestamp))
	is.Equal(got.DistanceKm, 12.25)
	is.Equal(got.GreatCircleKm, 12.5)
	is.Equal(got.MovingSeconds, tr.MovingSeconds)
	is.Equal(got.MaxSpeed, 88.5)
	is.Equal(*got.StartOdometerKm, 1000.125)
	is.Equal(*got.EndOdometerKm, 1012.375)
	is.True(got.OdometerAll)
	is.Equal(got.Points, 123456)
	is.Equal(got.IgnoredPoints, 2)
	is.Equal(got.PendingIgnored, 1)
	is.True(got.LastAt.Equal(tr.LastAt))
	is.True(got.StationarySince.Equal(*tr.StationarySince))
	is.Equal(got.Slices, tr.Slices)

	// Replaced by id; unset pointers stay unset.
	tr.Status, tr.StartOdometerKm, tr.EndOdometerKm, tr.StationarySince = fleet.TripInProgress, nil, nil, nil
	tr.End.Timestamp = tr.End.Timestamp.Add(time.Hour)
	putTrip(t, s, tr)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		latest, err := tx.LatestTrips([]string{v.ID, fleet.NewID(fleet.PrefixVehicle)})
		is.NoErr(err)
		is.Equal(len(latest), 1) // none of a vehicle without trips
		got, ok := latest[v.ID]
		is.True(ok)
		is.Equal(got.ID, tr.ID)
		is.Equal(got.StartOdometerKm, nil)
		is.Equal(got.StationarySince, nil)
		is.True(got.End.Timestamp.Equal(tr.End.Timestamp))
		all, err := tx.VehicleTrips(v.ID, T0.Add(-time.Hour), T0.Add(time.Hour), time.Time{}, 10)
		is.NoErr(err)
		is.Equal(len(all), 1) // replaced, not added
		return nil
	}))
	err := s.Update(ctx, func(tx fleet.Tx) error {
		return tx.PutTrips([]fleet.Trip{NewTrip(a.ID, v.ID, T0.Add(5*time.Hour), time.Minute), NewTrip(a.ID, fleet.NewID(fleet.PrefixVehicle), T0, time.Minute)})
	})
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // no such vehicle
}

func testTripRanges(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	w := MustVehicle(t, s, a.ID, "w")
	var trips []fleet.Trip
	for i := range 5 { // 10:00-10:30, 11:00-11:30, ... for v; put in reverse
		trips = append(trips, NewTrip(a.ID, v.ID, T0.Add(time.Duration(i)*time.Hour), 30*time.Minute))
	}
	for i := len(trips) - 1; i >= 0; i-- {
		putTrip(t, s, trips[i])
	}
	putTrip(t, s, NewTrip(a.ID, w.ID, T0.Add(90*time.Minute), 10*time.Minute))
	ids := func(ts []fleet.Trip) []string {
		out := []string{}
		for _, tr := range ts {
			out = append(out, tr.ID)
		}
		return out
	}
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		// Trips meeting [10:20, 12:10]: the first (ends 10:30), second, third.
		got, err := tx.VehicleTrips(v.ID, T0.Add(20*time.Minute), T0.Add(130*time.Minute), time.Time{}, 10)
		is.NoErr(err)
		is.Equal(ids(got), ids(trips[0:3]))
		got, err = tx.VehicleTrips(v.ID, T0.Add(20*time.Minute), T0.Add(130*time.Minute), trips[0].Start.Timestamp, 1)
		is.NoErr(err)
		is.Equal(ids(got), ids(trips[1:2])) // after the first start, one
		got, err = tx.VehicleTrips(v.ID, T0.Add(31*time.Minute), T0.Add(59*time.Minute), time.Time{}, 10)
		is.NoErr(err)
		is.Equal(len(got), 0) // between two trips
		last, ok, err := tx.LastTripBefore(v.ID, T0.Add(2*time.Hour))
		is.NoErr(err)
		is.True(ok)
		is.Equal(last.ID, trips[1].ID) // the one starting at 11:00, not at 12:00
		_, ok, err = tx.LastTripBefore(v.ID, T0)
		is.NoErr(err)
		is.True(!ok)
		latest, err := tx.LatestTrips([]string{v.ID, w.ID})
		is.NoErr(err)
		is.Equal(latest[v.ID].ID, trips[4].ID) // the latest start, put first
		is.Equal(latest[w.ID].VehicleID, w.ID)
		one, err := tx.LatestTrips([]string{v.ID}) // a device's report asks for one
		is.NoErr(err)
		is.Equal(len(one), 1)
		is.Equal(one[v.ID].ID, trips[4].ID)
		acc, err := tx.AccountTrips(a.ID, "", T0.Add(80*time.Minute), T0.Add(3*time.Hour))
		is.NoErr(err)
		want := []string{trips[1].ID, trips[2].ID, trips[3].ID}
		wTrip := 3
		if w.ID < v.ID {
			wTrip = 0
		}
		all := ids(acc)
		is.Equal(len(all), 4)
		is.Equal(all[wTrip], acc[wTrip].ID)
		is.Equal(acc[wTrip].VehicleID, w.ID) // by vehicle, then start
		is.Equal(append(all[:wTrip:wTrip], all[wTrip+1:]...), want)
		only, err := tx.AccountTrips(a.ID, w.ID, T0, T0.Add(5*time.Hour))
		is.NoErr(err)
		is.Equal(len(only), 1)
		return nil
	}))
}

func testTripsScoped(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	tr := NewTrip(a.ID, v.ID, T0, time.Hour)
	putTrip(t, s, tr)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Trip(b.ID, tr.ID)
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		got, err := tx.AccountTrips(b.ID, "", T0, T0.Add(time.Hour))
		is.NoErr(err)
		is.Equal(len(got), 0)
		got, err = tx.AccountTrips(b.ID, v.ID, T0, T0.Add(time.Hour))
		is.NoErr(err)
		is.Equal(len(got), 0)
		return nil
	}))
}

func testTripRollbackAndCascade(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	kept := NewTrip(a.ID, v.ID, T0, time.Hour)
	putTrip(t, s, kept)
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		is.NoErr(tx.PutTrips([]fleet.Trip{NewTrip(a.ID, v.ID, T0.Add(2*time.Hour), time.Hour)}))
		is.NoErr(tx.DeleteTrip(v.ID, kept.ID))
		return boom
	})
	is.True(errors.Is(err, boom))
	count := func() int {
		var n int
		is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
			got, err := tx.VehicleTrips(v.ID, T0.Add(-time.Hour), T0.Add(5*time.Hour), time.Time{}, 10)
			n = len(got)
			return err
		}))
		return n
	}
	is.Equal(count(), 1) // the put undone, the delete too
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteVehicle(a.ID, v.ID) }))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Trip(a.ID, kept.ID)
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // gone with its vehicle
		return nil
	}))
}
