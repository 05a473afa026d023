package fleet_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/matryer/is"
)

// tele is an account with one vehicle, and helpers to send it points and
// read what they did.
type tele struct {
	t     *testing.T
	svc   *fleet.Service
	clock *testclock.Clock
	p     fleet.Principal
	v     fleet.Vehicle
	t0    time.Time
	seen  int // events already read
}

func newTele(t *testing.T) *tele {
	t.Helper()
	svc, clock := newService(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	p := fleet.SystemPrincipal(a)
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck"})
	if err != nil {
		t.Fatal(err)
	}
	tl := &tele{t: t, svc: svc, clock: clock, p: p, v: v, t0: clock.Now().Add(-6 * time.Hour)}
	tl.events() // vehicle.created
	return tl
}

// pt is a point sec seconds after t0 at speed km/h, lon moving east.
func (tl *tele) pt(sec int, speed float64, attrs ...fleet.Attribute) fleet.Point {
	return fleet.Point{Latitude: 52.5, Longitude: 13.4 + float64(sec)/100000, Timestamp: tl.t0.Add(time.Duration(sec) * time.Second),
		Speed: &speed, Attributes: fleet.Attributes(attrs).Sort()}
}

func (tl *tele) send(pts ...fleet.Point) fleet.IngestResult {
	tl.t.Helper()
	res, err := tl.svc.IngestLocations(ctx, tl.p, tl.v.ID, pts)
	if err != nil {
		tl.t.Fatal(err)
	}
	return res
}

func (tl *tele) vehicle() fleet.Vehicle {
	tl.t.Helper()
	v, err := tl.svc.Vehicle(ctx, tl.p, tl.v.ID)
	if err != nil {
		tl.t.Fatal(err)
	}
	return v
}

// events returns the telematics and driver events since the last call
// (status and trip events left out), oldest first.
func (tl *tele) events() []fleet.Event {
	tl.t.Helper()
	l, err := tl.svc.ListEvents(ctx, tl.p, fleet.EventFilter{}, fleet.ListQuery{Limit: 500})
	if err != nil {
		tl.t.Fatal(err)
	}
	all := l.Items[tl.seen:]
	tl.seen = len(l.Items)
	var out []fleet.Event
	for _, e := range all {
		switch e.Type {
		case fleet.EventVehicleStatusChanged, fleet.EventTripStarted, fleet.EventTripCompleted, fleet.EventVehicleCreated:
			continue
		}
		out = append(out, e)
	}
	return out
}

func types(es []fleet.Event) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Type)
	}
	return out
}

func data[T any](t *testing.T, e fleet.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(e.Data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

var (
	ignOn  = fleet.BoolAttr("ignition", true)
	ignOff = fleet.BoolAttr("ignition", false)
)

func TestIgnitionEventsOnceAndOnlyFromForwardPoints(t *testing.T) {
	is := is.New(t)
	tl := newTele(t)
	tl.send(tl.pt(0, 0, ignOff)) // the first known value emits nothing
	is.Equal(types(tl.events()), []string{})
	v := tl.vehicle()
	is.Equal(*v.Ignition, false)
	is.True(v.TelemetryAt.Equal(tl.t0))

	tl.send(tl.pt(60, 0, ignOn), tl.pt(120, 30, ignOn), tl.pt(180, 0, ignOff))
	es := tl.events()
	is.Equal(types(es), []string{fleet.EventVehicleIgnitionOn, fleet.EventVehicleIgnitionOff})
	on := data[fleet.IgnitionChange](t, es[0])
	is.Equal(on.VehicleID, tl.v.ID)
	is.True(on.At.Equal(tl.t0.Add(time.Minute))) // the point's time, not the clock's
	is.Equal(on.DeviceID, nil)                   // an API client's point
	is.Equal(on.Location.Longitude, 13.4+60.0/100000)

	// Resent, or late and out of order: history only, nothing emitted.
	res := tl.send(tl.pt(60, 0, ignOn), tl.pt(180, 0, ignOff))
	is.Equal(res.Duplicates, 2)
	tl.send(tl.pt(150, 0, ignOn), tl.pt(170, 0, ignOff))
	is.Equal(types(tl.events()), []string{})
	is.Equal(*tl.vehicle().Ignition, false)
	is.True(tl.vehicle().TelemetryAt.Equal(tl.t0.Add(180 * time.Second)))
}

func TestOdometerFromReportsNeverBackwardsByMoreThanAKilometre(t *testing.T) {
	is := is.New(t)
	tl := newTele(t)
	odo := func(km float64) fleet.Attribute { return fleet.NumberAttr("odometer_km", km) }
	tl.send(tl.pt(0, 50, odo(1000)))
	is.Equal(*tl.vehicle().OdometerKm, 1000.0)
	tl.send(tl.pt(10, 50, odo(999.5))) // a little back: taken
	is.Equal(*tl.vehicle().OdometerKm, 999.5)
	tl.send(tl.pt(20, 50, odo(900))) // far back: a reset, ignored
	is.Equal(*tl.vehicle().OdometerKm, 999.5)
	p := tl.pt(30, 50)
	p.OdometerKm = ptrTo(1200.0) // the point's own field counts too
	tl.send(p)
	is.Equal(*tl.vehicle().OdometerKm, 1200.0)
	tl.send(tl.pt(40, 50)) // without one: a vehicle whose reports carry it does not add GPS distance
	is.Equal(*tl.vehicle().OdometerKm, 1200.0)
}

func TestOdometerFromGPSDistanceSkipsJumps(t *testing.T) {
	is := is.New(t)
	tl := newTele(t)
	at := func(sec int, lon float64) fleet.Point {
		p := tl.pt(sec, 50)
		p.Longitude = lon
		return p
	}
	tl.send(at(0, 13.4))
	is.Equal(tl.vehicle().OdometerKm, nil) // one point: no distance yet
	// 0.01° of longitude at 52.5° N is about 0.677 km, in 60 s: 40 km/h.
	tl.send(at(60, 13.41), at(120, 13.42))
	km := *tl.vehicle().OdometerKm
	is.True(km > 1.34 && km < 1.37) // km
	// 1° (about 68 km) in 60 s would need 4,000 km/h: a jump, not distance.
	tl.send(at(180, 14.42))
	is.Equal(*tl.vehicle().OdometerKm, km)
	// A late point adds nothing.
	tl.send(at(90, 13.5))
	is.Equal(*tl.vehicle().OdometerKm, km)
}

func TestEngineHoursFromReportsOrIgnitionTime(t *testing.T) {
	is := is.New(t)
	tl := newTele(t)
	tl.send(tl.pt(0, 0, ignOn))
	is.Equal(tl.vehicle().EngineHours, nil)
	tl.send(tl.pt(1200, 40, ignOn), tl.pt(2400, 40, ignOn), tl.pt(3600, 0, ignOff)) // on for an hour
	is.Equal(*tl.vehicle().EngineHours, 1.0)
	tl.send(tl.pt(5400, 0, ignOff)) // off: no time counts
	is.Equal(*tl.vehicle().EngineHours, 1.0)
	tl.send(tl.pt(5460, 0, ignOn), tl.pt(5460+3600, 0, ignOn)) // an hour's gap is an offline vehicle: nothing counts
	is.Equal(*tl.vehicle().EngineHours, 1.0)

	tl.send(tl.pt(9200, 0, ignOn, fleet.NumberAttr("engine_hours", 1523.5)))
	is.Equal(*tl.vehicle().EngineHours, 1523.5)
	tl.send(tl.pt(9260, 0, ignOn)) // the device counts them from now on
	is.Equal(*tl.vehicle().EngineHours, 1523.5)
}

func TestFuelDropAndRefuelWhileStill(t *testing.T) {
	is := is.New(t)
	tl := newTele(t)
	level := func(v float64) fleet.Attribute { return fleet.NumberAttr("fuel_level", v) }
	litres := func(v float64) fleet.Attribute { return fleet.NumberAttr("fuel_l", v) }
	tl.send(tl.pt(0, 0, level(60)), tl.pt(60, 0, level(56)), tl.pt(120, 0, level(50)))
	es := tl.events()
	is.Equal(types(es), []string{fleet.EventVehicleFuelDrop}) // -4 is not, -6 is
	d := data[fleet.FuelChange](t, es[0])
	is.Equal(d.From, 56.0)
	is.Equal(d.To, 50.0)
	is.Equal(d.Unit, fleet.FuelUnitPercent)
	is.True(d.At.Equal(tl.t0.Add(2 * time.Minute)))
	tl.send(tl.pt(180, 50, level(40)), tl.pt(240, 50, level(30))) // while moving: consumption, no event
	is.Equal(types(tl.events()), []string{})
	tl.send(tl.pt(300, 0, level(30)), tl.pt(360, 0, level(95)))
	is.Equal(types(tl.events()), []string{fleet.EventVehicleRefuel})
	is.Equal(*tl.vehicle().FuelLevel, 95.0)

	tl.send(tl.pt(420, 0, litres(80)), tl.pt(480, 0, litres(74.5)))
	es = tl.events()
	is.Equal(types(es), []string{fleet.EventVehicleFuelDrop})
	is.Equal(data[fleet.FuelChange](t, es[0]).Unit, fleet.FuelUnitLitres)
	is.Equal(*tl.vehicle().FuelL, 74.5)
}

func TestIdlingStartsAfterFiveMinutesAndEnds(t *testing.T) {
	is := is.New(t)
	tl := newTele(t)
	tl.send(tl.pt(0, 40, ignOn), tl.pt(60, 0, ignOn), tl.pt(300, 2, ignOn))
	is.Equal(types(tl.events()), []string{}) // 4 minutes
	tl.send(tl.pt(360, 0, ignOn), tl.pt(420, 0, ignOn))
	es := tl.events()
	is.Equal(types(es), []string{fleet.EventVehicleIdlingStarted}) // once
	is.Equal(data[fleet.IdlingChange](t, es[0]).Minutes, 5.0)
	tl.send(tl.pt(600, 0, ignOff))
	es = tl.events()
	is.Equal(types(es), []string{fleet.EventVehicleIgnitionOff, fleet.EventVehicleIdlingEnded})
	is.Equal(data[fleet.IdlingChange](t, es[1]).Minutes, 9.0)
	// Ignition off, still: not idling.
	tl.send(tl.pt(1200, 0, ignOff))
	is.Equal(types(tl.events()), []string{})
}

func TestAlarmsOncePerTypeInFiveMinutes(t *testing.T) {
	is := is.New(t)
	tl := newTele(t)
	alarm := func(w string) fleet.Attribute { return fleet.TextAttr("alarm", w) }
	tl.send(tl.pt(0, 0, alarm("sos")), tl.pt(30, 0, alarm("sos")), tl.pt(60, 0, alarm("sos,power_cut")), tl.pt(90, 0, alarm("not_a_word")))
	es := tl.events()
	is.Equal(types(es), []string{fleet.EventDeviceAlarm, fleet.EventDeviceAlarm})
	is.Equal(data[fleet.DeviceAlarm](t, es[0]).Alarm, "sos")
	is.Equal(data[fleet.DeviceAlarm](t, es[1]).Alarm, "power_cut")
	is.Equal(data[fleet.DeviceAlarm](t, es[1]).DeviceID, nil)
	tl.send(tl.pt(299, 0, alarm("sos")))
	is.Equal(types(tl.events()), []string{})
	tl.send(tl.pt(300, 0, alarm("sos"))) // five minutes after: again
	is.Equal(types(tl.events()), []string{fleet.EventDeviceAlarm})
}

func TestDriverKeyAssignsHoldsAndIsReleasedByIgnitionOff(t *testing.T) {
	is := is.New(t)
	tl := newTele(t)
	d, err := tl.svc.CreateDriver(ctx, tl.p, fleet.Driver{Name: "Ana", Identifier: "01A2B3C4D5E6F708"})
	is.NoErr(err)
	key := func(k string) fleet.Attribute { return fleet.TextAttr("driver_identifier", k) }

	tl.send(tl.pt(0, 0, ignOn, key("01a2b3c4d5e6f708"))) // either case
	es := tl.events()
	is.Equal(types(es), []string{fleet.EventVehicleDriverChanged})
	c := data[fleet.DriverChange](t, es[0])
	is.Equal(*c.To, d.ID)
	is.Equal(*c.Identifier, "01a2b3c4d5e6f708")
	is.Equal(tl.vehicle().DriverID, d.ID)

	// The key again changes nothing; a trip started now carries the driver.
	tl.send(tl.pt(60, 40, ignOn, key("01a2b3c4d5e6f708")), tl.pt(120, 40, ignOn))
	is.Equal(types(tl.events()), []string{})
	trips, err := tl.svc.ListTrips(ctx, tl.p, tl.v.ID, fleet.TripQuery{})
	is.NoErr(err)
	is.Equal(len(trips.Items), 1)
	is.Equal(*trips.Items[0].DriverID, d.ID)

	// An unknown key: the vehicle has no driver then, and says which key.
	tl.send(tl.pt(180, 0, ignOn, key("FFFF")))
	es = tl.events()
	is.Equal(types(es), []string{fleet.EventVehicleDriverChanged})
	c = data[fleet.DriverChange](t, es[0])
	is.Equal(c.To, nil)
	is.Equal(*c.From, d.ID)
	is.Equal(*c.Identifier, "FFFF")
	is.Equal(tl.vehicle().DriverID, "")

	// The driver's key again, then ignition off for 30 minutes ends it.
	tl.send(tl.pt(240, 0, ignOn, key("01A2B3C4D5E6F708")), tl.pt(300, 0, ignOff), tl.pt(300+29*60, 0, ignOff))
	is.Equal(types(tl.events()), []string{fleet.EventVehicleDriverChanged, fleet.EventVehicleIgnitionOff})
	is.Equal(tl.vehicle().DriverID, d.ID) // 29 minutes: still
	tl.send(tl.pt(300+30*60, 0, ignOff))
	es = tl.events()
	is.Equal(types(es), []string{fleet.EventVehicleDriverChanged})
	is.Equal(data[fleet.DriverChange](t, es[0]).To, nil)
	is.Equal(tl.vehicle().DriverID, "")

	// A driver assigned by hand is not released by the ignition.
	_, err = tl.svc.AssignDriver(ctx, tl.p, tl.v.ID, fleet.AssignTo(d.ID))
	is.NoErr(err)
	tl.events()
	tl.send(tl.pt(300+70*60, 0, ignOff))
	is.Equal(tl.vehicle().DriverID, d.ID)
}

func ptrTo[T any](v T) *T { return &v }

// TestDeviceAttributesDroppedNotThePosition: a device's bad attribute (a
// device cannot be told) is dropped and counted, its position and good
// attributes stored; its events name the device.
func TestDeviceAttributesDroppedNotThePosition(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, store, fleet.PlanPro)
		at := e.clock.Now().Add(-time.Minute)
		p1 := pos(at, 52.52, 13.40)
		p1.Attrs = fleet.Attributes{fleet.BoolAttr("ignition", false), fleet.NumberAttr("power_v", 12.6)}
		p2 := pos(at.Add(10*time.Second), 52.52, 13.41)
		p2.Attrs = fleet.Attributes{
			fleet.NumberAttr("power_v", 12.7), fleet.BoolAttr("ignition", true), fleet.NumberAttr("Bad Name", 1),
			fleet.NumberAttr("nan", math.NaN()), fleet.TextAttr("long", strings.Repeat("x", 65)), fleet.TextAttr("alarm", "sos"),
		}
		r := e.mustReport(p2, p1) // newest first, as a Teltonika frame may be
		is.Equal(r.Accepted, 2)
		is.Equal(e.svc.Stats().DeviceAttributesDropped, uint64(3))

		from, to := at.Add(-time.Second), at.Add(time.Minute)
		l, err := e.svc.ListHistory(ctx, e.p, e.v.ID, fleet.HistoryQuery{From: &from, To: &to})
		is.NoErr(err)
		is.Equal(len(l.Items), 2)
		is.Equal(l.Items[0].Attributes, fleet.Attributes{fleet.BoolAttr("ignition", false), fleet.NumberAttr("power_v", 12.6)})
		is.Equal(l.Items[1].Attributes, fleet.Attributes{fleet.TextAttr("alarm", "sos"), fleet.BoolAttr("ignition", true), fleet.NumberAttr("power_v", 12.7)})
		// The last report shows what was kept.
		is.Equal(e.device().LastReport.Position.Attrs, fleet.Attributes{fleet.BoolAttr("ignition", false), fleet.NumberAttr("power_v", 12.6)})

		v, err := e.svc.Vehicle(ctx, e.p, e.v.ID)
		is.NoErr(err)
		is.Equal(*v.Ignition, true)
		is.Equal(*v.PowerV, 12.7)
		evs, err := e.svc.ListEvents(ctx, e.p, fleet.EventFilter{Type: fleet.EventDeviceAlarm}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(evs.Items), 1)
		alarm := data[fleet.DeviceAlarm](t, evs.Items[0])
		is.Equal(*alarm.DeviceID, e.d.ID)
		evs, err = e.svc.ListEvents(ctx, e.p, fleet.EventFilter{Type: fleet.EventVehicleIgnitionOn}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(evs.Items), 1)
		is.Equal(*data[fleet.IgnitionChange](t, evs.Items[0]).DeviceID, e.d.ID)

		// The same report again: duplicates, nothing emitted.
		n := len(mustEvents(t, e.svc, e.p))
		e.mustReport(p2, p1)
		is.Equal(len(mustEvents(t, e.svc, e.p)), n)
	})
}

func mustEvents(t *testing.T, svc *fleet.Service, p fleet.Principal) []fleet.Event {
	t.Helper()
	l, err := svc.ListEvents(ctx, p, fleet.EventFilter{}, fleet.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func TestSchedulesByEngineHours(t *testing.T) {
	is := is.New(t)
	tl := newTele(t)
	hours := func(h float64) fleet.Attribute { return fleet.NumberAttr("engine_hours", h) }
	tl.send(tl.pt(0, 0, ignOn, hours(1000)))
	every := 100.0
	sch, err := tl.svc.CreateSchedule(ctx, tl.p, fleet.Schedule{VehicleID: tl.v.ID, Name: "Oil", IntervalEngineHours: &every})
	is.NoErr(err)
	is.Equal(*sch.LastServiceEngineHours, 1000.0) // the vehicle's now
	is.Equal(*sch.NextDueEngineHours, 1100.0)
	is.Equal(sch.Status, fleet.ScheduleOK)
	tl.events()

	status := func() fleet.ScheduleStatus {
		got, err := tl.svc.Schedule(ctx, tl.p, sch.ID)
		is.NoErr(err)
		return got.Status
	}
	tl.send(tl.pt(60, 0, ignOn, hours(1089.9)))
	is.Equal(status(), fleet.ScheduleOK)
	tl.send(tl.pt(120, 0, ignOn, hours(1090))) // within a tenth of the interval
	is.Equal(status(), fleet.ScheduleDueSoon)
	tl.send(tl.pt(180, 0, ignOn, hours(1100.5)))
	is.Equal(status(), fleet.ScheduleOverdue)
	is.Equal(types(tl.events()), []string{fleet.EventMaintenanceDueSoon, fleet.EventAlertCreated, fleet.EventMaintenanceOverdue, fleet.EventAlertCreated})

	// A service recorded by hand starts a new cycle from the hours given.
	last := 1100.0
	sch, err = tl.svc.UpdateSchedule(ctx, tl.p, sch.ID, fleet.SchedulePatch{LastServiceEngineHours: fleet.Some(&last)})
	is.NoErr(err)
	is.Equal(*sch.NextDueEngineHours, 1200.0)
	is.Equal(sch.Status, fleet.ScheduleOK)

	// An interval out of bounds, or none at all, is refused.
	_, err = tl.svc.CreateSchedule(ctx, tl.p, fleet.Schedule{VehicleID: tl.v.ID, Name: "Bad", IntervalEngineHours: ptrTo(-1.0)})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	_, err = tl.svc.CreateSchedule(ctx, tl.p, fleet.Schedule{VehicleID: tl.v.ID, Name: "None"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
}
