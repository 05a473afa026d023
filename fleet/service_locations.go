package fleet

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// IngestLocations stores a batch of one vehicle's points (1 to 1,000).
func (s *Service) IngestLocations(ctx context.Context, p Principal, vehicleID string, points []Point) (IngestResult, error) {
	if !ValidID(PrefixVehicle, vehicleID) {
		if err := p.Require(PermLocationsWrite); err != nil {
			return IngestResult{}, err
		}
		return IngestResult{}, notFoundVehicle(vehicleID)
	}
	for i := range points {
		points[i].VehicleID = vehicleID
	}
	return s.ingest(ctx, p, points, MaxPointsPerVehicleBatch, vehicleID)
}

// IngestBulk stores a batch of points of many vehicles (1 to 10,000), each
// naming its vehicle, as gateways send them.
func (s *Service) IngestBulk(ctx context.Context, p Principal, points []Point) (IngestResult, error) {
	return s.ingest(ctx, p, points, MaxPointsPerBulkBatch, "")
}

// ingest validates a batch whole (naming each bad point by its index) and
// stores it whole or not at all. Points at a stored vehicle and timestamp
// are duplicates and are skipped. Vehicles move forward to their newest
// point; status changes and their events commit with the points.
func (s *Service) ingest(ctx context.Context, p Principal, points []Point, maxPoints int, only string) (IngestResult, error) {
	if err := p.Require(PermLocationsWrite); err != nil {
		return IngestResult{}, err
	}
	now := s.Now()
	var val Validator
	if len(points) == 0 || len(points) > maxPoints {
		val.Add("locations", "must hold 1 to %d points", maxPoints)
		return IngestResult{}, val.Err()
	}
	// Group by vehicle, keeping each point's index for error messages.
	type item struct {
		idx int
		pt  Point
	}
	groups := map[string][]item{}
	var order []string
	for i := range points {
		pt := &points[i]
		pt.Timestamp = Timestamp(pt.Timestamp)
		val.Prefix("locations[" + strconv.Itoa(i) + "].")
		if only == "" && !ValidID(PrefixVehicle, pt.VehicleID) {
			val.Add("vehicle_id", "must name a vehicle of this account")
		}
		pt.validate(&val, now)
		if _, ok := groups[pt.VehicleID]; !ok {
			order = append(order, pt.VehicleID)
		}
		groups[pt.VehicleID] = append(groups[pt.VehicleID], item{i, *pt})
	}
	if val.Len() > 0 {
		return IngestResult{}, val.Err()
	}
	slices.Sort(order) // a fixed lock order across concurrent batches
	th := s.opts.Thresholds.orDefault()
	var res IngestResult
	var live []StreamItem
	err := s.update(ctx, func(tx Tx) error {
		res, live = IngestResult{}, live[:0]
		ev := s.newAlertEval(p.Account.ID, now)
		if err := ev.load(tx); err != nil {
			return err
		}
		// Every vehicle must exist before anything is written.
		vehicles := make(map[string]Vehicle, len(order))
		var missing Validator
		for _, id := range order {
			v, err := tx.Vehicle(p.Account.ID, id)
			if ErrorCode(err) == CodeNotFound {
				if only != "" {
					return notFoundVehicle(only)
				}
				for _, it := range groups[id] {
					missing.Add("locations["+strconv.Itoa(it.idx)+"].vehicle_id", "no vehicle %q in this account", id)
				}
				continue
			}
			if err != nil {
				return err
			}
			vehicles[id] = v
		}
		if missing.Len() > 0 {
			return missing.Err()
		}
		for _, id := range order {
			items := groups[id]
			pts := make([]Point, 0, len(items))
			for _, it := range items {
				pts = append(pts, it.pt)
			}
			slices.SortStableFunc(pts, func(a, b Point) int { return a.Timestamp.Compare(b.Timestamp) })
			// Within the batch, a repeated timestamp is a duplicate too.
			uniq := slices.CompactFunc(pts, func(a, b Point) bool { return a.Timestamp.Equal(b.Timestamp) })
			res.Duplicates += len(pts) - len(uniq)
			stored, err := tx.InsertPoints(id, uniq)
			if err != nil {
				return err
			}
			res.Accepted += len(stored)
			res.Duplicates += len(uniq) - len(stored)
			v := vehicles[id]
			odometer := v.OdometerKm
			moved, err := s.advance(tx, &v, stored, now, th, &live, ev)
			if err != nil {
				return err
			}
			if moved {
				if err := tx.UpdateVehicle(v); err != nil {
					return err
				}
			}
			if !samePtr(odometer, v.OdometerKm) { // maintenance due by distance
				if err := s.reviewVehicleSchedules(tx, &v, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return IngestResult{}, err
	}
	s.stream.publish(p.Account.ID, live, now)
	return res, nil
}

// advance moves a vehicle through the points newer than its latest report,
// in time order, emitting each status change and judging the alert rules
// (ev); it reports whether the vehicle changed. Older points are history
// only (for alerts: see alertEval).
func (s *Service) advance(tx Tx, v *Vehicle, pts []Point, now time.Time, th StatusThresholds, live *[]StreamItem, ev *alertEval) (bool, error) {
	changed := false
	setStatus := func(to VehicleStatus, at time.Time) error {
		if to == v.Status {
			return nil
		}
		from := v.Status
		v.Status = to
		changed = true
		return s.emit(tx, v.AccountID, EventVehicleStatusChanged, now, StatusChange{v.ID, from, to, at})
	}
	for _, pt := range pts {
		if err := ev.speed(tx, v, pt); err != nil {
			return false, err
		}
		if v.LastLocation != nil && !pt.Timestamp.After(v.LastLocation.Timestamp) {
			continue
		}
		if err := ev.cross(tx, v, v.LastLocation, pt); err != nil {
			return false, err
		}
		wasMoving := v.LastLocation != nil && v.Speed != nil && *v.Speed >= th.MovingSpeed
		v.LastLocation = &Position{Latitude: pt.Latitude, Longitude: pt.Longitude, Timestamp: pt.Timestamp, Heading: pt.Heading}
		v.Speed = pt.Speed
		if pt.OdometerKm != nil {
			v.OdometerKm = pt.OdometerKm
		}
		moving := pt.Speed != nil && *pt.Speed >= th.MovingSpeed
		switch {
		case moving:
			v.StationarySince = nil
		case wasMoving || v.StationarySince == nil:
			at := pt.Timestamp
			v.StationarySince = &at
		}
		changed = true
		if err := setStatus(VehicleStatusAt(*v, pt.Timestamp, th), pt.Timestamp); err != nil {
			return false, err
		}
		if rec, ok := v.Record(); ok {
			*live = append(*live, StreamItem{VehicleID: v.ID, Record: rec})
		}
	}
	if !changed {
		return false, nil
	}
	// Reports may be old: the status is the one at the clock's time.
	if err := setStatus(VehicleStatusAt(*v, now, th), now); err != nil {
		return false, err
	}
	if n := len(*live); n > 0 && (*live)[n-1].VehicleID == v.ID {
		(*live)[n-1].Record.Status = v.Status
	}
	return true, nil
}

// HistoryQuery asks for a vehicle's location history.
type HistoryQuery struct {
	From, To *time.Time // default: the last 24 hours
	Cursor   string
	Limit    int // default 1,000, at most 10,000
}

// History returns a vehicle's points in ascending time between From and To,
// clamped to how far back the account's plan reaches.
func (s *Service) History(ctx context.Context, p Principal, vehicleID string, q HistoryQuery) (List[Point], error) {
	if err := p.Require(PermLocationsRead); err != nil {
		return List[Point]{}, err
	}
	now := s.Now()
	limit := q.Limit
	if limit == 0 {
		limit = DefaultHistoryLimit
	}
	if limit < 1 || limit > MaxHistoryLimit {
		return List[Point]{}, Errorf(CodeInvalidRequest, "limit must be between 1 and %d.", MaxHistoryLimit)
	}
	to := now
	if q.To != nil {
		to = Timestamp(*q.To)
	}
	from := to.Add(-DefaultHistoryWindow)
	if q.From != nil {
		from = Timestamp(*q.From)
	}
	if from.After(to) {
		return List[Point]{}, Errorf(CodeInvalidRequest, "from must not be after to.")
	}
	if reach := now.Add(-p.Account.Plan.Limits().HistoryReach); from.Before(reach) {
		from = reach // the plan's reach
	}
	if q.Cursor != "" {
		id, ok := DecodeCursor(q.Cursor)
		micros, err := strconv.ParseInt(strings.TrimPrefix(id, "t"), 10, 64)
		if !ok || !strings.HasPrefix(id, "t") || err != nil {
			return List[Point]{}, Errorf(CodeInvalidRequest, "The cursor is not valid.")
		}
		if after := time.UnixMicro(micros).UTC().Add(time.Microsecond); after.After(from) {
			from = after
		}
	}
	var pts []Point
	err := s.view(ctx, func(tx Tx) error {
		if _, err := s.getVehicle(tx, p, vehicleID); err != nil {
			return err
		}
		if from.After(to) {
			return nil
		}
		var err error
		pts, err = tx.Points(vehicleID, from, to, limit+1)
		return err
	})
	if err != nil {
		return List[Point]{}, err
	}
	return finish(pts, limit, func(pt Point) string { return "t" + strconv.FormatInt(pt.Timestamp.UnixMicro(), 10) }), nil
}

// Snapshot lists the latest location of each of the account's vehicles that
// has reported, in vehicle id order.
func (s *Service) Snapshot(ctx context.Context, p Principal, f VehicleFilter, q ListQuery) (List[LocationRecord], error) {
	if err := p.Require(PermLocationsRead); err != nil {
		return List[LocationRecord]{}, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return List[LocationRecord]{}, Errorf(CodeInvalidRequest, "status must be one of moving, idle, stopped, offline.")
	}
	f.Reported = true
	l, err := listVehicles(ctx, s, p, f, q)
	if err != nil {
		return List[LocationRecord]{}, err
	}
	out := List[LocationRecord]{Items: make([]LocationRecord, 0, len(l.Items)), NextCursor: l.NextCursor, HasMore: l.HasMore}
	for i := range l.Items {
		if r, ok := l.Items[i].Record(); ok {
			out.Items = append(out.Items, r)
		}
	}
	return out, nil
}
