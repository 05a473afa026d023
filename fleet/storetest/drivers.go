package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// RunDrivers checks the drivers area (fleet.DriverTx): drivers scoped by
// account, every field round-tripped, identifiers (compared without
// regard to case) and external ids unique per account, the lookup by
// identifier the ingest uses, filters and cursors, a cap counted exactly
// under concurrency, who drives which vehicle (one vehicle per driver, a
// move, what UpdateVehicle and DeleteVehicle leave of it), deletion
// keeping the trips' driver as history, and rollback.
func RunDrivers(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"DriverRoundTrip", testDriverRoundTrip},
		{"DriversScopedByAccount", testDriversScoped},
		{"DriverIdentifierAndExternalIDUnique", testDriverUnique},
		{"DriversFiltersAndCursors", testDriversCursors},
		{"DriverCapUnderConcurrency", testDriverCapConcurrent},
		{"DriverAssignment", testDriverAssignment},
		{"DeleteDriverKeepsTrips", testDeleteDriverKeepsTrips},
		{"DriversRollback", testDriversRollback},
	})
}

// NewDriver returns a driver of the account that is not stored yet, every
// optional field set.
func NewDriver(accountID, name, identifier string) fleet.Driver {
	return fleet.Driver{ID: fleet.NewID(fleet.PrefixDriver), AccountID: accountID, Name: name, Identifier: identifier,
		Phone: "+49 30 1234567", Email: "ana@example.com", LicenseNumber: "B072RRE2I55", LicenseExpiresOn: "2029-03-31",
		Notes: "Night shifts.\nForklift licence.", ExternalID: "hr-" + name, CreatedAt: T0, UpdatedAt: T0}
}

// MustDriver stores a new driver of the account and returns it.
func MustDriver(tb testing.TB, s fleet.Store, accountID, name, identifier string) fleet.Driver {
	tb.Helper()
	d := NewDriver(accountID, name, identifier)
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDriver(d) }); err != nil {
		tb.Fatalf("create driver: %v", err)
	}
	return d
}

func getDriver(t *testing.T, s fleet.Store, accountID, id string) fleet.Driver {
	t.Helper()
	var d fleet.Driver
	if err := s.View(ctx, func(tx fleet.Tx) (err error) { d, err = tx.Driver(accountID, id); return err }); err != nil {
		t.Fatalf("read driver: %v", err)
	}
	return d
}

func getVehicle(t *testing.T, s fleet.Store, accountID, id string) fleet.Vehicle {
	t.Helper()
	var v fleet.Vehicle
	if err := s.View(ctx, func(tx fleet.Tx) (err error) { v, err = tx.Vehicle(accountID, id); return err }); err != nil {
		t.Fatalf("read vehicle: %v", err)
	}
	return v
}

func setDriver(s fleet.Store, accountID, vehicleID, driverID string) error {
	return s.Update(ctx, func(tx fleet.Tx) error { return tx.SetVehicleDriver(accountID, vehicleID, driverID) })
}

func testDriverRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	d := MustDriver(t, s, a.ID, "Ana", "01A2B3C4D5E6F708")
	is.Equal(getDriver(t, s, a.ID, d.ID), d) // every field as stored, no vehicle
	// The identifier is found in either case: a device's hex may be lower.
	for _, ident := range []string{"01A2B3C4D5E6F708", "01a2b3c4d5e6f708"} {
		var got fleet.Driver
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.DriverByIdentifier(a.ID, ident); return err }))
		is.Equal(got, d)
	}
	for _, ident := range []string{"", "01A2B3C4D5E6F70", "01A2B3C4D5E6F7080"} {
		err := s.View(ctx, func(tx fleet.Tx) error { _, err := tx.DriverByIdentifier(a.ID, ident); return err })
		is.Equal(code(err), fleet.CodeNotFound) // only the whole key
	}

	// Every field changes but the id, the account, created_at and the
	// vehicle; optional ones clear.
	x := d
	x.Name, x.Identifier, x.Phone, x.Email, x.LicenseNumber, x.LicenseExpiresOn, x.Notes, x.ExternalID =
		"Ana Lima", "card-77", "", "", "", "", "", ""
	x.CreatedAt, x.UpdatedAt = T0.Add(time.Hour), T0.Add(2*time.Hour)
	x.VehicleID = "veh_ignored"
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateDriver(x) }))
	want := x
	want.CreatedAt, want.VehicleID = d.CreatedAt, ""
	is.Equal(getDriver(t, s, a.ID, d.ID), want)
	err := s.View(ctx, func(tx fleet.Tx) error { _, err := tx.DriverByIdentifier(a.ID, "01A2B3C4D5E6F708"); return err })
	is.Equal(code(err), fleet.CodeNotFound) // the old key is free

	// A driver is created without a vehicle, whatever it says.
	y := NewDriver(a.ID, "Bo", "")
	y.VehicleID = "veh_ignored"
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDriver(y) }))
	is.Equal(getDriver(t, s, a.ID, y.ID).VehicleID, "")

	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDriver(NewDriver("acc_missing", "Cy", "")) })
	is.Equal(code(err), fleet.CodeNotFound) // no such account
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDriver(y) })
	is.Equal(code(err), fleet.CodeConflict) // the id exists
}

func testDriversScoped(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	d := MustDriver(t, s, a.ID, "Ana", "KEY-1")
	vb := MustVehicle(t, s, b.ID, "B's truck")
	err := s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Driver(b.ID, d.ID); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.DriverByIdentifier(b.ID, "KEY-1"); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	var list []fleet.Driver
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		list, err = tx.Drivers(b.ID, fleet.DriverFilter{}, fleet.Page{Limit: 10})
		return err
	}))
	is.Equal(len(list), 0)
	x := d
	x.AccountID, x.Name = b.ID, "Stolen"
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateDriver(x) })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteDriver(b.ID, d.ID) })
	is.Equal(code(err), fleet.CodeNotFound)
	is.Equal(code(setDriver(s, a.ID, vb.ID, d.ID)), fleet.CodeNotFound) // another account's vehicle
	is.Equal(getDriver(t, s, a.ID, d.ID), d)
	is.Equal(getVehicle(t, s, b.ID, vb.ID).DriverID, "")
	var n int
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { n, err = tx.CountDrivers(b.ID); return err }))
	is.Equal(n, 0)
	// The same identifier and external id in another account are no conflict.
	MustDriver(t, s, b.ID, "Ana", "key-1")
}

func testDriverUnique(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	d := MustDriver(t, s, a.ID, "Ana", "ABC-1")
	create := func(dr fleet.Driver) error {
		return s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDriver(dr) })
	}
	dup := NewDriver(a.ID, "Bo", "abc-1") // another spelling of the same key
	is.Equal(code(create(dup)), fleet.CodeConflict)
	dup = NewDriver(a.ID, "Ana", "XYZ") // the same external id, hr-Ana
	is.Equal(code(create(dup)), fleet.CodeConflict)
	// Drivers without an identifier or external id are many.
	for i := range 3 {
		dr := NewDriver(a.ID, fmt.Sprint("Nobody ", i), "")
		dr.ExternalID = ""
		is.NoErr(create(dr))
	}
	other := MustDriver(t, s, a.ID, "Cy", "CY-1")
	// An update to a taken identifier or external id is a conflict that
	// leaves the transaction usable; keeping one's own is none.
	err := s.Update(ctx, func(tx fleet.Tx) error {
		x := other
		x.Identifier = "Abc-1"
		is.Equal(code(tx.UpdateDriver(x)), fleet.CodeConflict)
		x = other
		x.ExternalID = d.ExternalID
		is.Equal(code(tx.UpdateDriver(x)), fleet.CodeConflict)
		x = other
		x.Identifier, x.Name = "cy-1", "Cy Young" // its own key, in another case
		return tx.UpdateDriver(x)
	})
	is.NoErr(err)
	got := getDriver(t, s, a.ID, other.ID)
	is.Equal(got.Name, "Cy Young")
	is.Equal(got.Identifier, "cy-1")
	// A deleted driver's identifier and external id are free again.
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteDriver(a.ID, d.ID) }))
	is.NoErr(create(NewDriver(a.ID, "Ana", "abc-1")))
}

func testDriversCursors(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "Van")
	names := []string{"Ana Lima", "Bo Berg", "Cy Ward", "Dee Lima", "Eve Stone", "Finn Ward", "Gus Lima"}
	var all, limas []string
	var driving string
	for i, n := range names {
		d := MustDriver(t, s, a.ID, n, fmt.Sprintf("KEY-%02d", i))
		all = append(all, d.ID)
		if i%3 == 0 {
			limas = append(limas, d.ID)
		}
		if i == 4 {
			driving = d.ID
		}
	}
	is.NoErr(setDriver(s, a.ID, v.ID, driving))
	walk := func(f fleet.DriverFilter, limit int) []string {
		var ids []string
		after := ""
		for {
			var page []fleet.Driver
			is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
				page, err = tx.Drivers(a.ID, f, fleet.Page{After: after, Limit: limit})
				return err
			}))
			is.True(len(page) <= limit)
			for _, d := range page {
				is.True(f.Match(&d)) // the filter holds for every item
				ids = append(ids, d.ID)
			}
			if len(page) < limit {
				return ids
			}
			after = page[len(page)-1].ID
		}
	}
	is.Equal(walk(fleet.DriverFilter{}, 3), all)
	is.Equal(walk(fleet.DriverFilter{Query: "LIMA"}, 2), limas)                   // name contains, any case
	is.Equal(walk(fleet.DriverFilter{Query: "key-05"}, 2), []string{all[5]})      // the identifier too
	is.Equal(walk(fleet.DriverFilter{Identifier: "key-03"}, 2), []string{all[3]}) // the whole key, any case
	is.Equal(walk(fleet.DriverFilter{VehicleID: v.ID}, 2), []string{driving})
	is.Equal(walk(fleet.DriverFilter{VehicleID: v.ID, Query: "Lima"}, 2), []string(nil)) // both must hold
	var page []fleet.Driver
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		page, err = tx.Drivers(a.ID, fleet.DriverFilter{}, fleet.Page{Limit: 10})
		return err
	}))
	for _, d := range page {
		want := ""
		if d.ID == driving {
			want = v.ID
		}
		is.Equal(d.VehicleID, want) // a list says who drives what, as a read does
	}
}

// testDriverCapConcurrent: transactions that each count the account's
// drivers and add one only below a cap, run at once, end with exactly the
// cap: the isolation the plan's driver cap relies on.
func testDriverCapConcurrent(t *testing.T, s fleet.Store) {
	a := MustAccount(t, s)
	capHolds(t, s, func(tx fleet.Tx) (int, error) { return tx.CountDrivers(a.ID) },
		func(tx fleet.Tx, i int) error { return tx.CreateDriver(NewDriver(a.ID, fmt.Sprint("Driver ", i), "")) })
}

// testDriverAssignment: a vehicle's driver is set and cleared by
// SetVehicleDriver alone, a driver is on one vehicle at a time (moved by
// clearing the other first), and the driver's VehicleID follows.
func testDriverAssignment(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v1, v2 := MustVehicle(t, s, a.ID, "One"), MustVehicle(t, s, a.ID, "Two")
	ana, bo := MustDriver(t, s, a.ID, "Ana", "A-1"), MustDriver(t, s, a.ID, "Bo", "B-1")
	stale := getVehicle(t, s, a.ID, v1.ID) // read before any assignment

	is.NoErr(setDriver(s, a.ID, v1.ID, ana.ID))
	is.Equal(getVehicle(t, s, a.ID, v1.ID).DriverID, ana.ID)
	is.Equal(getDriver(t, s, a.ID, ana.ID).VehicleID, v1.ID)
	var byKey fleet.Driver
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { byKey, err = tx.DriverByIdentifier(a.ID, "a-1"); return err }))
	is.Equal(byKey.VehicleID, v1.ID) // the ingest's lookup says where the driver is

	// UpdateVehicle leaves the driver alone, whatever its copy says.
	stale.Name, stale.UpdatedAt = "One renamed", T0.Add(time.Hour)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(stale) }))
	got := getVehicle(t, s, a.ID, v1.ID)
	is.Equal(got.Name, "One renamed")
	is.Equal(got.DriverID, ana.ID)
	x := got
	x.DriverID = bo.ID
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(x) }))
	is.Equal(getVehicle(t, s, a.ID, v1.ID).DriverID, ana.ID)
	// CreateVehicle stores no driver.
	v3 := NewVehicle(a.ID, "Three")
	v3.DriverID = bo.ID
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateVehicle(v3) }))
	is.Equal(getVehicle(t, s, a.ID, v3.ID).DriverID, "")
	is.Equal(getDriver(t, s, a.ID, bo.ID).VehicleID, "")

	// One vehicle at a time: a second is a conflict that leaves the
	// transaction usable; clearing the first, then setting the second,
	// moves the driver, in one transaction.
	err := s.Update(ctx, func(tx fleet.Tx) error {
		is.Equal(code(tx.SetVehicleDriver(a.ID, v2.ID, ana.ID)), fleet.CodeConflict)
		if err := tx.SetVehicleDriver(a.ID, v1.ID, ""); err != nil {
			return err
		}
		return tx.SetVehicleDriver(a.ID, v2.ID, ana.ID)
	})
	is.NoErr(err)
	is.Equal(getVehicle(t, s, a.ID, v1.ID).DriverID, "")
	is.Equal(getVehicle(t, s, a.ID, v2.ID).DriverID, ana.ID)
	is.Equal(getDriver(t, s, a.ID, ana.ID).VehicleID, v2.ID)

	// Another driver on the same vehicle replaces the first, who then
	// drives nothing; setting the same driver again changes nothing.
	is.NoErr(setDriver(s, a.ID, v2.ID, bo.ID))
	is.NoErr(setDriver(s, a.ID, v2.ID, bo.ID))
	is.Equal(getDriver(t, s, a.ID, ana.ID).VehicleID, "")
	is.Equal(getDriver(t, s, a.ID, bo.ID).VehicleID, v2.ID)
	is.Equal(code(setDriver(s, a.ID, "veh_missing", bo.ID)), fleet.CodeNotFound)

	// A deleted vehicle's driver drives nothing, and may be assigned again.
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteVehicle(a.ID, v2.ID) }))
	is.Equal(getDriver(t, s, a.ID, bo.ID).VehicleID, "")
	is.NoErr(setDriver(s, a.ID, v1.ID, bo.ID))
	is.Equal(getDriver(t, s, a.ID, bo.ID).VehicleID, v1.ID)
}

// testDeleteDriverKeepsTrips: a trip keeps its driver's id after the
// driver is deleted, as history.
func testDeleteDriverKeepsTrips(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "Van")
	d := MustDriver(t, s, a.ID, "Ana", "A-1")
	is.NoErr(setDriver(s, a.ID, v.ID, d.ID))
	tr := NewTrip(a.ID, v.ID, T0, 30*time.Minute)
	tr.DriverID = &d.ID
	untold := NewTrip(a.ID, v.ID, T0.Add(2*time.Hour), 10*time.Minute)
	putTrip(t, s, tr)
	putTrip(t, s, untold)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.SetVehicleDriver(a.ID, v.ID, ""); err != nil {
			return err
		}
		return tx.DeleteDriver(a.ID, d.ID)
	}))
	err := s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Driver(a.ID, d.ID); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	var got, none fleet.Trip
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		if got, err = tx.Trip(a.ID, tr.ID); err != nil {
			return err
		}
		none, err = tx.Trip(a.ID, untold.ID)
		return err
	}))
	is.True(got.DriverID != nil && *got.DriverID == d.ID)
	is.True(none.DriverID == nil)
	var trips []fleet.Trip
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		trips, err = tx.AccountTrips(a.ID, "", T0, T0.Add(3*time.Hour))
		return err
	}))
	is.Equal(len(trips), 2)
	is.True(trips[0].DriverID != nil && *trips[0].DriverID == d.ID) // the summary's read carries it too
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteDriver(a.ID, d.ID) })), fleet.CodeNotFound)
}

func testDriversRollback(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "Van")
	kept := MustDriver(t, s, a.ID, "Ana", "A-1")
	boom := fleet.Errorf(fleet.CodeInternal, "boom")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.CreateDriver(NewDriver(a.ID, "Rolled back", "R-1")); err != nil {
			return err
		}
		if err := tx.SetVehicleDriver(a.ID, v.ID, kept.ID); err != nil {
			return err
		}
		x := kept
		x.Identifier = "CHANGED"
		if err := tx.UpdateDriver(x); err != nil {
			return err
		}
		if err := tx.DeleteDriver(a.ID, kept.ID); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom))
	is.Equal(getDriver(t, s, a.ID, kept.ID), kept) // neither the change, the assignment nor the delete stayed
	is.Equal(getVehicle(t, s, a.ID, v.ID).DriverID, "")
	for _, ident := range []string{"R-1", "CHANGED"} {
		err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.DriverByIdentifier(a.ID, ident); return err })
		is.Equal(code(err), fleet.CodeNotFound)
	}
	var byKey fleet.Driver
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { byKey, err = tx.DriverByIdentifier(a.ID, "A-1"); return err }))
	is.Equal(byKey.ID, kept.ID)
	var n int
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { n, err = tx.CountDrivers(a.ID); return err }))
	is.Equal(n, 1)
}
