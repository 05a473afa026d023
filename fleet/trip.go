package fleet

import (
	"math"
	"slices"
	"time"
)

// TripStatus is in_progress while a trip may still grow, completed once it
// has ended.
type TripStatus string

const (
	TripInProgress TripStatus = "in_progress"
	TripCompleted  TripStatus = "completed"
)

// Trip rules beyond the status thresholds (StatusThresholds): a trip starts
// at a report at or above MovingSpeed and ends, at its last moving report,
// once the vehicle has been stationary for StopAfter (the same as status
// stopped) or silent for OfflineAfter (status offline).
const (
	// MaxTripSpeed is the speed a step between two reports may imply, in
	// km/h; a report past it is a GPS jump: ignored and counted.
	MaxTripSpeed = 300
	// TripReopenWindow is how far before the end of a vehicle's last
	// completed trip a late report may still change trips; older reports
	// are history only.
	TripReopenWindow = 24 * time.Hour
	// TripSliceSeconds is the width of the UTC time slices a trip keeps its
	// distance and moving time in, so that a summary splits it by day in
	// any time zone whose offset is a multiple of 15 minutes, without
	// reading its points.
	TripSliceSeconds = 15 * 60
)

// TripPlace is where and when a trip starts or ends.
type TripPlace struct {
	Latitude  float64   `json:"latitude"`
	Longitude float64   `json:"longitude"`
	Timestamp time.Time `json:"timestamp"`
}

// TripSlice is the part of a trip in the UTC slice of TripSliceSeconds
// starting at Start (unix seconds): the great-circle kilometres, moving
// seconds and idling seconds of its steps that end in it. A step is
// idling when neither of its reports is moving: the vehicle stood within
// the trip, for less than StopAfter (at a light, in a jam). Trips stored
// before slices kept it have IdleSeconds 0.
type TripSlice struct {
	Start         int64   `json:"s"`
	Km            float64 `json:"km"`
	MovingSeconds float64 `json:"mv"`
	IdleSeconds   float64 `json:"idl"`
}

// Trip is a vehicle's drive from the first moving report to the last one
// before a stop or a silence (see the rules above).
//
// DistanceKm is the sum of the great-circle distances between consecutive
// accepted reports, or the odometer difference when every accepted report
// carries an odometer reading, kept to the metre. MovingSeconds counts the steps between two
// reports of which at least one is moving; AvgSpeed is DistanceKm over that
// time. Points counts the accepted reports, IgnoredPoints the jumps.
type Trip struct {
	ID              string     `json:"trip_id"`
	AccountID       string     `json:"-"`
	VehicleID       string     `json:"vehicle_id"`
	Status          TripStatus `json:"status"`
	Start           TripPlace  `json:"start"`
	End             TripPlace  `json:"end"`
	DistanceKm      float64    `json:"distance_km"`
	DurationSeconds float64    `json:"duration_seconds"`
	MovingSeconds   float64    `json:"moving_seconds"`
	MaxSpeed        float64    `json:"max_speed"`
	AvgSpeed        float64    `json:"avg_speed"`
	StartOdometerKm *float64   `json:"start_odometer_km"`
	EndOdometerKm   *float64   `json:"end_odometer_km"`
	Points          int        `json:"points"`
	IgnoredPoints   int        `json:"ignored_points"`
	// DriverID is the driver the vehicle had when the trip started (API.md
	// §15), nil when none; it stays when the driver is deleted, as history.
	DriverID *string `json:"driver_id"`

	// What the trip tracking keeps between batches (stored, not shown).

	// GreatCircleKm is the great-circle sum, whatever DistanceKm is.
	GreatCircleKm float64 `json:"-"`
	// OdometerAll is whether every accepted report carried an odometer.
	OdometerAll bool `json:"-"`
	// LastAt is the vehicle's latest report seen by the trip, moving or not.
	LastAt time.Time `json:"-"`
	// StationarySince is the first report below the moving speed after the
	// last moving one, nil when the last report was moving.
	StationarySince *time.Time `json:"-"`
	// Slices split the trip by time (see TripSlice), in time order.
	Slices []TripSlice `json:"-"`
	// PendingIgnored counts the jumps among IgnoredPoints that came after
	// End while the vehicle stood: the stationary reports are read again
	// when it moves on, and their jumps counted then.
	PendingIgnored int `json:"-"`
}

// Clone returns a copy of t that shares no memory with it (its slices,
// and what its pointers point to).
func (t Trip) Clone() Trip {
	t.StartOdometerKm = clonePtr(t.StartOdometerKm)
	t.EndOdometerKm = clonePtr(t.EndOdometerKm)
	t.StationarySince = clonePtr(t.StationarySince)
	t.DriverID = clonePtr(t.DriverID)
	t.Slices = slices.Clone(t.Slices)
	return t
}

// Stop is the time a vehicle stood between two trips (at least StopAfter).
// End is nil while it lasts.
type Stop struct {
	VehicleID       string       `json:"vehicle_id"`
	Start           time.Time    `json:"start"`
	End             *time.Time   `json:"end"`
	DurationSeconds float64      `json:"duration_seconds"`
	Location        StopLocation `json:"location"`
}

// StopLocation is where a vehicle stood.
type StopLocation struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

func moving(p Point, th StatusThresholds) bool {
	return p.Speed != nil && *p.Speed >= th.MovingSpeed
}

// jump reports whether going from a to b implies more than MaxTripSpeed.
func jump(a, b Point, km float64) bool {
	h := b.Timestamp.Sub(a.Timestamp).Hours()
	return h <= 0 || km/h > MaxTripSpeed
}

// newTrip starts a trip at its first moving report.
func newTrip(accountID string, p Point) Trip {
	t := Trip{
		ID: NewID(PrefixTrip), AccountID: accountID, VehicleID: p.VehicleID, Status: TripInProgress,
		Start:       TripPlace{p.Latitude, p.Longitude, p.Timestamp},
		Points:      1,
		OdometerAll: p.OdometerKm != nil,
		LastAt:      p.Timestamp,
	}
	t.End = t.Start
	if p.Speed != nil {
		t.MaxSpeed = *p.Speed
	}
	if p.OdometerKm != nil {
		t.StartOdometerKm, t.EndOdometerKm = ptr(*p.OdometerKm), ptr(*p.OdometerKm)
	}
	t.finish()
	return t
}

// last returns the trip's last accepted report, as far as the next step
// needs it.
func (t *Trip) last() Point {
	return Point{Latitude: t.End.Latitude, Longitude: t.End.Longitude, Timestamp: t.End.Timestamp, OdometerKm: t.EndOdometerKm}
}

// extend adds the steps through pts (accepted or not, in time order, all
// after the trip's end) to the trip, which then ends at the last of them
// that is accepted. prevMoving tells whether the trip's end report was
// moving (it always is, except while folding).
func (t *Trip) extend(pts []Point, th StatusThresholds) {
	prev := t.last()
	prevMoving := true
	for _, p := range pts {
		km := DistanceM(prev.Latitude, prev.Longitude, p.Latitude, p.Longitude) / 1000
		if jump(prev, p, km) {
			t.IgnoredPoints++
			continue
		}
		mv := moving(p, th)
		secs := p.Timestamp.Sub(prev.Timestamp).Seconds()
		stepMoving := 0.0
		if mv || prevMoving {
			stepMoving = secs
		}
		t.GreatCircleKm += km
		t.MovingSeconds += stepMoving
		t.addSlice(p.Timestamp, km, stepMoving, secs-stepMoving)
		t.Points++
		if p.Speed != nil && *p.Speed > t.MaxSpeed {
			t.MaxSpeed = *p.Speed
		}
		if p.OdometerKm == nil {
			t.OdometerAll = false
		}
		t.End = TripPlace{p.Latitude, p.Longitude, p.Timestamp}
		t.EndOdometerKm = nil
		if p.OdometerKm != nil {
			t.EndOdometerKm = ptr(*p.OdometerKm)
		}
		prev, prevMoving = p, mv
	}
	t.finish()
}

func (t *Trip) addSlice(at time.Time, km, moving, idle float64) {
	start := at.Unix() - mod(at.Unix(), TripSliceSeconds)
	if n := len(t.Slices); n > 0 && t.Slices[n-1].Start == start {
		t.Slices[n-1].Km += km
		t.Slices[n-1].MovingSeconds += moving
		t.Slices[n-1].IdleSeconds += idle
		return
	}
	t.Slices = append(t.Slices, TripSlice{Start: start, Km: km, MovingSeconds: moving, IdleSeconds: idle})
}

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// finish sets the fields that follow from the others. The distance is kept
// to the metre (roundKm), as every distance the service answers.
func (t *Trip) finish() {
	t.DistanceKm = t.GreatCircleKm
	if t.OdometerAll && t.StartOdometerKm != nil && t.EndOdometerKm != nil {
		t.DistanceKm = math.Max(0, *t.EndOdometerKm-*t.StartOdometerKm)
	}
	t.DistanceKm = roundKm(t.DistanceKm)
	t.DurationSeconds = t.End.Timestamp.Sub(t.Start.Timestamp).Seconds()
	t.AvgSpeed = 0
	if t.MovingSeconds > 0 {
		t.AvgSpeed = t.DistanceKm / (t.MovingSeconds / 3600)
	}
}

// over reports whether an in-progress trip has ended by time at (the
// vehicle stationary for StopAfter, or silent for OfflineAfter).
func (t *Trip) over(at time.Time, th StatusThresholds) bool {
	return at.Sub(t.LastAt) >= th.OfflineAfter ||
		t.StationarySince != nil && at.Sub(*t.StationarySince) >= th.StopAfter
}

// kmScale is what the trip's slices are multiplied by to sum to DistanceKm
// (1 unless the odometer gave the distance).
func (t *Trip) kmScale() float64 {
	if t.GreatCircleKm > 0 && t.DistanceKm != t.GreatCircleKm {
		return t.DistanceKm / t.GreatCircleKm
	}
	return 1
}

// tripTracker segments one vehicle's reports into trips, incrementally: it
// is fed reports in time order with add, and holds the open trip.
type tripTracker struct {
	th        StatusThresholds
	accountID string
	// between returns the stored reports of the vehicle strictly between
	// two times (the stationary reports after the open trip's end).
	between func(from, to time.Time) ([]Point, error)
	// driver returns the driver of a trip that starts at start ("" for
	// none); nil: trips start without one.
	driver func(start time.Time) (string, error)
	open   *Trip
	// wentOn is whether open is the stored trip in progress the tracker
	// went on with (changed[0] once touched).
	wentOn bool
	// last is the vehicle's last completed trip: the clock may have
	// completed it while its reports were still on their way (see add).
	last *Trip
	// changed are the trips started, changed or completed, in time order;
	// started are the ids of those started here.
	changed []*Trip
	started map[string]bool
}

func (k *tripTracker) touch(t *Trip) {
	for _, c := range k.changed {
		if c == t {
			return
		}
	}
	k.changed = append(k.changed, t)
}

// reset readies the tracker for another vehicle.
func (k *tripTracker) reset() {
	k.open, k.last, k.changed, k.wentOn, k.driver = nil, nil, k.changed[:0], false, nil
	clear(k.started)
}

// close completes the open trip.
func (k *tripTracker) close() {
	if k.open == nil {
		return
	}
	k.open.Status = TripCompleted
	k.touch(k.open)
	k.last, k.open = k.open, nil
}

// add feeds the next report, later than every report fed before.
func (k *tripTracker) add(p Point) error {
	if t := k.open; t != nil && t.over(p.Timestamp, k.th) {
		k.close()
	}
	mv := moving(p, k.th)
	if l := k.last; k.open == nil && l != nil && p.Timestamp.After(l.LastAt) && !l.over(p.Timestamp, k.th) {
		// Completed by the clock, not by its reports: a report that
		// arrives late but within the thresholds goes on with it.
		l.Status = TripInProgress
		k.open, k.last = l, nil
		k.wentOn = len(k.changed) == 0
		k.touch(l)
	}
	t := k.open
	if t == nil {
		if mv {
			nt := newTrip(k.accountID, p)
			if k.driver != nil {
				id, err := k.driver(p.Timestamp)
				if err != nil {
					return err
				}
				if id != "" {
					nt.DriverID = &id
				}
			}
			k.open = &nt
			k.started[nt.ID] = true
			k.touch(k.open)
		}
		return nil
	}
	if !mv {
		t.LastAt = p.Timestamp
		if t.StationarySince == nil {
			at := p.Timestamp
			t.StationarySince = &at
		}
		k.touch(t)
		return nil
	}
	if t.StationarySince == nil { // moving on
		last := t.last()
		if jump(last, p, DistanceM(last.Latitude, last.Longitude, p.Latitude, p.Longitude)/1000) {
			t.IgnoredPoints++ // before any stationary report: never read again
		} else {
			t.extend([]Point{p}, k.th)
		}
		t.LastAt = p.Timestamp
		k.touch(t)
		return nil
	}
	// Moving again after standing: the stationary reports since then join
	// the trip, if this report is no jump. (Reports between End and
	// StationarySince are jumps, counted already.)
	tail, err := k.between(t.StationarySince.Add(-time.Microsecond), p.Timestamp)
	if err != nil {
		return err
	}
	grown := *t
	grown.Slices = append([]TripSlice(nil), t.Slices...)
	grown.IgnoredPoints -= t.PendingIgnored
	grown.extend(append(tail, p), k.th)
	if !grown.End.Timestamp.Equal(p.Timestamp) { // p is a jump
		t.IgnoredPoints++
		t.PendingIgnored++
		t.LastAt = p.Timestamp
		k.touch(t)
		return nil
	}
	grown.LastAt, grown.StationarySince, grown.PendingIgnored = p.Timestamp, nil, 0
	*t = grown
	k.touch(t)
	return nil
}

// SegmentTrips splits a vehicle's reports (in time order) into trips by the
// rules above, as the ingest does report by report; a trip still open at
// the last report is in_progress unless now shows it over. It is the
// reference the incremental tracking is tested against.
func SegmentTrips(accountID string, pts []Point, now time.Time, th StatusThresholds) []Trip {
	k := &tripTracker{th: th.orDefault(), accountID: accountID, started: map[string]bool{}}
	k.between = func(from, to time.Time) ([]Point, error) { return pointsBetween(pts, from, to), nil }
	for _, p := range pts {
		_ = k.add(p)
	}
	if k.open != nil && k.open.over(now, k.th) {
		k.close()
	}
	out := make([]Trip, len(k.changed))
	for i, t := range k.changed {
		out[i] = *t
	}
	return out
}

// pointsBetween returns the points of pts (in time order) strictly between
// from and to.
func pointsBetween(pts []Point, from, to time.Time) []Point {
	var out []Point
	for _, p := range pts {
		if p.Timestamp.After(from) && p.Timestamp.Before(to) {
			out = append(out, p)
		}
	}
	return out
}
