package fleet_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// driverRig is an account (plan as given) with two vehicles, on a store,
// with a clock.
type driverRig struct {
	svc    *fleet.Service
	clock  *testclock.Clock
	p      fleet.Principal
	v1, v2 fleet.Vehicle
}

func newDriverRig(t *testing.T, store fleet.Store, plan fleet.Plan) *driverRig {
	t.Helper()
	is := is.New(t)
	clock := testclock.New(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC))
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: plan})
	is.NoErr(err)
	r := &driverRig{svc: svc, clock: clock, p: fleet.SystemPrincipal(a)}
	r.v1, err = svc.CreateVehicle(ctx, r.p, fleet.Vehicle{Name: "Van 1"})
	is.NoErr(err)
	r.v2, err = svc.CreateVehicle(ctx, r.p, fleet.Vehicle{Name: "Van 2"})
	is.NoErr(err)
	return r
}

// driverChanges returns the vehicle.driver_changed events' data, oldest
// first.
func (r *driverRig) driverChanges(t *testing.T) []fleet.DriverChange {
	t.Helper()
	l, err := r.svc.ListEvents(ctx, r.p, fleet.EventFilter{Type: fleet.EventVehicleDriverChanged}, fleet.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var out []fleet.DriverChange
	for _, e := range l.Items {
		var c fleet.DriverChange
		if err := json.Unmarshal(e.Data, &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// sameChange compares a change with what is wanted ("" for null).
func sameChange(c fleet.DriverChange, vehicle, from, to, identifier string, at time.Time) bool {
	s := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return c.VehicleID == vehicle && s(c.From) == from && s(c.To) == to && s(c.Identifier) == identifier && c.At.Equal(at)
}

func fieldsOf(err error) []string {
	var e *fleet.Error
	if !errors.As(err, &e) {
		return nil
	}
	var out []string
	for _, d := range e.Details {
		out = append(out, d.Field)
	}
	slices.Sort(out)
	return out
}

// Each bad field is named, all at once, and nothing is stored.
func TestDriverValidation(t *testing.T) {
	r := newDriverRig(t, memstore.New(), fleet.PlanPro)
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, c := range []struct {
		name   string
		in     fleet.Driver
		fields []string
	}{
		{"no name", fleet.Driver{Name: "  "}, []string{"name"}},
		{"name too long", fleet.Driver{Name: long(101)}, []string{"name"}},
		{"control character", fleet.Driver{Name: "Ana\x07"}, []string{"name"}},
		{"identifier with a space", fleet.Driver{Name: "Ana", Identifier: "01 A2"}, []string{"identifier"}},
		{"identifier too long", fleet.Driver{Name: "Ana", Identifier: long(65)}, []string{"identifier"}},
		{"identifier not ASCII", fleet.Driver{Name: "Ana", Identifier: "ключ"}, []string{"identifier"}},
		{"phone", fleet.Driver{Name: "Ana", Phone: "call me"}, []string{"phone"}},
		{"phone too long", fleet.Driver{Name: "Ana", Phone: strings.Repeat("1", 33)}, []string{"phone"}},
		{"email", fleet.Driver{Name: "Ana", Email: "ana at example"}, []string{"email"}},
		{"email with a name", fleet.Driver{Name: "Ana", Email: "Ana <ana@example.com>"}, []string{"email"}},
		{"date", fleet.Driver{Name: "Ana", LicenseExpiresOn: "31/03/2029"}, []string{"license_expires_on"}},
		{"license number", fleet.Driver{Name: "Ana", LicenseNumber: long(101)}, []string{"license_number"}},
		{"notes", fleet.Driver{Name: "Ana", Notes: long(2001)}, []string{"notes"}},
		{"external id", fleet.Driver{Name: "Ana", ExternalID: long(101)}, []string{"external_id"}},
		{"several", fleet.Driver{Identifier: "a b", Email: "x", LicenseExpiresOn: "2029-02-30"}, []string{"email", "identifier", "license_expires_on", "name"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := r.svc.CreateDriver(ctx, r.p, c.in)
			is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
			is.Equal(fieldsOf(err), c.fields)
		})
	}
	l, err := r.svc.ListDrivers(ctx, r.p, fleet.DriverFilter{}, fleet.ListQuery{})
	is.New(t).NoErr(err)
	is.New(t).Equal(len(l.Items), 0) // nothing stored
	// What is valid: multiline notes, punctuation in a key, text trimmed.
	d, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: " Ana ", Identifier: " card-1234/A ", Phone: "+49 (30) 123-45.67",
		Email: "ana@example.com", LicenseExpiresOn: "2029-03-31", Notes: "Line one.\r\n\tLine two."})
	is.New(t).NoErr(err)
	is.New(t).Equal(d.Name, "Ana")
	is.New(t).Equal(d.Identifier, "card-1234/A")
}

func TestDriverLifecycle(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newDriverRig(t, store, fleet.PlanPro)
		created := r.clock.Now()
		d, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Ana Lima", Identifier: "01A2B3C4D5E6F708", Phone: "+351 912 345 678",
			Email: "ana@example.com", LicenseNumber: "L-1", LicenseExpiresOn: "2029-03-31", Notes: "Nights.", ExternalID: "hr-17",
			VehicleID: r.v1.ID}) // vehicle_id is read-only: ignored
		is.NoErr(err)
		is.True(fleet.ValidID(fleet.PrefixDriver, d.ID))
		is.Equal(d.VehicleID, "")
		is.True(d.CreatedAt.Equal(created))
		got, err := r.svc.Driver(ctx, r.p, d.ID)
		is.NoErr(err)
		is.Equal(got, d)
		b, err := json.Marshal(got)
		is.NoErr(err)
		is.True(strings.Contains(string(b), `"vehicle_id":null`))

		// Merge patch: absent stays, null clears, a value sets.
		r.clock.Advance(time.Minute)
		var patch fleet.DriverPatch
		is.NoErr(json.Unmarshal([]byte(`{"phone": null, "notes": "Days now.", "identifier": "01a2b3c4d5e6f709"}`), &patch))
		up, err := r.svc.UpdateDriver(ctx, r.p, d.ID, patch)
		is.NoErr(err)
		is.Equal(up.Phone, "")
		is.Equal(up.Notes, "Days now.")
		is.Equal(up.Identifier, "01a2b3c4d5e6f709")
		is.Equal(up.Email, d.Email) // absent: unchanged
		is.True(up.UpdatedAt.Equal(r.clock.Now()))
		is.True(up.CreatedAt.Equal(created))
		// A name cleared is refused, and nothing changes.
		patch = fleet.DriverPatch{}
		is.NoErr(json.Unmarshal([]byte(`{"name": null, "email": "new@example.com"}`), &patch))
		_, err = r.svc.UpdateDriver(ctx, r.p, d.ID, patch)
		is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
		is.Equal(fieldsOf(err), []string{"name"})
		got, _ = r.svc.Driver(ctx, r.p, d.ID)
		is.Equal(got, up)

		// Another account sees none of it; a malformed id is not found.
		b2, _, err := r.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bravo", Plan: fleet.PlanPro})
		is.NoErr(err)
		pb := fleet.SystemPrincipal(b2)
		for _, id := range []string{d.ID, "drv_nope", "veh_" + d.ID[4:]} {
			_, err = r.svc.Driver(ctx, pb, id)
			is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		}
		_, err = r.svc.UpdateDriver(ctx, pb, d.ID, fleet.DriverPatch{Name: fleet.Some("Stolen")})
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		_, err = r.svc.DeleteDriver(ctx, pb, d.ID)
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		l, err := r.svc.ListDrivers(ctx, pb, fleet.DriverFilter{}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 0)

		// Filters, and filters that can name nothing.
		_, err = r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Bo Berg"})
		is.NoErr(err)
		l, err = r.svc.ListDrivers(ctx, r.p, fleet.DriverFilter{Query: "lima"}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 1)
		l, err = r.svc.ListDrivers(ctx, r.p, fleet.DriverFilter{Identifier: "01A2B3C4D5E6F709"}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 1)
		for _, f := range []fleet.DriverFilter{{Identifier: "a b"}, {VehicleID: "van"}, {Query: "x\x00"}} {
			_, err = r.svc.ListDrivers(ctx, r.p, f, fleet.ListQuery{})
			is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
		}
		l, err = r.svc.ListDrivers(ctx, r.p, fleet.DriverFilter{}, fleet.ListQuery{Limit: 1})
		is.NoErr(err)
		is.True(l.HasMore)
		l, err = r.svc.ListDrivers(ctx, r.p, fleet.DriverFilter{}, fleet.ListQuery{Limit: 1, Cursor: l.NextCursor})
		is.NoErr(err)
		is.Equal(l.Items[0].Name, "Bo Berg")
		is.True(!l.HasMore)

		del, err := r.svc.DeleteDriver(ctx, r.p, d.ID)
		is.NoErr(err)
		is.Equal(del, fleet.DriverDeleted{DriverID: d.ID, Deleted: true})
		_, err = r.svc.Driver(ctx, r.p, d.ID)
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	})
}

// A taken identifier (in any case) or external_id (in any Unicode form)
// is 409 naming the field, on create and on update.
func TestDriverConflicts(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newDriverRig(t, store, fleet.PlanPro)
		ana, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Ana", Identifier: "ABC123", ExternalID: "caf\u00e9"})
		is.NoErr(err)
		_, err = r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Bo", Identifier: "abc123"})
		is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
		is.Equal(fieldsOf(err), []string{"identifier"})
		is.True(strings.Contains(fleet.ErrorMessage(err), `"ABC123"`)) // names the key taken
		_, err = r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Bo", ExternalID: "cafe\u0301"})
		is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
		is.Equal(fieldsOf(err), []string{"external_id"})
		bo, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Bo", Identifier: "B-1"})
		is.NoErr(err)
		_, err = r.svc.UpdateDriver(ctx, r.p, bo.ID, fleet.DriverPatch{Identifier: fleet.Some("Abc123")})
		is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
		is.Equal(fieldsOf(err), []string{"identifier"})
		_, err = r.svc.UpdateDriver(ctx, r.p, bo.ID, fleet.DriverPatch{ExternalID: fleet.Some("café")})
		is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
		is.Equal(fieldsOf(err), []string{"external_id"})
		got, err := r.svc.Driver(ctx, r.p, bo.ID)
		is.NoErr(err)
		is.Equal(got, bo) // unchanged
		_, err = r.svc.UpdateDriver(ctx, r.p, ana.ID, fleet.DriverPatch{Identifier: fleet.Some("abc123")})
		is.NoErr(err) // its own key in another case
	})
}

// The plan's cap: the free plan's eleventh driver is 409 naming the cap.
func TestDriverCap(t *testing.T) {
	is := is.New(t)
	r := newDriverRig(t, memstore.New(), fleet.PlanFree)
	limit := fleet.PlanFree.Limits().Drivers
	is.Equal(limit, 10)
	is.Equal(fleet.PlanPro.Limits().Drivers, 1_000)
	is.Equal(fleet.PlanEnterprise.Limits().Drivers, 100_000)
	for i := range limit {
		_, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: fmt.Sprint("Driver ", i)})
		is.NoErr(err)
	}
	_, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "One too many"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
	is.True(strings.Contains(fleet.ErrorMessage(err), "free plan may have at most 10 drivers"))
}

// Assigning by hand: a driver drives one vehicle at a time, every change
// of a vehicle's driver emits vehicle.driver_changed, and a reference that
// is not the account's is refused.
func TestAssignDriver(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newDriverRig(t, store, fleet.PlanPro)
		ana, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Ana"})
		is.NoErr(err)
		bo, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Bo"})
		is.NoErr(err)
		r.clock.Advance(time.Minute)
		t1 := r.clock.Now()
		out, err := r.svc.AssignDriver(ctx, r.p, r.v1.ID, fleet.AssignTo(ana.ID))
		is.NoErr(err)
		is.Equal(out, fleet.VehicleDriver{VehicleID: r.v1.ID, DriverID: ana.ID})
		v, err := r.svc.Vehicle(ctx, r.p, r.v1.ID)
		is.NoErr(err)
		is.Equal(v.DriverID, ana.ID)
		is.True(v.UpdatedAt.Equal(r.v1.UpdatedAt)) // an assignment is state, not an edit
		got, _ := r.svc.Driver(ctx, r.p, ana.ID)
		is.Equal(got.VehicleID, r.v1.ID)
		is.True(got.UpdatedAt.Equal(ana.UpdatedAt))

		// The same again changes nothing, emits nothing.
		_, err = r.svc.AssignDriver(ctx, r.p, r.v1.ID, fleet.AssignTo(ana.ID))
		is.NoErr(err)
		is.Equal(len(r.driverChanges(t)), 1)

		// Ana moves to van 2: van 1 has no driver, each van its event.
		r.clock.Advance(time.Minute)
		t2 := r.clock.Now()
		_, err = r.svc.AssignDriver(ctx, r.p, r.v2.ID, fleet.AssignTo(ana.ID))
		is.NoErr(err)
		v1, _ := r.svc.Vehicle(ctx, r.p, r.v1.ID)
		v2, _ := r.svc.Vehicle(ctx, r.p, r.v2.ID)
		is.Equal(v1.DriverID, "")
		is.Equal(v2.DriverID, ana.ID)
		// Bo takes van 2: Ana drives nothing.
		r.clock.Advance(time.Minute)
		t3 := r.clock.Now()
		_, err = r.svc.AssignDriver(ctx, r.p, r.v2.ID, fleet.AssignTo(bo.ID))
		is.NoErr(err)
		got, _ = r.svc.Driver(ctx, r.p, ana.ID)
		is.Equal(got.VehicleID, "")
		l, err := r.svc.ListDrivers(ctx, r.p, fleet.DriverFilter{VehicleID: r.v2.ID}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 1)
		is.Equal(l.Items[0].ID, bo.ID)
		// Cleared by hand.
		r.clock.Advance(time.Minute)
		t4 := r.clock.Now()
		out, err = r.svc.AssignDriver(ctx, r.p, r.v2.ID, fleet.AssignTo(""))
		is.NoErr(err)
		is.Equal(out, fleet.VehicleDriver{VehicleID: r.v2.ID})
		b, _ := json.Marshal(out)
		is.Equal(string(b), `{"vehicle_id":"`+r.v2.ID+`","driver_id":null}`)

		cs := r.driverChanges(t)
		is.Equal(len(cs), 5)
		is.True(sameChange(cs[0], r.v1.ID, "", ana.ID, "", t1))
		is.True(sameChange(cs[1], r.v1.ID, ana.ID, "", "", t2)) // the van she left
		is.True(sameChange(cs[2], r.v2.ID, "", ana.ID, "", t2))
		is.True(sameChange(cs[3], r.v2.ID, ana.ID, bo.ID, "", t3))
		is.True(sameChange(cs[4], r.v2.ID, bo.ID, "", "", t4))

		// References that are not the account's.
		b2, _, err := r.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bravo", Plan: fleet.PlanPro})
		is.NoErr(err)
		pb := fleet.SystemPrincipal(b2)
		theirs, err := r.svc.CreateDriver(ctx, pb, fleet.Driver{Name: "Theirs"})
		is.NoErr(err)
		for _, id := range []string{theirs.ID, "drv_missing", r.v1.ID} {
			_, err = r.svc.AssignDriver(ctx, r.p, r.v1.ID, fleet.AssignTo(id))
			is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
			is.Equal(fieldsOf(err), []string{"driver_id"})
		}
		_, err = r.svc.AssignDriver(ctx, pb, r.v1.ID, fleet.AssignTo(theirs.ID))
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // another account's vehicle
		_, err = r.svc.AssignDriver(ctx, r.p, r.v1.ID, fleet.DriverAssignment{})
		is.Equal(fleet.ErrorCode(err), fleet.CodeValidation) // says nothing: not taken as "none"
		is.Equal(fieldsOf(err), []string{"driver_id"})
		is.Equal(len(r.driverChanges(t)), 5) // none of it changed anything
	})
}

// Deleting a driver clears their vehicle's driver, with its event; their
// trips keep the driver's id.
func TestDeleteDriverClearsVehicle(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		d, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Ana"})
		is.NoErr(err)
		_, err = r.svc.AssignDriver(ctx, r.p, r.v.ID, fleet.AssignTo(d.ID))
		is.NoErr(err)
		rt := newRoute(r.t0)
		rt.report(0)
		rt.drive(10*time.Minute, 60).stand(6 * time.Minute)
		r.ingest(t, rt.pts, 10)
		at := r.clock.Now()
		_, err = r.svc.DeleteDriver(ctx, r.p, d.ID)
		is.NoErr(err)
		v, _ := r.svc.Vehicle(ctx, r.p, r.v.ID)
		is.Equal(v.DriverID, "")
		rig := &driverRig{svc: r.svc, p: r.p}
		cs := rig.driverChanges(t)
		is.Equal(len(cs), 2)
		is.True(sameChange(cs[1], r.v.ID, d.ID, "", "", at))
		trips := r.trips(t)
		is.Equal(len(trips), 1)
		is.True(trips[0].DriverID != nil && *trips[0].DriverID == d.ID) // history
	})
}

// What the ingest calls for a point's driver_identifier: the key is found
// in any case, the event carries it, an unknown key leaves the vehicle
// without a driver, and the driver moves from the vehicle they drove.
func TestAssignDriverByIdentifier(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newDriverRig(t, store, fleet.PlanPro)
		acc := r.p.Account.ID
		ana, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Ana", Identifier: "00000A1B2C3D"})
		is.NoErr(err)
		at1 := r.clock.Now().Add(-time.Minute) // the point's time, not the arrival
		changed, err := fleet.AssignByIdentifier(r.svc, acc, r.v1.ID, "00000a1b2c3d", at1)
		is.NoErr(err)
		is.True(changed)
		changed, err = fleet.AssignByIdentifier(r.svc, acc, r.v1.ID, "00000A1B2C3D", at1.Add(time.Second))
		is.NoErr(err)
		is.True(!changed) // the same driver again
		// Read on van 2: she moves.
		at2 := at1.Add(time.Minute)
		changed, err = fleet.AssignByIdentifier(r.svc, acc, r.v2.ID, "00000A1B2C3D", at2)
		is.NoErr(err)
		is.True(changed)
		// A key no driver has: van 2 has no driver, the event says which key.
		at3 := at2.Add(time.Minute)
		changed, err = fleet.AssignByIdentifier(r.svc, acc, r.v2.ID, "FFFF", at3)
		is.NoErr(err)
		is.True(changed)
		changed, err = fleet.AssignByIdentifier(r.svc, acc, r.v2.ID, "EEEE", at3)
		is.NoErr(err)
		is.True(!changed) // from none to none
		cs := r.driverChanges(t)
		is.Equal(len(cs), 4)
		is.True(sameChange(cs[0], r.v1.ID, "", ana.ID, "00000a1b2c3d", at1))
		is.True(sameChange(cs[1], r.v1.ID, ana.ID, "", "", at2)) // the other end of the move
		is.True(sameChange(cs[2], r.v2.ID, "", ana.ID, "00000A1B2C3D", at2))
		is.True(sameChange(cs[3], r.v2.ID, ana.ID, "", "FFFF", at3))
		got, _ := r.svc.Driver(ctx, r.p, ana.ID)
		is.Equal(got.VehicleID, "")
	})
}

// A trip carries the driver the vehicle had when it started; the next
// trip takes the driver assigned since.
func TestTripCarriesDriver(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		ana, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Ana"})
		is.NoErr(err)
		bo, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Bo"})
		is.NoErr(err)
		rt := newRoute(r.t0)
		rt.report(0)
		r.ingest(t, rt.pts, 1) // parked, no driver
		_, err = r.svc.AssignDriver(ctx, r.p, r.v.ID, fleet.AssignTo(ana.ID))
		is.NoErr(err)
		rt.pts = nil
		rt.drive(10*time.Minute, 50)
		r.ingest(t, rt.pts, 5)
		// Bo takes over mid-trip: the trip stays Ana's.
		_, err = r.svc.AssignDriver(ctx, r.p, r.v.ID, fleet.AssignTo(bo.ID))
		is.NoErr(err)
		rt.pts = nil
		rt.drive(5*time.Minute, 50).stand(6*time.Minute).drive(5*time.Minute, 50)
		r.ingest(t, rt.pts, 5)
		trips := r.trips(t)
		is.Equal(len(trips), 2)
		is.True(trips[0].DriverID != nil && *trips[0].DriverID == ana.ID)
		is.True(trips[1].DriverID != nil && *trips[1].DriverID == bo.ID)
		started := r.events(t, fleet.EventTripStarted)
		is.Equal(len(started), 2)
		is.True(started[1].DriverID != nil && *started[1].DriverID == bo.ID) // the event's trip says so too
		// A vehicle with no driver starts trips without one.
		_, err = r.svc.AssignDriver(ctx, r.p, r.v.ID, fleet.AssignTo(""))
		is.NoErr(err)
		rt.pts = nil
		rt.stand(6*time.Minute).drive(5*time.Minute, 50)
		r.ingest(t, rt.pts, 5)
		trips = r.trips(t)
		is.Equal(len(trips), 3)
		is.True(trips[2].DriverID == nil)
		b, err := json.Marshal(trips[2])
		is.NoErr(err)
		is.True(strings.Contains(string(b), `"driver_id":null`))
	})
}

// The summary by driver: per driver and day in the zone, whichever
// vehicle, with idling time; trips without a driver in rows of their own,
// last; a page at a time.
func TestSummaryByDriver(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		van2, err := r.svc.CreateVehicle(ctx, r.p, fleet.Vehicle{Name: "Van 2"})
		is.NoErr(err)
		ana, err := r.svc.CreateDriver(ctx, r.p, fleet.Driver{Name: "Ana"})
		is.NoErr(err)
		berlin, err := time.LoadLocation("Europe/Berlin")
		is.NoErr(err)
		ingest := func(vehicleID string, pts []fleet.Point) {
			t.Helper()
			if last := pts[len(pts)-1].Timestamp; last.After(r.clock.Now()) {
				r.clock.Set(last)
			}
			_, err := r.svc.IngestLocations(ctx, r.p, vehicleID, pts)
			is.NoErr(err)
		}
		// Ana drives van 1 from 23:40 Berlin time over midnight, with a
		// two-minute halt at 23:55 (three idling steps of 30 s: 90 s).
		_, err = r.svc.AssignDriver(ctx, r.p, r.v.ID, fleet.AssignTo(ana.ID))
		is.NoErr(err)
		start := time.Date(2026, 11, 20, 23, 40, 0, 0, berlin).UTC()
		r.clock.Set(start)
		a := newRoute(start)
		a.report(0)
		a.drive(15*time.Minute, 60).stand(2*time.Minute).drive(25*time.Minute, 60).stand(6 * time.Minute)
		ingest(r.v.ID, a.pts)
		// Then she takes van 2 at 01:00 and drives 20 minutes.
		_, err = r.svc.AssignDriver(ctx, r.p, van2.ID, fleet.AssignTo(ana.ID))
		is.NoErr(err)
		b := newRoute(time.Date(2026, 11, 21, 1, 0, 0, 0, berlin).UTC())
		b.report(0)
		b.drive(20*time.Minute, 40).stand(6 * time.Minute)
		ingest(van2.ID, b.pts)
		// Van 1, no one assigned now, drives at 02:00.
		_, err = r.svc.AssignDriver(ctx, r.p, r.v.ID, fleet.AssignTo(""))
		is.NoErr(err)
		c := newRoute(time.Date(2026, 11, 21, 2, 0, 0, 0, berlin).UTC())
		c.lon += 1
		c.report(0)
		c.drive(10*time.Minute, 30).stand(6 * time.Minute)
		ingest(r.v.ID, c.pts)

		from, to := start.Add(-time.Hour), r.clock.Now()
		trips := map[string][]fleet.Trip{}
		for _, vid := range []string{r.v.ID, van2.ID} {
			l, err := r.svc.ListTrips(ctx, r.p, vid, fleet.TripQuery{From: &from, To: &to})
			is.NoErr(err)
			trips[vid] = l.Items
		}
		is.Equal(len(trips[r.v.ID]), 2)
		is.Equal(len(trips[van2.ID]), 1)
		first, second, third := trips[r.v.ID][0], trips[van2.ID][0], trips[r.v.ID][1]
		is.True(near(first.DurationSeconds-first.MovingSeconds, 90, 1e-9)) // the halt, within the trip

		sum, err := r.svc.DriverSummary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to, TZ: "Europe/Berlin"})
		is.NoErr(err)
		rows := sum.Items
		is.Equal(len(rows), 3)
		// Ana on the 20th: the first trip up to midnight, the halt in it.
		is.Equal(*rows[0].DriverID, ana.ID)
		is.Equal(rows[0].Day, "2026-11-20")
		is.Equal(rows[0].Trips, 1)
		is.Equal(rows[0].IdlingSeconds, 90.0)
		is.True(rows[0].FirstDeparture.Equal(first.Start.Timestamp))
		is.True(rows[0].LastArrival == nil)
		// Ana on the 21st: the rest of the first trip, and the second,
		// in another van.
		is.Equal(*rows[1].DriverID, ana.ID)
		is.Equal(rows[1].Day, "2026-11-21")
		is.Equal(rows[1].Trips, 1)
		is.Equal(rows[1].IdlingSeconds, 0.0)
		is.True(near(rows[0].DistanceKm+rows[1].DistanceKm, first.DistanceKm+second.DistanceKm, 2*metre))
		is.True(near(rows[0].DrivingSeconds+rows[1].DrivingSeconds, first.MovingSeconds+second.MovingSeconds, 1e-6))
		is.True(rows[1].LastArrival.Equal(second.End.Timestamp))
		is.Equal(rows[1].MaxSpeed, 60.0)
		// No driver: the third trip, last.
		is.True(rows[2].DriverID == nil)
		is.Equal(rows[2].Day, "2026-11-21")
		is.Equal(rows[2].Trips, 1)
		is.True(near(rows[2].DistanceKm, third.DistanceKm, metre))
		is.Equal(rows[2].MaxSpeed, 30.0)

		// In UTC the first trip's day is the 20th whole (22:40 to 23:27).
		utc, err := r.svc.DriverSummary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to})
		is.NoErr(err)
		is.Equal(len(utc.Items), 3)
		is.Equal(utc.Items[0].Day, "2026-11-20")
		is.True(near(utc.Items[0].DistanceKm, first.DistanceKm, metre))
		is.Equal(utc.Items[0].Trips, 1)
		is.Equal(utc.Items[1].Day, "2026-11-21") // the second trip at 00:00 UTC
		is.True(near(utc.Items[1].DistanceKm, second.DistanceKm, metre))

		// One vehicle's trips only.
		one, err := r.svc.DriverSummary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to, VehicleID: van2.ID, TZ: "Europe/Berlin"})
		is.NoErr(err)
		is.Equal(len(one.Items), 1)
		is.True(near(one.Items[0].DistanceKm, second.DistanceKm, metre))

		// A page at a time: every row once, in order.
		var walked []fleet.DriverSummaryRow
		q := fleet.SummaryQuery{From: &from, To: &to, TZ: "Europe/Berlin", Limit: 1}
		for {
			l, err := r.svc.DriverSummary(ctx, r.p, q)
			is.NoErr(err)
			walked = append(walked, l.Items...)
			if !l.HasMore {
				break
			}
			q.Cursor = l.NextCursor
		}
		is.Equal(walked, rows)

		// The deleted driver's trips still count under their id.
		_, err = r.svc.DeleteDriver(ctx, r.p, ana.ID)
		is.NoErr(err)
		after, err := r.svc.DriverSummary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to, TZ: "Europe/Berlin"})
		is.NoErr(err)
		is.Equal(after.Items, rows)

		// The summary by vehicle counts idling too.
		byVehicle, err := r.svc.Summary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to, GroupBy: fleet.GroupByVehicle})
		is.NoErr(err)
		is.Equal(byVehicle.Items[slices.IndexFunc(byVehicle.Items, func(x fleet.SummaryRow) bool { return x.VehicleID == r.v.ID })].IdlingSeconds, 90.0)

		for _, bad := range []fleet.SummaryQuery{{TZ: "Mars/Olympus"}, {Cursor: "nonsense"}, {Limit: fleet.MaxSummaryLimit + 1}} {
			_, err = r.svc.DriverSummary(ctx, r.p, bad)
			is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
		}
		_, err = r.svc.DriverSummary(ctx, r.p, fleet.SummaryQuery{VehicleID: "veh_missing"})
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		// A cursor of the summary by vehicle is not one of this.
		vq := fleet.SummaryQuery{From: &from, To: &to, Limit: 1}
		vl, err := r.svc.Summary(ctx, r.p, vq)
		is.NoErr(err)
		_, err = r.svc.DriverSummary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to, Cursor: vl.NextCursor})
		is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
		_, err = r.svc.Summary(ctx, r.p, fleet.SummaryQuery{GroupBy: fleet.GroupByDriver})
		is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest) // DriverSummary's
	})
}
