package fleet

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// farFuture is later than any report.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// tripInput is what a batch stored of one vehicle: its reports (in time
// order), and its latest report before the batch (nil if none).
type tripInput struct {
	vehicleID string
	newest    *time.Time
	stored    []Point
}

// tripWrites are the trips a batch changed and the events they call for,
// written together at its end.
type tripWrites struct {
	puts   []Trip
	events []tripEvent
}

type tripEvent struct {
	typ  string
	trip Trip
}

func (w *tripWrites) flush(s *Service, tx tripWriteTx, now time.Time) error {
	if len(w.puts) > 0 {
		if err := tx.PutTrips(w.puts); err != nil {
			return err
		}
	}
	for _, e := range w.events {
		if err := s.emit(tx, e.trip.AccountID, e.typ, now, e.trip); err != nil {
			return err
		}
	}
	return nil
}

// trackTrips updates the trips of a batch's vehicles with the reports it
// stored, inside the batch's transaction: one read of the vehicles' latest
// trips, one write of the trips changed. Reports after a vehicle's newest
// extend its open trip report by report; earlier ones recompute the trips
// they may change from the stored reports (retrack), unless they are older
// than the end of the vehicle's last trip by more than TripReopenWindow.
func (s *Service) trackTrips(tx trackTx, accountID string, in []tripInput, now time.Time, th StatusThresholds) error {
	if s.noTrips || len(in) == 0 {
		return nil
	}
	ids := make([]string, 0, len(in))
	for _, v := range in {
		if len(v.stored) > 0 {
			ids = append(ids, v.vehicleID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	latest, err := tx.LatestTrips(ids)
	if err != nil {
		return err
	}
	w := tripWrites{puts: make([]Trip, 0, len(ids))}
	k := s.newTracker(accountID, th)
	for _, v := range in {
		if len(v.stored) == 0 {
			continue
		}
		last, hasLast := latest[v.vehicleID]
		stored := v.stored
		fwd := 0
		if v.newest != nil {
			for fwd < len(stored) && !stored[fwd].Timestamp.After(*v.newest) {
				fwd++
			}
		}
		if fwd > 0 { // late reports
			ref := *v.newest
			if hasLast {
				ref = last.End.Timestamp
			}
			cutoff := ref.Add(-TripReopenWindow)
			if i := slices.IndexFunc(stored[:fwd], func(p Point) bool { return !p.Timestamp.Before(cutoff) }); i >= 0 {
				if err := s.retrack(tx, accountID, v.vehicleID, stored[i].Timestamp, *v.newest, now, th, &w); err != nil {
					return err
				}
				continue
			}
			stored = stored[fwd:] // too old to change trips: history only
		}
		k.reset()
		vehicleID := v.vehicleID
		k.between = func(from, to time.Time) ([]Point, error) {
			return allPoints(tx, vehicleID, from.Add(time.Microsecond), to.Add(-time.Microsecond))
		}
		k.driver = vehicleDriver(tx, accountID, vehicleID, time.Time{})
		switch {
		case hasLast && last.Status == TripInProgress:
			k.open, k.wentOn = &last, true
		case hasLast:
			k.last = &last
		}
		for _, p := range stored {
			if err := k.add(p); err != nil {
				return err
			}
		}
		if k.open != nil && k.open.over(now, th) {
			k.close()
		}
		if err := s.saveTrips(tx, k, nil, &w); err != nil {
			return err
		}
	}
	return w.flush(s, tx, now)
}

// vehicleDriver returns what a trip takes as its driver when it starts:
// the vehicle's driver as tx has it (the batch has moved the vehicle, and
// assigned its driver, by then), read once, for a trip that starts after
// newest; none for one that starts earlier (found in late reports: who
// drove then is not known).
func vehicleDriver(tx VehicleTx, accountID, vehicleID string, newest time.Time) func(time.Time) (string, error) {
	read, driver := false, ""
	return func(start time.Time) (string, error) {
		if !start.After(newest) {
			return "", nil
		}
		if !read {
			v, err := tx.Vehicle(accountID, vehicleID)
			if err != nil {
				return "", err
			}
			read, driver = true, v.DriverID
		}
		return driver, nil
	}
}

// retrack recomputes a vehicle's trips from its stored reports from first
// on, and from the start of any trip a report at first could join. A
// recomputed trip keeps the driver of the trip whose id it takes; a new
// one takes the vehicle's if it starts after newest, the vehicle's latest
// report before the batch (vehicleDriver).
func (s *Service) retrack(tx retrackTx, accountID, vehicleID string, first, newest, now time.Time, th StatusThresholds, w *tripWrites) error {
	old, err := tx.VehicleTrips(vehicleID, first.Add(-th.OfflineAfter), farFuture, time.Time{}, 1<<30)
	if err != nil {
		return err
	}
	bound := first
	if len(old) > 0 && old[0].Start.Timestamp.Before(bound) {
		bound = old[0].Start.Timestamp
	}
	pts, err := allPoints(tx, vehicleID, bound, farFuture)
	if err != nil {
		return err
	}
	k := s.newTracker(accountID, th)
	k.between = func(from, to time.Time) ([]Point, error) { return pointsBetween(pts, from, to), nil }
	k.driver = vehicleDriver(tx, accountID, vehicleID, newest)
	for _, p := range pts {
		if err := k.add(p); err != nil {
			return err
		}
	}
	if k.open != nil && k.open.over(now, th) {
		k.close()
	}
	return s.saveTrips(tx, k, old, w)
}

func (s *Service) newTracker(accountID string, th StatusThresholds) *tripTracker {
	return &tripTracker{th: th, accountID: accountID, started: map[string]bool{}}
}

// saveTrips adds the trips the tracker changed, and their events, to w.
// The trips recomputed replace old: a new trip takes the id of the first
// old one its span meets, and old trips left over are deleted (at once, as
// a new trip may start where one of them did).
func (s *Service) saveTrips(tx TripTx, k *tripTracker, old []Trip, w *tripWrites) error {
	if old == nil { // the hot path: the open trip went on, or new ones began
		for i, t := range k.changed {
			w.puts = append(w.puts, *t)
			started := k.started[t.ID]
			if started {
				w.events = append(w.events, tripEvent{EventTripStarted, *t})
			}
			// A trip the batch went on with, or began, that it completed.
			if t.Status == TripCompleted && (started || i == 0 && k.wentOn) {
				w.events = append(w.events, tripEvent{EventTripCompleted, *t})
			}
		}
		return nil
	}
	used := map[string]bool{}
	wasOpen := map[string]bool{}
	for _, o := range old {
		wasOpen[o.ID] = o.Status == TripInProgress
	}
	for _, t := range k.changed {
		if old != nil {
			for _, o := range old {
				if !used[o.ID] && !o.Start.Timestamp.After(t.End.Timestamp) && !o.End.Timestamp.Before(t.Start.Timestamp) {
					delete(k.started, t.ID)
					t.ID = o.ID
					t.DriverID = clonePtr(o.DriverID)
					break
				}
			}
			if _, reused := wasOpen[t.ID]; !reused {
				k.started[t.ID] = true
			}
		}
		used[t.ID] = true
	}
	for _, o := range old {
		if !used[o.ID] {
			if err := tx.DeleteTrip(o.VehicleID, o.ID); err != nil {
				return err
			}
		}
	}
	for _, t := range k.changed {
		w.puts = append(w.puts, *t)
		if k.started[t.ID] {
			w.events = append(w.events, tripEvent{EventTripStarted, *t})
		}
		if t.Status == TripCompleted && (k.started[t.ID] || wasOpen[t.ID]) {
			w.events = append(w.events, tripEvent{EventTripCompleted, *t})
		}
	}
	return nil
}

// closeTrip completes the vehicle's open trip if the clock shows it over
// (the status sweep calls it as a vehicle turns stopped or offline).
func (s *Service) closeTrip(tx tripWriteTx, vehicleID string, now time.Time, th StatusThresholds) error {
	if s.noTrips {
		return nil
	}
	latest, err := tx.LatestTrips([]string{vehicleID})
	t, ok := latest[vehicleID]
	if err != nil || !ok || t.Status != TripInProgress || !t.over(now, th) {
		return err
	}
	k := s.newTracker(t.AccountID, th)
	k.open, k.wentOn = &t, true
	k.close()
	var w tripWrites
	if err := s.saveTrips(tx, k, nil, &w); err != nil {
		return err
	}
	return w.flush(s, tx, now)
}

// allPoints returns every stored report of the vehicle from from to to.
func allPoints(tx LocationTx, vehicleID string, from, to time.Time) ([]Point, error) {
	var out []Point
	for !from.After(to) {
		pts, err := tx.Points(vehicleID, from, to, MaxHistoryLimit)
		if err != nil {
			return nil, err
		}
		out = append(out, pts...)
		if len(pts) < MaxHistoryLimit {
			break
		}
		from = pts[len(pts)-1].Timestamp.Add(time.Microsecond)
	}
	return out, nil
}

// TripQuery asks for a vehicle's trips or stops: those that meet [From, To]
// (default: the last 24 hours, reaching back no further than the plan's
// history), a page at a time.
type TripQuery struct {
	From, To *time.Time
	Cursor   string
	Limit    int // default 50, at most 500
}

// window returns the time range a query asks for, clamped to the plan's
// reach, and the start time its cursor resumes after.
func (q TripQuery) window(p Principal, now time.Time, cursorPrefix string) (from, to, after time.Time, limit int, err error) {
	limit = q.Limit
	if limit == 0 {
		limit = DefaultPageLimit
	}
	if limit < 1 || limit > MaxPageLimit {
		return from, to, after, 0, Errorf(CodeInvalidRequest, "limit must be between 1 and %d.", MaxPageLimit)
	}
	from, to, err = reportWindow(q.From, q.To, p, now)
	if err != nil {
		return
	}
	if q.Cursor != "" {
		after, err = microsAfter(q.Cursor, cursorPrefix)
	}
	return
}

// microsAfter returns the time a cursor of microsCursor(prefix, t) resumes
// after.
func microsAfter(cursor, prefix string) (time.Time, error) {
	id, ok := DecodeCursor(cursor)
	micros, err := strconv.ParseInt(strings.TrimPrefix(id, prefix), 10, 64)
	if !ok || !strings.HasPrefix(id, prefix) || err != nil {
		return time.Time{}, Errorf(CodeInvalidRequest, "The cursor is not valid.")
	}
	return time.UnixMicro(micros).UTC(), nil
}

// reportWindow is [from, to] of a report: the last 24 hours by default,
// from no earlier than the plan's history reach.
func reportWindow(qFrom, qTo *time.Time, p Principal, now time.Time) (from, to time.Time, err error) {
	to = now
	if qTo != nil {
		to = Timestamp(*qTo)
	}
	from = to.Add(-DefaultHistoryWindow)
	if qFrom != nil {
		from = Timestamp(*qFrom)
	}
	if from.After(to) {
		return from, to, Errorf(CodeInvalidRequest, "from must not be after to.")
	}
	if reach := now.Add(-p.Account.Plan.Limits().HistoryReach); from.Before(reach) {
		from = reach
	}
	return from, to, nil
}

func microsCursor(prefix string, t time.Time) string {
	return prefix + strconv.FormatInt(t.UnixMicro(), 10)
}

// ListTrips returns a page of a vehicle's trips that meet the query's time
// range, in start order.
func (s *Service) ListTrips(ctx context.Context, p Principal, vehicleID string, q TripQuery) (List[Trip], error) {
	if err := p.allow("ListTrips"); err != nil {
		return List[Trip]{}, err
	}
	from, to, after, limit, err := q.window(p, s.Now(), "t")
	if err != nil {
		return List[Trip]{}, err
	}
	var trips []Trip
	err = s.view(ctx, func(tx Tx) error {
		if _, err := s.getVehicle(tx, p, vehicleID); err != nil {
			return err
		}
		if from.After(to) {
			return nil
		}
		var err error
		trips, err = tx.VehicleTrips(vehicleID, from, to, after, limit+1)
		return err
	})
	if err != nil {
		return List[Trip]{}, err
	}
	return finish(trips, limit, func(t Trip) string { return microsCursor("t", t.Start.Timestamp) }), nil
}

// TripDetail is a trip with, when asked for, a page of its reports from
// start to end.
type TripDetail struct {
	Trip
	// Locations are the page of the trip's reports (with points only).
	Locations []Point `json:"locations,omitempty"`
	// PointsPagination says whether the trip has reports after Locations,
	// and the cursor of the next page (with points only).
	PointsPagination *Pagination `json:"points_pagination,omitempty"`
}

// Pagination is where a page ends: whether more follow, and the cursor of
// the next page (nil on the last).
type Pagination struct {
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

// TripPointsQuery asks for a page of a trip's reports.
type TripPointsQuery struct {
	// Cursor resumes after the page it ends: a trip's NextCursor, or a
	// location history's (the two are of one form).
	Cursor string
	// Limit is the most reports a page holds: default and at most
	// MaxHistoryLimit.
	Limit int
}

// Trip returns one of the account's trips; with points, the first page of
// its stored reports from its start to its end, as TripPoints returns it.
func (s *Service) Trip(ctx context.Context, p Principal, tripID string, points bool) (TripDetail, error) {
	if err := p.allow("Trip"); err != nil {
		return TripDetail{}, err
	}
	if points {
		return s.tripDetail(ctx, p, tripID, &TripPointsQuery{})
	}
	return s.tripDetail(ctx, p, tripID, nil)
}

// TripPoints returns one of the account's trips with a page of its stored
// reports from its start to its end (GPS jumps among them included), in
// time order: at most q.Limit, MaxHistoryLimit by default and at most, so
// that no trip, however long, makes one answer of unbounded size.
// PointsPagination holds the cursor of the next page.
func (s *Service) TripPoints(ctx context.Context, p Principal, tripID string, q TripPointsQuery) (TripDetail, error) {
	if err := p.allow("TripPoints"); err != nil {
		return TripDetail{}, err
	}
	return s.tripDetail(ctx, p, tripID, &q)
}

// tripDetail reads a trip and, unless q is nil, a page of its reports, in
// one view of the store.
func (s *Service) tripDetail(ctx context.Context, p Principal, tripID string, q *TripPointsQuery) (TripDetail, error) {
	limit, after := 0, time.Time{}
	if q != nil {
		limit = q.Limit
		if limit == 0 {
			limit = MaxHistoryLimit
		}
		if limit < 1 || limit > MaxHistoryLimit {
			return TripDetail{}, Errorf(CodeInvalidRequest, "points_limit must be between 1 and %d.", MaxHistoryLimit)
		}
		if q.Cursor != "" {
			var err error
			if after, err = microsAfter(q.Cursor, "t"); err != nil {
				return TripDetail{}, err
			}
		}
	}
	var d TripDetail
	err := s.view(ctx, func(tx Tx) error {
		if !ValidID(PrefixTrip, tripID) {
			return NotFound("trip", tripID)
		}
		t, err := tx.Trip(p.Account.ID, tripID)
		if err != nil {
			return err
		}
		d.Trip = t
		if q == nil {
			return nil
		}
		from := t.Start.Timestamp
		if next := after.Add(time.Microsecond); next.After(from) {
			from = next
		}
		var pts []Point
		if !from.After(t.End.Timestamp) {
			if pts, err = tx.Points(t.VehicleID, from, t.End.Timestamp, limit+1); err != nil {
				return err
			}
		}
		l := finish(pts, limit, func(pt Point) string { return microsCursor("t", pt.Timestamp) })
		d.Locations = l.Items
		d.PointsPagination = &Pagination{HasMore: l.HasMore}
		if l.NextCursor != "" {
			d.PointsPagination.NextCursor = &l.NextCursor
		}
		return nil
	})
	return d, err
}

// ListStops returns a page of a vehicle's stops that meet the query's time
// range, in start order: the times between two of its trips, and after its
// last completed trip (End nil), at least StopAfter long.
func (s *Service) ListStops(ctx context.Context, p Principal, vehicleID string, q TripQuery) (List[Stop], error) {
	if err := p.allow("ListStops"); err != nil {
		return List[Stop]{}, err
	}
	now := s.Now()
	from, to, after, limit, err := q.window(p, now, "s")
	if err != nil {
		return List[Stop]{}, err
	}
	th := s.opts.Thresholds.orDefault()
	var trips []Trip
	err = s.view(ctx, func(tx Tx) error {
		if _, err := s.getVehicle(tx, p, vehicleID); err != nil {
			return err
		}
		if from.After(to) {
			return nil
		}
		trips, err = stopTrips(tx, vehicleID, from, to)
		return err
	})
	if err != nil {
		return List[Stop]{}, err
	}
	var stops []Stop
	for _, st := range stopsOf(trips, now, th) {
		if st.Start.After(after) && !st.Start.After(to) && (st.End == nil || !st.End.Before(from)) {
			stops = append(stops, st)
		}
	}
	if len(stops) > limit+1 {
		stops = stops[:limit+1]
	}
	return finish(stops, limit, func(st Stop) string { return microsCursor("s", st.Start) }), nil
}

// stopTrips returns the trips that bound the vehicle's stops meeting
// [from, to]: those meeting it, the one before and the one after.
func stopTrips(tx TripTx, vehicleID string, from, to time.Time) ([]Trip, error) {
	trips, err := tx.VehicleTrips(vehicleID, from, to, time.Time{}, 1<<30)
	if err != nil {
		return nil, err
	}
	if len(trips) == 0 || trips[0].Start.Timestamp.After(from) {
		before, ok, err := tx.LastTripBefore(vehicleID, from)
		if err != nil {
			return nil, err
		}
		if ok && (len(trips) == 0 || before.ID != trips[0].ID) {
			trips = append([]Trip{before}, trips...)
		}
	}
	after := to
	if n := len(trips); n > 0 && trips[n-1].Start.Timestamp.After(after) {
		after = trips[n-1].Start.Timestamp
	}
	next, err := tx.VehicleTrips(vehicleID, after, farFuture, after, 1)
	if err != nil {
		return nil, err
	}
	return append(trips, next...), nil
}

// stopsOf returns the stops between consecutive trips (in start order) and
// after the last one, if completed.
func stopsOf(trips []Trip, now time.Time, th StatusThresholds) []Stop {
	var out []Stop
	for i, t := range trips {
		if t.Status != TripCompleted {
			continue
		}
		st := Stop{VehicleID: t.VehicleID, Start: t.End.Timestamp, Location: StopLocation{t.End.Latitude, t.End.Longitude}}
		end := now
		if i+1 < len(trips) {
			e := trips[i+1].Start.Timestamp
			st.End, end = &e, e
		}
		st.DurationSeconds = end.Sub(st.Start).Seconds()
		if end.Sub(st.Start) >= th.StopAfter || st.End == nil {
			out = append(out, st)
		}
	}
	return out
}

// Summary grouping.
const (
	GroupByDay     = "day"
	GroupByVehicle = "vehicle"
	// GroupByDriver is the summary by driver (DriverSummary): a row per
	// driver and day.
	GroupByDriver = "driver"
)

// Summary page limits.
const (
	DefaultSummaryLimit = 1_000
	MaxSummaryLimit     = 10_000
)

// SummaryQuery asks for the summary report.
type SummaryQuery struct {
	From, To  *time.Time // default: the last 24 hours, within the plan's reach
	VehicleID string     // "" for every vehicle
	GroupBy   string     // day (default) or vehicle; driver for DriverSummary
	TZ        string     // IANA zone of the days; default UTC
	Cursor    string
	Limit     int // default 1,000, at most 10,000
}

// SummaryRow is one vehicle's (and with group_by=day, one day's) figures;
// DistanceKm is kept to the metre.
type SummaryRow struct {
	VehicleID      string     `json:"vehicle_id"`
	Day            string     `json:"day,omitempty"`
	DistanceKm     float64    `json:"distance_km"`
	Trips          int        `json:"trips"`
	DrivingSeconds float64    `json:"driving_seconds"`
	IdlingSeconds  float64    `json:"idling_seconds"`
	StoppedSeconds float64    `json:"stopped_seconds"`
	MaxSpeed       float64    `json:"max_speed"`
	FirstDeparture *time.Time `json:"first_departure"`
	LastArrival    *time.Time `json:"last_arrival"`
}

// DriverSummaryRow is one driver's figures of one day (in the query's
// zone): the trips that started with the driver assigned (Trip.DriverID),
// whichever vehicle. DriverID is nil for the trips that started with none.
// DistanceKm is kept to the metre.
type DriverSummaryRow struct {
	DriverID       *string    `json:"driver_id"`
	Day            string     `json:"day"`
	DistanceKm     float64    `json:"distance_km"`
	Trips          int        `json:"trips"`
	DrivingSeconds float64    `json:"driving_seconds"`
	IdlingSeconds  float64    `json:"idling_seconds"`
	MaxSpeed       float64    `json:"max_speed"`
	FirstDeparture *time.Time `json:"first_departure"`
	LastArrival    *time.Time `json:"last_arrival"`
}

// summaryRequest is a summary query checked: its zone, page and range.
type summaryRequest struct {
	loc      *time.Location
	limit    int
	after    string // the key the cursor resumes after; "" for the first page
	from, to time.Time
}

// request checks what every grouping of the summary shares: the
// zone, the page, the cursor (prefix, and its key) and the time range.
func (q SummaryQuery) request(p Principal, now time.Time, cursorPrefix string) (summaryRequest, error) {
	r := summaryRequest{loc: time.UTC}
	if q.TZ != "" {
		l, err := time.LoadLocation(q.TZ)
		if err != nil || q.TZ == "Local" {
			return r, Errorf(CodeInvalidRequest, "tz must be an IANA time zone such as Europe/Berlin.")
		}
		r.loc = l
	}
	r.limit = q.Limit
	if r.limit == 0 {
		r.limit = DefaultSummaryLimit
	}
	if r.limit < 1 || r.limit > MaxSummaryLimit {
		return r, Errorf(CodeInvalidRequest, "limit must be between 1 and %d.", MaxSummaryLimit)
	}
	if q.Cursor != "" {
		id, ok := DecodeCursor(q.Cursor)
		if !ok || !strings.HasPrefix(id, cursorPrefix) {
			return r, Errorf(CodeInvalidRequest, "The cursor is not valid.")
		}
		r.after = id[len(cursorPrefix):]
	}
	var err error
	if r.from, r.to, err = reportWindow(q.From, q.To, p, now); err != nil {
		return r, err
	}
	if q.VehicleID != "" && !ValidID(PrefixVehicle, q.VehicleID) {
		return r, notFoundVehicle(q.VehicleID)
	}
	return r, nil
}

// summaryPage returns the page of rows (sorted by key) after r.after.
func summaryPage[T any](rows []T, r summaryRequest, key func(T) string, cursorPrefix string) List[T] {
	if r.after != "" {
		i, _ := slices.BinarySearchFunc(rows, r.after, func(row T, k string) int { return strings.Compare(key(row), k) })
		for i < len(rows) && key(rows[i]) <= r.after {
			i++
		}
		rows = rows[i:]
	}
	if len(rows) > r.limit+1 {
		rows = rows[:r.limit+1]
	}
	return finish(rows, r.limit, func(row T) string { return cursorPrefix + key(row) })
}

// Summary reports, per vehicle (and day in q.TZ), the distance driven, the
// trips started, driving, idling and stopped time, the top speed and the
// first departure and last arrival within [From, To]. It reads stored
// trips only, never reports: a trip's distance, moving and idling time
// fall into days by its 15-minute slices (TripSlice), its stops by the
// clock. Rows exist for the vehicles with a trip in the range, ordered by
// vehicle then day. GroupBy driver is DriverSummary's, refused here.
func (s *Service) Summary(ctx context.Context, p Principal, q SummaryQuery) (List[SummaryRow], error) {
	if err := p.allow("Summary"); err != nil {
		return List[SummaryRow]{}, err
	}
	now := s.Now()
	switch q.GroupBy {
	case "":
		q.GroupBy = GroupByDay
	case GroupByDay, GroupByVehicle:
	default:
		return List[SummaryRow]{}, Errorf(CodeInvalidRequest, "group_by must be one of day, vehicle, driver.")
	}
	r, err := q.request(p, now, "r")
	if err != nil {
		return List[SummaryRow]{}, err
	}
	th := s.opts.Thresholds.orDefault()
	var trips []Trip
	before := map[string]bool{} // vehicles with a trip before from
	err = s.view(ctx, func(tx Tx) error {
		if q.VehicleID != "" {
			if _, err := s.getVehicle(tx, p, q.VehicleID); err != nil {
				return err
			}
		}
		if r.from.After(r.to) {
			return nil
		}
		var err error
		if trips, err = tx.AccountTrips(p.Account.ID, q.VehicleID, r.from, r.to); err != nil {
			return err
		}
		for i, t := range trips {
			if i > 0 && trips[i-1].VehicleID == t.VehicleID || !t.Start.Timestamp.After(r.from) {
				continue
			}
			_, ok, err := tx.LastTripBefore(t.VehicleID, t.Start.Timestamp)
			if err != nil {
				return err
			}
			before[t.VehicleID] = ok
		}
		return nil
	})
	if err != nil {
		return List[SummaryRow]{}, err
	}
	rows := summarize(trips, before, r.from, r.to, now, q.GroupBy == GroupByDay, r.loc, th)
	return summaryPage(rows, r, SummaryRow.key, "r"), nil
}

func (r SummaryRow) key() string { return r.VehicleID + "/" + r.Day }

// DriverSummary reports, per driver and day in q.TZ, the distance driven,
// the trips started, driving and idling time, the top speed and the first
// departure and last arrival within [From, To], as Summary does per
// vehicle: a trip counts for the driver it started with (Trip.DriverID),
// whichever vehicle it was, a deleted driver's trips under their id still,
// and the trips that started with no driver in rows whose DriverID is nil.
// Rows are ordered by driver id, those of no driver last, then by day.
// q.VehicleID narrows it to that vehicle's trips; q.GroupBy is ignored.
func (s *Service) DriverSummary(ctx context.Context, p Principal, q SummaryQuery) (List[DriverSummaryRow], error) {
	if err := p.allow("DriverSummary"); err != nil {
		return List[DriverSummaryRow]{}, err
	}
	now := s.Now()
	r, err := q.request(p, now, "d")
	if err != nil {
		return List[DriverSummaryRow]{}, err
	}
	var trips []Trip
	err = s.view(ctx, func(tx Tx) error {
		if q.VehicleID != "" {
			if _, err := s.getVehicle(tx, p, q.VehicleID); err != nil {
				return err
			}
		}
		if r.from.After(r.to) {
			return nil
		}
		var err error
		trips, err = tx.AccountTrips(p.Account.ID, q.VehicleID, r.from, r.to)
		return err
	})
	if err != nil {
		return List[DriverSummaryRow]{}, err
	}
	days := newDayClock(true, r.loc)
	rows := map[rowKey]*SummaryRow{}
	var order []*SummaryRow
	touched := make([]*SummaryRow, 0, 4)
	for i := range trips {
		t := &trips[i]
		who := noDriverKey
		if t.DriverID != nil {
			who = *t.DriverID
		}
		touched = tallyTrip(t, r.from, r.to, func(at time.Time) *SummaryRow {
			k := rowKey{who, days.of(at)}
			row := rows[k]
			if row == nil {
				row = &SummaryRow{VehicleID: who, Day: days.name(k.day)}
				rows[k], order = row, append(order, row)
			}
			return row
		}, touched)
	}
	out := make([]DriverSummaryRow, len(order))
	for i, row := range order {
		out[i] = DriverSummaryRow{Day: row.Day, DistanceKm: roundKm(row.DistanceKm), Trips: row.Trips,
			DrivingSeconds: row.DrivingSeconds, IdlingSeconds: row.IdlingSeconds, MaxSpeed: row.MaxSpeed,
			FirstDeparture: row.FirstDeparture, LastArrival: row.LastArrival}
		if row.VehicleID != noDriverKey {
			out[i].DriverID = ptr(row.VehicleID)
		}
	}
	slices.SortFunc(out, func(a, b DriverSummaryRow) int { return strings.Compare(a.key(), b.key()) })
	return summaryPage(out, r, DriverSummaryRow.key, "d"), nil
}

// noDriverKey stands for no driver in the summary's keys and cursors: it
// sorts after every driver id.
const noDriverKey = "~"

func (r DriverSummaryRow) key() string {
	if r.DriverID == nil {
		return noDriverKey + "/" + r.Day
	}
	return *r.DriverID + "/" + r.Day
}

// rowKey is a summary row's: whose (a vehicle's or a driver's id) and
// which day (days since 1970-01-01 in the zone; 0 unless by day).
type rowKey struct {
	who string
	day int64
}

// dayClock tells the day of a time in a zone, cached for the run of times
// within one day (a trip's slices come in time order).
type dayClock struct {
	byDay            bool
	loc              *time.Location
	dayStart, dayEnd time.Time
	dayNum           int64
}

func newDayClock(byDay bool, loc *time.Location) *dayClock { return &dayClock{byDay: byDay, loc: loc} }

// of returns the day of at (0 unless by day).
func (c *dayClock) of(at time.Time) int64 {
	if !c.byDay {
		return 0
	}
	if at.Before(c.dayStart) || !at.Before(c.dayEnd) {
		y, m, d := at.In(c.loc).Date()
		c.dayStart = time.Date(y, m, d, 0, 0, 0, 0, c.loc)
		c.dayEnd = time.Date(y, m, d+1, 0, 0, 0, 0, c.loc)
		c.dayNum = time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	}
	return c.dayNum
}

// name is a day's YYYY-MM-DD ("" unless by day).
func (c *dayClock) name(day int64) string {
	if !c.byDay {
		return ""
	}
	return time.Unix(day*86400, 0).UTC().Format(time.DateOnly)
}

// tallyTrip adds what of a trip falls within [from, to] to the rows rowAt
// gives for a time: its slices' distance, moving and idling time, its
// start (a trip, the first departure), its end when completed (the last
// arrival), and its top speed to every row it touched. touched is scratch
// space, returned for the next call.
func tallyTrip(t *Trip, from, to time.Time, rowAt func(time.Time) *SummaryRow, touched []*SummaryRow) []*SummaryRow {
	sliceFrom := from.Truncate(TripSliceSeconds * time.Second)
	scale := t.kmScale()
	touched = touched[:0]
	touch := func(r *SummaryRow) {
		if !slices.Contains(touched, r) {
			touched = append(touched, r)
		}
	}
	for _, sl := range t.Slices {
		at := time.Unix(sl.Start, 0).UTC()
		if at.Before(sliceFrom) || at.After(to) {
			continue
		}
		r := rowAt(at)
		r.DistanceKm += sl.Km * scale
		r.DrivingSeconds += sl.MovingSeconds
		r.IdlingSeconds += sl.IdleSeconds
		touch(r)
	}
	if st := t.Start.Timestamp; !st.Before(from) && !st.After(to) {
		r := rowAt(st)
		r.Trips++
		if r.FirstDeparture == nil || st.Before(*r.FirstDeparture) {
			r.FirstDeparture = ptr(st)
		}
		touch(r)
	}
	if en := t.End.Timestamp; t.Status == TripCompleted && !en.Before(from) && !en.After(to) {
		r := rowAt(en)
		if r.LastArrival == nil || en.After(*r.LastArrival) {
			r.LastArrival = ptr(en)
		}
		touch(r)
	}
	for _, r := range touched {
		r.MaxSpeed = max(r.MaxSpeed, t.MaxSpeed)
	}
	return touched
}

// summarize builds the summary rows from trips (ordered by vehicle, then
// start) that meet [from, to]; before tells which vehicles had a trip
// before their first one here (so that they stood from from on).
func summarize(trips []Trip, before map[string]bool, from, to, now time.Time, byDay bool, loc *time.Location, th StatusThresholds) []SummaryRow {
	rows := map[rowKey]*SummaryRow{}
	var order []*SummaryRow
	days := newDayClock(byDay, loc)
	row := func(vehicleID string, at time.Time) *SummaryRow {
		k := rowKey{vehicleID, days.of(at)}
		r := rows[k]
		if r == nil {
			r = &SummaryRow{VehicleID: vehicleID, Day: days.name(k.day)}
			rows[k] = r
			order = append(order, r)
		}
		return r
	}
	// stopped adds the part of [a, b) within [from, min(to, now)] to each
	// day's stopped time.
	end := minTime(to, now)
	stopped := func(vehicleID string, a, b time.Time) {
		a, b = maxTime(a, from), minTime(b, end)
		for a.Before(b) {
			next := b
			if byDay {
				y, m, d := a.In(loc).Date()
				if nd := time.Date(y, m, d+1, 0, 0, 0, 0, loc); nd.Before(b) {
					next = nd
				}
			}
			row(vehicleID, a).StoppedSeconds += next.Sub(a).Seconds()
			a = next
		}
	}
	touched := make([]*SummaryRow, 0, 4)
	for i := range trips {
		t := &trips[i]
		touched = tallyTrip(t, from, to, func(at time.Time) *SummaryRow { return row(t.VehicleID, at) }, touched)
		first := i == 0 || trips[i-1].VehicleID != t.VehicleID
		if first && before[t.VehicleID] {
			stopped(t.VehicleID, from, t.Start.Timestamp)
		}
		if t.Status != TripCompleted {
			continue
		}
		stopEnd := end
		if i+1 < len(trips) && trips[i+1].VehicleID == t.VehicleID {
			stopEnd = trips[i+1].Start.Timestamp
		}
		if stopEnd.Sub(t.End.Timestamp) >= th.StopAfter || stopEnd.Equal(end) {
			stopped(t.VehicleID, t.End.Timestamp, stopEnd)
		}
	}
	out := make([]SummaryRow, len(order))
	for i, r := range order {
		out[i] = *r
		out[i].DistanceKm = roundKm(r.DistanceKm) // to the metre, as the trips'
	}
	slices.SortFunc(out, func(a, b SummaryRow) int {
		return cmp.Or(strings.Compare(a.VehicleID, b.VehicleID), strings.Compare(a.Day, b.Day))
	})
	return out
}
