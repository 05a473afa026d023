package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// NewVehicle returns a vehicle of the account that is not stored yet.
func NewVehicle(accountID, name string) fleet.Vehicle {
	year := 2022
	odo := 1200.5
	return fleet.Vehicle{
		ID: fleet.NewID(fleet.PrefixVehicle), AccountID: accountID, Name: name, VIN: "1HGBH41JXMN109186",
		Make: "Volvo", Model: "FH16", Year: &year, LicensePlate: "AB-123-CD", Tags: []string{"north", "heavy"},
		OdometerKm: &odo, Status: fleet.StatusOffline, CreatedAt: T0, UpdatedAt: T0,
	}
}

// MustVehicle stores a new vehicle of the account and returns it.
func MustVehicle(tb testing.TB, s fleet.Store, accountID, name string) fleet.Vehicle {
	tb.Helper()
	v := NewVehicle(accountID, name)
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(v) }); err != nil {
		tb.Fatalf("create vehicle: %v", err)
	}
	return v
}

func f64(v float64) *float64 { return &v }

// RunVehicles checks the vehicles area (fleet.VehicleTx): vehicles scoped by
// account, unique external ids, filters, deletion cascading to points and
// schedules, and the clock-driven reads of the status sweep and the
// offline check.
func RunVehicles(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"VehicleRoundTrip", testVehicleRoundTrip},
		{"VehiclesScopedByAccount", testVehiclesScoped},
		{"VehicleExternalIDUnique", testVehicleExternalID},
		{"VehicleFilters", testVehicleFilters},
		{"DeleteVehicleCascades", testDeleteVehicleCascades},
		{"VehiclesToSweep", testVehiclesToSweep},
		{"VehiclesGoneSilent", testVehiclesGoneSilent},
		{"VehicleTelemetryRoundTrip", testVehicleTelemetry},
		{"VehicleLastAttributes", testVehicleLastAttributes},
	})
}

// RunLocations checks the locations area (fleet.LocationTx and
// fleet.LocationStore): idempotent inserts, ranges in time order, rollback,
// and the purge of old points.
func RunLocations(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"InsertPointsSkipsDuplicates", testInsertPoints},
		{"PointsRangeAndOrder", testPointsRange},
		{"PointsRollback", testPointsRollback},
		{"PurgePoints", testPurgePoints},
		{"PointAttributesRoundTrip", testPointAttributes},
		{"HistoryJSONIsListHistorys", testHistoryJSON},
	})
}

// RunEvents checks the events area (fleet.EventTx and fleet.EventStore):
// the log scoped by account, filters, reads by id, and the purge.
func RunEvents(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"Events", testEvents},
		{"EventsByID", testEventsByID},
		{"PurgeEvents", testPurgeEvents},
	})
}

func testVehicleRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := NewVehicle(a.ID, "Truck 1")
	v.ExternalID = "ext-1"
	since := T0.Add(-time.Minute)
	v.StationarySince = &since
	v.Speed = f64(3.5)
	v.Status = fleet.StatusIdle
	v.LastLocation = &fleet.Position{Latitude: 52.5, Longitude: 13.4, Timestamp: T0.Add(123456 * time.Microsecond), Heading: f64(90)}
	v.AlertsVersion = 7
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(v) }))
	var got fleet.Vehicle
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Vehicle(a.ID, v.ID); return err }))
	is.Equal(got.Name, "Truck 1")
	is.Equal(got.VIN, v.VIN)
	is.Equal(got.Make, "Volvo")
	is.Equal(got.Model, "FH16")
	is.Equal(*got.Year, 2022)
	is.Equal(got.LicensePlate, "AB-123-CD")
	is.Equal(got.ExternalID, "ext-1")
	is.Equal(got.Tags, []string{"north", "heavy"})
	is.Equal(*got.OdometerKm, 1200.5)
	is.Equal(got.Status, fleet.StatusIdle)
	is.Equal(*got.Speed, 3.5)
	is.True(got.StationarySince.Equal(since))
	is.True(got.LastLocation.Timestamp.Equal(v.LastLocation.Timestamp)) // microseconds kept
	is.Equal(got.LastLocation.Latitude, 52.5)
	is.Equal(*got.LastLocation.Heading, 90.0)
	is.True(got.CreatedAt.Equal(T0))
	is.Equal(got.AlertsVersion, int64(7))

	got.Name = "Truck One"
	got.AlertsVersion = 8
	got.Tags = []string{}
	got.Year = nil
	got.LastLocation = nil
	got.CreatedAt = T0.Add(time.Hour) // not changeable
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(got) }))
	var again fleet.Vehicle
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { again, err = tx.Vehicle(a.ID, v.ID); return err }))
	is.Equal(again.Name, "Truck One")
	is.Equal(len(again.Tags), 0)
	is.Equal(again.Year, nil)
	is.Equal(again.LastLocation, nil)
	is.True(again.CreatedAt.Equal(T0))
	is.Equal(again.AlertsVersion, int64(8))
}

func testVehiclesScoped(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	va := MustVehicle(t, s, a.ID, "A")
	vb := MustVehicle(t, s, b.ID, "B")
	err := s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Vehicle(a.ID, vb.ID)
		is.Equal(code(err), fleet.CodeNotFound) // another account's vehicle
		list, err := tx.Vehicles(a.ID, fleet.VehicleFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(list), 1)
		is.Equal(list[0].ID, va.ID)
		return nil
	})
	is.NoErr(err)
	other := vb
	other.AccountID = a.ID
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(other) })
	is.Equal(code(err), fleet.CodeNotFound) // cannot update across accounts
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteVehicle(a.ID, vb.ID) })
	is.Equal(code(err), fleet.CodeNotFound) // nor delete
}

func testVehicleExternalID(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	v1 := NewVehicle(a.ID, "one")
	v1.ExternalID = "X"
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(v1) }))
	v2 := NewVehicle(a.ID, "two")
	v2.ExternalID = "X"
	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(v2) })
	is.Equal(code(err), fleet.CodeConflict) // unique per account
	v3 := NewVehicle(b.ID, "three")
	v3.ExternalID = "X"
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(v3) })) // other accounts may reuse it
	v4, v5 := NewVehicle(a.ID, "four"), NewVehicle(a.ID, "five")
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { // empty is not unique
		if err := tx.CreateVehicle(v4); err != nil {
			return err
		}
		return tx.CreateVehicle(v5)
	}))
	v4.ExternalID = "X"
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(v4) })
	is.Equal(code(err), fleet.CodeConflict) // updates too
	v1.ExternalID = "Y"
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(v1) }))
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(v4) })) // X is free again
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteVehicle(a.ID, v4.ID) }))
	v2.ExternalID = "X"
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(v2) })) // and after a delete
}

func testVehicleFilters(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v1 := NewVehicle(a.ID, "Alpha van")
	v1.Tags = []string{"south"}
	v1.Status = fleet.StatusMoving
	v1.LastLocation = &fleet.Position{Latitude: 1, Longitude: 2, Timestamp: T0}
	v2 := NewVehicle(a.ID, "Beta truck")
	v2.LicensePlate = "ZZ-999"
	v3 := NewVehicle(a.ID, "Gamma")
	for _, v := range []fleet.Vehicle{v1, v2, v3} {
		is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(v) }))
	}
	ids := func(f fleet.VehicleFilter) []string {
		var vs []fleet.Vehicle
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { vs, err = tx.Vehicles(a.ID, f, fleet.Page{Limit: 10}); return err }))
		out := []string{}
		for _, v := range vs {
			out = append(out, v.ID)
		}
		return out
	}
	is.Equal(ids(fleet.VehicleFilter{Status: fleet.StatusMoving}), []string{v1.ID})
	is.Equal(ids(fleet.VehicleFilter{Tag: "heavy"}), []string{v2.ID, v3.ID})
	is.Equal(ids(fleet.VehicleFilter{Query: "zz-9"}), []string{v2.ID})
	is.Equal(ids(fleet.VehicleFilter{Query: "GAMMA"}), []string{v3.ID})
	is.Equal(ids(fleet.VehicleFilter{Reported: true}), []string{v1.ID})
	is.Equal(ids(fleet.VehicleFilter{IDs: []string{v3.ID, v1.ID}}), []string{v1.ID, v3.ID})
	var page []fleet.Vehicle
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		page, err = tx.Vehicles(a.ID, fleet.VehicleFilter{Tag: "heavy"}, fleet.Page{After: v2.ID, Limit: 10})
		return err
	}))
	is.Equal(len(page), 1) // filter and cursor together
	is.Equal(page[0].ID, v3.ID)
}

func testDeleteVehicleCascades(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "gone")
	keep := MustVehicle(t, s, a.ID, "kept")
	pts := []fleet.Point{{Latitude: 1, Longitude: 1, Timestamp: T0}, {Latitude: 2, Longitude: 2, Timestamp: T0.Add(time.Second)}}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error {
		if _, err := tx.InsertPoints(v.ID, pts); err != nil {
			return err
		}
		_, err := tx.InsertPoints(keep.ID, pts)
		return err
	}))
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteVehicle(a.ID, v.ID) }))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Vehicle(a.ID, v.ID)
		is.Equal(code(err), fleet.CodeNotFound)
		got, err := tx.Points(v.ID, T0.Add(-time.Hour), T0.Add(time.Hour), 10)
		is.NoErr(err)
		is.Equal(len(got), 0) // its history went with it
		got, err = tx.Points(keep.ID, T0.Add(-time.Hour), T0.Add(time.Hour), 10)
		is.NoErr(err)
		is.Equal(len(got), 2) // another vehicle's stays
		return nil
	}))
}

func testVehiclesToSweep(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	mk := func(acc string, status fleet.VehicleStatus, reported time.Time, stationary *time.Time) fleet.Vehicle {
		v := NewVehicle(acc, string(status))
		v.Status = status
		v.LastLocation = &fleet.Position{Latitude: 1, Longitude: 1, Timestamp: reported}
		v.StationarySince = stationary
		is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(v) }))
		return v
	}
	now := T0.Add(time.Hour)
	old := now.Add(-40 * time.Minute)
	recent := now.Add(-time.Minute)
	restingLong := now.Add(-10 * time.Minute)
	stale := mk(a.ID, fleet.StatusMoving, old, nil)
	resting := mk(b.ID, fleet.StatusIdle, recent, &restingLong)
	mk(a.ID, fleet.StatusIdle, recent, &recent)         // idle, not long enough
	mk(a.ID, fleet.StatusMoving, recent, nil)           // fresh
	mk(a.ID, fleet.StatusOffline, old, nil)             // already offline
	mk(b.ID, fleet.StatusStopped, recent, &restingLong) // stopped, fresh
	never := NewVehicle(a.ID, "never")
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(never) }))

	var got []fleet.Vehicle
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) {
		got, err = tx.VehiclesToSweep(now.Add(-5*time.Minute), now.Add(-30*time.Minute), 10)
		return err
	}))
	is.Equal(len(got), 2)
	is.Equal(got[0].ID, stale.ID) // oldest report first, across accounts
	is.Equal(got[1].ID, resting.ID)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) {
		got, err = tx.VehiclesToSweep(now.Add(-5*time.Minute), now.Add(-30*time.Minute), 1)
		return err
	}))
	is.Equal(len(got), 1) // limit
}

func testVehiclesGoneSilent(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	now := T0.Add(3 * time.Hour)
	since := now.Add(-5 * time.Second)
	mk := func(acc string, reported *time.Time) fleet.Vehicle {
		v := NewVehicle(acc, "v")
		if reported != nil {
			v.LastLocation = &fleet.Position{Latitude: 1, Longitude: 1, Timestamp: *reported}
		}
		is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(v) }))
		return v
	}
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	want := map[string]bool{}
	for _, c := range []struct {
		acc      string
		reported *time.Time
		in       bool
	}{
		{a.ID, at(-30*time.Minute - 2*time.Second), true},   // 30 minutes reached in the window
		{a.ID, at(-30 * time.Minute), true},                 // exactly at now
		{b.ID, at(-60*time.Minute - time.Second), true},     // another account, another rule's minutes
		{a.ID, at(-30*time.Minute - 10*time.Second), false}, // reached before the window
		{a.ID, at(-30*time.Minute - 5*time.Second), false},  // reached exactly at since: before the window
		{a.ID, at(-30*time.Minute + time.Microsecond), false},
		{a.ID, at(-45*time.Minute - time.Second), false}, // 45 is no rule's
		{a.ID, at(2 * time.Minute), false},               // reported from the future
		{a.ID, nil, false},                               // never reported
	} {
		v := mk(c.acc, c.reported)
		if c.in {
			want[v.ID] = true
		}
	}
	var got []fleet.Vehicle
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		got, err = tx.VehiclesGoneSilent(since, now, []int{60, 30}, "", 10)
		return err
	}))
	is.Equal(len(got), len(want))
	for i, v := range got {
		is.True(want[v.ID])
		is.True(i == 0 || got[i-1].ID < v.ID) // in id order
	}
	var page []fleet.Vehicle
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		page, err = tx.VehiclesGoneSilent(since, now, []int{30, 60}, got[0].ID, 1)
		return err
	}))
	is.Equal(len(page), 1) // after and limit
	is.Equal(page[0].ID, got[1].ID)
}

func testInsertPoints(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	p := func(sec int) fleet.Point {
		return fleet.Point{Latitude: 10 + float64(sec)/100, Longitude: 20, Timestamp: T0.Add(time.Duration(sec) * time.Second), Speed: f64(42.5), Heading: f64(180.25), OdometerKm: f64(1000 + float64(sec))}
	}
	var stored []fleet.Point
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) {
		stored, err = tx.InsertPoints(v.ID, []fleet.Point{p(0), p(10), p(20)})
		return err
	}))
	is.Equal(len(stored), 3)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) {
		stored, err = tx.InsertPoints(v.ID, []fleet.Point{p(5), p(10), p(30)}) // 10 is stored already
		return err
	}))
	is.Equal(len(stored), 2)
	is.True(stored[0].Timestamp.Equal(p(5).Timestamp))
	is.True(stored[1].Timestamp.Equal(p(30).Timestamp))

	var all []fleet.Point
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { all, err = tx.Points(v.ID, T0, T0.Add(time.Hour), 100); return err }))
	is.Equal(len(all), 5)
	for i, sec := range []int{0, 5, 10, 20, 30} {
		is.True(all[i].Timestamp.Equal(p(sec).Timestamp)) // sorted though inserted out of order
	}
	is.Equal(all[1].Latitude, 10.05)
	is.Equal(*all[1].Speed, 42.5)
	is.Equal(*all[1].Heading, 180.25)
	is.Equal(*all[1].OdometerKm, 1005.0)

	bare := fleet.Point{Latitude: 1, Longitude: 2, Timestamp: T0.Add(time.Hour)}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { _, err = tx.InsertPoints(v.ID, []fleet.Point{bare}); return err }))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		all, err = tx.Points(v.ID, bare.Timestamp, bare.Timestamp, 1)
		return err
	}))
	is.Equal(len(all), 1)
	is.Equal(all[0].Speed, nil) // absent values stay absent
	is.Equal(all[0].Heading, nil)
	is.Equal(all[0].OdometerKm, nil)
}

func testPointsRange(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	var pts []fleet.Point
	for i := range 50 {
		pts = append(pts, fleet.Point{Latitude: 1, Longitude: 1, Timestamp: T0.Add(time.Duration(i) * time.Minute)})
	}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { _, err = tx.InsertPoints(v.ID, pts); return err }))
	var got []fleet.Point
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		got, err = tx.Points(v.ID, T0.Add(10*time.Minute), T0.Add(20*time.Minute), 100)
		return err
	}))
	is.Equal(len(got), 11) // both ends included
	is.True(got[0].Timestamp.Equal(T0.Add(10 * time.Minute)))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		got, err = tx.Points(v.ID, T0, T0.Add(time.Hour), 7)
		return err
	}))
	is.Equal(len(got), 7) // limit
	is.True(got[6].Timestamp.Equal(T0.Add(6 * time.Minute)))
}

func testPointsRollback(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	first := []fleet.Point{{Latitude: 1, Longitude: 1, Timestamp: T0}}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { _, err = tx.InsertPoints(v.ID, first); return err }))
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if _, err := tx.InsertPoints(v.ID, []fleet.Point{{Latitude: 2, Longitude: 2, Timestamp: T0.Add(-time.Second)}, {Latitude: 3, Longitude: 3, Timestamp: T0.Add(time.Second)}}); err != nil {
			return err
		}
		v.Name = "renamed"
		if err := tx.UpdateVehicle(v); err != nil {
			return err
		}
		return fleet.Errorf(fleet.CodeValidation, "a later point was bad")
	})
	is.Equal(code(err), fleet.CodeValidation)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.Points(v.ID, T0.Add(-time.Hour), T0.Add(time.Hour), 10)
		is.NoErr(err)
		is.Equal(len(got), 1) // the batch left nothing behind
		cur, err := tx.Vehicle(a.ID, v.ID)
		is.NoErr(err)
		is.Equal(cur.Name, "v")
		return nil
	}))
}

func testPurgePoints(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	pts := []fleet.Point{{Latitude: 1, Longitude: 1, Timestamp: T0}, {Latitude: 1, Longitude: 1, Timestamp: T0.Add(time.Hour)}}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { _, err = tx.InsertPoints(v.ID, pts); return err }))
	n, err := s.PurgePoints(ctx, T0.Add(time.Minute))
	is.NoErr(err)
	is.Equal(n, 1)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.Points(v.ID, T0.Add(-time.Hour), T0.Add(2*time.Hour), 10)
		is.NoErr(err)
		is.Equal(len(got), 1)
		return nil
	}))
}

func newEvent(accountID, typ string, at time.Time) fleet.Event {
	return fleet.Event{ID: fleet.NewID(fleet.PrefixEvent), AccountID: accountID, Type: typ, CreatedAt: at, Data: json.RawMessage(`{"vehicle_id":"veh_x","n":1}`)}
}

func testEvents(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	e1 := newEvent(a.ID, fleet.EventVehicleCreated, T0)
	e2 := newEvent(a.ID, fleet.EventVehicleUpdated, T0.Add(time.Minute))
	e3 := newEvent(a.ID, fleet.EventVehicleCreated, T0.Add(2*time.Minute))
	eb := newEvent(b.ID, fleet.EventVehicleCreated, T0)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error {
		for _, e := range []fleet.Event{e1, e2, e3, eb} {
			if err := tx.AppendEvent(e); err != nil {
				return err
			}
		}
		return nil
	}))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.Event(a.ID, e2.ID)
		is.NoErr(err)
		is.Equal(got.Type, fleet.EventVehicleUpdated)
		is.Equal(string(got.Data), `{"vehicle_id":"veh_x","n":1}`) // data kept as given
		is.True(got.CreatedAt.Equal(e2.CreatedAt))
		_, err = tx.Event(a.ID, eb.ID)
		is.Equal(code(err), fleet.CodeNotFound) // another account's event
		all, err := tx.Events(a.ID, fleet.EventFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(all), 3)
		created, err := tx.Events(a.ID, fleet.EventFilter{Type: fleet.EventVehicleCreated}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(created), 2)
		later, err := tx.Events(a.ID, fleet.EventFilter{From: T0.Add(time.Minute)}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(later), 2) // from is inclusive
		after, err := tx.Events(a.ID, fleet.EventFilter{}, fleet.Page{After: e1.ID, Limit: 1})
		is.NoErr(err)
		is.Equal(len(after), 1)
		is.Equal(after[0].ID, e2.ID)
		return nil
	}))
}

func testPurgeEvents(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	old, fresh := newEvent(a.ID, fleet.EventVehicleCreated, T0), newEvent(a.ID, fleet.EventVehicleCreated, T0.Add(time.Hour))
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.AppendEvent(old); err != nil {
			return err
		}
		return tx.AppendEvent(fresh)
	}))
	n, err := s.PurgeEvents(ctx, T0.Add(time.Minute))
	is.NoErr(err)
	is.Equal(n, 1)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Event(a.ID, old.ID)
		is.Equal(code(err), fleet.CodeNotFound)
		_, err = tx.Event(a.ID, fresh.ID)
		is.NoErr(err)
		return nil
	}))
}
