package fleet

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
)

// alertEval judges the points of one ingest transaction against the
// account's enabled rules, read once per transaction. It lives no longer
// than the transaction's function (which a store may run again), so what it
// remembers is never stale.
//
// Speeding is judged on every stored point (late ones too: they still
// record the speed). Geofence crossings are judged on points that move the
// vehicle forward in time, each against the position before it: the
// vehicle's last location before the batch, then each point in turn. A
// vehicle's first position ever decides nothing; points older than its last
// location are history and decide no crossing.
type alertEval struct {
	s         *Service
	accountID string
	now       time.Time
	*alertConfig
	// The last cell looked up and its fences: consecutive points mostly
	// share a cell.
	cell       int64
	cellFences []int32
	active     map[ruleVehicle]bool // an open or acknowledged alert exists

	// The vehicle being judged and the fences its last position is in.
	vehicleID string
	inside    []int32
	known     bool
	buf       []int32
	work      int // edges tested
}

// alertConfig is an account's enabled rules compiled for ingest: speeding
// thresholds, geofence shapes and their grid. It is read-only once built,
// so ingests share it; version is the account's alert configuration
// version it was built from.
type alertConfig struct {
	version  int64
	speeding []*AlertRule
	minSpeed float64 // the lowest speeding threshold
	fences   []fence
	grid     map[int64][]int32 // cell -> fences whose box meets it
	wide     []int32           // fences too wide for the grid
}

type fence struct {
	g           Geofence
	s           shape
	enter, exit []*AlertRule
}

// alertCache keeps each account's compiled configuration. An entry serves an
// ingest only when its version is the one the ingest's transaction reads
// from the store, which every rule or geofence change moves forward (in
// the change's transaction, through whichever server makes it); so a server
// never judges with rules another server has changed since.
type alertCache struct {
	mu sync.Mutex
	m  map[string]*alertConfig
}

func (c *alertCache) get(accountID string, version int64) *alertConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cfg := c.m[accountID]; cfg != nil && cfg.version == version {
		return cfg
	}
	return nil
}

func (c *alertCache) put(accountID string, cfg *alertConfig) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*alertConfig{}
	}
	if old := c.m[accountID]; old == nil || old.version <= cfg.version {
		c.m[accountID] = cfg
	}
}

func (s *Service) newAlertEval(accountID string, now time.Time) *alertEval {
	return &alertEval{s: s, accountID: accountID, now: now}
}

// load reads the account's configuration version and, unless the cache
// holds that version compiled, its enabled rules and their geofences.
func (ev *alertEval) load(tx Tx) error {
	version, err := tx.AlertConfigVersion(ev.accountID)
	if err != nil {
		return err
	}
	ev.active = map[ruleVehicle]bool{}
	if cfg := ev.s.alertCache.get(ev.accountID, version); cfg != nil {
		ev.alertConfig = cfg
		return nil
	}
	rules, geos, err := tx.EnabledAlertRules(ev.accountID)
	if err != nil {
		return err
	}
	cfg := &alertConfig{version: version}
	byID := make(map[string]int32, len(geos))
	for i := range geos {
		byID[geos[i].ID] = int32(len(cfg.fences))
		cfg.fences = append(cfg.fences, fence{g: geos[i], s: compile(&geos[i])})
	}
	for i := range rules {
		r := &rules[i]
		switch r.Type {
		case AlertSpeeding:
			if len(cfg.speeding) == 0 || *r.ThresholdKmh < cfg.minSpeed {
				cfg.minSpeed = *r.ThresholdKmh
			}
			cfg.speeding = append(cfg.speeding, r)
		case AlertGeofenceEnter, AlertGeofenceExit:
			gi, ok := byID[r.GeofenceID]
			if !ok {
				continue
			}
			if r.Type == AlertGeofenceEnter {
				cfg.fences[gi].enter = append(cfg.fences[gi].enter, r)
			} else {
				cfg.fences[gi].exit = append(cfg.fences[gi].exit, r)
			}
		}
	}
	cfg.index()
	ev.alertConfig = cfg
	ev.s.alertCache.put(ev.accountID, cfg)
	return nil
}

// index puts each fence's bounding box on a grid of cells of cellDeg
// degrees, so that a point is tested only against the fences whose box may
// hold it. Fences over too many cells are tested for every point.
func (ev *alertConfig) index() {
	ev.grid = map[int64][]int32{}
	for i := range ev.fences {
		s := &ev.fences[i].s
		if len(ev.fences[i].enter)+len(ev.fences[i].exit) == 0 {
			continue
		}
		// One cell of margin on each side absorbs rounding at cell edges.
		lat0, lat1 := cellOf(s.minLat)-1, cellOf(s.maxLat)+1
		lon0, lon1 := cellOf(s.minLon)-1, cellOf(s.maxLon)+1
		if s.allLon || lon1-lon0 >= cellsPerTurn-2 || (lat1-lat0+1)*(lon1-lon0+1) > 4096 {
			ev.wide = append(ev.wide, int32(i))
			continue
		}
		for la := lat0; la <= lat1; la++ {
			for lo := lon0; lo <= lon1; lo++ {
				k := cellKey(la, lo)
				ev.grid[k] = append(ev.grid[k], int32(i))
			}
		}
	}
}

// The grid: cells of 0.05 degrees (about 5.5 km of latitude).
const (
	cellDeg      = 0.05
	cellsPerTurn = 7200 // 360 / cellDeg
)

func cellOf(deg float64) int64 { return int64(math.Floor(deg / cellDeg)) }

// cellKey names a cell; longitudes one turn apart name the same cell.
func cellKey(latCell, lonCell int64) int64 {
	lo := ((lonCell+cellsPerTurn/2)%cellsPerTurn+cellsPerTurn)%cellsPerTurn - cellsPerTurn/2
	return latCell*cellsPerTurn*2 + lo
}

// insideSet returns the fences (that rules watch) holding the position, in
// index order.
func (ev *alertEval) insideSet(lat, lon float64, out []int32) []int32 {
	out = out[:0]
	if k := cellKey(cellOf(lat), cellOf(lon)); k != ev.cell || ev.cellFences == nil {
		ev.cell, ev.cellFences = k, ev.grid[k]
		if ev.cellFences == nil {
			ev.cellFences = []int32{}
		}
	}
	for _, i := range ev.cellFences {
		if ev.fences[i].s.contains(lat, lon, &ev.work) {
			out = append(out, i)
		}
	}
	for _, i := range ev.wide {
		if ev.fences[i].s.contains(lat, lon, &ev.work) {
			out = append(out, i)
		}
	}
	if len(ev.wide) > 0 && len(out) > 1 {
		slices.Sort(out)
	}
	return out
}

// speed judges one stored point against the speeding rules.
func (ev *alertEval) speed(tx Tx, v *Vehicle, pt Point) error {
	if pt.Speed == nil || len(ev.speeding) == 0 || *pt.Speed <= ev.minSpeed {
		return nil
	}
	for _, r := range ev.speeding {
		if *pt.Speed <= *r.ThresholdKmh || !r.Applies(v.ID) {
			continue
		}
		err := ev.raise(tx, r, v, func() (string, map[string]any) {
			return "Vehicle " + v.Name + " at " + formatNum(*pt.Speed) + " km/h, above the limit of " + formatNum(*r.ThresholdKmh) + " km/h.",
				map[string]any{"speed": *pt.Speed, "threshold_kmh": *r.ThresholdKmh, "latitude": pt.Latitude,
					"longitude": pt.Longitude, "timestamp": pt.Timestamp}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// cross judges a point that moves the vehicle forward against the geofence
// rules; prev is the vehicle's position before it (nil if none).
func (ev *alertEval) cross(tx Tx, v *Vehicle, prev *Position, pt Point) error {
	if len(ev.grid) == 0 && len(ev.wide) == 0 {
		return nil
	}
	if ev.vehicleID != v.ID {
		ev.vehicleID, ev.known = v.ID, prev != nil
		if prev != nil {
			ev.inside = ev.insideSet(prev.Latitude, prev.Longitude, ev.inside)
		}
	}
	cur := ev.insideSet(pt.Latitude, pt.Longitude, ev.buf)
	was := ev.inside
	known := ev.known
	ev.buf, ev.inside, ev.known = was, cur, true
	if !known || slices.Equal(was, cur) {
		return nil
	}
	for _, i := range cur {
		if !slices.Contains(was, i) {
			if err := ev.crossing(tx, v, &ev.fences[i], ev.fences[i].enter, "entered", pt); err != nil {
				return err
			}
		}
	}
	for _, i := range was {
		if !slices.Contains(cur, i) {
			if err := ev.crossing(tx, v, &ev.fences[i], ev.fences[i].exit, "left", pt); err != nil {
				return err
			}
		}
	}
	return nil
}

func (ev *alertEval) crossing(tx Tx, v *Vehicle, f *fence, rules []*AlertRule, verb string, pt Point) error {
	for _, r := range rules {
		if !r.Applies(v.ID) {
			continue
		}
		err := ev.raise(tx, r, v, func() (string, map[string]any) {
			return "Vehicle " + v.Name + " " + verb + " geofence " + strconv.Quote(f.g.Name) + ".",
				map[string]any{"geofence_id": f.g.ID, "geofence_name": f.g.Name, "latitude": pt.Latitude,
					"longitude": pt.Longitude, "timestamp": pt.Timestamp}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

type ruleVehicle struct{ ruleID, vehicleID string }

// raise opens an alert of rule r for vehicle v, with the message and data
// describe gives, unless one for the same rule and vehicle is open or
// acknowledged.
func (ev *alertEval) raise(tx Tx, r *AlertRule, v *Vehicle, describe func() (string, map[string]any)) error {
	rv := ruleVehicle{r.ID, v.ID}
	active, ok := ev.active[rv]
	if ok && active {
		return nil
	}
	key := ruleKey(r.ID, v.ID)
	if !ok {
		last, err := tx.LatestAlert(ev.accountID, key)
		switch {
		case ErrorCode(err) == CodeNotFound:
		case err != nil:
			return err
		default:
			active = last.Status.Active()
		}
	}
	ev.active[rv] = true
	if active {
		return nil
	}
	msg, data := describe()
	return ev.s.openRuleAlert(tx, r, v.ID, key, msg, data, ev.now)
}

func (s *Service) openRuleAlert(tx Tx, r *AlertRule, vehicleID, key, msg string, data map[string]any, now time.Time) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return s.openAlert(tx, Alert{ID: NewID(PrefixAlert), AccountID: r.AccountID, Type: r.Type, Severity: r.Severity,
		Status: AlertOpen, VehicleID: vehicleID, RuleID: r.ID, Message: msg, Data: b, Key: key, CreatedAt: now}, now)
}

func formatNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// offlineBatch bounds the vehicles one transaction of the offline check
// reads.
const offlineBatch = 500

// CheckOfflineAlerts opens a vehicle_offline alert for each vehicle that an
// enabled vehicle_offline rule watches and that has not reported for the
// rule's after_minutes, at most once per silence: not while an alert of the
// rule for the vehicle is open or acknowledged, nor again for the same
// silence once it is resolved. Vehicles that never reported are not judged.
// Sweep runs it; it returns how many alerts it opened.
func (s *Service) CheckOfflineAlerts(ctx context.Context) (int, error) {
	total, after := 0, ""
	for {
		var rules []AlertRule
		err := s.view(ctx, func(tx Tx) (err error) {
			rules, err = tx.EnabledRulesOfType(AlertVehicleOffline, after, 100)
			return err
		})
		if err != nil {
			return total, err
		}
		for i := range rules {
			n, err := s.checkOfflineRule(ctx, rules[i])
			total += n
			if err != nil {
				return total, err
			}
			after = rules[i].ID
		}
		if len(rules) < 100 {
			return total, nil
		}
	}
}

func (s *Service) checkOfflineRule(ctx context.Context, r AlertRule) (int, error) {
	total, after := 0, ""
	for {
		now := s.Now()
		silentSince := now.Add(-time.Duration(*r.AfterMinutes) * time.Minute)
		n, opened := 0, 0
		err := s.update(ctx, func(tx Tx) error {
			n, opened = 0, 0
			vs, err := tx.Vehicles(r.AccountID, VehicleFilter{Reported: true, IDs: r.VehicleIDs}, Page{After: after, Limit: offlineBatch})
			if err != nil {
				return err
			}
			n = len(vs)
			for i := range vs {
				v := &vs[i]
				if v.LastLocation == nil || v.LastLocation.Timestamp.After(silentSince) {
					continue
				}
				key := ruleKey(r.ID, v.ID)
				last, err := tx.LatestAlert(r.AccountID, key)
				switch {
				case ErrorCode(err) == CodeNotFound:
				case err != nil:
					return err
				case last.Status.Active() || !last.CreatedAt.Before(v.LastLocation.Timestamp):
					continue // this silence has its alert
				}
				lastAt := v.LastLocation.Timestamp
				msg := "Vehicle " + v.Name + " has not reported for " + strconv.Itoa(int(now.Sub(lastAt).Minutes())) + " minutes."
				data := map[string]any{"last_reported_at": lastAt, "after_minutes": *r.AfterMinutes,
					"latitude": v.LastLocation.Latitude, "longitude": v.LastLocation.Longitude}
				if err := s.openRuleAlert(tx, &r, v.ID, key, msg, data, now); err != nil {
					return err
				}
				opened++
			}
			if n > 0 {
				after = vs[n-1].ID
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += opened
		if n < offlineBatch {
			return total, nil
		}
	}
}

// maintenanceAlert opens the alert a schedule's becoming due_soon or
// overdue owes, once per service cycle: its key names the schedule, the
// type and the cycle (the last service's date and odometer), so a cycle
// opens at most one alert of each type, whatever its status.
func (s *Service) maintenanceAlert(tx Tx, sch Schedule, event string, now time.Time) error {
	typ, sev, what := AlertMaintenanceDueSoon, SeverityWarning, "due soon"
	if event == EventMaintenanceOverdue {
		typ, sev, what = AlertMaintenanceOverdue, SeverityCritical, "overdue"
	}
	key := sch.ID + alertKeySep + string(typ) + alertKeySep + sch.LastServiceDate + alertKeySep + formatNum(orZero(sch.LastServiceOdometerKm))
	_, err := tx.LatestAlert(sch.AccountID, key)
	if err == nil {
		return nil
	}
	if ErrorCode(err) != CodeNotFound {
		return err
	}
	data, err := json.Marshal(map[string]any{"schedule_id": sch.ID, "schedule_name": sch.Name, "next_due_date": nullString(sch.NextDueDate),
		"next_due_odometer_km": sch.NextDueOdometerKm, "last_service_date": sch.LastServiceDate})
	if err != nil {
		return err
	}
	return s.openAlert(tx, Alert{ID: NewID(PrefixAlert), AccountID: sch.AccountID, Type: typ, Severity: sev, Status: AlertOpen,
		VehicleID: sch.VehicleID, Message: "Maintenance " + strconv.Quote(sch.Name) + " is " + what + ".", Data: data, Key: key, CreatedAt: now}, now)
}
