package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// deviceEnv is an account with a vehicle and a device attached to it, on a
// service whose clock the test moves.
type deviceEnv struct {
	t     *testing.T
	svc   *fleet.Service
	clock *testclock.Clock
	p     fleet.Principal
	v     fleet.Vehicle
	d     fleet.Device
}

var deviceT0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newDeviceEnv(t *testing.T, store fleet.Store, plan fleet.Plan) *deviceEnv {
	t.Helper()
	clock := testclock.New(deviceT0)
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	e := &deviceEnv{t: t, svc: svc, clock: clock, p: fleet.SystemPrincipal(a)}
	e.v = e.vehicle("Truck 7")
	e.d, err = svc.CreateDevice(ctx, e.p, fleet.Device{Identifier: "356307042441013", VehicleID: e.v.ID, Name: "FMB920"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *deviceEnv) vehicle(name string) fleet.Vehicle {
	e.t.Helper()
	v, err := e.svc.CreateVehicle(ctx, e.p, fleet.Vehicle{Name: name})
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// pos is a position with a fix at the given time, moving at 50 km/h.
func pos(at time.Time, lat, lon float64) fleet.DevicePosition {
	speed, heading := 50.0, 90.0
	return fleet.DevicePosition{Latitude: lat, Longitude: lon, Timestamp: at, Speed: &speed, Heading: &heading, Valid: true}
}

func (e *deviceEnv) report(ps ...fleet.DevicePosition) (fleet.DeviceResult, error) {
	return e.reportAs(e.svc, e.d.Identifier, ps...)
}

func (e *deviceEnv) reportAs(svc *fleet.Service, identifier string, ps ...fleet.DevicePosition) (fleet.DeviceResult, error) {
	return svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: identifier, Protocol: "teltonika",
		RemoteAddr: "192.0.2.7:40312", Positions: ps})
}

func (e *deviceEnv) mustReport(ps ...fleet.DevicePosition) fleet.DeviceResult {
	e.t.Helper()
	r, err := e.report(ps...)
	if err != nil {
		e.t.Fatalf("report: %v", err)
	}
	return r
}

// history is the vehicle's points of the last week, as times.
func (e *deviceEnv) history(vehicleID string) []time.Time {
	e.t.Helper()
	from, to := e.clock.Now().Add(-7*24*time.Hour), e.clock.Now().Add(fleet.MaxFutureSkew)
	l, err := e.svc.ListHistory(ctx, e.p, vehicleID, fleet.HistoryQuery{From: &from, To: &to, Limit: fleet.MaxHistoryLimit})
	if err != nil {
		e.t.Fatal(err)
	}
	out := []time.Time{}
	for _, pt := range l.Items {
		out = append(out, pt.Timestamp)
	}
	return out
}

func (e *deviceEnv) device() fleet.Device {
	e.t.Helper()
	d, err := e.svc.Device(ctx, e.p, e.d.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *deviceEnv) lastLocation(vehicleID string) *fleet.Position {
	e.t.Helper()
	v, err := e.svc.Vehicle(ctx, e.p, vehicleID)
	if err != nil {
		e.t.Fatal(err)
	}
	return v.LastLocation
}

func TestDeviceReportStoresAndRecords(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, store, fleet.PlanPro)
		at := e.clock.Now().Add(-10 * time.Second)
		p := pos(at, 52.52, 13.40)
		sats, alt := 11, 34.5
		p.Satellites, p.Altitude = &sats, &alt
		p.Attrs = fleet.Attributes{fleet.BoolAttr("ignition", true), fleet.NumberAttr("battery", 4.1), fleet.TextAttr("iccid", "8937204016201234567")}
		r := e.mustReport(p)
		is.Equal(r, fleet.DeviceResult{Accepted: 1, Stored: true})
		is.Equal(e.history(e.v.ID), []time.Time{at}) // ingested as the vehicle's location
		ll := e.lastLocation(e.v.ID)
		is.True(ll != nil && ll.Timestamp.Equal(at) && ll.Latitude == 52.52)
		v, err := e.svc.Vehicle(ctx, e.p, e.v.ID)
		is.NoErr(err)
		is.Equal(v.Status, fleet.StatusMoving) // the status machine ran, as for the API

		d := e.device()
		is.Equal(d.Protocol, "teltonika")
		is.True(d.LastSeenAt != nil && d.LastSeenAt.Equal(e.clock.Now()))
		is.True(d.UpdatedAt.Equal(e.d.UpdatedAt)) // a report is no change of the device
		lr := d.LastReport
		is.True(lr != nil)
		is.True(lr.Stored)
		is.Equal(lr.Reason, "")
		is.Equal(lr.Protocol, "teltonika")
		is.True(lr.ReceivedAt.Equal(e.clock.Now()))
		is.True(lr.Position.Timestamp.Equal(at))
		is.Equal(*lr.Position.Satellites, 11)
		is.Equal(*lr.Position.Altitude, 34.5)
		is.Equal(lr.Position.Attrs, fleet.Attributes{fleet.NumberAttr("battery", 4.1), fleet.TextAttr("iccid", "8937204016201234567"), fleet.BoolAttr("ignition", true)}) // in name order
		is.Equal(e.svc.Stats().Devices.Reports, uint64(1))

		// The same message again (the device did not get the ACK): a
		// duplicate, never a second point.
		e.clock.Advance(time.Minute)
		r = e.mustReport(p)
		is.Equal(r, fleet.DeviceResult{Duplicates: 1, Reason: fleet.ReasonDuplicate})
		is.Equal(e.history(e.v.ID), []time.Time{at})
		lr = e.device().LastReport
		is.True(!lr.Stored)
		is.Equal(lr.Reason, fleet.ReasonDuplicate)
		is.True(e.device().LastSeenAt.Equal(e.clock.Now())) // seen again all the same
	})
}

// A Teltonika frame carries its buffered records newest first: they are
// stored in time order, last_location only moves forward, and last_report
// is the frame's last record, whatever its time.
func TestDeviceReportOutOfOrder(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, store, fleet.PlanPro)
		now := e.clock.Now()
		t1, t2, t3 := now.Add(-30*time.Minute), now.Add(-20*time.Minute), now.Add(-10*time.Minute)
		r := e.mustReport(pos(t3, 52.3, 13.3), pos(t2, 52.2, 13.2), pos(t1, 52.1, 13.1))
		is.Equal(r, fleet.DeviceResult{Accepted: 3, Stored: true})
		is.Equal(e.history(e.v.ID), []time.Time{t1, t2, t3}) // history in time order
		is.True(e.lastLocation(e.v.ID).Timestamp.Equal(t3))  // the newest
		lr := e.device().LastReport
		is.True(lr.Position.Timestamp.Equal(t1)) // the frame's last record: its oldest
		is.Equal(lr.Position.Latitude, 52.1)

		// An older buffered record arriving later is history only.
		t0 := now.Add(-40 * time.Minute)
		r = e.mustReport(pos(t0, 52.0, 13.0))
		is.Equal(r.Accepted, 1)
		is.Equal(e.history(e.v.ID), []time.Time{t0, t1, t2, t3})
		is.True(e.lastLocation(e.v.ID).Timestamp.Equal(t3)) // did not move back
		is.True(e.device().LastReport.Position.Timestamp.Equal(t0))

		// A message whose last position repeats an earlier one's time: the
		// first is stored, the last is the duplicate.
		t4 := now.Add(-5 * time.Minute)
		r = e.mustReport(pos(t4, 52.4, 13.4), pos(t4, 52.9, 13.9))
		is.Equal(r, fleet.DeviceResult{Accepted: 1, Duplicates: 1, Reason: fleet.ReasonDuplicate})
		is.Equal(e.lastLocation(e.v.ID).Latitude, 52.4)
		lr = e.device().LastReport
		is.Equal(lr.Position.Latitude, 52.9)
		is.Equal(lr.Reason, fleet.ReasonDuplicate)
	})
}

// Positions without a valid fix, or with values the API refuses, move
// nothing; the rest of their message is stored.
func TestDeviceReportNoFix(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, store, fleet.PlanPro)
		now := e.clock.Now()
		noFix := pos(now.Add(-time.Minute), 52.5, 13.4)
		noFix.Valid = false
		r := e.mustReport(noFix)
		is.Equal(r, fleet.DeviceResult{Reason: fleet.ReasonNoFix})
		is.Equal(e.history(e.v.ID), []time.Time{})
		is.True(e.lastLocation(e.v.ID) == nil) // nothing moved
		lr := e.device().LastReport
		is.True(!lr.Stored && lr.Reason == fleet.ReasonNoFix && !lr.Position.Valid)
		is.Equal(lr.Position.Latitude, 52.5) // kept as the last report all the same

		bad := []fleet.DevicePosition{
			pos(now.Add(-50*time.Second), 91, 13.4),                       // latitude out of range
			pos(now.Add(-49*time.Second), 52.5, 181),                      // longitude
			pos(now.Add(-48*time.Second), math.NaN(), 13.4),               // no coordinate
			pos(time.Date(1999, 8, 21, 0, 0, 0, 0, time.UTC), 52.5, 13.4), // a GPS week rollover
			pos(time.Time{}, 52.5, 13.4),                                  // no time
		}
		heading := 360.0
		bad = append(bad, pos(now.Add(-47*time.Second), 52.5, 13.4))
		bad[len(bad)-1].Heading = &heading
		speed := 1200.0
		bad = append(bad, pos(now.Add(-46*time.Second), 52.5, 13.4))
		bad[len(bad)-1].Speed = &speed
		for i, b := range bad {
			r, err := e.report(b)
			is.NoErr(err) // not a failure of the report: acknowledged
			is.Equal(r.Reason, fleet.ReasonNoFix)
			is.True(e.device().LastReport.Reason == fleet.ReasonNoFix)
			_ = i
		}
		is.Equal(e.history(e.v.ID), []time.Time{})

		// In a message with good positions, the bad one alone is left out.
		good := pos(now.Add(-40*time.Second), 52.6, 13.5)
		r = e.mustReport(good, bad[0])
		is.Equal(r, fleet.DeviceResult{Accepted: 1, Reason: fleet.ReasonNoFix})
		is.Equal(e.history(e.v.ID), []time.Time{good.Timestamp})
		lr = e.device().LastReport
		is.Equal(lr.Position.Latitude, 91.0) // the last one, as sent
		is.Equal(lr.Reason, fleet.ReasonNoFix)
	})
}

func TestDeviceReportTooOldAndFuture(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, store, fleet.PlanFree) // 7 days of history
		now := e.clock.Now()
		reach := fleet.PlanFree.Limits().HistoryReach
		cases := []struct {
			at   time.Time
			want string
		}{
			{now.Add(-reach - time.Minute), fleet.ReasonTooOld},
			{now.Add(-reach + time.Minute), ""},
			{now.Add(fleet.MaxFutureSkew + time.Second), fleet.ReasonFuture},
			{now.Add(fleet.MaxFutureSkew - time.Second), ""},
		}
		var stored []time.Time
		for _, c := range cases {
			r := e.mustReport(pos(c.at, 52.5, 13.4))
			is.Equal(r.Reason, c.want)
			is.Equal(r.Stored, c.want == "")
			is.Equal(e.device().LastReport.Reason, c.want)
			if c.want == "" {
				stored = append(stored, c.at)
			}
		}
		is.Equal(e.history(e.v.ID), stored) // only the two within bounds
	})
}

func TestDeviceWithoutVehicle(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, store, fleet.PlanPro)
		lone, err := e.svc.CreateDevice(ctx, e.p, fleet.Device{Identifier: "H02-4106040008"})
		is.NoErr(err)
		is.Equal(lone.VehicleID, "")
		at := e.clock.Now().Add(-time.Minute)
		r, err := e.reportAs(e.svc, lone.Identifier, pos(at, 52.5, 13.4))
		is.NoErr(err) // acknowledged
		is.Equal(r, fleet.DeviceResult{Reason: fleet.ReasonNoVehicle})
		got, err := e.svc.Device(ctx, e.p, lone.ID)
		is.NoErr(err)
		is.Equal(got.LastReport.Reason, fleet.ReasonNoVehicle)
		is.True(got.LastReport.Position.Timestamp.Equal(at))
		l, err := e.svc.ListLocations(ctx, e.p, fleet.VehicleFilter{}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 0) // no vehicle of the account moved

		// Attached later, its next report is ingested.
		_, err = e.svc.UpdateDevice(ctx, e.p, lone.ID, fleet.DevicePatch{VehicleID: fleet.Some(e.v.ID)})
		is.NoErr(err)
		r, err = e.reportAs(e.svc, lone.Identifier, pos(at.Add(time.Second), 52.5, 13.4))
		is.NoErr(err)
		is.True(r.Stored)
		is.Equal(e.history(e.v.ID), []time.Time{at.Add(time.Second)})
	})
}

// onSharedStores runs test with two stores of one database, for two
// servers: memstore and SQLite share one store value, PostgreSQL opens the
// database twice (when FLEET_TEST_POSTGRES is set).
func onSharedStores(t *testing.T, test func(t *testing.T, a, b fleet.Store)) {
	t.Run("memstore", func(t *testing.T) { s := memstore.New(); test(t, s, s) })
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		test(t, s, s)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.NewDSN(t)
		var stores [2]fleet.Store
		for i := range stores {
			s, err := sqlstore.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			stores[i] = s
		}
		test(t, stores[0], stores[1])
	})
}

// A device moved to another vehicle reports to it from its next report on:
// on the server that moved it, and on another server sharing the store
// whose cached route still names the old vehicle (its report's
// transaction finds the move and routes it again).
func TestDeviceMovedReportsToNewVehicle(t *testing.T) {
	onSharedStores(t, func(t *testing.T, storeA, storeB fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, storeA, fleet.PlanPro)
		other := fleet.NewService(storeB, fleet.Options{Now: e.clock.Now}) // another server
		now := e.clock.Now()
		truck2, truck3 := e.vehicle("Truck 2"), e.vehicle("Truck 3")

		_, err := e.reportAs(other, e.d.Identifier, pos(now.Add(-50*time.Second), 52.0, 13.0))
		is.NoErr(err) // routed by the other server: its cache now names Truck 7
		_, err = e.svc.UpdateDevice(ctx, e.p, e.d.ID, fleet.DevicePatch{VehicleID: fleet.Some(truck2.ID)})
		is.NoErr(err)
		r, err := e.reportAs(e.svc, e.d.Identifier, pos(now.Add(-40*time.Second), 52.1, 13.1))
		is.NoErr(err)
		is.True(r.Stored)
		r, err = e.reportAs(other, e.d.Identifier, pos(now.Add(-30*time.Second), 52.2, 13.2))
		is.NoErr(err)
		is.True(r.Stored)
		is.Equal(len(e.history(e.v.ID)), 1)                 // Truck 7 kept its one point
		is.Equal(len(e.history(truck2.ID)), 2)              // both servers' reports went to Truck 2
		is.True(e.lastLocation(truck2.ID).Latitude == 52.2) // moved by the other server's report

		// Moved again, and detached: the other server follows each time.
		_, err = e.svc.UpdateDevice(ctx, e.p, e.d.ID, fleet.DevicePatch{VehicleID: fleet.Some(truck3.ID)})
		is.NoErr(err)
		_, err = e.reportAs(other, e.d.Identifier, pos(now.Add(-20*time.Second), 52.3, 13.3))
		is.NoErr(err)
		is.Equal(len(e.history(truck3.ID)), 1)
		_, err = e.svc.UpdateDevice(ctx, e.p, e.d.ID, fleet.DevicePatch{VehicleID: fleet.Some("")})
		is.NoErr(err)
		r, err = e.reportAs(other, e.d.Identifier, pos(now.Add(-10*time.Second), 52.4, 13.4))
		is.NoErr(err)
		is.Equal(r.Reason, fleet.ReasonNoVehicle)
		is.Equal(len(e.history(truck3.ID)), 1)

		// Deleted: the other server's next report is of an unknown device.
		_, err = e.svc.DeleteDevice(ctx, e.p, e.d.ID)
		is.NoErr(err)
		_, err = e.reportAs(other, e.d.Identifier, pos(now.Add(-5*time.Second), 52.5, 13.5))
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	})
}

// Deleting a vehicle detaches its devices in the same transaction: their
// next reports are kept as last_report only.
func TestDeleteVehicleDetachesDevices(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, store, fleet.PlanPro)
		e.mustReport(pos(e.clock.Now().Add(-time.Minute), 52.5, 13.4)) // the route is cached
		e.clock.Advance(time.Minute)
		_, err := e.svc.DeleteVehicle(ctx, e.p, e.v.ID)
		is.NoErr(err)
		d := e.device()
		is.Equal(d.VehicleID, "")
		is.True(d.UpdatedAt.Equal(e.clock.Now()))
		r := e.mustReport(pos(e.clock.Now().Add(-time.Second), 52.6, 13.5))
		is.Equal(r.Reason, fleet.ReasonNoVehicle)
	})
}

func TestUnknownDevicesAreRecordedAndRated(t *testing.T) {
	is := is.New(t)
	e := newDeviceEnv(t, memstore.New(), fleet.PlanPro)
	edge := e.svc.DeviceEdge()
	ok, err := edge.Known(ctx, e.d.Identifier, "teltonika", "192.0.2.7:40000")
	is.NoErr(err)
	is.True(ok)
	ok, err = edge.Known(ctx, "999999999999999", "teltonika", "192.0.2.7:5555")
	is.NoErr(err)
	is.True(!ok)
	_, err = e.reportAs(e.svc, "999999999999999", pos(e.clock.Now(), 52.5, 13.4))
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // refused, never stored
	_, err = edge.Known(ctx, "bad id\x00with control", "gt06", "[2001:db8::9]:1234")
	is.NoErr(err)
	got, err := e.svc.Operator().UnknownDevices(ctx, 0)
	is.NoErr(err)
	is.Equal(len(got), 2)
	is.Equal(got[0].Identifier, "999999999999999")
	is.Equal(got[0].Address, "192.0.2.7") // the host, without the port
	is.Equal(got[0].Protocol, "teltonika")
	is.Equal(got[0].Count, int64(2)) // the login and the report
	is.Equal(got[1].Identifier, "bad id?with control")
	is.Equal(got[1].Address, "2001:db8::9")

	// A flood from one address: recorded at most UnknownRecordsPerMinute
	// times a minute, every attempt counted in the stats.
	before := e.svc.Stats().Devices
	for i := range 50 {
		_, err := edge.Known(ctx, fmt.Sprintf("scan%04d", i), "gt06", "203.0.113.5:9")
		is.NoErr(err)
	}
	after := e.svc.Stats().Devices
	is.Equal(after.Unknown-before.Unknown, uint64(50))
	is.Equal(after.UnknownRecorded-before.UnknownRecorded, uint64(fleet.UnknownRecordsPerMinute))
	got, err = e.svc.Operator().UnknownDevices(ctx, fleet.MaxUnknownDevices)
	is.NoErr(err)
	is.Equal(len(got), 2+fleet.UnknownRecordsPerMinute)
	ok, err = edge.Known(ctx, "another", "h02", "192.0.2.99:1") // another address is recorded
	is.NoErr(err)
	is.True(!ok)
	e.clock.Advance(time.Minute) // the next minute
	_, err = edge.Known(ctx, "scan9999", "gt06", "203.0.113.5:9")
	is.NoErr(err)
	got, err = e.svc.Operator().UnknownDevices(ctx, fleet.MaxUnknownDevices)
	is.NoErr(err)
	is.Equal(len(got), 4+fleet.UnknownRecordsPerMinute)
	is.Equal(got[0].Identifier, "scan9999")

	_, err = e.svc.Operator().UnknownDevices(ctx, fleet.MaxUnknownDevices+1)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
	// The maintenance job purges records unseen for the retention.
	e.clock.Advance(fleet.UnknownDeviceRetention + time.Second)
	is.NoErr(e.svc.Jobs().Maintain(ctx))
	got, err = e.svc.Operator().UnknownDevices(ctx, 0)
	is.NoErr(err)
	is.Equal(len(got), 0)
}

// A newly registered device is known at once on the server that registered
// it, though the identifier's absence was cached.
func TestDeviceRegisteredIsKnownAtOnce(t *testing.T) {
	is := is.New(t)
	e := newDeviceEnv(t, memstore.New(), fleet.PlanPro)
	ok, err := e.svc.DeviceEdge().Known(ctx, "862095050001234", "gt06", "192.0.2.1:1")
	is.NoErr(err)
	is.True(!ok)
	_, err = e.svc.CreateDevice(ctx, e.p, fleet.Device{Identifier: "862095050001234", VehicleID: e.v.ID})
	is.NoErr(err)
	ok, err = e.svc.DeviceEdge().Known(ctx, "862095050001234", "gt06", "192.0.2.1:1")
	is.NoErr(err)
	is.True(ok)
}

// txCounter counts a store's transactions and can make a transaction's
// device row, or its points, fail.
type txCounter struct {
	fleet.Store
	updates, views atomic.Int64
	failRecord     atomic.Bool
	refusePoints   atomic.Bool
}

func (s *txCounter) Update(c context.Context, fn func(fleet.Tx) error) error {
	s.updates.Add(1)
	return s.Store.Update(c, func(tx fleet.Tx) error { return fn(faultyTx{tx, s}) })
}

func (s *txCounter) View(c context.Context, fn func(fleet.Tx) error) error {
	s.views.Add(1)
	return s.Store.View(c, func(tx fleet.Tx) error { return fn(faultyTx{tx, s}) })
}

type faultyTx struct {
	fleet.Tx
	s *txCounter
}

var errRecordFailed = errors.New("the device row could not be written")

func (t faultyTx) RecordDeviceReport(d fleet.Device) error {
	if t.s.failRecord.Load() {
		return errRecordFailed
	}
	return t.Tx.RecordDeviceReport(d)
}

// ApplyIngest replays the write-set through faultyTx's methods, so that
// its faults meet the staged writes too.
func (t faultyTx) ApplyIngest(w fleet.IngestWrites) error { return fleet.ReplayIngest(t, w) }

// InsertPoints refuses as the account's points allowance does.
func (t faultyTx) InsertPoints(vehicleID string, pts []fleet.Point) ([]fleet.Point, error) {
	if t.s.refusePoints.Load() {
		return nil, fleet.Errorf(fleet.CodeRateLimitExceeded, "This account has stored 100,000 location points this hour, the most the free plan allows; retry after 60 seconds.")
	}
	return t.Tx.InsertPoints(vehicleID, pts)
}

// The report's points and the device's row commit together, in the one
// write transaction a single-point API post also takes.
func TestDeviceReportCommitsWithItsPoints(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		counter := &txCounter{Store: store}
		e := newDeviceEnv(t, counter, fleet.PlanPro)
		now := e.clock.Now()
		e.mustReport(pos(now.Add(-time.Minute), 52.5, 13.4)) // routes and compiles the account's rules

		counter.updates.Store(0)
		counter.views.Store(0)
		e.mustReport(pos(now.Add(-50*time.Second), 52.5, 13.4))
		is.Equal(counter.updates.Load(), int64(1)) // one write transaction
		is.Equal(counter.views.Load(), int64(0))   // and no read one
		counter.updates.Store(0)
		_, err := e.svc.IngestLocations(ctx, e.p, e.v.ID, []fleet.Point{{Latitude: 52.5, Longitude: 13.4, Timestamp: now.Add(-45 * time.Second)}})
		is.NoErr(err)
		is.Equal(counter.updates.Load(), int64(1)) // as many as the API's single point

		// When the device's row cannot be written, the points are not
		// stored either, and the device is not acknowledged.
		counter.failRecord.Store(true)
		_, err = e.report(pos(now.Add(-40*time.Second), 52.6, 13.6))
		is.True(errors.Is(err, errRecordFailed))
		counter.failRecord.Store(false)
		is.Equal(len(e.history(e.v.ID)), 3)                       // not the fourth
		is.Equal(e.lastLocation(e.v.ID).Latitude, 52.5)           // nothing moved
		is.True(e.device().LastReport.Position.Longitude == 13.4) // the row is as before
	})
}

// When the account's points allowance refuses a report, the device is not
// acknowledged and last_report says why.
func TestDeviceReportRefusedByPointsAllowance(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		counter := &txCounter{Store: store}
		e := newDeviceEnv(t, counter, fleet.PlanFree)
		counter.refusePoints.Store(true)
		at := e.clock.Now().Add(-time.Minute)
		r, err := e.report(pos(at, 52.5, 13.4))
		is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded) // not acknowledged
		is.Equal(r.Reason, fleet.ReasonPointsAllowance)
		d := e.device()
		is.True(d.LastReport != nil)
		is.Equal(d.LastReport.Reason, fleet.ReasonPointsAllowance)
		is.True(!d.LastReport.Stored)
		is.True(d.LastReport.Position.Timestamp.Equal(at))
		is.True(d.LastSeenAt.Equal(e.clock.Now()))
		is.Equal(len(e.history(e.v.ID)), 0)

		counter.refusePoints.Store(false) // the device sends it again later
		e.clock.Advance(time.Hour)
		r = e.mustReport(pos(at, 52.5, 13.4))
		is.True(r.Stored)
		is.Equal(e.device().LastReport.Reason, "")
	})
}

// What a device sends beside a position is kept in its last report as the
// stored point keeps it: numbers, booleans and single-line text that pass
// the rules, at most MaxPointAttributes, the first in name order.
func TestDeviceAttributesKept(t *testing.T) {
	is := is.New(t)
	e := newDeviceEnv(t, memstore.New(), fleet.PlanPro)
	attrs := fleet.Attributes{fleet.NumberAttr("io1", 1), fleet.BoolAttr("ok", false), fleet.TextAttr("text", "one line"),
		fleet.NumberAttr("nan", math.NaN()), fleet.NumberAttr("inf", math.Inf(1)), fleet.TextAttr("ctl", "line\nbreak"),
		fleet.TextAttr("long", strings.Repeat("é", 65)), fleet.NumberAttr("", 1), fleet.NumberAttr("Bad", 1)}
	for i := range fleet.MaxPointAttributes + 10 {
		attrs = append(attrs, fleet.NumberAttr(fmt.Sprintf("z%03d", i), float64(i)))
	}
	p := pos(e.clock.Now().Add(-time.Minute), 52.5, 13.4)
	p.Attrs = attrs
	e.mustReport(p)
	got := e.device().LastReport.Position.Attrs
	is.Equal(len(got), fleet.MaxPointAttributes) // cut, in name order
	is.Equal(got[:3], fleet.Attributes{fleet.NumberAttr("io1", 1), fleet.BoolAttr("ok", false), fleet.TextAttr("text", "one line")})
	for _, gone := range []string{"nan", "inf", "ctl", "long", "", "Bad", "z061"} {
		_, ok := got.Get(gone)
		is.True(!ok) // left out
	}
}

func TestDeviceRegistry(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, store, fleet.PlanFree)
		is.Equal(e.d.Identifier, "356307042441013")
		is.Equal(e.d.VehicleID, e.v.ID)
		is.True(e.d.LastReport == nil && e.d.LastSeenAt == nil && e.d.Protocol == "")

		// A taken identifier is a conflict, whichever account holds it.
		b, _, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Other", Plan: fleet.PlanPro})
		is.NoErr(err)
		pb := fleet.SystemPrincipal(b)
		_, err = e.svc.CreateDevice(ctx, pb, fleet.Device{Identifier: e.d.Identifier})
		is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
		is.True(!strings.Contains(fleet.ErrorMessage(err), e.p.Account.ID)) // never says whose
		// Another account's vehicle is a bad field, as in a work order.
		vb, err := e.svc.CreateVehicle(ctx, pb, fleet.Vehicle{Name: "B"})
		is.NoErr(err)
		_, err = e.svc.CreateDevice(ctx, e.p, fleet.Device{Identifier: "x1", VehicleID: vb.ID})
		is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
		is.Equal(fieldOf(err), "vehicle_id")
		_, err = e.svc.UpdateDevice(ctx, e.p, e.d.ID, fleet.DevicePatch{VehicleID: fleet.Some(vb.ID)})
		is.Equal(fieldOf(err), "vehicle_id")
		// And another account's device is not found.
		_, err = e.svc.Device(ctx, pb, e.d.ID)
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		_, err = e.svc.UpdateDevice(ctx, pb, e.d.ID, fleet.DevicePatch{Name: fleet.Some("mine")})
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		_, err = e.svc.DeleteDevice(ctx, pb, e.d.ID)
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		l, err := e.svc.ListDevices(ctx, pb, fleet.DeviceFilter{}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 0)

		// The patch: null detaches and clears, absent keeps.
		d, err := e.svc.UpdateDevice(ctx, e.p, e.d.ID, fleet.DevicePatch{Name: fleet.Some("  Cab unit ")})
		is.NoErr(err)
		is.Equal(d.Name, "Cab unit")
		is.Equal(d.VehicleID, e.v.ID)
		d, err = e.svc.UpdateDevice(ctx, e.p, e.d.ID, fleet.DevicePatch{VehicleID: fleet.Some(""), Name: fleet.Some("")})
		is.NoErr(err)
		is.Equal(d.VehicleID, "")
		is.Equal(d.Name, "")
		_, err = e.svc.UpdateDevice(ctx, e.p, e.d.ID, fleet.DevicePatch{Name: fleet.Some(strings.Repeat("n", fleet.MaxDeviceName+1))})
		is.Equal(fieldOf(err), "name")
		is.Equal(e.device().Name, "") // nothing changed

		// Filters and pages.
		var ids []string
		for i := range 4 {
			x, err := e.svc.CreateDevice(ctx, e.p, fleet.Device{Identifier: fmt.Sprintf("unit.%d", i), VehicleID: e.v.ID})
			is.NoErr(err)
			ids = append(ids, x.ID)
		}
		l, err = e.svc.ListDevices(ctx, e.p, fleet.DeviceFilter{VehicleID: e.v.ID}, fleet.ListQuery{Limit: 3})
		is.NoErr(err)
		is.Equal(len(l.Items), 3)
		is.True(l.HasMore)
		l2, err := e.svc.ListDevices(ctx, e.p, fleet.DeviceFilter{VehicleID: e.v.ID}, fleet.ListQuery{Limit: 3, Cursor: l.NextCursor})
		is.NoErr(err)
		is.Equal(len(l2.Items), 1)
		is.Equal(l2.Items[0].ID, ids[3])
		l, err = e.svc.ListDevices(ctx, e.p, fleet.DeviceFilter{Identifier: "unit.2"}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 1)
		is.Equal(l.Items[0].ID, ids[2])
		for _, f := range []fleet.DeviceFilter{{Identifier: "no spaces"}, {Identifier: strings.Repeat("9", 33)}, {VehicleID: "truck"}, {VehicleID: "veh_\x00"}} {
			_, err = e.svc.ListDevices(ctx, e.p, f, fleet.ListQuery{})
			is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
		}

		// Deleting frees the identifier.
		_, err = e.svc.DeleteDevice(ctx, e.p, e.d.ID)
		is.NoErr(err)
		_, err = e.svc.Device(ctx, e.p, e.d.ID)
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		_, err = e.svc.CreateDevice(ctx, pb, fleet.Device{Identifier: e.d.Identifier})
		is.NoErr(err)
	})
}

func fieldOf(err error) string {
	var fe *fleet.Error
	if !errors.As(err, &fe) || len(fe.Details) == 0 {
		return ""
	}
	return fe.Details[0].Field
}

// The plan's device cap holds exactly, with registrations running at once.
func TestDeviceCap(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, store, fleet.PlanFree) // holds one device already
		limit := fleet.PlanFree.Limits().Devices
		var wg sync.WaitGroup
		var created, capped atomic.Int64
		for i := range limit + 5 {
			wg.Go(func() {
				_, err := e.svc.CreateDevice(ctx, e.p, fleet.Device{Identifier: fmt.Sprintf("cap-%d", i)})
				switch {
				case err == nil:
					created.Add(1)
				case fleet.ErrorCode(err) == fleet.CodeConflict:
					capped.Add(1)
					if !strings.Contains(fleet.ErrorMessage(err), "at most 10 devices") {
						t.Errorf("the conflict does not name the cap: %v", err)
					}
				default:
					t.Errorf("create: %v", err)
				}
			})
		}
		wg.Wait()
		is.Equal(created.Load(), int64(limit-1))
		is.Equal(capped.Load(), int64(6))
		l, err := e.svc.ListDevices(ctx, e.p, fleet.DeviceFilter{}, fleet.ListQuery{Limit: 100})
		is.NoErr(err)
		is.Equal(len(l.Items), limit)
	})
}
