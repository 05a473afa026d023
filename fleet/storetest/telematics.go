package storetest

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TypicalAttributes are a tracker's usual attributes (API.md §14): fifteen
// of the common vocabulary and of a protocol's raw names, of every kind.
func TypicalAttributes(i int) fleet.Attributes {
	f := float64(i % 1000)
	return fleet.Attributes{
		fleet.BoolAttr("ignition", true), fleet.BoolAttr("motion", i%2 == 0), fleet.NumberAttr("power_v", 12.5+f/1000),
		fleet.NumberAttr("battery_v", 4.1), fleet.NumberAttr("battery_level", 97), fleet.NumberAttr("odometer_km", 123456.789+f/10),
		fleet.NumberAttr("engine_hours", 1523.4+f/60), fleet.NumberAttr("fuel_level", 62), fleet.NumberAttr("rssi", 4),
		fleet.NumberAttr("hdop", 0.7), fleet.NumberAttr("pdop", 1.1), fleet.TextAttr("driver_identifier", "01A2B3C4D5E6F708"),
		fleet.BoolAttr("din1", true), fleet.NumberAttr("io200", 0), fleet.NumberAttr("rpm", 850+f),
	}.Sort()
}

// oddAttributes are attributes at the edges of the stored form: names
// outside the vocabulary and a raw name beyond Teltonika's usual range,
// numbers that are no short decimal, huge, tiny, negative and zero, texts
// that JSON escapes and an empty one.
func oddAttributes() fleet.Attributes {
	return fleet.Attributes{
		fleet.NumberAttr("a_custom_name", math.Pi), fleet.NumberAttr("big", 1e300), fleet.NumberAttr("neg", -12.25),
		fleet.NumberAttr("tiny", 1e-9), fleet.TextAttr("note", "é \"quoted\" <b>&\\ \u2028"+strings.Repeat("x", 40)), fleet.TextAttr("empty", ""),
		fleet.BoolAttr("charging", false), fleet.NumberAttr("zero", 0), fleet.NumberAttr("io70000", 999999999999.999),
	}.Sort()
}

// testPointAttributes: every point keeps the attributes it was stored
// with, of every kind and name, exactly; a point without any reads back
// without any; a duplicate keeps the first point's.
func testPointAttributes(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	odd := oddAttributes()
	pts := []fleet.Point{
		{Latitude: 1, Longitude: 1, Timestamp: T0, Attributes: TypicalAttributes(7)},
		{Latitude: 1, Longitude: 1, Timestamp: T0.Add(time.Second)},
		{Latitude: 1, Longitude: 1, Timestamp: T0.Add(2 * time.Second), Attributes: odd},
	}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { _, err = tx.InsertPoints(v.ID, pts); return err }))
	// A duplicate with other attributes changes nothing.
	dup := fleet.Point{Latitude: 1, Longitude: 1, Timestamp: T0, Attributes: fleet.Attributes{fleet.BoolAttr("ignition", false)}}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { _, err = tx.InsertPoints(v.ID, []fleet.Point{dup}); return err }))
	var got []fleet.Point
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Points(v.ID, T0, T0.Add(time.Hour), 10); return err }))
	is.Equal(len(got), 3)
	is.Equal(got[0].Attributes, TypicalAttributes(7))
	is.Equal(len(got[1].Attributes), 0)
	is.Equal(got[2].Attributes, odd)
	// What a caller holds is its own.
	got[0].Attributes[0].Name = "changed"
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Points(v.ID, T0, T0, 1); return err }))
	is.Equal(got[0].Attributes, TypicalAttributes(7))
	pts[0].Attributes[0].Num = 0 // the store kept a copy
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Points(v.ID, T0, T0, 1); return err }))
	is.Equal(got[0].Attributes, TypicalAttributes(7))
}

// testHistoryJSON: a page of history written as JSON by the service
// (Service.HistoryJSON, attributes straight from their stored form where
// the store keeps one) is, byte for byte, its points from ListHistory
// written by Point.AppendJSON, page after page of a cursor's walk; a
// StoredPointsTx reads the points Points reads, their attributes as bytes
// that decode to theirs.
func testHistoryJSON(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	odd := oddAttributes()
	var pts []fleet.Point
	for i := range 11 {
		p := fleet.Point{Latitude: 52.5 + float64(i)/1e5, Longitude: 13.4, Timestamp: T0.Add(time.Duration(i) * time.Second), Speed: f64(float64(i) * 1.5)}
		switch i % 3 {
		case 0:
			p.Attributes = TypicalAttributes(i)
		case 1:
			p.Attributes = odd
		}
		pts = append(pts, p)
	}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { _, err = tx.InsertPoints(v.ID, pts); return err }))

	svc := fleet.NewService(s, fleet.Options{Now: func() time.Time { return T0.Add(time.Hour) }})
	p := fleet.SystemPrincipal(a)
	from := T0.Add(-time.Minute)
	q := fleet.HistoryQuery{From: &from, Limit: 4}
	pages := 0
	for {
		l, err := svc.ListHistory(ctx, p, v.ID, q)
		is.NoErr(err)
		want := []byte("[")
		for i := range l.Items {
			if i > 0 {
				want = append(want, ',')
			}
			want = l.Items[i].AppendJSON(want)
		}
		want = append(want, ']')
		got, err := svc.HistoryJSON(ctx, p, v.ID, q, []byte("kept"))
		is.NoErr(err)
		is.Equal(string(got.Data), string(want)) // the page's points
		is.Equal(got.NextCursor, l.NextCursor)
		is.Equal(got.HasMore, l.HasMore)
		pages++
		if !l.HasMore {
			break
		}
		q.Cursor = l.NextCursor
	}
	is.Equal(pages, 3) // 11 points, 4 a page

	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		st, ok := tx.(fleet.StoredPointsTx)
		if !ok {
			return nil // the store has no stored form: Points serves
		}
		want, err := tx.Points(v.ID, T0, T0.Add(time.Hour), 100)
		is.NoErr(err)
		var blobs fleet.AttributeBlobs
		got, err := st.StoredPoints(v.ID, T0, T0.Add(time.Hour), 100, &blobs)
		is.NoErr(err)
		is.Equal(len(got), len(want))
		is.Equal(blobs.Len(), len(got)) // one per point
		attrs, err := blobs.Decode()
		is.NoErr(err)
		for i := range got {
			is.Equal(got[i].Attributes, nil) // left to the bytes
			got[i].Attributes = attrs[i]
		}
		is.Equal(got, want)
		return nil
	}))
}

// testVehicleTelemetry: the vehicle's telematics state and memory are
// stored by UpdateVehicle and read back as they were; cleared, they read
// back absent.
func testVehicleTelemetry(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	read := func() fleet.Vehicle {
		var got fleet.Vehicle
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Vehicle(a.ID, v.ID); return err }))
		return got
	}
	fresh := read()
	is.Equal(fresh.Ignition, nil) // nothing known before a report
	is.Equal(fresh.EngineHours, nil)
	is.Equal(fresh.TelemetryAt, nil)
	is.True(fresh.Telemetry.IsZero())

	on, at, idle, off := true, T0.Add(time.Minute), T0.Add(-4*time.Minute), T0.Add(-time.Hour)
	v.Ignition, v.EngineHours, v.FuelLevel, v.FuelL, v.PowerV, v.TelemetryAt = &on, f64(1523.25), f64(62.5), f64(41), f64(13.8), &at
	v.Telemetry = fleet.TelemetryMemory{IdlingSince: &idle, Idling: true, IgnitionOffSince: &off,
		Alarms: []fleet.AlarmSeen{{DeviceID: "dev_x", Alarm: "sos", At: at}, {Alarm: "tow", At: idle}}}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(v) }))
	got := read()
	is.Equal(*got.Ignition, true)
	is.Equal(*got.EngineHours, 1523.25)
	is.Equal(*got.FuelLevel, 62.5)
	is.Equal(*got.FuelL, 41.0)
	is.Equal(*got.PowerV, 13.8)
	is.True(got.TelemetryAt.Equal(at))
	is.True(got.Telemetry.IdlingSince.Equal(idle))
	is.True(got.Telemetry.Idling)
	is.True(got.Telemetry.IgnitionOffSince.Equal(off))
	is.Equal(len(got.Telemetry.Alarms), 2)
	is.Equal(got.Telemetry.Alarms[0].DeviceID, "dev_x")
	is.Equal(got.Telemetry.Alarms[1].Alarm, "tow")
	is.True(got.Telemetry.Alarms[1].At.Equal(idle))

	off2 := false
	v.Ignition, v.EngineHours, v.FuelLevel, v.FuelL, v.PowerV, v.TelemetryAt = &off2, nil, nil, nil, nil, nil
	v.Telemetry = fleet.TelemetryMemory{}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(v) }))
	got = read()
	is.Equal(*got.Ignition, false) // off is not unknown
	is.Equal(got.EngineHours, nil)
	is.Equal(got.PowerV, nil)
	is.Equal(got.TelemetryAt, nil)
	is.True(got.Telemetry.IsZero())
}

// testVehicleLastAttributes: the attributes of the vehicle's latest point
// are kept with it.
func testVehicleLastAttributes(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	v.LastLocation = &fleet.Position{Latitude: 1, Longitude: 2, Timestamp: T0}
	v.LastAttributes = TypicalAttributes(3)
	for range 2 { // twice: a cached row too
		is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(v) }))
		var got fleet.Vehicle
		is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Vehicle(a.ID, v.ID); return err }))
		is.Equal(got.LastAttributes, TypicalAttributes(3))
	}
	v.LastAttributes = nil
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateVehicle(v) }))
	var got fleet.Vehicle
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Vehicle(a.ID, v.ID); return err }))
	is.Equal(len(got.LastAttributes), 0)
}

// testScheduleEngineHours: a schedule's engine-hour fields are stored by
// CreateSchedule and UpdateSchedule, and absent ones read back absent.
func testScheduleEngineHours(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "v")
	sch := NewSchedule(a.ID, v.ID, "oil")
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateSchedule(sch) }))
	read := func() fleet.Schedule {
		var got fleet.Schedule
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Schedule(a.ID, sch.ID); return err }))
		return got
	}
	got := read()
	is.Equal(got.IntervalEngineHours, nil)
	is.Equal(got.LastServiceEngineHours, nil)
	is.Equal(got.NextDueEngineHours, nil)
	sch.IntervalEngineHours, sch.LastServiceEngineHours, sch.NextDueEngineHours = f64(250), f64(1523.5), f64(1773.5)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateSchedule(sch) }))
	got = read()
	is.Equal(*got.IntervalEngineHours, 250.0)
	is.Equal(*got.LastServiceEngineHours, 1523.5)
	is.Equal(*got.NextDueEngineHours, 1773.5)
	var list []fleet.Schedule
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { list, err = tx.SchedulesOfVehicle(v.ID); return err }))
	is.Equal(len(list), 1)
	is.Equal(*list[0].NextDueEngineHours, 1773.5)
}
