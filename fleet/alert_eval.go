package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Judging a location batch against the account's alert rules.
//
// What a batch decides depends on three things: the account's enabled rules
// (their version), each vehicle's position before the batch (crossings are
// judged from it) and the latest alert of each rule for each vehicle (an
// open or acknowledged one opens no other). judgeBatch reads all three,
// compiles the rules (or takes them compiled from the cache) and does the
// expensive part, testing positions against geofences; applyBatch then
// stores the points and opens the alerts the judgement calls for, which is
// cheap. Ingest judges outside the store's write transaction whenever the
// judgement is more than a small budget of work: in a read transaction
// first, then, in the write transaction, it checks that the rules' version,
// each vehicle's last location and each vehicle's AlertsVersion are still
// those it judged against. If any moved it judges again (reusing what still
// holds), and after a few tries it judges inside the write transaction,
// where nothing can move. So one account's heavy batch never holds the
// write lock that every account's writes share while it is judged, and a
// batch still decides exactly what it would have decided alone.

var (
	// errStale: something the judgement depended on moved before the
	// write transaction.
	errStale = errors.New("fleet: the state a batch was judged against moved")
	// errHeavy: the judgement takes more work than the write transaction
	// may spend on it.
	errHeavy = errors.New("fleet: judging the batch takes more work than the write transaction allows")
)

// Judgement work is counted in edge tests; one store read counts readWork.
// A batch is judged inside the write transaction only while its judgement
// stays within the budget (Service.judgeBudget, default defaultJudgeBudget:
// well under a millisecond); otherwise it is judged outside, at most
// maxOutsideJudgements times before it is judged inside regardless.
const (
	defaultJudgeBudget   = 50_000
	readWork             = 500
	maxOutsideJudgements = 3
)

// batch is a validated location batch, grouped by vehicle.
type batch struct {
	accountID string
	only      string   // the one vehicle of a single-vehicle batch
	deviceID  string   // the device whose report the batch is, "" for the API's
	order     []string // vehicle ids, sorted: a fixed lock order
	points    map[string][]Point
	indices   map[string][]int // each vehicle's positions in the request
	dups      int              // repeated timestamps within the batch
	now       time.Time
	// stored, when not nil, gets each vehicle's stored points (for an
	// ingestHook).
	stored map[string][]Point
}

// plan is a batch judged against cfg: per vehicle, the vehicle as read and
// what its points decide.
type plan struct {
	cfg      *alertConfig
	vehicles map[string]*vplan
	work     int
}

type vplan struct {
	v      Vehicle // as read; its LastLocation and AlertsVersion were judged against
	fwd    int     // points[fwd:] move the vehicle forward
	hits   []hit   // the first entry into and exit from each fence, in point order
	states map[int32]alertState
}

// hit is a crossing: the first time, in the batch, that a vehicle enters
// (or leaves) a fence.
type hit struct {
	pt    int32 // index into the vehicle's points
	fence int32
	enter bool
}

// alertState is what is known of the latest alert of a rule for a vehicle.
type alertState struct {
	found, active bool
	created       time.Time
}

// judgeBatch judges b with the reads of tx. limited: give up with errHeavy
// once the work passes budget (a cache miss, which means compiling, gives
// up at once). prev, if set, is an earlier judgement of b whose parts still
// hold where the rules' version and a vehicle's state have not moved.
func (s *Service) judgeBatch(tx vehicleAlertTx, b *batch, prev *plan, limited bool, budget int) (*plan, error) {
	sn, err := s.readBatch(tx, b, !limited)
	if err != nil {
		return nil, err
	}
	if sn.cfg == nil {
		if limited {
			return nil, errHeavy
		}
		sn.compile(s, b.accountID)
	}
	p, j, err := judgeVehicles(sn, b, prev, limited, budget)
	if err != nil {
		return nil, err
	}
	if err := j.readStates(tx, b, p); err != nil {
		return nil, err
	}
	p.work = j.work
	return p, nil
}

// judgeOutside judges b outside any transaction: it reads what the
// judgement depends on in one read transaction, judges the positions with
// no transaction open, then reads the latest alerts it needs in another. A
// state that moves between the two reads moves the vehicle's
// AlertsVersion, which the write transaction checks.
func (s *Service) judgeOutside(ctx context.Context, b *batch, prev *plan) (*plan, error) {
	var sn *snapshot
	err := s.view(ctx, func(tx Tx) (err error) {
		sn, err = s.readBatch(tx, b, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	if sn.cfg == nil {
		sn.compile(s, b.accountID)
	}
	if s.judging != nil {
		s.judging(b.accountID)
	}
	p, j, err := judgeVehicles(sn, b, prev, false, 0)
	if err != nil {
		return nil, err
	}
	err = s.view(ctx, func(tx Tx) error { return j.readStates(tx, b, p) })
	if err != nil {
		return nil, err
	}
	p.work = j.work
	return p, nil
}

// snapshot is what a batch is judged against, as one transaction read it:
// the compiled rules of the account's version (or, when they are not
// cached, the rules and geofences to compile), and the batch's vehicles.
type snapshot struct {
	version  int64
	cfg      *alertConfig
	rules    []AlertRule
	geos     []Geofence
	vehicles map[string]Vehicle
}

// readBatch reads b's snapshot; the rules are read only when the cache
// lacks them and rules is set. A vehicle missing is the batch's error.
func (s *Service) readBatch(tx vehicleAlertTx, b *batch, rules bool) (*snapshot, error) {
	version, err := tx.AlertConfigVersion(b.accountID)
	if err != nil {
		return nil, err
	}
	sn := &snapshot{version: version, cfg: s.alertCache.get(b.accountID, version)}
	if sn.cfg == nil && rules {
		if sn.rules, sn.geos, err = tx.EnabledAlertRules(b.accountID); err != nil {
			return nil, err
		}
	}
	sn.vehicles, err = readVehicles(tx, b)
	return sn, err
}

// readVehicles reads the batch's vehicles; a vehicle that is not the
// account's is not_found for a single vehicle's batch, else a validation
// error naming each of its points.
func readVehicles(tx VehicleTx, b *batch) (map[string]Vehicle, error) {
	out := make(map[string]Vehicle, len(b.order))
	var missing Validator
	for _, id := range b.order {
		v, err := tx.Vehicle(b.accountID, id)
		if ErrorCode(err) == CodeNotFound {
			if b.only != "" {
				return nil, notFoundVehicle(b.only)
			}
			for _, i := range b.indices[id] {
				missing.Add("locations["+strconv.Itoa(i)+"].vehicle_id", "no vehicle %q in this account", id)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		out[id] = v
	}
	if missing.Len() > 0 {
		return nil, missing.Err()
	}
	return out, nil
}

func (sn *snapshot) compile(s *Service, accountID string) {
	sn.cfg = compileConfig(sn.version, sn.rules, sn.geos)
	sn.rules, sn.geos = nil, nil
	s.alertCache.put(accountID, sn.cfg)
}

// judgeVehicles judges each vehicle's points against the snapshot: the
// crossings, reused from prev for a vehicle whose last location has not
// moved, and the alert states too when its AlertsVersion has not either.
func judgeVehicles(sn *snapshot, b *batch, prev *plan, limited bool, budget int) (*plan, *judge, error) {
	if prev != nil && prev.cfg.version != sn.version {
		prev = nil
	}
	p := &plan{cfg: sn.cfg, vehicles: make(map[string]*vplan, len(b.order))}
	j := newJudge(sn.cfg, b.now, limited, budget)
	for _, id := range b.order {
		v := sn.vehicles[id]
		pts := b.points[id]
		vp := &vplan{v: v, fwd: forwardFrom(&v, pts)}
		var old *vplan
		if prev != nil {
			old = prev.vehicles[id]
		}
		var err error
		if old != nil && samePosition(old.v.LastLocation, v.LastLocation) {
			vp.hits = old.hits
			if old.v.AlertsVersion == v.AlertsVersion {
				vp.states = old.states
			}
		} else if vp.hits, err = j.crossings(&v, pts, vp.fwd); err != nil {
			return nil, nil, err
		}
		p.vehicles[id] = vp
	}
	return p, j, nil
}

// readStates reads the alert states of each vehicle of p that has none.
func (j *judge) readStates(tx AlertTx, b *batch, p *plan) error {
	for _, id := range b.order {
		vp := p.vehicles[id]
		if vp.states != nil {
			continue
		}
		var err error
		if vp.states, err = j.states(tx, &vp.v, b.points[id], vp); err != nil {
			return err
		}
	}
	return nil
}

// forwardFrom returns the index of the first point that moves the vehicle
// forward in time. Points at or before its last location are history.
func forwardFrom(v *Vehicle, pts []Point) int {
	if v.LastLocation == nil {
		return 0
	}
	last := v.LastLocation.Timestamp
	return sort.Search(len(pts), func(i int) bool { return pts[i].Timestamp.After(last) })
}

func samePosition(a, b *Position) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Timestamp.Equal(b.Timestamp) && a.Latitude == b.Latitude && a.Longitude == b.Longitude
}

// current checks, in the write transaction, that p still holds: the rules'
// version and every vehicle's last location and alerts version are those p
// was judged against. It returns the vehicles as tx reads them, or
// errStale.
func (p *plan) current(tx vehicleAlertTx, b *batch) (map[string]Vehicle, error) {
	version, err := tx.AlertConfigVersion(b.accountID)
	if err != nil {
		return nil, err
	}
	if version != p.cfg.version {
		return nil, errStale
	}
	vehicles, err := readVehicles(tx, b)
	if err != nil {
		return nil, err
	}
	for id, v := range vehicles {
		vp := p.vehicles[id]
		if !samePosition(vp.v.LastLocation, v.LastLocation) || vp.v.AlertsVersion != v.AlertsVersion {
			return nil, errStale
		}
	}
	return vehicles, nil
}

// judge does the work of judging, counting it.
type judge struct {
	cfg     *alertConfig
	at      time.Time // the batch's time
	limited bool
	budget  int
	work    int
	// The cell of each grid looked up last and its fences: consecutive
	// points mostly share cells.
	cellKeys   [len(gridLevels)]int64
	cellFences [len(gridLevels)][]int32
	cellValid  [len(gridLevels)]bool
	bufA, bufB []int32
	seen       []uint8 // per fence: 1 entered, 2 left, in this vehicle's points
	seenList   []int32
	rules      []*crule
	ruleSeen   map[int32]bool
}

func newJudge(cfg *alertConfig, at time.Time, limited bool, budget int) *judge {
	return &judge{cfg: cfg, at: at, limited: limited, budget: budget, ruleSeen: map[int32]bool{}}
}

func (j *judge) over() bool { return j.limited && j.work > j.budget }

// insideSet returns the fences (that rules watch) holding the position, in
// index order.
func (j *judge) insideSet(lat, lon float64, out []int32) []int32 {
	out = out[:0]
	ix := &j.cfg.index
	sources := 0
	test := func(list []int32) {
		before := len(out)
		for _, i := range list {
			j.work++
			if j.cfg.fences[i].s.Contains(lat, lon, &j.work) {
				out = append(out, i)
			}
		}
		if len(out) > before {
			sources++
		}
	}
	for l, g := range gridLevels {
		cells := ix.grids[l]
		if cells == nil {
			continue
		}
		k := cellKey(cellOf(lat, g.deg), cellOf(lon, g.deg), g.turn)
		if !j.cellValid[l] || k != j.cellKeys[l] {
			j.cellKeys[l], j.cellFences[l], j.cellValid[l] = k, cells[k], true
		}
		test(j.cellFences[l])
	}
	test(ix.world)
	if sources > 1 {
		slices.Sort(out)
	}
	return out
}

// crossings judges the points of a vehicle that move it forward
// (pts[fwd:]), each against the position before it — the vehicle's last
// location, then each point in turn — and returns the first entry into and
// the first exit from each fence. A vehicle's first position ever decides
// nothing.
func (j *judge) crossings(v *Vehicle, pts []Point, fwd int) ([]hit, error) {
	if j.cfg.index.empty() || fwd == len(pts) {
		return nil, nil
	}
	var hits []hit
	was, cur := j.bufA[:0], j.bufB[:0]
	known := v.LastLocation != nil
	if known {
		was = j.insideSet(v.LastLocation.Latitude, v.LastLocation.Longitude, was)
	}
	for i := fwd; i < len(pts); i++ {
		cur = j.insideSet(pts[i].Latitude, pts[i].Longitude, cur)
		if known && !slices.Equal(was, cur) {
			hits = j.diff(hits, int32(i), cur, was, true)
			hits = j.diff(hits, int32(i), was, cur, false)
		}
		was, cur, known = cur, was, true
		if j.over() {
			return nil, errHeavy
		}
	}
	j.bufA, j.bufB = was, cur
	for _, f := range j.seenList {
		j.seen[f] = 0
	}
	j.seenList = j.seenList[:0]
	return hits, nil
}

// diff appends a hit at point i for each fence of a (sorted) not in b
// (sorted) that the vehicle has not entered (enter) or left before in the
// batch.
func (j *judge) diff(hits []hit, i int32, a, b []int32, enter bool) []hit {
	if j.seen == nil {
		j.seen = make([]uint8, len(j.cfg.fences))
	}
	flag := uint8(2)
	if enter {
		flag = 1
	}
	k := 0
	for _, f := range a {
		for k < len(b) && b[k] < f {
			k++
		}
		if k < len(b) && b[k] == f || j.seen[f]&flag != 0 {
			continue
		}
		if j.seen[f] == 0 {
			j.seenList = append(j.seenList, f)
		}
		j.seen[f] |= flag
		hits = append(hits, hit{pt: i, fence: f, enter: enter})
	}
	return hits
}

// states reads the latest alert of each rule the vehicle's points may fire:
// speeding rules below the batch's top speed, the rules of the fences it
// crosses, and, when the batch leaves its last report already older than a
// vehicle_offline rule's after_minutes, that rule.
func (j *judge) states(tx AlertTx, v *Vehicle, pts []Point, vp *vplan) (map[int32]alertState, error) {
	cfg := j.cfg
	rules := j.rules[:0]
	clear(j.ruleSeen)
	add := func(r *crule) {
		if !j.ruleSeen[r.n] && r.applies(v.ID) {
			j.ruleSeen[r.n] = true
			rules = append(rules, r)
		}
	}
	if len(cfg.speeding) > 0 {
		top := -1.0
		for i := range pts {
			if pts[i].Speed != nil && *pts[i].Speed > top {
				top = *pts[i].Speed
			}
		}
		for _, r := range cfg.speeding[:sort.SearchFloat64s(cfg.thresholds, top)] {
			add(r)
		}
	}
	for _, h := range vp.hits {
		f := &cfg.fences[h.fence]
		list := f.exit
		if h.enter {
			list = f.enter
		}
		for _, r := range list {
			add(r)
		}
	}
	if vp.fwd < len(pts) {
		silence := j.at.Sub(pts[len(pts)-1].Timestamp)
		for _, r := range cfg.offline {
			if time.Duration(*r.AfterMinutes)*time.Minute > silence {
				break
			}
			add(r)
		}
	}
	j.rules = rules
	out := make(map[int32]alertState, len(rules))
	for _, r := range rules {
		j.work += readWork
		if j.over() {
			return nil, errHeavy
		}
		st, err := latestState(tx, v.AccountID, r.ID, v.ID)
		if err != nil {
			return nil, err
		}
		out[r.n] = st
	}
	return out, nil
}

func latestState(tx AlertTx, accountID, ruleID, vehicleID string) (alertState, error) {
	last, err := tx.LatestAlert(accountID, ruleKey(ruleID, vehicleID))
	switch {
	case ErrorCode(err) == CodeNotFound:
		return alertState{}, nil
	case err != nil:
		return alertState{}, err
	}
	return alertState{found: true, active: last.Status.Active(), created: last.CreatedAt}, nil
}

// applier opens, in the write transaction, the alerts a vehicle's judged
// points call for.
type applier struct {
	s       *Service
	cfg     *alertConfig
	vp      *vplan
	pts     []Point
	now     time.Time
	done    int // speeding rules below this position are decided
	h       int // next hit
	decided map[int32]bool
	fired   []*crule
}

// decide opens an alert of rule r for vehicle v, with the message and data
// describe gives, unless one for the same rule and vehicle is open or
// acknowledged; either way the rule is decided for the vehicle: until the
// batch ends, its alert is open.
func (a *applier) decide(tx openAlertTx, r *crule, v *Vehicle, describe func() (string, map[string]any)) error {
	if a.decided[r.n] {
		return nil
	}
	a.decided[r.n] = true
	st, ok := a.vp.states[r.n]
	if !ok {
		var err error
		if st, err = latestState(tx, v.AccountID, r.ID, v.ID); err != nil {
			return err
		}
	}
	if st.active {
		return nil
	}
	msg, data := describe()
	return a.s.openRuleAlert(tx, r.AlertRule, v, msg, data, a.now)
}

// speed judges one stored point against the speeding rules below its speed
// that are not decided yet, in rule order.
func (a *applier) speed(tx openAlertTx, v *Vehicle, pt Point) error {
	if pt.Speed == nil {
		return nil
	}
	k := sort.SearchFloat64s(a.cfg.thresholds, *pt.Speed) // rules below the speed
	if k <= a.done {
		return nil
	}
	fired := a.fired[:0]
	for _, r := range a.cfg.speeding[a.done:k] {
		if r.applies(v.ID) {
			fired = append(fired, r)
		}
	}
	a.done, a.fired = k, fired
	slices.SortFunc(fired, func(x, y *crule) int { return int(x.n - y.n) })
	for _, r := range fired {
		err := a.decide(tx, r, v, func() (string, map[string]any) {
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

// cross opens what the crossings at point i call for: entries first, then
// exits, each in fence order, each fence's rules in rule order.
func (a *applier) cross(tx openAlertTx, v *Vehicle, i int) error {
	hits := a.vp.hits
	for a.h < len(hits) && int(hits[a.h].pt) < i {
		a.h++
	}
	for ; a.h < len(hits) && int(hits[a.h].pt) == i; a.h++ {
		h := hits[a.h]
		f := &a.cfg.fences[h.fence]
		rules, verb := f.exit, "left"
		if h.enter {
			rules, verb = f.enter, "entered"
		}
		pt := a.pts[i]
		for _, r := range rules {
			if !r.applies(v.ID) {
				continue
			}
			err := a.decide(tx, r, v, func() (string, map[string]any) {
				return "Vehicle " + v.Name + " " + verb + " geofence " + strconv.Quote(f.name) + ".",
					map[string]any{"geofence_id": f.id, "geofence_name": f.name, "latitude": pt.Latitude,
						"longitude": pt.Longitude, "timestamp": pt.Timestamp}
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// offline judges a vehicle the batch moved forward whose new last report
// is already older than vehicle_offline rules' after_minutes: a silence
// that the clock alone would have found on its next sweep.
func (a *applier) offline(tx openAlertTx, v *Vehicle) error {
	silence := a.now.Sub(v.LastLocation.Timestamp)
	for _, r := range a.cfg.offline {
		if time.Duration(*r.AfterMinutes)*time.Minute > silence {
			return nil
		}
		if !r.applies(v.ID) || a.decided[r.n] {
			continue
		}
		a.decided[r.n] = true
		st, ok := a.vp.states[r.n]
		if !ok {
			var err error
			if st, err = latestState(tx, v.AccountID, r.ID, v.ID); err != nil {
				return err
			}
		}
		if st.active || st.found && !st.created.Before(v.LastLocation.Timestamp) {
			continue // this silence has its alert
		}
		msg, data := offlineAlert(r.AlertRule, v, a.now)
		if err := a.s.openRuleAlert(tx, r.AlertRule, v, msg, data, a.now); err != nil {
			return err
		}
	}
	return nil
}

// offlineAlert is the message and data of a vehicle_offline alert.
func offlineAlert(r *AlertRule, v *Vehicle, now time.Time) (string, map[string]any) {
	lastAt := v.LastLocation.Timestamp
	return "Vehicle " + v.Name + " has not reported for " + strconv.Itoa(int(now.Sub(lastAt).Minutes())) + " minutes.",
		map[string]any{"last_reported_at": lastAt, "after_minutes": *r.AfterMinutes,
			"latitude": v.LastLocation.Latitude, "longitude": v.LastLocation.Longitude}
}

// openRuleAlert opens an alert of rule r for vehicle v and moves the
// vehicle's AlertsVersion; the caller stores the vehicle.
func (s *Service) openRuleAlert(tx openAlertTx, r *AlertRule, v *Vehicle, msg string, data map[string]any, now time.Time) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	v.AlertsVersion++
	return s.openAlert(tx, Alert{ID: NewID(PrefixAlert), AccountID: r.AccountID, Type: r.Type, Severity: r.Severity,
		Status: AlertOpen, VehicleID: v.ID, RuleID: r.ID, Message: msg, Data: b, Key: ruleKey(r.ID, v.ID), CreatedAt: now}, now)
}

func formatNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
