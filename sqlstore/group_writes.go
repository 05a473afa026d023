package sqlstore

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// Write-sets in a PostgreSQL group (fleet.IngestWrites).
//
// A group's members run their functions one after another, as before,
// but a location batch no longer sends its writes of points, vehicles,
// trips, events and its device's row as it decides them: it hands them to
// ApplyIngest as one write-set, which the member's transaction stages.
// When every member has run, the group applies all its members'
// write-sets in ONE statement (flush) of up to seven data-modifying parts
// (those its write-sets fill: flushShape), each set-based over arrays
// (unnest), whose counts come back together:
//
//   - the points: INSERT ... SELECT FROM unnest(...), no ON CONFLICT
//     clause. Every staged point is newer than its vehicle's latest
//     report, read under the group's lock (fleet.IngestWrites), so none
//     can be stored already: one that is (a broken rule) fails the flush
//     on the primary key, and run one by one the members insert theirs
//     with ON CONFLICT DO NOTHING. Without the clause PostgreSQL makes no
//     look-up of its own before each insert (about a sixth of its CPU in
//     an API batch of 1,000 points); a count short of the staged points
//     fails the flush too;
//   - the vehicles' final rows: UPDATE vehicles ... FROM unnest(...);
//   - the trips: an upsert, INSERT ... ON CONFLICT (id) DO UPDATE;
//   - the devices' rows: UPDATE devices ... FROM unnest(...) on the
//     condition that each is still attached to its vehicle: a count short
//     fails the flush;
//   - the events: INSERT ... SELECT FROM unnest(...);
//   - the live reports (fleet.IngestLiveFeed): live_seq's row moved on by
//     the ids they take, and INSERT INTO live_reports, then pg_notify. The
//     row stays locked until the group's COMMIT, so the groups of every
//     server append in commit order, as appendLiveSQL's statements do, and
//     a feed reader that sees an id has seen every smaller one;
//   - the points allowance (fleet.IngestQuotaStore): each subject's takes
//     summed and counted all or none, as takeQuotaNSQL counts one: a sum
//     that does not fit fails the flush, and run one by one each member
//     counts its own (tx.takeQuota), so that those that fit commit and
//     the others are refused. The rows stay locked until the COMMIT: from
//     the flush on, not for the whole group.
//
// The parts run in the order the final SELECT reads them, the same in
// every group, so two groups' flushes lock live_seq and the allowances'
// rows in one order.
//
// Because members write nothing else in the usual case, a member needs no
// savepoint: it takes one only before its first statement that writes
// (an event, an alert, a point older than its vehicle's latest report...:
// tx.lazy), so that its failure still undoes its writes alone. A member
// that fails without one had written nothing; what it staged is dropped.
//
// A vehicle twice in one group: its second member would read, through the
// group's row cache, the row its first staged without writing. So a
// member that names a vehicle an earlier member of its group names is
// deferred to the next group (deferRepeats), which locks the vehicle after
// this one commits.
//
// When the flush fails (a count short, a trip's start taken, the database
// refusing it), the group's transaction is rolled back and its members run
// again at once, in the same group, one by one in their savepoints, their
// write-sets replayed through the transaction's methods (fleet.ReplayIngest):
// a member whose writes cannot be made gets its own error, the others
// commit.

// memberWrites are the write-sets one member of a group staged.
type memberWrites struct {
	sets []fleet.IngestWrites
}

func (m *memberWrites) add(w fleet.IngestWrites) { m.sets = append(m.sets, w) }

// deferRepeats moves the members of g that name a vehicle an earlier
// member names to a group of their own at the head of the queue.
func (gc *groupCommit) deferRepeats(g *group) {
	if len(g.members) < 2 {
		return
	}
	seen := map[string]bool{}
	var keep, later []*member
	for _, m := range g.members {
		if slices.ContainsFunc(m.vehicles, func(id string) bool { return seen[id] }) {
			later = append(later, m)
			continue
		}
		for _, id := range m.vehicles {
			seen[id] = true
		}
		keep = append(keep, m)
	}
	if len(later) == 0 {
		return
	}
	g.members = keep
	gc.mu.Lock()
	gc.queue = append([]*group{{members: later}}, gc.queue...)
	gc.mu.Unlock()
	gc.deferred.Add(int64(len(later)))
}

// column is a column of a part of the flush statement, and the type of
// its array.
type column struct{ name, typ string }

// The columns of each part of the flush statement, in the order of their
// values (flushArgs.add). flushVehicles are the columns UpdateVehicle
// sets, in vehicleArgs' order, created_at left out
// (TestFlushVehicleColumnsFollowVehicleArgs).
var (
	flushPoints = []column{{"vehicle_id", "text"}, {"ts", "int8"}, {"lat", "float8"}, {"lon", "float8"}, {"speed", "float8"},
		{"heading", "float8"}, {"odometer_km", "float8"}, {"attrs", "bytea"}}
	flushVehicles = []column{{"id", "text"}, {"account_id", "text"}, {"name", "text"}, {"vin", "text"}, {"make", "text"},
		{"model", "text"}, {"year", "int8"}, {"license_plate", "text"}, {"external_id", "text"}, {"tags", "text"},
		{"odometer_km", "float8"}, {"status", "text"}, {"speed", "float8"}, {"last_lat", "float8"}, {"last_lon", "float8"},
		{"last_at", "int8"}, {"last_heading", "float8"}, {"stationary_since", "int8"}, {"ignition", "int8"}, {"engine_hours", "float8"},
		{"fuel_level", "float8"}, {"fuel_l", "float8"}, {"power_v", "float8"}, {"telemetry_at", "int8"}, {"telemetry", "text"},
		{"last_attrs", "bytea"}, {"updated_at", "int8"}, {"alert_version", "int8"}}
	flushTrips = []column{{"id", "text"}, {"account_id", "text"}, {"vehicle_id", "text"}, {"status", "text"}, {"start_lat", "float8"},
		{"start_lon", "float8"}, {"start_at", "int8"}, {"end_lat", "float8"}, {"end_lon", "float8"}, {"end_at", "int8"},
		{"distance_km", "float8"}, {"great_circle_km", "float8"}, {"moving_seconds", "float8"}, {"max_speed", "float8"},
		{"start_odometer_km", "float8"}, {"end_odometer_km", "float8"}, {"odometer_all", "bool"}, {"points", "int8"},
		{"ignored_points", "int8"}, {"pending_ignored", "int8"}, {"last_at", "int8"}, {"stationary_since", "int8"},
		{"slices", "bytea"}, {"driver_id", "text"}}
	flushDevices = []column{{"id", "text"}, {"account_id", "text"}, {"vehicle_id", "text"}, {"protocol", "text"},
		{"last_seen_at", "int8"}, {"last_report", "text"}}
	flushEvents = []column{{"id", "text"}, {"account_id", "text"}, {"type", "text"}, {"created_at", "int8"}, {"data", "text"}}
	// flushParts are the parts in the order of the statement's
	// parameters.
	flushParts = [][]column{flushPoints, flushVehicles, flushTrips, flushDevices, flushEvents}
)

// flushShape says which parts of the flush statement a group's write-sets
// fill: bit k for flushParts[k] (points, vehicles, trips, devices,
// events), then the live feed's and the points allowance's. The statement
// holds those parts alone: PostgreSQL opens the table of each part and
// every index of it at each execution, rows or none, and a group of
// single-point reports writes no device row, seldom an event.
type flushShape uint8

const (
	shapeLive  flushShape = 1 << 5
	shapeQuota flushShape = 1 << 6
)

// flushCounts are the flush statement's results, in flushShape's order
// but for the live feed's two (its rows, and the readers notified): what
// each part wrote, 0 for a part it does not hold.
var flushCounts = [8]string{"(SELECT count(*) FROM p)", "(SELECT count(*) FROM v)", "(SELECT count(*) FROM t)",
	"(SELECT count(*) FROM d)", "(SELECT count(*) FROM e)", "(SELECT count(*) FROM l)",
	"(SELECT count(*) FROM (SELECT pg_notify('` + liveChannel + `', '')) n)", "(SELECT count(*) FROM q WHERE fits)"}

// flushStatements are the flush statements by shape, each made once
// (flushStatement).
var flushStatements [1 << 7]struct {
	once sync.Once
	text string
}

// flushText returns the flush statement of a shape (flushStatement): its
// parts, in flushShape's order, are each a data-modifying WITH query,
// {x.args} standing for its arrays as unnest's arguments, {x.names} for
// their columns (expand). They write the group's row cache's tables, which
// the group's members kept as they staged the rows (tx.keeping).
func flushText(t *tx, shape flushShape) (text string) {
	_ = t.keeping(cachedVehicles|cachedTrips, func() error {
		text = flushStatement(shape, &[7]string{
			`p AS (
	INSERT INTO points ({p.names}) SELECT * FROM unnest({p.args}) RETURNING 1
)`, `v AS (
	UPDATE vehicles AS v SET {v.sets}
	FROM unnest({v.args}) AS x({v.names})
	WHERE v.id = x.id AND v.account_id = x.account_id RETURNING 1
)`, `t AS (
	INSERT INTO trips ({t.names}) SELECT * FROM unnest({t.args})
	ON CONFLICT (id) DO UPDATE SET {t.sets}
	RETURNING 1
)`, `d AS (
	UPDATE devices AS d SET protocol = x.protocol, last_seen_at = x.last_seen_at, last_report = COALESCE(x.last_report, d.last_report)
	FROM unnest({d.args}) AS x({d.names})
	WHERE d.id = x.id AND d.account_id = x.account_id AND d.vehicle_id = x.vehicle_id RETURNING 1
)`, `e AS (
	INSERT INTO events ({e.names}) SELECT * FROM unnest({e.args}) RETURNING 1
)`, `s AS (
	UPDATE live_seq SET last = last + {l.total} WHERE id = 1 RETURNING last
), l AS (
	INSERT INTO live_reports (first_id, count, account_id, items, created_at)
	SELECT s.last - {l.total} + 1 + x.off, x.n, x.acct, x.items, x.at FROM s, unnest({l.args}) AS x(off, n, acct, items, at)
	RETURNING 1
)`, `q AS (
	INSERT INTO quotas AS q (subject, window_start, used, taken, req, lim)
	SELECT x.s, x.n, CASE WHEN x.r <= x.l THEN x.r ELSE 0 END, CASE WHEN x.r <= x.l THEN x.r ELSE 0 END, x.r, x.l
	FROM unnest({q.args}) AS x(s, n, r, l) ORDER BY x.s
	{q.conflict}
	RETURNING taken = req AS fits
)`})
		return nil
	})
	return text
}

// flushStatement returns the flush statement of a shape, made once of the
// parts it holds.
func flushStatement(shape flushShape, ctes *[7]string) string {
	st := &flushStatements[shape]
	st.once.Do(func() {
		var parts, cols []string
		for k := range ctes {
			if shape&(1<<k) != 0 {
				parts = append(parts, ctes[k])
			}
		}
		for i, c := range flushCounts {
			bit := i
			if i >= 6 { // the readers notified are the live feed's; then the allowance
				bit = i - 1
			}
			if shape&(1<<bit) == 0 {
				c = "0::bigint"
			}
			cols = append(cols, c)
		}
		st.text = expand("WITH "+strings.Join(parts, ", ")+"\nSELECT "+strings.Join(cols, ", "), shape)
	})
	return st.text
}

// expand fills a template of the flush statement of a shape: {p.args} is
// the points' arrays as unnest's arguments ($n::typ[], numbered across the
// shape's parts in flushParts' order), {p.names} their columns, {v.sets}
// the vehicles' columns but their key, set from x; {t.sets} the trips'
// columns but their key, set from excluded; then the live feed's and the
// allowance's, when the shape holds them.
func expand(template string, shape flushShape) string {
	r := []string{}
	n := 0
	for k, part := range flushParts {
		if shape&(1<<k) == 0 {
			continue
		}
		var args, names, sets []string
		for i, col := range part {
			n++
			args = append(args, fmt.Sprintf("$%d::%s[]", n, col.typ))
			names = append(names, col.name)
			if k == 1 && i >= 2 {
				sets = append(sets, col.name+" = x."+col.name)
			}
			if k == 2 && i >= 3 {
				sets = append(sets, col.name+" = excluded."+col.name)
			}
		}
		key := string("pvtde"[k])
		r = append(r, "{"+key+".args}", strings.Join(args, ", "), "{"+key+".names}", strings.Join(names, ", "),
			"{"+key+".sets}", strings.Join(sets, ", "))
	}
	if shape&shapeLive != 0 {
		// The live feed's part (liveArgs): the ids it takes, then its
		// rows' arrays, as appendLiveSQL's.
		r = append(r, "{l.total}", fmt.Sprintf("$%d::bigint", n+1),
			"{l.args}", fmt.Sprintf("$%d::bigint[], $%d::bigint[], $%d::text[], $%d::text[], $%d::bigint[]", n+2, n+3, n+4, n+5, n+6))
		n += 6
	}
	if shape&shapeQuota != 0 {
		// The points allowance's part (quotaArgs): its subjects' arrays,
		// then the window's length and the zero window start.
		r = append(r, "{q.args}", fmt.Sprintf("$%d::text[], $%d::bigint[], $%d::bigint[], $%d::bigint[]", n+1, n+2, n+3, n+4),
			"{q.conflict}", takeNConflict(fmt.Sprintf("$%d::bigint", n+5), fmt.Sprintf("$%d::bigint", n+6)))
	}
	return strings.NewReplacer(r...).Replace(template)
}

// flushArgs gathers write-sets into the flush statement's arrays (each
// part's columns, by flushParts), and what each part must count.
type flushArgs struct {
	parts                                    [5][][]any
	points, vehicles, trips, devices, events int64
	live                                     liveArgs  // the live feed's rows
	quota                                    quotaArgs // the points allowance's takes
	err                                      error     // a row of the wrong length
}

// quotaArgs gathers the takes of a group's write-sets (fleet.QuotaTake),
// one row per subject: its units summed, at the latest of their times.
// Counted together, they fit or not together: a subject whose sum does
// not fit fails the statement, and the members, run again one by one,
// each count their own (tx.takeQuota).
type quotaArgs struct {
	subjects         []string
	nows, ns, limits []int64
	index            map[string]int
}

func (a *quotaArgs) add(q fleet.QuotaTake) error {
	now := toDB(fleet.Timestamp(q.Now))
	if i, ok := a.index[q.Subject]; ok {
		if a.limits[i] != int64(q.Limit) { // a limit changed meanwhile: one by one
			return fmt.Errorf("sqlstore: flush: two limits of %s", q.Subject)
		}
		a.ns[i] += int64(q.N)
		a.nows[i] = max(a.nows[i], now)
		return nil
	}
	if a.index == nil {
		a.index = map[string]int{}
	}
	a.index[q.Subject] = len(a.subjects)
	a.subjects, a.nows, a.ns, a.limits = append(a.subjects, q.Subject), append(a.nows, now), append(a.ns, int64(q.N)), append(a.limits, int64(q.Limit))
	return nil
}

func newFlushArgs() *flushArgs {
	a := &flushArgs{}
	for i, part := range flushParts {
		a.parts[i] = make([][]any, len(part))
	}
	return a
}

// row appends one row's values to part k.
func (a *flushArgs) row(k int, vals ...any) {
	if len(vals) != len(a.parts[k]) {
		a.err = fmt.Errorf("sqlstore: flush: %d values for the %d columns of part %d", len(vals), len(a.parts[k]), k)
		return
	}
	for i, v := range vals {
		a.parts[k][i] = append(a.parts[k][i], v)
	}
}

// add adds a write-set.
func (a *flushArgs) add(w fleet.IngestWrites) error {
	for _, vp := range w.Points {
		for _, p := range vp.Points {
			a.row(0, vp.VehicleID, toDB(p.Timestamp), p.Latitude, p.Longitude, floatArg(p.Speed), floatArg(p.Heading), floatArg(p.OdometerKm),
				attrsArg(p.Attributes))
			a.points++
		}
	}
	for _, v := range w.Vehicles {
		args, err := vehicleArgs(v)
		if err != nil {
			return err
		}
		// vehicleArgs: ... stationary_since, created_at, updated_at, alert_version.
		n := len(args)
		a.row(1, append(append([]any{v.ID, v.AccountID}, args[:n-3]...), args[n-2:]...)...)
		a.vehicles++
	}
	for _, tr := range w.Trips {
		a.row(2, tr.ID, tr.AccountID, tr.VehicleID, string(tr.Status), tr.Start.Latitude, tr.Start.Longitude,
			toDB(tr.Start.Timestamp), tr.End.Latitude, tr.End.Longitude, toDB(tr.End.Timestamp), tr.DistanceKm,
			tr.GreatCircleKm, tr.MovingSeconds, tr.MaxSpeed, floatArg(tr.StartOdometerKm), floatArg(tr.EndOdometerKm),
			tr.OdometerAll, int64(tr.Points), int64(tr.IgnoredPoints), int64(tr.PendingIgnored), toDB(tr.LastAt), toNullDB(tr.StationarySince),
			encodeSlices(tr.Slices), driverArg(tr.DriverID))
		a.trips++
	}
	for _, d := range w.Devices {
		report, err := encodeReport(d.LastReport)
		if err != nil {
			return err
		}
		a.row(3, d.ID, d.AccountID, d.VehicleID, d.Protocol, toNullDB(d.LastSeenAt), report)
		a.devices++
	}
	for _, e := range w.Events {
		a.row(4, e.ID, e.AccountID, e.Type, toDB(e.CreatedAt), string(e.Data))
		a.events++
	}
	for _, q := range w.Quota {
		if err := a.quota.add(q); err != nil {
			return err
		}
	}
	if w.Live != nil && len(w.Live.Items) > 0 {
		return a.live.addJoined(*w.Live)
	}
	return nil
}

// shape returns the parts that a's write-sets fill.
func (a *flushArgs) shape() flushShape {
	var sh flushShape
	for k, n := range [5]int64{a.points, a.vehicles, a.trips, a.devices, a.events} {
		if n > 0 {
			sh |= 1 << k
		}
	}
	if a.live.total > 0 {
		sh |= shapeLive
	}
	if len(a.quota.subjects) > 0 {
		sh |= shapeQuota
	}
	return sh
}

// args returns the arguments of the statement of a's shape: each column
// of its parts as a typed array.
func (a *flushArgs) args() ([]any, error) {
	if a.err != nil {
		return nil, a.err
	}
	shape := a.shape()
	var out []any
	for k, part := range flushParts {
		if shape&(1<<k) == 0 {
			continue
		}
		for i, col := range part {
			arr, err := typedArray(col.typ, a.parts[k][i])
			if err != nil {
				return nil, fmt.Errorf("sqlstore: flush %s: %w", col.name, err)
			}
			out = append(out, arr)
		}
	}
	if l := &a.live; shape&shapeLive != 0 {
		out = append(out, l.total, l.offs, l.ns, l.accts, l.items, l.ats)
	}
	if q := &a.quota; shape&shapeQuota != 0 {
		out = append(out, q.subjects, q.nows, q.ns, q.limits, fleet.QuotaWindow.Microseconds(), toDB(time.Time{}))
	}
	return out, nil
}

// typedArray converts a column's values (as the statements' arguments
// are: nil for NULL) into a slice PostgreSQL takes as an array of typ.
func typedArray(typ string, vals []any) (any, error) {
	switch typ {
	case "text":
		out := make([]*string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
			case string:
				out[i] = &v
			default:
				return nil, fmt.Errorf("%T is not text", v)
			}
		}
		return out, nil
	case "int8":
		out := make([]*int64, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
			case int64:
				out[i] = &v
			case int:
				n := int64(v)
				out[i] = &n
			default:
				return nil, fmt.Errorf("%T is not int8", v)
			}
		}
		return out, nil
	case "float8":
		out := make([]*float64, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
			case float64:
				out[i] = &v
			default:
				return nil, fmt.Errorf("%T is not float8", v)
			}
		}
		return out, nil
	case "bool":
		out := make([]bool, len(vals))
		for i, v := range vals {
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("%T is not bool", v)
			}
			out[i] = b
		}
		return out, nil
	case "bytea":
		out := make([][]byte, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil: // NULL
			case []byte:
				out[i] = v
				if v == nil {
					out[i] = []byte{}
				}
			default:
				return nil, fmt.Errorf("%T is not bytea", v)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("no array of %s", typ)
}

// flush applies the write-sets of g's members that ran, in one statement;
// an error means that the group must run again one by one.
func (gc *groupCommit) flush(g *group) error {
	a := newFlushArgs()
	for _, m := range g.members {
		if !m.ran || m.staged == nil {
			continue
		}
		for _, w := range m.staged.sets {
			if err := a.add(w); err != nil {
				return err
			}
		}
	}
	if a.points+a.vehicles+a.trips+a.devices+a.events+a.live.total+int64(len(a.quota.subjects)) == 0 {
		return nil
	}
	args, err := a.args()
	if err != nil {
		return err
	}
	t := &tx{ctx: g.ctx, d: gc.sh.d, tx: g.tx, roundTrips: &gc.sh.trips}
	var points, vehicles, trips, devices, events, live, notified, quotas int64
	// The group's row cache (lockVehicles) serves its members' reads and
	// ends with the group, after this last statement: it has nothing to
	// keep.
	err = t.keeping(cachedVehicles|cachedTrips, func() error {
		return t.queryRow(flushText(t, a.shape()), args...).Scan(&points, &vehicles, &trips, &devices, &events, &live, &notified, &quotas)
	})
	if err != nil {
		return fmt.Errorf("sqlstore: apply the group's write-sets: %w", err)
	}
	lives, takes := int64(len(a.live.ns)), int64(len(a.quota.subjects))
	if points != a.points || vehicles != a.vehicles || trips != a.trips || devices != a.devices || events != a.events || live != lives || quotas != takes {
		return fmt.Errorf("sqlstore: apply the group's write-sets: wrote %d points, %d vehicles, %d trips, %d devices, %d events, %d live rows, %d takes of %d, %d, %d, %d, %d, %d, %d",
			points, vehicles, trips, devices, events, live, quotas, a.points, a.vehicles, a.trips, a.devices, a.events, lives, takes)
	}
	return nil
}
