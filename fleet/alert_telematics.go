package fleet

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// telemetryJudgement is what one vehicle's forward points of a location
// batch did, for the telematics alert rules (API.md §14) to judge, in the
// batch's write transaction.
type telemetryJudgement struct {
	accountID string
	// deviceID is the device whose report the batch is ("" for an API
	// client's batch).
	deviceID string
	// cfg is the account's alert configuration the batch was judged
	// against (its compiled rules).
	cfg *alertConfig
	// before is the vehicle as the batch found it (its telematics state
	// and Telemetry memory before the batch).
	before Vehicle
	// vehicle is the vehicle after the batch; the caller writes it after
	// the judgement, so an alert opened for it moves its AlertsVersion
	// here (openRuleAlert does), and is written with it.
	vehicle *Vehicle
	// previous is the vehicle's latest forward point before the batch (its
	// position, time, speed and heading, as the vehicle kept them; no
	// attributes: the state it left is before's), nil when it had none.
	previous *Point
	// points are the batch's forward points of the vehicle, in time order,
	// with their attributes.
	points []Point
	// events are the telematics events the points emitted, in the order
	// they were emitted.
	events []telemetryEvent
	now    time.Time
}

// telemetryEvent is one event a forward point emitted: its type, its data
// (IgnitionChange, DeviceAlarm, DriverChange, FuelChange, IdlingChange) and
// the index in telemetryJudgement.points of the point that caused it.
type telemetryEvent struct {
	typ   string
	data  any
	point int
}

// judgeTelemetry opens and resolves the alerts of the telematics rules
// (API.md §14) for what one vehicle's forward points of a batch did.
//
// It walks the forward points in time order, each with the events it
// emitted, and judges every enabled telematics rule that watches the
// vehicle on each: alarm, ignition_on, harsh_driving (device-raised) and
// power_cut open on the events (which a resent or older point never
// emits), idling, fuel_drop, harsh_driving (derived) and power_cut's
// recovery on the points themselves. So a point judged once is never
// judged again, whoever sends it again.
//
// Its cost is bounded as the other rules' application is: the work is a
// pass over the points per rule that watches the vehicle (the compiled
// configuration lists them, no read), and a rule's latest alert for the
// vehicle is read once, only when the batch meets the rule's condition or
// ends what an open alert of it holds. A vehicle that no telematics rule
// watches costs one scan of the rules.
func (s *Service) judgeTelemetry(tx resolveTx, in telemetryJudgement) error {
	if in.cfg == nil || len(in.cfg.telem) == 0 || len(in.points) == 0 {
		return nil
	}
	j := &telemJudge{s: s, tx: tx, in: &in, v: in.vehicle, th: s.opts.Thresholds.orDefault()}
	for _, r := range in.cfg.telem {
		if r.applies(in.vehicle.ID) {
			j.rules = append(j.rules, r)
		}
	}
	if len(j.rules) == 0 {
		return nil
	}
	j.state = make(map[int32]alertState, len(j.rules))
	return j.walk()
}

// telemJudge judges one vehicle's forward points against the telematics
// rules that watch it.
type telemJudge struct {
	s     *Service
	tx    resolveTx
	in    *telemetryJudgement
	v     *Vehicle
	rules []*crule
	th    StatusThresholds // below their moving speed a vehicle stands
	// state is the latest alert of each rule for the vehicle, read when
	// first needed and kept as the judgement opens and resolves.
	state map[int32]alertState
	// opened is the rules whose alert a point opened: the same point never
	// resolves it.
	opened map[int32]int
}

// walk judges the points in time order, the events of each first.
func (j *telemJudge) walk() error {
	in := j.in
	prev := in.previous
	ignition := in.before.Ignition
	fuelLevel, fuelL := in.before.FuelLevel, in.before.FuelL
	idleSince := in.before.Telemetry.IdlingSince
	power := in.before.PowerV
	ev := 0
	for i := range in.points {
		pt := &in.points[i]
		for ; ev < len(in.events) && in.events[ev].point <= i; ev++ {
			if err := j.event(&in.events[ev], pt, i); err != nil {
				return err
			}
		}
		if on, ok := pt.Attributes.Bool(AttrIgnition); ok {
			ignition = &on
		}
		standing := !moving(*pt, j.th)
		idle := ignition != nil && *ignition && standing
		switch {
		case idle && idleSince == nil:
			at := pt.Timestamp
			idleSince = &at
		case !idle && idleSince != nil:
			if err := j.idlingEnded(i); err != nil {
				return err
			}
			idleSince = nil
		}
		if idleSince != nil {
			if err := j.idling(pt, i, *idleSince); err != nil {
				return err
			}
		}
		prevStanding := prev == nil || !moving(*prev, j.th)
		if f, ok := pt.Attributes.Number(AttrFuelLevel); ok {
			if fuelLevel != nil && standing && prevStanding {
				if err := j.fuel(pt, i, *fuelLevel, f, FuelUnitPercent); err != nil {
					return err
				}
			}
			fuelLevel = &f
		}
		if f, ok := pt.Attributes.Number(AttrFuelL); ok {
			if fuelL != nil && standing && prevStanding {
				if err := j.fuel(pt, i, *fuelL, f, FuelUnitLitres); err != nil {
					return err
				}
			}
			fuelL = &f
		}
		if prev != nil {
			if err := j.harshDerived(prev, pt, i); err != nil {
				return err
			}
		}
		if volts, ok := pt.Attributes.Number(AttrPowerV); ok {
			if err := j.powerBack(i, power, volts); err != nil {
				return err
			}
			power = &volts
		}
		prev = pt
	}
	return nil
}

// event judges one telematics event that point i emitted.
func (j *telemJudge) event(e *telemetryEvent, pt *Point, i int) error {
	switch e.typ {
	case EventDeviceAlarm:
		al, ok := e.data.(DeviceAlarm)
		if !ok {
			if p, isPtr := e.data.(*DeviceAlarm); isPtr && p != nil {
				al, ok = *p, true
			}
		}
		if !ok {
			return nil
		}
		return j.alarm(al, pt, i)
	case EventVehicleIgnitionOn:
		return j.ignitionOn(pt, i)
	}
	return nil
}

// alarm opens the alerts of alarm rules that name the alarm (or every
// alarm), of harsh_driving rules for a harsh alarm the device raised, and
// of power_cut rules for power_cut; power_restored resolves power_cut's.
func (j *telemJudge) alarm(al DeviceAlarm, pt *Point, i int) error {
	for _, r := range j.rules {
		var err error
		switch {
		case r.Type == AlertAlarm && (len(r.Alarms) == 0 || slices.Contains(r.Alarms, al.Alarm)):
			err = j.open(r, i, func() (string, map[string]any) {
				return "Vehicle " + j.v.Name + " raised the alarm " + spoken(al.Alarm) + ".",
					map[string]any{"alarm": al.Alarm, "device_id": al.DeviceID, "at": al.At, "latitude": pt.Latitude, "longitude": pt.Longitude}
			})
		case r.Type == AlertHarshDriving && slices.Contains(harshTypes, al.Alarm) && (len(r.Types) == 0 || slices.Contains(r.Types, al.Alarm)):
			err = j.open(r, i, func() (string, map[string]any) {
				return "Vehicle " + j.v.Name + ": " + spoken(al.Alarm) + ", as its device reported.",
					map[string]any{"type": al.Alarm, "source": "device", "device_id": al.DeviceID, "at": al.At,
						"latitude": pt.Latitude, "longitude": pt.Longitude}
			})
		case r.Type == AlertPowerCut && al.Alarm == AlarmPowerCut:
			err = j.open(r, i, func() (string, map[string]any) {
				return "Vehicle " + j.v.Name + ": the power supply was cut.",
					map[string]any{"device_id": al.DeviceID, "at": al.At, "latitude": pt.Latitude, "longitude": pt.Longitude,
						"power_v": attrNumber(pt.Attributes, AttrPowerV)}
			})
		case r.Type == AlertPowerCut && al.Alarm == AlarmPowerRestored:
			err = j.resolve(r, i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ignitionOn opens the alerts of ignition_on rules: each without working
// hours, each with them when the point's time falls outside them.
func (j *telemJudge) ignitionOn(pt *Point, i int) error {
	for _, r := range j.rules {
		if r.Type != AlertIgnitionOn {
			continue
		}
		if r.hours != nil && r.hours.within(pt.Timestamp) {
			continue
		}
		err := j.open(r, i, func() (string, map[string]any) {
			msg := "Vehicle " + j.v.Name + ": the ignition went on."
			data := map[string]any{"at": pt.Timestamp, "latitude": pt.Latitude, "longitude": pt.Longitude, "device_id": nullString(j.in.deviceID)}
			if r.hours != nil {
				local := pt.Timestamp.In(r.hours.loc)
				msg = "Vehicle " + j.v.Name + ": the ignition went on at " + local.Format("Mon 15:04") + " (" + r.OutsideHours.TZ +
					"), outside working hours " + r.OutsideHours.From + "–" + r.OutsideHours.To + "."
				data["local_time"] = local.Format("2006-01-02T15:04:05")
				data["tz"] = r.OutsideHours.TZ
			}
			return msg, data
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// idling opens the alerts of idling rules whose after_minutes the idling
// since since has reached at the point.
func (j *telemJudge) idling(pt *Point, i int, since time.Time) error {
	d := pt.Timestamp.Sub(since)
	for _, r := range j.rules {
		if r.Type != AlertIdling || d < time.Duration(*r.AfterMinutes)*time.Minute {
			continue
		}
		minutes := int(d / time.Minute)
		err := j.open(r, i, func() (string, map[string]any) {
			return "Vehicle " + j.v.Name + " has been idling for " + strconv.Itoa(minutes) + " minutes.",
				map[string]any{"idling_since": since, "minutes": minutes, "after_minutes": *r.AfterMinutes, "at": pt.Timestamp,
					"latitude": pt.Latitude, "longitude": pt.Longitude}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// idlingEnded resolves the open alerts of idling rules: the idling they
// were about is over.
func (j *telemJudge) idlingEnded(i int) error {
	for _, r := range j.rules {
		if r.Type == AlertIdling {
			if err := j.resolve(r, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// fuel judges a change of fuel between consecutive forward points while
// the vehicle stood, in unit, against the fuel_drop rules of that unit.
func (j *telemJudge) fuel(pt *Point, i int, from, to float64, unit string) error {
	drop := from - to
	if drop <= 0 {
		return nil
	}
	for _, r := range j.rules {
		if r.Type != AlertFuelDrop {
			continue
		}
		threshold, sign := r.ThresholdPercent, "%"
		if unit == FuelUnitLitres {
			threshold, sign = r.ThresholdL, " l"
		}
		if threshold == nil || drop < *threshold {
			continue
		}
		err := j.open(r, i, func() (string, map[string]any) {
			return "Vehicle " + j.v.Name + ": fuel fell from " + formatNum(round2(from)) + sign + " to " + formatNum(round2(to)) + sign + " while it stood.",
				map[string]any{"from": from, "to": to, "unit": unit, "drop": round2(drop), "at": pt.Timestamp,
					"latitude": pt.Latitude, "longitude": pt.Longitude}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// harshDerived judges the speed change between two consecutive forward
// points at most HarshGap apart against the harsh_driving rules'
// threshold_g: faster is hard_acceleration (speeding up) or hard_braking.
func (j *telemJudge) harshDerived(prev, pt *Point, i int) error {
	if prev.Speed == nil || pt.Speed == nil {
		return nil
	}
	dt := pt.Timestamp.Sub(prev.Timestamp)
	if dt <= 0 || dt > HarshGap {
		return nil
	}
	accel := (*pt.Speed - *prev.Speed) / 3.6 / dt.Seconds() // m/s²
	g := math.Abs(accel) / standardG
	typ := AlarmHardAcceleration
	if accel < 0 {
		typ = AlarmHardBraking
	}
	for _, r := range j.rules {
		if r.Type != AlertHarshDriving || g <= *r.ThresholdG || len(r.Types) > 0 && !slices.Contains(r.Types, typ) {
			continue
		}
		err := j.open(r, i, func() (string, map[string]any) {
			return "Vehicle " + j.v.Name + ": " + spoken(typ) + ", " + formatNum(*prev.Speed) + " to " + formatNum(*pt.Speed) +
					" km/h in " + formatNum(dt.Seconds()) + " s (" + strconv.FormatFloat(g, 'f', 2, 64) + " g).",
				map[string]any{"type": typ, "source": "derived", "g": round2(g), "threshold_g": *r.ThresholdG,
					"speed_from": *prev.Speed, "speed_to": *pt.Speed, "seconds": dt.Seconds(), "at": pt.Timestamp,
					"latitude": pt.Latitude, "longitude": pt.Longitude}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// powerBack resolves the open alerts of power_cut rules when the power is
// back above their threshold_v: point i reports volts above it and the
// power known before (was) was at or below it, or unknown. A point that
// opened the alert does not resolve it.
func (j *telemJudge) powerBack(i int, was *float64, volts float64) error {
	for _, r := range j.rules {
		if r.Type == AlertPowerCut && volts > *r.ThresholdV && (was == nil || *was <= *r.ThresholdV) {
			if err := j.resolve(r, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// latest is the rule's latest alert for the vehicle, read once.
func (j *telemJudge) latest(r *crule) (alertState, error) {
	if st, ok := j.state[r.n]; ok {
		return st, nil
	}
	st, err := latestState(j.tx, j.v.AccountID, r.ID, j.v.ID)
	if err != nil {
		return alertState{}, err
	}
	j.state[r.n] = st
	return st, nil
}

// open opens an alert of r for the vehicle, at point i, with the message
// and data describe gives, unless one is open or acknowledged.
func (j *telemJudge) open(r *crule, i int, describe func() (string, map[string]any)) error {
	st, err := j.latest(r)
	if err != nil || st.active {
		return err
	}
	msg, data := describe()
	if err := j.s.openRuleAlert(j.tx, r.AlertRule, j.v, msg, data, j.in.now); err != nil {
		return err
	}
	j.state[r.n] = alertState{found: true, active: true, created: j.in.now}
	if j.opened == nil {
		j.opened = map[int32]int{}
	}
	j.opened[r.n] = i
	return nil
}

// resolve resolves the open or acknowledged alert of r for the vehicle, if
// any and if point i did not open it.
func (j *telemJudge) resolve(r *crule, i int) error {
	if at, ok := j.opened[r.n]; ok && at == i {
		return nil
	}
	if st, ok := j.state[r.n]; ok && !st.active {
		return nil
	}
	last, err := j.tx.LatestAlert(j.v.AccountID, ruleKey(r.ID, j.v.ID))
	if ErrorCode(err) == CodeNotFound {
		j.state[r.n] = alertState{}
		return nil
	}
	if err != nil {
		return err
	}
	if !last.Status.Active() {
		j.state[r.n] = alertState{found: true, created: last.CreatedAt}
		return nil
	}
	now := j.in.now
	last.Status, last.ResolvedAt = AlertResolved, &now
	if err := j.tx.UpdateAlert(last); err != nil {
		return err
	}
	if err := j.s.emit(j.tx, last.AccountID, EventAlertResolved, now, last); err != nil {
		return err
	}
	j.v.AlertsVersion++
	j.state[r.n] = alertState{found: true, created: last.CreatedAt}
	delete(j.opened, r.n)
	return nil
}

// spoken is an alarm word as a message says it: "hard_braking" is
// "hard braking".
func spoken(alarm string) string { return strings.ReplaceAll(alarm, "_", " ") }

func attrNumber(a Attributes, name string) *float64 {
	if v, ok := a.Number(name); ok {
		return &v
	}
	return nil
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
