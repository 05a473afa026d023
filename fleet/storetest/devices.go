package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// RunDevices checks the devices area (fleet.DeviceTx and fleet.DeviceStore):
// devices scoped by account with identifiers unique across accounts, even
// under concurrency; every field round-tripped, the last report's
// attributes included; filters and cursors; a cap counted exactly under
// concurrency; reports recorded only along the device's current vehicle;
// detaching a vehicle's devices; rollback; and the record of unknown
// identifiers.
func RunDevices(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"DeviceRoundTrip", testDeviceRoundTrip},
		{"DevicesScopedByAccount", testDevicesScoped},
		{"DeviceIdentifierUniqueAcrossAccounts", testDeviceIdentifierUnique},
		{"DeviceIdentifierUniqueUnderConcurrency", testDeviceIdentifierConcurrent},
		{"DevicesFiltersAndCursors", testDevicesCursors},
		{"DeviceCapUnderConcurrency", testDeviceCapConcurrent},
		{"DeviceReportFollowsVehicle", testDeviceReportCondition},
		{"DetachDevices", testDetachDevices},
		{"DevicesRollback", testDevicesRollback},
		{"UnknownDevices", testUnknownDevices},
		{"UnknownDevicesKept", testUnknownDevicesKept},
	})
}

// NewDevice returns a device of the account that is not stored yet.
func NewDevice(accountID, identifier, vehicleID string) fleet.Device {
	return fleet.Device{ID: fleet.NewID(fleet.PrefixDevice), AccountID: accountID, Identifier: identifier,
		VehicleID: vehicleID, Name: "Tracker " + identifier, CreatedAt: T0, UpdatedAt: T0}
}

// MustDevice stores a new device of the account and returns it.
func MustDevice(tb testing.TB, s fleet.Store, accountID, identifier, vehicleID string) fleet.Device {
	tb.Helper()
	d := NewDevice(accountID, identifier, vehicleID)
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDevice(d) }); err != nil {
		tb.Fatalf("create device: %v", err)
	}
	return d
}

func getDevice(t *testing.T, s fleet.Store, accountID, id string) fleet.Device {
	t.Helper()
	var d fleet.Device
	if err := s.View(ctx, func(tx fleet.Tx) (err error) { d, err = tx.Device(accountID, id); return err }); err != nil {
		t.Fatalf("read device: %v", err)
	}
	return d
}

// aReport is a last report with every member set: attributes of each
// kind a device sends.
func aReport(at time.Time) *fleet.LastReport {
	sats := 9
	return &fleet.LastReport{ReceivedAt: at, Protocol: "teltonika", Stored: false, Reason: fleet.ReasonDuplicate,
		Position: fleet.DevicePosition{Latitude: 54.6872, Longitude: 25.2797, Timestamp: at.Add(-time.Second - 250*time.Millisecond),
			Speed: f64(42.5), Heading: f64(271.25), Altitude: f64(-3.5), Valid: true, Satellites: &sats,
			Attrs: fleet.Attributes{fleet.NumberAttr("battery", 87.5), fleet.TextAttr("iccid", "8937204016201234567"), fleet.BoolAttr("ignition", true),
				fleet.NumberAttr("io240", 0), fleet.NumberAttr("odometer", 123456789)}}}
}

func testDeviceRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "Truck")
	d := MustDevice(t, s, a.ID, "356307042441013", v.ID)

	got := getDevice(t, s, a.ID, d.ID)
	is.Equal(got, d) // every field as stored, nothing reported yet
	is.True(got.LastSeenAt == nil && got.LastReport == nil && got.Protocol == "")
	var byIdent fleet.Device
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { byIdent, err = tx.DeviceByIdentifier(d.Identifier); return err }))
	is.Equal(byIdent, d)

	seen := T0.Add(time.Hour)
	rep := d
	rep.Protocol, rep.LastSeenAt, rep.LastReport = "teltonika", &seen, aReport(seen)
	rep.Name, rep.Identifier = "ignored", "ignored" // a report writes its own fields only
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.RecordDeviceReport(rep) })
	got = getDevice(t, s, a.ID, d.ID)
	is.Equal(got.Name, d.Name)
	is.Equal(got.Identifier, d.Identifier)
	is.Equal(got.Protocol, "teltonika")
	is.True(got.LastSeenAt != nil && got.LastSeenAt.Equal(seen))
	is.True(got.UpdatedAt.Equal(T0))        // a report is no change of the device
	is.Equal(got.LastReport, aReport(seen)) // every member, every attribute and its type
	ignition, _ := got.LastReport.Position.Attrs.Bool("ignition")
	is.True(ignition)
	battery, _ := got.LastReport.Position.Attrs.Number("battery")
	is.Equal(battery, 87.5)
	iccid, _ := got.LastReport.Position.Attrs.Text("iccid")
	is.Equal(iccid, "8937204016201234567")
	// The store hands out copies: changing what it returned changes nothing.
	got.LastReport.Position.Attrs[0].Num = 1
	*got.LastReport.Position.Speed = 1
	*got.LastSeenAt = T0
	again := getDevice(t, s, a.ID, d.ID)
	is.Equal(again.LastReport, aReport(seen))
	is.True(again.LastSeenAt.Equal(seen))

	// A report without a last report keeps the one stored and moves the rest.
	later := seen.Add(time.Minute)
	beat := d
	beat.Protocol, beat.LastSeenAt = "osmand", &later
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.RecordDeviceReport(beat) })
	got = getDevice(t, s, a.ID, d.ID)
	is.Equal(got.Protocol, "osmand")
	is.True(got.LastSeenAt.Equal(later))
	is.Equal(got.LastReport, aReport(seen))

	// A last report with optional members unset and no attributes.
	bare := d
	bare.Protocol, bare.LastSeenAt = "gt06", &later
	bare.LastReport = &fleet.LastReport{ReceivedAt: later, Protocol: "gt06", Stored: true,
		Position: fleet.DevicePosition{Latitude: -33.9, Longitude: 18.4, Timestamp: later}}
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.RecordDeviceReport(bare) })
	got = getDevice(t, s, a.ID, d.ID)
	r := got.LastReport
	is.True(r.Stored && r.Reason == "" && r.Protocol == "gt06")
	is.True(r.Position.Speed == nil && r.Position.Heading == nil && r.Position.Altitude == nil && r.Position.Satellites == nil)
	is.True(!r.Position.Valid)
	is.Equal(len(r.Position.Attrs), 0)

	// An update changes the vehicle, the name and updated_at only.
	upd := got
	upd.VehicleID, upd.Name, upd.UpdatedAt = "", "Renamed", T0.Add(2*time.Hour)
	upd.Identifier, upd.Protocol, upd.CreatedAt = "changed", "changed", T0.Add(time.Minute)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateDevice(upd) })
	got2 := getDevice(t, s, a.ID, d.ID)
	is.Equal(got2.VehicleID, "")
	is.Equal(got2.Name, "Renamed")
	is.True(got2.UpdatedAt.Equal(T0.Add(2 * time.Hour)))
	is.Equal(got2.Identifier, d.Identifier)
	is.Equal(got2.Protocol, "gt06")
	is.True(got2.CreatedAt.Equal(T0))
	is.Equal(got2.LastReport, got.LastReport)

	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDevice(NewDevice("acc_missing", "orphan", "")) })
	is.Equal(code(err), fleet.CodeNotFound) // no such account
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDevice(got2) })
	is.Equal(code(err), fleet.CodeConflict) // the same id twice
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.DeviceByIdentifier("nobody"); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Device(a.ID, fleet.NewID(fleet.PrefixDevice)); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateDevice(NewDevice(a.ID, "missing", "")) })
	is.Equal(code(err), fleet.CodeNotFound)

}

func testDevicesScoped(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	va, vb := MustVehicle(t, s, a.ID, "A"), MustVehicle(t, s, b.ID, "B")
	da := MustDevice(t, s, a.ID, "100000000000001", va.ID)
	db := MustDevice(t, s, b.ID, "200000000000002", vb.ID)

	err := s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Device(a.ID, db.ID); return err })
	is.Equal(code(err), fleet.CodeNotFound) // another account's device
	err = s.Update(ctx, func(tx fleet.Tx) error { x := db; x.AccountID = a.ID; x.Name = "stolen"; return tx.UpdateDevice(x) })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteDevice(a.ID, db.ID) })
	is.Equal(code(err), fleet.CodeNotFound)
	seen := T0.Add(time.Hour)
	err = s.Update(ctx, func(tx fleet.Tx) error {
		x := db
		x.AccountID, x.LastSeenAt, x.LastReport = a.ID, &seen, aReport(seen)
		return tx.RecordDeviceReport(x)
	})
	is.Equal(code(err), fleet.CodeNotFound)
	n := -1
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { n, err = tx.DetachDevices(a.ID, vb.ID, seen); return err }))
	is.Equal(n, 0) // another account's vehicle: nothing detached

	var list []fleet.Device
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		list, err = tx.Devices(a.ID, fleet.DeviceFilter{}, fleet.Page{Limit: 10})
		return err
	}))
	is.Equal(len(list), 1)
	is.Equal(list[0].ID, da.ID)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		list, err = tx.Devices(a.ID, fleet.DeviceFilter{Identifier: db.Identifier}, fleet.Page{Limit: 10})
		return err
	}))
	is.Equal(len(list), 0) // filtering by another account's identifier finds nothing
	var count int
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { count, err = tx.CountDevices(a.ID); return err }))
	is.Equal(count, 1)

	got := getDevice(t, s, b.ID, db.ID)
	is.Equal(got, db) // untouched
}

func testDeviceIdentifierUnique(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	d := MustDevice(t, s, a.ID, "862095050001234", "")
	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDevice(NewDevice(b.ID, d.Identifier, "")) })
	is.Equal(code(err), fleet.CodeConflict) // taken in another account
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDevice(NewDevice(a.ID, d.Identifier, "")) })
	is.Equal(code(err), fleet.CodeConflict) // and in its own
	other := MustDevice(t, s, b.ID, "862095050001234x", "")
	is.True(other.ID != "") // a longer identifier is another one

	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.DeleteDevice(a.ID, d.ID) })
	moved := MustDevice(t, s, b.ID, d.Identifier, "") // free again once deleted
	var got fleet.Device
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.DeviceByIdentifier(d.Identifier); return err }))
	is.Equal(got.ID, moved.ID)
	is.Equal(got.AccountID, b.ID)
}

// testDeviceIdentifierConcurrent: of accounts registering one identifier
// at once, exactly one gets it.
func testDeviceIdentifierConcurrent(t *testing.T, s fleet.Store) {
	is := is.New(t)
	const n = 8
	accounts := make([]fleet.Account, n)
	for i := range accounts {
		accounts[i] = MustAccount(t, s)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, conflicts := 0, 0
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDevice(NewDevice(accounts[i].ID, "356307042441013", "")) })
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case code(err) == fleet.CodeConflict:
				conflicts++
			default:
				t.Errorf("create: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	is.Equal(created, 1)
	is.Equal(conflicts, n-1)
	total := 0
	for _, a := range accounts {
		var c int
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { c, err = tx.CountDevices(a.ID); return err }))
		total += c
	}
	is.Equal(total, 1) // one device holds it, in one account
}

func testDevicesCursors(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v1, v2 := MustVehicle(t, s, a.ID, "One"), MustVehicle(t, s, a.ID, "Two")
	var all, onV1 []string
	for i := range 7 {
		veh := v2.ID
		if i%2 == 0 {
			veh = v1.ID
		}
		if i == 6 {
			veh = ""
		}
		d := MustDevice(t, s, a.ID, fmt.Sprintf("dev-%02d", i), veh)
		all = append(all, d.ID)
		if veh == v1.ID {
			onV1 = append(onV1, d.ID)
		}
	}
	walk := func(f fleet.DeviceFilter, limit int) []string {
		var ids []string
		after := ""
		for {
			var page []fleet.Device
			is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
				page, err = tx.Devices(a.ID, f, fleet.Page{After: after, Limit: limit})
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
			// A device registered mid-walk sorts after the cursor: no item
			// is skipped or repeated.
		}
	}
	is.Equal(walk(fleet.DeviceFilter{}, 3), all)
	is.Equal(walk(fleet.DeviceFilter{VehicleID: v1.ID}, 2), onV1)
	is.Equal(walk(fleet.DeviceFilter{Identifier: "dev-03"}, 2), []string{all[3]})
	is.Equal(walk(fleet.DeviceFilter{Identifier: "dev-03", VehicleID: v1.ID}, 2), []string(nil)) // both must hold
	var empty []fleet.Device
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		empty, err = tx.Devices(a.ID, fleet.DeviceFilter{}, fleet.Page{Limit: 0})
		return err
	}))
	is.Equal(len(empty), 0)
}

// testDeviceCapConcurrent: transactions that each count the account's
// devices and register one only below a cap, run at once, end with exactly
// the cap: the isolation the plan's device cap relies on.
func testDeviceCapConcurrent(t *testing.T, s fleet.Store) {
	a := MustAccount(t, s)
	capHolds(t, s, func(tx fleet.Tx) (int, error) { return tx.CountDevices(a.ID) },
		func(tx fleet.Tx, i int) error { return tx.CreateDevice(NewDevice(a.ID, fmt.Sprintf("cap-%d", i), "")) })
}

// capHolds runs, at once, transactions that each count what an account
// holds and create one more only below a cap of 3, and checks that exactly
// 3 were created, whatever the order: the isolation a plan's count cap
// relies on.
func capHolds(t *testing.T, s fleet.Store, count func(fleet.Tx) (int, error), create func(tx fleet.Tx, i int) error) {
	t.Helper()
	is := is.New(t)
	const limit, tries = 3, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, refused := 0, 0
	errCap := fleet.Errorf(fleet.CodeConflict, "at the cap")
	start := make(chan struct{})
	for i := range tries {
		wg.Go(func() {
			<-start
			err := s.Update(ctx, func(tx fleet.Tx) error {
				n, err := count(tx)
				if err != nil {
					return err
				}
				if n >= limit {
					return errCap
				}
				return create(tx, i)
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case err == errCap:
				refused++
			default:
				t.Errorf("create: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	is.Equal(created, limit)
	is.Equal(refused, tries-limit)
	var n int
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { n, err = count(tx); return err }))
	is.Equal(n, limit)
}

func testDeviceReportCondition(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v1, v2 := MustVehicle(t, s, a.ID, "One"), MustVehicle(t, s, a.ID, "Two")
	d := MustDevice(t, s, a.ID, "865209000000001", v1.ID)
	seen := T0.Add(time.Hour)
	report := func(vehicleID string, at time.Time) error {
		x := d
		x.VehicleID, x.Protocol, x.LastSeenAt, x.LastReport = vehicleID, "gt06", &at, aReport(at)
		return s.Update(ctx, func(tx fleet.Tx) error { return tx.RecordDeviceReport(x) })
	}
	is.NoErr(report(v1.ID, seen))
	is.Equal(code(report(v2.ID, seen.Add(time.Minute))), fleet.CodeNotFound) // routed to a vehicle it is not attached to
	is.Equal(code(report("", seen.Add(time.Minute))), fleet.CodeNotFound)
	is.True(getDevice(t, s, a.ID, d.ID).LastSeenAt.Equal(seen)) // neither was written

	moved := getDevice(t, s, a.ID, d.ID)
	moved.VehicleID, moved.UpdatedAt = v2.ID, seen
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateDevice(moved) })
	is.Equal(code(report(v1.ID, seen.Add(2*time.Minute))), fleet.CodeNotFound) // the old route fails
	is.NoErr(report(v2.ID, seen.Add(2*time.Minute)))
	is.True(getDevice(t, s, a.ID, d.ID).LastSeenAt.Equal(seen.Add(2 * time.Minute)))

	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.DeleteDevice(a.ID, d.ID) })
	is.Equal(code(report(v2.ID, seen.Add(3*time.Minute))), fleet.CodeNotFound) // gone
}

func testDetachDevices(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v1, v2 := MustVehicle(t, s, a.ID, "One"), MustVehicle(t, s, a.ID, "Two")
	d1 := MustDevice(t, s, a.ID, "d1", v1.ID)
	d2 := MustDevice(t, s, a.ID, "d2", v1.ID)
	d3 := MustDevice(t, s, a.ID, "d3", v2.ID)
	at := T0.Add(time.Hour)
	var n int
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { n, err = tx.DetachDevices(a.ID, v1.ID, at); return err })
	is.Equal(n, 2)
	for _, d := range []fleet.Device{d1, d2} {
		got := getDevice(t, s, a.ID, d.ID)
		is.Equal(got.VehicleID, "")
		is.True(got.UpdatedAt.Equal(at))
	}
	is.Equal(getDevice(t, s, a.ID, d3.ID), d3) // another vehicle's device stays
	var list []fleet.Device
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		list, err = tx.Devices(a.ID, fleet.DeviceFilter{VehicleID: v1.ID}, fleet.Page{Limit: 10})
		return err
	}))
	is.Equal(len(list), 0) // the filter follows the change
	x := d1
	x.VehicleID, x.LastSeenAt = "", &at
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.RecordDeviceReport(x) }) // a detached device reports along no vehicle
}

func testDevicesRollback(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "V")
	kept := MustDevice(t, s, a.ID, "kept", v.ID)
	boom := fleet.Errorf(fleet.CodeInternal, "boom")
	seen := T0.Add(time.Hour)
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.CreateDevice(NewDevice(a.ID, "rolled-back", "")); err != nil {
			return err
		}
		x := kept
		x.Protocol, x.LastSeenAt, x.LastReport = "h02", &seen, aReport(seen)
		if err := tx.RecordDeviceReport(x); err != nil {
			return err
		}
		if _, err := tx.DetachDevices(a.ID, v.ID, seen); err != nil {
			return err
		}
		if err := tx.DeleteDevice(a.ID, kept.ID); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom))
	is.Equal(getDevice(t, s, a.ID, kept.ID), kept) // neither the report, the detach nor the delete stayed
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.DeviceByIdentifier("rolled-back"); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	var n int
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { n, err = tx.CountDevices(a.ID); return err }))
	is.Equal(n, 1)
	MustDevice(t, s, a.ID, "rolled-back", "") // its identifier is free
}

func testUnknownDevices(t *testing.T, s fleet.Store) {
	is := is.New(t)
	rec := func(ident, proto, addr string, at time.Time, n int64) {
		is.NoErr(s.RecordUnknownDevice(ctx, fleet.UnknownDevice{Identifier: ident, Protocol: proto, Address: addr, FirstSeen: at, LastSeen: at, Count: n}, 100))
	}
	rec("111", "teltonika", "192.0.2.1", T0, 1)
	rec("111", "teltonika", "192.0.2.1", T0.Add(2*time.Minute), 1)
	rec("111", "teltonika", "192.0.2.1", T0.Add(time.Minute), 3) // late: last seen stays the latest
	rec("111", "gt06", "192.0.2.1", T0.Add(time.Minute), 1)      // another protocol: another record
	rec("222", "osmand", "2001:db8::7", T0.Add(3*time.Minute), 1)
	rec("333", "h02", "198.51.100.9", T0.Add(-40*24*time.Hour), 1)
	got, err := s.UnknownDevices(ctx, 10)
	is.NoErr(err)
	is.Equal(len(got), 4)
	is.Equal(got[0].Identifier, "222") // newest first
	is.Equal(got[0].Address, "2001:db8::7")
	is.Equal(got[1].Identifier, "111")
	is.Equal(got[1].Protocol, "teltonika")
	is.Equal(got[1].Count, int64(5)) // counts add up
	is.True(got[1].FirstSeen.Equal(T0))
	is.True(got[1].LastSeen.Equal(T0.Add(2 * time.Minute)))
	is.Equal(got[2].Protocol, "gt06")
	is.Equal(got[3].Identifier, "333")
	top, err := s.UnknownDevices(ctx, 2)
	is.NoErr(err)
	is.Equal(len(top), 2) // at most the limit
	is.Equal(top[1].Identifier, "111")

	n, err := s.PurgeUnknownDevices(ctx, T0.Add(-30*24*time.Hour))
	is.NoErr(err)
	is.Equal(n, 1)
	got, err = s.UnknownDevices(ctx, 10)
	is.NoErr(err)
	is.Equal(len(got), 3)
	for _, u := range got {
		is.True(u.Identifier != "333") // purged
	}
}

// The store keeps at most keep records: a new one past it forgets the
// least recently seen; another attempt of one it has forgets nothing.
func testUnknownDevicesKept(t *testing.T, s fleet.Store) {
	is := is.New(t)
	rec := func(ident string, at time.Time) {
		is.NoErr(s.RecordUnknownDevice(ctx, fleet.UnknownDevice{Identifier: ident, Protocol: "teltonika", Address: "192.0.2.1",
			FirstSeen: at, LastSeen: at, Count: 1}, 3))
	}
	idents := func() []string {
		got, err := s.UnknownDevices(ctx, 100)
		is.NoErr(err)
		out := []string{}
		for _, u := range got {
			out = append(out, u.Identifier)
		}
		return out
	}
	rec("1", T0.Add(time.Minute))
	rec("2", T0)
	rec("3", T0.Add(2*time.Minute))
	is.Equal(idents(), []string{"3", "1", "2"})
	rec("4", T0.Add(3*time.Minute)) // "2" was seen least recently
	is.Equal(idents(), []string{"4", "3", "1"})
	rec("1", T0.Add(4*time.Minute)) // seen again: nothing forgotten
	is.Equal(idents(), []string{"1", "4", "3"})
	rec("5", T0.Add(5*time.Minute))
	is.Equal(idents(), []string{"5", "1", "4"})
	rec("6", T0) // seen less recently than all it keeps: itself forgotten
	is.Equal(idents(), []string{"5", "1", "4"})
}
