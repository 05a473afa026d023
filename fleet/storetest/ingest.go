package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// RunIngest checks a location batch's write-set (fleet.IngestWrites,
// LocationTx.ApplyIngest): applied whole or not at all, its rule that a
// point newer than its vehicle's latest report is never stored already,
// and the service's ingest with write-sets leaving the same store as
// the same batches written one by one (fleet.Options.IngestOneByOne).
func RunIngest(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"ApplyIngestWritesAll", testApplyIngest},
		{"ApplyIngestAllOrNone", testApplyIngestAllOrNone},
	})
	t.Run("WriteSetsSameAsOneByOne", func(t *testing.T) { testWriteSetsSameAsOneByOne(t, open) })
}

// ingestFixture is an account with two vehicles and a device on the
// first, made with the same ids in each store given.
type ingestFixture struct {
	account fleet.Account
	a, b    fleet.Vehicle
	device  fleet.Device
}

func newIngestFixture(t *testing.T, stores ...fleet.Store) ingestFixture {
	t.Helper()
	f := ingestFixture{account: fleet.Account{ID: fleet.NewID(fleet.PrefixAccount), CompanyName: "Acme", Plan: fleet.PlanPro, CreatedAt: T0}}
	f.a = NewVehicle(f.account.ID, "A")
	f.b = NewVehicle(f.account.ID, "B")
	f.device = fleet.Device{ID: fleet.NewID(fleet.PrefixDevice), AccountID: f.account.ID, Identifier: "356307042441013",
		VehicleID: f.a.ID, CreatedAt: T0, UpdatedAt: T0}
	for _, s := range stores {
		err := s.Update(ctx, func(tx fleet.Tx) error {
			return errors.Join(tx.CreateAccount(f.account), tx.CreateVehicle(f.a), tx.CreateVehicle(f.b), tx.CreateDevice(f.device))
		})
		if err != nil {
			t.Fatalf("fixture: %v", err)
		}
	}
	return f
}

// drivePoint is vehicle id's point sec seconds after T0, at speed, with
// the attributes of a tracker (the ignition on while it moves).
func drivePoint(id string, sec int, speed float64) fleet.Point {
	return fleet.Point{VehicleID: id, Latitude: 52 + float64(sec)/10000, Longitude: 13, Timestamp: T0.Add(time.Duration(sec) * time.Second),
		Speed: f64(speed), Heading: f64(90), OdometerKm: f64(1200.5 + float64(sec)/100),
		Attributes: fleet.Attributes{
			fleet.BoolAttr(fleet.AttrIgnition, speed > 0), fleet.NumberAttr(fleet.AttrPowerV, 12.5+float64(sec%100)/100),
			fleet.NumberAttr(fleet.AttrEngineHours, 1000+float64(sec)/3600), fleet.NumberAttr(fleet.AttrFuelLevel, float64(90-sec/100)),
			fleet.NumberAttr("rpm", 800+speed*20),
		}.Sort()}
}

func testApplyIngest(t *testing.T, s fleet.Store) {
	is := is.New(t)
	f := newIngestFixture(t, s)
	v := f.a
	v.LastLocation = &fleet.Position{Latitude: 52.1, Longitude: 13, Timestamp: T0.Add(20 * time.Second)}
	v.Speed, v.Status, v.UpdatedAt = f64(50), fleet.StatusMoving, T0.Add(time.Minute)
	tr := fleet.Trip{ID: fleet.NewID(fleet.PrefixTrip), AccountID: f.account.ID, VehicleID: f.a.ID, Status: fleet.TripInProgress,
		Start: fleet.TripPlace{Latitude: 52, Longitude: 13, Timestamp: T0}, End: fleet.TripPlace{Latitude: 52.1, Longitude: 13, Timestamp: T0.Add(20 * time.Second)}, DistanceKm: 1.5, Points: 3, LastAt: T0.Add(20 * time.Second)}
	d := f.device
	d.Protocol, d.LastSeenAt = "teltonika", ptr(T0.Add(time.Minute))
	d.LastReport = &fleet.LastReport{ReceivedAt: T0.Add(time.Minute), Protocol: "teltonika", Stored: true}
	w := fleet.IngestWrites{
		Points:   []fleet.VehiclePoints{{VehicleID: f.a.ID, Points: []fleet.Point{drivePoint(f.a.ID, 0, 50), drivePoint(f.a.ID, 10, 50), drivePoint(f.a.ID, 20, 50)}}, {VehicleID: f.b.ID, Points: []fleet.Point{drivePoint(f.b.ID, 5, 0)}}},
		Vehicles: []fleet.Vehicle{v},
		Trips:    []fleet.Trip{tr},
		Devices:  []fleet.Device{d},
		Events:   []fleet.Event{{ID: fleet.NewID(fleet.PrefixEvent), AccountID: f.account.ID, Type: fleet.EventVehicleStatusChanged, CreatedAt: T0, Data: []byte(`{"vehicle_id":"x"}`)}},
	}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.ApplyIngest(w) }))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		pts, err := tx.Points(f.a.ID, T0, T0.Add(time.Hour), 10)
		is.NoErr(err)
		is.Equal(len(pts), 3)
		is.Equal(*pts[2].OdometerKm, 1200.7)
		pts, err = tx.Points(f.b.ID, T0, T0.Add(time.Hour), 10)
		is.NoErr(err)
		is.Equal(len(pts), 1)
		got, err := tx.Vehicle(f.account.ID, f.a.ID)
		is.NoErr(err)
		is.True(got.LastLocation != nil && got.LastLocation.Timestamp.Equal(T0.Add(20*time.Second)))
		is.Equal(got.Status, fleet.StatusMoving)
		latest, err := tx.LatestTrips([]string{f.a.ID})
		is.NoErr(err)
		is.Equal(latest[f.a.ID].ID, tr.ID)
		is.Equal(latest[f.a.ID].DistanceKm, 1.5)
		dev, err := tx.Device(f.account.ID, d.ID)
		is.NoErr(err)
		is.Equal(dev.Protocol, "teltonika")
		is.True(dev.LastReport != nil && dev.LastReport.Stored)
		evs, err := tx.Events(f.account.ID, fleet.EventFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(evs), 1)
		is.Equal(evs[0].ID, w.Events[0].ID)
		return nil
	}))
}

// testApplyIngestAllOrNone: a write-set whose point is stored already
// (which the rule forbids), or whose device has moved, fails, and nothing
// of it is stored.
func testApplyIngestAllOrNone(t *testing.T, s fleet.Store) {
	is := is.New(t)
	f := newIngestFixture(t, s)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error {
		_, err := tx.InsertPoints(f.a.ID, []fleet.Point{drivePoint(f.a.ID, 10, 50)})
		return err
	}))
	moved := f.device
	moved.VehicleID = f.b.ID // not where it is attached
	v := f.b
	v.Status, v.UpdatedAt = fleet.StatusIdle, T0.Add(time.Minute)
	for _, w := range []fleet.IngestWrites{
		{Points: []fleet.VehiclePoints{{VehicleID: f.b.ID, Points: []fleet.Point{drivePoint(f.b.ID, 1, 0)}}, {VehicleID: f.a.ID, Points: []fleet.Point{drivePoint(f.a.ID, 10, 50)}}}, Vehicles: []fleet.Vehicle{v}},
		{Points: []fleet.VehiclePoints{{VehicleID: f.b.ID, Points: []fleet.Point{drivePoint(f.b.ID, 1, 0)}}}, Vehicles: []fleet.Vehicle{v}, Devices: []fleet.Device{moved}},
	} {
		err := s.Update(ctx, func(tx fleet.Tx) error { return tx.ApplyIngest(w) })
		is.True(err != nil)
		is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
			pts, err := tx.Points(f.b.ID, T0, T0.Add(time.Hour), 10)
			is.NoErr(err)
			is.Equal(len(pts), 0) // none of it
			got, err := tx.Vehicle(f.account.ID, f.b.ID)
			is.NoErr(err)
			is.Equal(got.Status, f.b.Status)
			return nil
		}))
	}
}

// testWriteSetsSameAsOneByOne runs the same batches through two services,
// one writing write-sets and one writing one by one, each on a store of
// its own, and requires the same stores: points, vehicles, trips, events
// and the device's row. The batches drive, stop, report late, repeat
// themselves and come from a device; after each, no vehicle has a point
// newer than its latest report (what makes a forward point new).
func testWriteSetsSameAsOneByOne(t *testing.T, open func(t *testing.T) fleet.Store) {
	is := is.New(t)
	stores := []fleet.Store{open(t), open(t)}
	f := newIngestFixture(t, stores...)
	now := T0.Add(3 * time.Hour)
	clock := func() time.Time { return now }
	svcs := []*fleet.Service{
		fleet.NewService(stores[0], fleet.Options{Now: clock}),
		fleet.NewService(stores[1], fleet.Options{Now: clock, IngestOneByOne: true}),
	}
	p := fleet.SystemPrincipal(f.account)
	a, b := f.a.ID, f.b.ID
	type step struct {
		vehicle string // "" for a bulk batch
		points  []fleet.Point
		device  bool // a device's report of vehicle a
	}
	var steps []step
	drive := func(id string, from, to, every int, speed float64) []fleet.Point {
		var pts []fleet.Point
		for sec := from; sec <= to; sec += every {
			pts = append(pts, drivePoint(id, sec, speed))
		}
		return pts
	}
	for k := range 6 { // a drive, three points a batch
		steps = append(steps, step{vehicle: a, points: drive(a, 600+30*k, 660+30*k, 30, 50)})
	}
	steps = append(steps,
		step{vehicle: a, points: drive(a, 600, 660, 30, 50)},                                       // a repeat: duplicates
		step{vehicle: a, points: append(drive(a, 615, 615, 1, 50), drive(a, 810, 840, 30, 50)...)}, // late and forward
		step{points: append(drive(a, 900, 960, 30, 0), drive(b, 100, 400, 60, 40)...)},             // a bulk batch: a stops, b drives
		step{vehicle: a, points: drive(a, 2400, 2460, 30, 0)},                                      // a long stop
		step{vehicle: a, points: drive(a, 3000, 3060, 30, 60), device: true},                       // the device: off again
		step{vehicle: a, points: drive(a, 3060, 3090, 30, 60), device: true},                       // its first point is a duplicate
		step{vehicle: b, points: drive(b, 200, 700, 100, 40)},                                      // late, reopening b's trip, and forward
	)
	for i, st := range steps {
		for k, svc := range svcs {
			pts := append([]fleet.Point(nil), st.points...)
			var err error
			switch {
			case st.device:
				rep := fleet.DeviceReport{Identifier: f.device.Identifier, Protocol: "teltonika", RemoteAddr: "192.0.2.1:5000"}
				for _, pt := range pts {
					rep.Positions = append(rep.Positions, fleet.DevicePosition{Latitude: pt.Latitude, Longitude: pt.Longitude, Timestamp: pt.Timestamp,
						Speed: pt.Speed, Heading: pt.Heading, Valid: true, Attrs: pt.Attributes.Clone()})
				}
				_, err = svc.DeviceEdge().Report(ctx, rep)
			case st.vehicle == "":
				_, err = svc.IngestBulk(ctx, p, pts)
			default:
				for j := range pts {
					pts[j].VehicleID = ""
				}
				_, err = svc.IngestLocations(ctx, p, st.vehicle, pts)
			}
			if err != nil {
				t.Fatalf("step %d, service %d: %v", i, k, err)
			}
			checkNothingAfterLatest(t, stores[k], f.account.ID, a, b)
		}
	}
	dumps := [2]string{}
	for k, s := range stores {
		dumps[k] = dumpIngest(t, s, f.account.ID, f.device.ID, a, b)
	}
	is.Equal(dumps[0], dumps[1]) // the same store either way
}

// checkNothingAfterLatest fails when a vehicle has a point newer than its
// latest report.
func checkNothingAfterLatest(t *testing.T, s fleet.Store, accountID string, ids ...string) {
	t.Helper()
	err := s.View(ctx, func(tx fleet.Tx) error {
		for _, id := range ids {
			v, err := tx.Vehicle(accountID, id)
			if err != nil {
				return err
			}
			from := T0.Add(-24 * time.Hour)
			if v.LastLocation != nil {
				from = v.LastLocation.Timestamp.Add(time.Microsecond)
			}
			pts, err := tx.Points(id, from, T0.Add(48*time.Hour), 1)
			if err != nil {
				return err
			}
			if len(pts) > 0 {
				return fmt.Errorf("vehicle %s has a point at %s, after its latest report", id, pts[0].Timestamp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dumpIngest writes what ingest leaves in s, without the ids made at
// random (trips', events'), as JSON.
func dumpIngest(t *testing.T, s fleet.Store, accountID, deviceID string, ids ...string) string {
	t.Helper()
	out := map[string]any{}
	err := s.View(ctx, func(tx fleet.Tx) error {
		for _, id := range ids {
			v, err := tx.Vehicle(accountID, id)
			if err != nil {
				return err
			}
			pts, err := tx.Points(id, T0.Add(-24*time.Hour), T0.Add(48*time.Hour), 10000)
			if err != nil {
				return err
			}
			trips, err := tx.VehicleTrips(id, T0.Add(-24*time.Hour), T0.Add(48*time.Hour), time.Time{}, 1000)
			if err != nil {
				return err
			}
			for i := range trips {
				trips[i].ID = ""
			}
			out[id] = map[string]any{"vehicle": v, "telemetry": v.Telemetry, "points": pts, "trips": trips}
		}
		evs, err := tx.Events(accountID, fleet.EventFilter{}, fleet.Page{Limit: 1000})
		if err != nil {
			return err
		}
		type ev struct {
			Type string
			Data any
		}
		var es []ev
		for _, e := range evs {
			es = append(es, ev{e.Type, e.Data})
		}
		out["events"] = es
		d, err := tx.Device(accountID, deviceID)
		out["device"] = d
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	// Trips' ids, made at random, named in their order of appearance.
	names := map[string]string{}
	return tripID.ReplaceAllStringFunc(string(b), func(id string) string {
		if _, ok := names[id]; !ok {
			names[id] = fmt.Sprintf("trip#%d", len(names)+1)
		}
		return names[id]
	})
}

var tripID = regexp.MustCompile(`trip_[0-9a-z]{26}`)

func ptr[T any](v T) *T { return &v }
