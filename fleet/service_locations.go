package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// IngestLocations stores a batch of one vehicle's points (1 to 1,000). A
// point's VehicleID may be left empty (it is the batch's vehicle); another
// vehicle's is a validation_error naming it.
func (s *Service) IngestLocations(ctx context.Context, p Principal, vehicleID string, points []Point) (IngestResult, error) {
	if err := p.allow("IngestLocations"); err != nil {
		return IngestResult{}, err
	}
	if !ValidID(PrefixVehicle, vehicleID) {
		return IngestResult{}, notFoundVehicle(vehicleID)
	}
	var val Validator
	for i := range points {
		if id := points[i].VehicleID; id != "" && id != vehicleID {
			val.Add("locations["+strconv.Itoa(i)+"].vehicle_id", "must be left out: the batch is of vehicle %s (a bulk batch names each point's vehicle)", vehicleID)
		}
		points[i].VehicleID = vehicleID
	}
	if err := val.Err(); err != nil {
		return IngestResult{}, err
	}
	return s.ingest(ctx, p, points, MaxPointsPerVehicleBatch, vehicleID, nil)
}

// IngestBulk stores a batch of points of many vehicles (1 to 10,000), each
// naming its vehicle, as gateways send them.
func (s *Service) IngestBulk(ctx context.Context, p Principal, points []Point) (IngestResult, error) {
	if err := p.allow("IngestBulk"); err != nil {
		return IngestResult{}, err
	}
	return s.ingest(ctx, p, points, MaxPointsPerBulkBatch, "", nil)
}

// ingest validates a batch whole (naming each bad point by its index) and
// stores it whole or not at all. Points at a stored vehicle and timestamp
// are duplicates and are skipped. Vehicles move forward to their newest
// point; status changes and their events, and the alerts the points open
// with theirs, commit with the points. The alert rules are judged outside
// the write transaction when that is more than a little work (see
// judgeBatch). The batch's points come out of the account's points
// allowance: one that would pass it is refused whole, rate_limit_exceeded
// with Error.RetryAfter set, before anything is written (points.go). Every
// path that stores points calls ingest, so every one is counted; a caller
// recognises the refusal by ErrorCode(err) == CodeRateLimitExceeded. A
// device's report (dev, nil otherwise) comes out of its device's allowance
// too, and its hook runs in the write transaction after the points are
// stored, so that what it writes commits with them.
//
// It runs in three steps: prepareBatch (validate, group), writeBatch (one
// write transaction that reads, decides and hands its writes over as a
// write-set) and publishBatch (what follows the commit).
func (s *Service) ingest(ctx context.Context, p Principal, points []Point, maxPoints int, only string, dev *ingestDevice) (IngestResult, error) {
	now := s.Now()
	// The gates it holds (gate.go) and the points it took (points.go) are
	// given back once, as it returns: what was not stored, unless the
	// batch committed (then publish gives back what it did not store).
	held := s.gates.ingest(p.Account.ID)
	var taken pointsTake
	committed := false
	defer func() {
		held.release()
		if !committed {
			s.refundPoints(ctx, taken, 0)
		}
	}()
	b, err := s.prepareBatch(ctx, held, p.Account.ID, points, maxPoints, only, dev, now)
	if err != nil {
		return IngestResult{}, err
	}
	// The batch's points come out of the account's allowance, and what is
	// not stored goes back; or the store counts the stored ones with the
	// write-set (points.go).
	var quota *Account
	if s.pointsWithIngest() {
		quota = &p.Account
	} else {
		t, err := s.takePoints(ctx, p.Account, b.deviceID, b, len(points)-b.dups, now)
		if err != nil {
			return IngestResult{}, err
		}
		taken = t
	}
	ctx = WithWriteCost(ctx, WriteCost{AccountID: b.accountID, Points: len(points) - b.dups, Vehicles: b.order})
	res, live, err := s.writeBatch(ctx, held, b, dev, len(points), quota)
	if err != nil {
		return IngestResult{}, refusedWithIngest(err, p.Account, len(points)-b.dups, now)
	}
	committed = true
	s.publishBatch(ctx, held, b, res, live, taken)
	return res, nil
}

// prepareBatch validates a batch whole (naming each bad point by its
// index), takes the bulk gate for a bulk batch, and groups its points by
// vehicle, each vehicle's in time order without repeated timestamps (the
// repeats are the batch's duplicates), the vehicles in id order.
func (s *Service) prepareBatch(ctx context.Context, held *ingestHold, accountID string, points []Point, maxPoints int, only string, dev *ingestDevice, now time.Time) (*batch, error) {
	var val Validator
	if len(points) == 0 || len(points) > maxPoints {
		val.Add("locations", "must hold 1 to %d points", maxPoints)
		return nil, val.Err()
	}
	if len(points) >= BulkPoints {
		if err := held.takeBulk(ctx); err != nil { // one at a time per account
			return nil, err
		}
	}
	b := &batch{accountID: accountID, only: only, points: map[string][]Point{}, indices: map[string][]int{}, now: now}
	if dev != nil {
		b.stored = map[string][]Point{}
		b.deviceID = dev.id
	}
	for i := range points {
		pt := &points[i]
		pt.Timestamp = Timestamp(pt.Timestamp)
		val.Prefix("locations[" + strconv.Itoa(i) + "].")
		switch {
		case only == "" && pt.VehicleID == "":
			val.Add("vehicle_id", "is required")
		case only == "" && !ValidID(PrefixVehicle, pt.VehicleID):
			val.Add("vehicle_id", "must name a vehicle of this account")
		}
		if dev == nil { // a device's points were validated as its report was read (Service.report)
			pt.validate(&val, now)
		}
		if _, ok := b.points[pt.VehicleID]; !ok {
			b.order = append(b.order, pt.VehicleID)
		}
		b.points[pt.VehicleID] = append(b.points[pt.VehicleID], *pt)
		b.indices[pt.VehicleID] = append(b.indices[pt.VehicleID], i)
	}
	if val.Len() > 0 {
		return nil, val.Err()
	}
	slices.Sort(b.order) // a fixed lock order across concurrent batches
	for id, pts := range b.points {
		slices.SortStableFunc(pts, func(a, b Point) int { return a.Timestamp.Compare(b.Timestamp) })
		// Within the batch, a repeated timestamp is a duplicate too.
		uniq := slices.CompactFunc(pts, func(a, b Point) bool { return a.Timestamp.Equal(b.Timestamp) })
		b.dups += len(pts) - len(uniq)
		b.points[id] = uniq
	}
	return b, nil
}

// writeBatch stores a prepared batch of n points in its write transaction:
// it judges the alert rules (inside the transaction when that is little
// work, otherwise outside it first: see judgeBatch), decides every write,
// and hands the rows every report writes to the store as one write-set
// (ingest_writes.go). It returns what the batch stored and the live
// reports to publish once it committed (none when the store appended them
// to its shared feed with the write-set: IngestLiveFeed). With quota set,
// the stored points' takes of quota's allowance go with the write-set
// (IngestQuotaStore).
func (s *Service) writeBatch(ctx context.Context, held *ingestHold, b *batch, dev *ingestDevice, n int, quota *Account) (IngestResult, []StreamItem, error) {
	var res IngestResult
	var live []StreamItem
	var judged *plan
	appended := false // the live reports went with the write-set
	first := 0
	if s.looksHeavy(b, n) {
		first = 1 // not worth a try in the write transaction
	}
	for attempt := first; ; attempt++ {
		// First inside the write transaction within the budget; if that is
		// not enough, outside it; if what it judged against keeps moving,
		// inside it regardless.
		inside := attempt == 0 || attempt > maxOutsideJudgements
		// Past a first try inside, it holds the account's gate too.
		if err := held.take(ctx, b.order, attempt > 0); err != nil {
			return IngestResult{}, nil, err
		}
		if !inside {
			var err error
			if judged, err = s.judgeOutside(ctx, b, judged); err != nil {
				return IngestResult{}, nil, err
			}
		}
		err := s.update(ctx, func(tx Tx) error {
			res, live = IngestResult{Duplicates: b.dups}, live[:0]
			var pl *plan
			var vehicles map[string]Vehicle
			var err error
			if inside {
				pl, err = s.judgeBatch(tx, b, judged, attempt == 0, s.judgeBudget)
				if err != nil {
					return err
				}
				vehicles = make(map[string]Vehicle, len(b.order))
				for id, vp := range pl.vehicles {
					vehicles[id] = vp.v
				}
			} else if vehicles, err = judged.current(tx, b); err != nil {
				return err
			} else {
				pl = judged
			}
			// The batch's writes of the rows every report writes are
			// gathered and applied in one call (ingest_writes.go).
			wtx, staged := tx, (*stagedTx)(nil)
			if !s.opts.IngestOneByOne {
				staged = newStagedTx(tx, vehicles)
				wtx = staged
			}
			if err := s.applyBatch(wtx, b, pl, vehicles, &res, &live); err != nil {
				return err
			}
			if dev != nil {
				if err := dev.hook(wtx, b.stored); err != nil {
					return err
				}
			}
			appended = false
			if staged != nil {
				if quota != nil {
					staged.w.Quota = pointsTakes(*quota, b.deviceID, res.Accepted, b.now)
				}
				if len(live) > 0 && s.liveWithIngest() {
					// On the shared feed with the write-set, in its
					// transaction (IngestLiveFeed).
					staged.w.Live = &LiveAppend{AccountID: b.accountID, At: b.now, Items: slices.Clone(live)}
					appended = true
				}
				return staged.apply()
			}
			return nil
		})
		if errors.Is(err, errHeavy) || errors.Is(err, errStale) {
			continue
		}
		if appended {
			live = nil // nothing left to publish
		}
		return res, live, err
	}
}

// publishBatch follows a batch's commit: the live reports go out (a
// vehicle's in commit order, before the vehicle's gate opens), the gates
// open, and the points not stored go back to the allowance.
func (s *Service) publishBatch(ctx context.Context, held *ingestHold, b *batch, res IngestResult, live []StreamItem, taken pointsTake) {
	held.releaseStored()
	s.publishLive(ctx, b.accountID, live, b.now)
	held.release()
	s.refundPoints(ctx, taken, res.Accepted)
	s.stats.points.Add(uint64(res.Accepted))
}

// ingestDevice is what a device's report adds to ingest: the device whose
// points allowance the batch comes out of too, and its hook.
type ingestDevice struct {
	id   string
	hook ingestHook
}

// ingestHook is what a caller of ingest adds to a batch's write
// transaction, run after the points are stored; stored holds each
// vehicle's stored points (duplicates left out). Its one caller, a
// device's report, writes the device's row: a hook that needs more areas
// widens tx.
type ingestHook func(tx DeviceTx, stored map[string][]Point) error

// looksHeavy guesses, from the account's last compiled rules, whether
// judging a batch of n points would pass the budget of the write
// transaction: with no rules compiled, or more points times geofences than
// the budget, it would.
func (s *Service) looksHeavy(b *batch, n int) bool {
	cfg := s.alertCache.latest(b.accountID)
	return cfg == nil || n*len(cfg.fences) > s.judgeBudget
}

// applyBatch stores the batch's points and moves its vehicles (as tx read
// them: vehicles) forward, opening the alerts the judgement pl calls for.
func (s *Service) applyBatch(tx ingestTx, b *batch, pl *plan, vehicles map[string]Vehicle, res *IngestResult, live *[]StreamItem) error {
	th := s.opts.Thresholds.orDefault()
	trips := make([]tripInput, 0, len(b.order))
	for _, id := range b.order {
		pts := b.points[id]
		stored, err := tx.InsertPoints(id, pts)
		if err != nil {
			return err
		}
		if b.stored != nil {
			b.stored[id] = stored
		}
		res.Accepted += len(stored)
		res.Duplicates += len(pts) - len(stored)
		v := vehicles[id]
		vp := pl.vehicles[id]
		var newest *time.Time
		if v.LastLocation != nil {
			newest = ptr(v.LastLocation.Timestamp)
		}
		odometer, hours, alerts := v.OdometerKm, v.EngineHours, v.AlertsVersion
		before := v
		a := &applier{s: s, cfg: pl.cfg, vp: vp, pts: pts, now: b.now, decided: map[int32]bool{}}
		tel := &telemetry{deviceID: b.deviceID}
		moved, err := s.advance(tx, &v, pts, stored, vp.fwd, b.now, th, live, a, tel)
		if err != nil {
			return err
		}
		if vp.fwd < len(pts) {
			in := telemetryJudgement{accountID: b.accountID, deviceID: b.deviceID, cfg: pl.cfg, before: before, vehicle: &v,
				previous: lastPoint(&before), points: pts[vp.fwd:], events: tel.events, now: b.now}
			if err := s.judgeTelemetry(tx, in); err != nil {
				return err
			}
		}
		trips = append(trips, tripInput{id, newest, stored})
		if moved || v.AlertsVersion != alerts {
			if err := tx.UpdateVehicle(v); err != nil {
				return err
			}
		}
		if !samePtr(odometer, v.OdometerKm) || !samePtr(hours, v.EngineHours) { // maintenance due by distance or engine hours
			if err := s.reviewVehicleSchedules(tx, &v, b.now); err != nil {
				return err
			}
		}
	}
	return s.trackTrips(tx, b.accountID, trips, b.now, th)
}

// advance moves a vehicle through its stored points newer than its latest
// report (pts[fwd:], all stored), in time order, emitting each status change
// and opening the alerts the judgement calls for (a), and moving its
// telematics state (tel); it reports whether the vehicle moved. Older
// points are history only, but speeding is judged on every stored point.
func (s *Service) advance(tx advanceTx, v *Vehicle, pts, stored []Point, fwd int, now time.Time, th StatusThresholds, live *[]StreamItem, a *applier, tel *telemetry) (bool, error) {
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
	i := 0 // stored[k] is pts[i]
	for _, pt := range stored {
		for !pts[i].Timestamp.Equal(pt.Timestamp) {
			i++
		}
		if err := a.speed(tx, v, pt); err != nil {
			return false, err
		}
		if i < fwd {
			continue
		}
		if err := a.cross(tx, v, i); err != nil {
			return false, err
		}
		if err := tel.step(s, tx, v, &pts[i], i-fwd, now, th); err != nil { // the odometer too
			return false, err
		}
		wasMoving := v.LastLocation != nil && v.Speed != nil && *v.Speed >= th.MovingSpeed
		v.LastLocation = &Position{Latitude: pt.Latitude, Longitude: pt.Longitude, Timestamp: pt.Timestamp, Heading: pt.Heading}
		v.Speed, v.LastAttributes = pt.Speed, pt.Attributes
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
	if err := a.offline(tx, v); err != nil {
		return false, err
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

// lastPoint is the vehicle's latest point as the vehicle keeps it (no
// attributes), nil when it has none.
func lastPoint(v *Vehicle) *Point {
	if v.LastLocation == nil {
		return nil
	}
	l := v.LastLocation
	return &Point{VehicleID: v.ID, Latitude: l.Latitude, Longitude: l.Longitude, Timestamp: l.Timestamp, Speed: v.Speed, Heading: l.Heading}
}

// HistoryQuery asks for a vehicle's location history.
type HistoryQuery struct {
	From, To *time.Time // default: the last 24 hours
	Cursor   string
	Limit    int // default 1,000, at most 10,000
}

// ListHistory returns a page of a vehicle's points in ascending time between From and To,
// clamped to how far back the account's plan reaches.
func (s *Service) ListHistory(ctx context.Context, p Principal, vehicleID string, q HistoryQuery) (List[Point], error) {
	var pts []Point
	limit, err := s.readHistory(ctx, p, "ListHistory", vehicleID, q, func(tx Tx, from, to time.Time, n int) (err error) {
		pts, err = tx.Points(vehicleID, from, to, n)
		return err
	})
	if err != nil {
		return List[Point]{}, err
	}
	return finish(pts, limit, historyID), nil
}

// historyID is a point's place in a walk of history, as its cursor holds it.
func historyID(pt Point) string { return "t" + strconv.FormatInt(pt.Timestamp.UnixMicro(), 10) }

// HistoryJSON is a page of a vehicle's history written as JSON: Data is the
// array of its points, each as Point.AppendJSON writes it; NextCursor and
// HasMore are List's.
type HistoryJSON struct {
	Data       []byte
	NextCursor string
	HasMore    bool
}

// HistoryJSON returns the page ListHistory returns, written as JSON and
// appended to dst (Data starts at len(dst)). Where the store keeps
// attributes in their binary form (StoredPointsTx: SQLite, PostgreSQL)
// they go from it straight to JSON, which costs a page of points with
// attributes well under half of what decoding them and writing them does.
// The API's history endpoint serves this.
func (s *Service) HistoryJSON(ctx context.Context, p Principal, vehicleID string, q HistoryQuery, dst []byte) (HistoryJSON, error) {
	var pts []Point
	var blobs AttributeBlobs
	stored := false
	limit, err := s.readHistory(ctx, p, "HistoryJSON", vehicleID, q, func(tx Tx, from, to time.Time, n int) (err error) {
		if st, ok := tx.(StoredPointsTx); ok {
			stored = true
			pts, err = st.StoredPoints(vehicleID, from, to, n, &blobs)
			return err
		}
		pts, err = tx.Points(vehicleID, from, to, n)
		return err
	})
	if err != nil {
		return HistoryJSON{}, err
	}
	l := finish(pts, limit, historyID)
	start := len(dst)
	b := append(dst, '[')
	for i := range l.Items {
		if i > 0 {
			b = append(b, ',')
		}
		if !stored {
			b = l.Items[i].AppendJSON(b)
			continue
		}
		if b, err = l.Items[i].appendJSONWith(b, &blobs, i); err != nil {
			return HistoryJSON{}, fmt.Errorf("fleet: history of vehicle %s: %w", vehicleID, err)
		}
	}
	b = append(b, ']')
	return HistoryJSON{Data: b[start:], NextCursor: l.NextCursor, HasMore: l.HasMore}, nil
}

// readHistory checks a history query of the use case named useCase and
// reads its page with read, in a view of the store: read gets the range to read (the plan's reach
// applied, the cursor's place) and how many points to read, one more than
// the page's limit, which readHistory returns. Nothing is read when the
// range is empty.
func (s *Service) readHistory(ctx context.Context, p Principal, useCase, vehicleID string, q HistoryQuery, read func(tx Tx, from, to time.Time, n int) error) (int, error) {
	if err := p.allow(useCase); err != nil {
		return 0, err
	}
	now := s.Now()
	limit := q.Limit
	if limit == 0 {
		limit = DefaultHistoryLimit
	}
	if limit < 1 || limit > MaxHistoryLimit {
		return 0, Errorf(CodeInvalidRequest, "limit must be between 1 and %d.", MaxHistoryLimit)
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
		return 0, Errorf(CodeInvalidRequest, "from must not be after to.")
	}
	if reach := now.Add(-p.Account.Plan.Limits().HistoryReach); from.Before(reach) {
		from = reach // the plan's reach
	}
	if q.Cursor != "" {
		id, ok := DecodeCursor(q.Cursor)
		micros, err := strconv.ParseInt(strings.TrimPrefix(id, "t"), 10, 64)
		if !ok || !strings.HasPrefix(id, "t") || err != nil {
			return 0, Errorf(CodeInvalidRequest, "The cursor is not valid.")
		}
		if after := time.UnixMicro(micros).UTC().Add(time.Microsecond); after.After(from) {
			from = after
		}
	}
	err := s.view(ctx, func(tx Tx) error {
		if _, err := s.getVehicle(tx, p, vehicleID); err != nil {
			return err
		}
		if from.After(to) {
			return nil
		}
		return read(tx, from, to, limit+1)
	})
	return limit, err
}

// ListLocations lists the latest location of each of the account's vehicles that
// has reported, in vehicle id order.
func (s *Service) ListLocations(ctx context.Context, p Principal, f VehicleFilter, q ListQuery) (List[LocationRecord], error) {
	if err := p.allow("ListLocations"); err != nil {
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
