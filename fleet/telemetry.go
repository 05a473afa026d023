package fleet

import (
	"math"
	"slices"
	"strings"
	"time"
)

// How a vehicle's forward points move its telematics state and emit the
// events of API.md §14 (and assign its driver, §15). Ingest calls
// telemetry.step for each forward point, in time order, before the point
// becomes the vehicle's latest: v is then the vehicle as the previous
// forward point left it. A point that is not forward (older than the
// vehicle's latest, or a duplicate) never reaches it, so that a resent
// or late point changes nothing and emits nothing.

// telemetryTx is what a forward point's telematics need: the vehicle, the
// driver its key names (assigning moves them), and the events.
type telemetryTx interface {
	assignTx
}

// telemetry is one vehicle's telematics through a batch: the device whose
// report it is ("" for an API client's batch) and the events its forward
// points emitted, for the alert rules (judgeTelemetry).
type telemetry struct {
	deviceID string
	events   []telemetryEvent
	point    int // the index of the forward point being stepped
}

// step applies forward point pt (the index-th forward point of the batch)
// to v, emitting its events at now.
func (t *telemetry) step(s *Service, tx telemetryTx, v *Vehicle, pt *Point, index int, now time.Time, th StatusThresholds) error {
	attrs := pt.Attributes
	prev := v.LastLocation
	at := pt.Timestamp
	t.point = index
	emit := func(typ string, data any) error {
		t.events = append(t.events, telemetryEvent{typ: typ, data: data, point: index})
		return s.emit(tx, v.AccountID, typ, now, data)
	}
	var dt time.Duration // since the previous forward point
	if prev != nil {
		dt = at.Sub(prev.Timestamp)
	}
	mem := &v.Telemetry
	telemetryAt := false

	// The odometer: reported, else the distance from the previous point.
	reported := pt.OdometerKm
	if r, ok := attrs.Number(AttrOdometerKm); ok && reported == nil {
		reported = &r
	}
	switch {
	case reported != nil:
		mem.ReportsOdometer = true
		if v.OdometerKm == nil || *reported >= *v.OdometerKm-OdometerBackwardKm {
			v.OdometerKm = ptr(*reported)
		}
	case !mem.ReportsOdometer && prev != nil && dt > 0:
		km := DistanceM(prev.Latitude, prev.Longitude, pt.Latitude, pt.Longitude) / 1000
		if km > 0 && km/dt.Hours() <= MaxGPSOdometerSpeed {
			v.OdometerKm = ptr(roundKm(deref(v.OdometerKm) + km))
		}
	}

	// Engine hours: reported, else the time since the previous point while
	// the ignition was on (a gap the vehicle would be offline in counts
	// nothing: the device may have been off).
	if h, ok := attrs.Number(AttrEngineHours); ok {
		mem.ReportsEngineHours = true
		v.EngineHours, telemetryAt = ptr(h), true
	} else if !mem.ReportsEngineHours && prev != nil && v.Ignition != nil && *v.Ignition && dt > 0 && dt < th.OfflineAfter {
		v.EngineHours, telemetryAt = ptr(deref(v.EngineHours)+dt.Hours()), true
	}

	// Power and fuel: the newest value; fuel judged against the previous
	// one while the vehicle is not moving.
	if p, ok := attrs.Number(AttrPowerV); ok {
		v.PowerV, telemetryAt = ptr(p), true
	}
	still := !moving(*pt, th) && (prev == nil || !moving(Point{Speed: v.Speed}, th))
	level, hasLevel := attrs.Number(AttrFuelLevel)
	litres, hasLitres := attrs.Number(AttrFuelL)
	fuel := func(old *float64, to float64, threshold float64, unit string) error {
		if old == nil || !still {
			return nil
		}
		typ := ""
		switch d := to - *old; {
		case d <= -threshold:
			typ = EventVehicleFuelDrop
		case d >= threshold:
			typ = EventVehicleRefuel
		default:
			return nil
		}
		return emit(typ, FuelChange{VehicleID: v.ID, From: *old, To: to, Unit: unit, At: at, Location: eventLocation(pt)})
	}
	// A point with both is judged in percent of the tank alone: one
	// change, one event.
	if hasLevel {
		if err := fuel(v.FuelLevel, level, FuelChangePercent, FuelUnitPercent); err != nil {
			return err
		}
		v.FuelLevel, telemetryAt = ptr(level), true
	}
	if hasLitres {
		if !hasLevel {
			if err := fuel(v.FuelL, litres, FuelChangeLitres, FuelUnitLitres); err != nil {
				return err
			}
		}
		v.FuelL, telemetryAt = ptr(litres), true
	}

	// The ignition: a change between consecutive forward points that said
	// (the first known value emits nothing).
	if on, ok := attrs.Bool(AttrIgnition); ok {
		telemetryAt = true
		if v.Ignition != nil && *v.Ignition != on {
			typ := EventVehicleIgnitionOff
			if on {
				typ = EventVehicleIgnitionOn
			}
			if err := emit(typ, IgnitionChange{VehicleID: v.ID, At: at, Location: eventLocation(pt), DeviceID: nullString(t.deviceID)}); err != nil {
				return err
			}
		}
		switch {
		case on:
			mem.IgnitionOffSince = nil
		case mem.IgnitionOffSince == nil:
			mem.IgnitionOffSince = ptr(at)
		}
		v.Ignition = ptr(on)
	}

	// Idling: ignition on below the moving speed for IdlingAfter.
	idling := v.Ignition != nil && *v.Ignition && !moving(*pt, th)
	switch {
	case idling && mem.IdlingSince == nil:
		mem.IdlingSince = ptr(at)
	case idling && !mem.Idling && at.Sub(*mem.IdlingSince) >= IdlingAfter:
		mem.Idling = true
		if err := emit(EventVehicleIdlingStarted, IdlingChange{VehicleID: v.ID, At: at, Minutes: minutesOf(at.Sub(*mem.IdlingSince))}); err != nil {
			return err
		}
	case !idling && mem.IdlingSince != nil:
		if mem.Idling {
			if err := emit(EventVehicleIdlingEnded, IdlingChange{VehicleID: v.ID, At: at, Minutes: minutesOf(at.Sub(*mem.IdlingSince))}); err != nil {
				return err
			}
		}
		mem.IdlingSince, mem.Idling = nil, false
	}

	// Alarms: each word once per device and type per AlarmRepeatWindow.
	if words, ok := attrs.Text(AttrAlarm); ok && words != "" {
		for w := range strings.SplitSeq(words, ",") {
			w = strings.TrimSpace(w)
			if !slices.Contains(alarmWords, w) || mem.alarmSeen(t.deviceID, w, at) {
				continue
			}
			mem.sawAlarm(t.deviceID, w, at)
			if err := emit(EventDeviceAlarm, DeviceAlarm{DeviceID: nullString(t.deviceID), VehicleID: v.ID, Alarm: w, At: at, Location: eventLocation(pt)}); err != nil {
				return err
			}
		}
	}

	// The driver (API.md §15): ignition off for DriverReleaseAfter ends an
	// assignment a report made; a new key assigns its driver.
	if v.DriverID != "" && v.DriverID == mem.ReportedDriverID && mem.IgnitionOffSince != nil && at.Sub(*mem.IgnitionOffSince) >= DriverReleaseAfter {
		if err := t.assign(s, tx, v, nil, "", at, now); err != nil {
			return err
		}
		mem.DriverKey, mem.ReportedDriverID = "", ""
	}
	if key, ok := attrs.Text(AttrDriverIdentifier); ok && key != "" && key != mem.DriverKey {
		mem.DriverKey = key
		d, err := tx.DriverByIdentifier(v.AccountID, key)
		switch {
		case ErrorCode(err) == CodeNotFound:
			if v.DriverID == "" { // assignDriver has nothing to change: the unknown key is news all the same
				err = emit(EventVehicleDriverChanged, DriverChange{VehicleID: v.ID, Identifier: ptr(key), At: at})
			} else {
				err = t.assign(s, tx, v, nil, key, at, now)
			}
			mem.ReportedDriverID = ""
		case err == nil:
			err = t.assign(s, tx, v, &d, key, at, now)
			mem.ReportedDriverID = d.ID
		}
		if err != nil {
			return err
		}
	}

	if telemetryAt {
		v.TelemetryAt = ptr(at)
	}
	return nil
}

// assign makes d the driver of v (nil: none) through assignDriver,
// recording the events it emits for the alert rules.
func (t *telemetry) assign(s *Service, tx telemetryTx, v *Vehicle, d *Driver, key string, at, now time.Time) error {
	from := v.DriverID
	changed, err := s.assignDriver(tx, v, d, key, at, now)
	if err != nil || !changed {
		return err
	}
	t.events = append(t.events, telemetryEvent{typ: EventVehicleDriverChanged, point: t.point,
		data: DriverChange{VehicleID: v.ID, From: nullString(from), To: nullString(v.DriverID), Identifier: nullString(key), At: at}})
	return nil
}

func eventLocation(pt *Point) EventLocation {
	return EventLocation{Latitude: pt.Latitude, Longitude: pt.Longitude}
}

func minutesOf(d time.Duration) float64 { return math.Round(d.Minutes()*100) / 100 }

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// alarmSeen reports whether device's alarm was raised less than
// AlarmRepeatWindow before at.
func (m *TelemetryMemory) alarmSeen(deviceID, alarm string, at time.Time) bool {
	for _, a := range m.Alarms {
		if a.DeviceID == deviceID && a.Alarm == alarm {
			d := at.Sub(a.At)
			return d >= 0 && d < AlarmRepeatWindow
		}
	}
	return false
}

// sawAlarm records that device's alarm was raised at at, forgetting the
// alarms raised a window or more before it.
// It makes a new list: the old one may be shared with a copy of the
// vehicle.
func (m *TelemetryMemory) sawAlarm(deviceID, alarm string, at time.Time) {
	out := make([]AlarmSeen, 0, len(m.Alarms)+1)
	for _, a := range m.Alarms {
		if !(a.DeviceID == deviceID && a.Alarm == alarm) && at.Sub(a.At) < AlarmRepeatWindow {
			out = append(out, a)
		}
	}
	m.Alarms = append(out, AlarmSeen{DeviceID: deviceID, Alarm: alarm, At: at})
}
