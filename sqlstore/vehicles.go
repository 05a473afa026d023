package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

const vehicleColumns = `v.id, v.account_id, v.name, v.vin, v.make, v.model, v.year, v.license_plate, v.external_id,
	v.tags, v.odometer_km, v.status, v.speed, v.last_lat, v.last_lon, v.last_at, v.last_heading,
	v.stationary_since, v.ignition, v.engine_hours, v.fuel_level, v.fuel_l, v.power_v, v.telemetry_at, v.telemetry,
	v.last_attrs, v.created_at, v.updated_at, v.alert_version, v.driver_id`

func scanVehicle(s scanner) (fleet.Vehicle, error) {
	var v fleet.Vehicle
	var year sql.NullInt64
	var ext, driver sql.NullString
	var tags, status string
	var odo, speed, lat, lon, heading sql.NullFloat64
	var lastAt, since sql.NullInt64
	var ignition, telemetryAt sql.NullInt64
	var hours, fuelLevel, fuelL, power sql.NullFloat64
	var memory sql.NullString
	var lastAttrs []byte
	var created, updated int64
	if err := s.Scan(&v.ID, &v.AccountID, &v.Name, &v.VIN, &v.Make, &v.Model, &year, &v.LicensePlate, &ext,
		&tags, &odo, &status, &speed, &lat, &lon, &lastAt, &heading, &since,
		&ignition, &hours, &fuelLevel, &fuelL, &power, &telemetryAt, &memory, &lastAttrs,
		&created, &updated, &v.AlertsVersion, &driver); err != nil {
		return fleet.Vehicle{}, err
	}
	if ignition.Valid {
		on := ignition.Int64 != 0
		v.Ignition = &on
	}
	v.EngineHours, v.FuelLevel, v.FuelL, v.PowerV = nullFloat(hours), nullFloat(fuelLevel), nullFloat(fuelL), nullFloat(power)
	v.TelemetryAt = fromNullDB(telemetryAt)
	if err := v.LastAttributes.UnmarshalBinary(lastAttrs); err != nil {
		return fleet.Vehicle{}, fmt.Errorf("sqlstore: decode last attributes: %w", err)
	}
	if memory.Valid && memory.String != "" {
		if err := parseTelemetry(memory.String, &v.Telemetry); err != nil {
			return fleet.Vehicle{}, fmt.Errorf("sqlstore: decode telemetry: %w", err)
		}
	}
	if year.Valid {
		y := int(year.Int64)
		v.Year = &y
	}
	v.ExternalID, v.DriverID = ext.String, driver.String
	if err := json.Unmarshal([]byte(tags), &v.Tags); err != nil {
		return fleet.Vehicle{}, fmt.Errorf("sqlstore: decode tags: %w", err)
	}
	v.OdometerKm, v.Speed = nullFloat(odo), nullFloat(speed)
	v.Status = fleet.VehicleStatus(status)
	if lastAt.Valid {
		v.LastLocation = &fleet.Position{Latitude: lat.Float64, Longitude: lon.Float64, Timestamp: fromDB(lastAt.Int64), Heading: nullFloat(heading)}
	}
	v.StationarySince = fromNullDB(since)
	v.CreatedAt, v.UpdatedAt = fromDB(created), fromDB(updated)
	return v, nil
}

func nullFloat(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	v := f.Float64
	return &v
}

func floatArg(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// vehicleArgs are the stored columns of v after id and account_id, in
// vehicleColumns order, ending with created_at, updated_at and
// alert_version: every column but driver_id, which SetVehicleDriver alone
// writes.
func vehicleArgs(v fleet.Vehicle) ([]any, error) {
	tags := v.Tags
	if tags == nil {
		tags = []string{}
	}
	tb, err := json.Marshal(tags)
	if err != nil {
		return nil, err
	}
	var year, ext, lat, lon, lastAt, heading any
	if v.Year != nil {
		year = int64(*v.Year)
	}
	if v.ExternalID != "" {
		ext = v.ExternalID
	}
	if l := v.LastLocation; l != nil {
		lat, lon, lastAt, heading = l.Latitude, l.Longitude, toDB(l.Timestamp), floatArg(l.Heading)
	}
	var ignition, memory any
	if v.Ignition != nil {
		ignition = int64(0)
		if *v.Ignition {
			ignition = int64(1)
		}
	}
	if !v.Telemetry.IsZero() {
		memory = string(appendTelemetry(make([]byte, 0, 128), &v.Telemetry))
	}
	return []any{v.Name, v.VIN, v.Make, v.Model, year, v.LicensePlate, ext, string(tb), floatArg(v.OdometerKm),
		string(v.Status), floatArg(v.Speed), lat, lon, lastAt, heading, toNullDB(v.StationarySince),
		ignition, floatArg(v.EngineHours), floatArg(v.FuelLevel), floatArg(v.FuelL), floatArg(v.PowerV), toNullDB(v.TelemetryAt), memory,
		attrsArg(v.LastAttributes), toDB(v.CreatedAt), toDB(v.UpdatedAt), v.AlertsVersion}, nil
}

// CreateVehicle implements fleet.Tx.
func (t *tx) CreateVehicle(v fleet.Vehicle) error {
	args, err := vehicleArgs(v)
	if err != nil {
		return err
	}
	// A new row makes no cached one stale.
	err = t.keeping(cachedVehicles, func() error {
		return t.insert(`INSERT INTO vehicles (id, account_id, name, vin, make, model, year, license_plate, external_id,
			tags, odometer_km, status, speed, last_lat, last_lon, last_at, last_heading, stationary_since,
			ignition, engine_hours, fuel_level, fuel_l, power_v, telemetry_at, telemetry, last_attrs, created_at, updated_at, alert_version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, append([]any{v.ID, v.AccountID}, args...)...)
	})
	switch classify(err) {
	case errUnique:
		return conflict(err, "A vehicle with this id or external_id exists.")
	case errForeignKey:
		return notFound(err, "account", v.AccountID)
	}
	return wrap(err, "create vehicle")
}

// Vehicle implements fleet.Tx.
func (t *tx) Vehicle(accountID, id string) (fleet.Vehicle, error) {
	if t.cache != nil {
		if v, ok := t.cache.vehicles[id]; ok && v.AccountID == accountID {
			return v.Clone(), nil
		}
	}
	lock := ""
	if t.lockRows && !t.locked[id] {
		lock = t.d.forUpdate // group_postgres.go
	}
	v, err := scanVehicle(t.queryRow(`SELECT `+vehicleColumns+` FROM vehicles v WHERE v.id = ? AND v.account_id = ?`+lock, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Vehicle{}, fleet.NotFound("vehicle", id)
	}
	if err == nil && t.cache != nil {
		t.cache.setVehicle(v.Clone())
	}
	return v, wrap(t.failed(err), "read vehicle")
}

// Vehicles implements fleet.Tx. Status, having reported and ids narrow the
// query; the filter's Match decides, so the rule is written once.
func (t *tx) Vehicles(accountID string, f fleet.VehicleFilter, p fleet.Page) ([]fleet.Vehicle, error) {
	out := []fleet.Vehicle{}
	if p.Limit <= 0 {
		return out, nil
	}
	where := []string{"v.account_id = ?", "v.id > ?"}
	args := []any{accountID, p.After}
	if f.Status != "" {
		where, args = append(where, "v.status = ?"), append(args, string(f.Status))
	}
	if f.Reported {
		where = append(where, "v.last_at IS NOT NULL")
	}
	if len(f.IDs) > 0 {
		where = append(where, "v.id IN (?"+strings.Repeat(", ?", len(f.IDs)-1)+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	chunk := max(p.Limit, 100)
	after := p.After
	for len(out) < p.Limit {
		args[1] = after
		rows, err := t.query(t.d.q(`SELECT `+vehicleColumns+` FROM vehicles v WHERE `+
			strings.Join(where, " AND ")+` ORDER BY v.id LIMIT ?`), append(args, int64(chunk))...)
		if err != nil {
			return nil, wrap(t.failed(err), "list vehicles")
		}
		n := 0
		for rows.Next() {
			v, err := scanVehicle(rows)
			if err != nil {
				rows.Close()
				return nil, wrap(err, "list vehicles")
			}
			n++
			after = v.ID
			if len(out) < p.Limit && f.Match(&v) {
				out = append(out, v)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, wrap(t.failed(err), "list vehicles")
		}
		if n < chunk {
			break
		}
	}
	return out, nil
}

// UpdateVehicle implements fleet.Tx.
func (t *tx) UpdateVehicle(v fleet.Vehicle) error {
	args, err := vehicleArgs(v)
	if err != nil {
		return err
	}
	kept := len(args) - 3                                                             // args[:kept] are the same in the row cache's copy
	args = append(args[:kept], toDB(v.UpdatedAt), v.AlertsVersion, v.ID, v.AccountID) // created_at never changes
	var n int64
	write := t.savepoint
	if v.ExternalID == "" {
		// NULL takes no place in vehicles_external_id: nothing in the
		// statement can fail but the transaction itself, so it needs no
		// savepoint (two round trips fewer on every report on PostgreSQL).
		write = func(fn func() error) error { return fn() }
	}
	err = t.keeping(cachedVehicles, func() error {
		return write(func() (err error) {
			n, err = t.update(`UPDATE vehicles SET name = ?, vin = ?, make = ?, model = ?, year = ?, license_plate = ?,
			external_id = ?, tags = ?, odometer_km = ?, status = ?, speed = ?, last_lat = ?, last_lon = ?, last_at = ?,
			last_heading = ?, stationary_since = ?, ignition = ?, engine_hours = ?, fuel_level = ?, fuel_l = ?, power_v = ?,
			telemetry_at = ?, telemetry = ?, last_attrs = ?, updated_at = ?, alert_version = ? WHERE id = ? AND account_id = ?`, args...)
			return err
		})
	})
	if classify(err) == errUnique {
		return conflict(err, "A vehicle with external_id %q exists.", v.ExternalID)
	}
	if err != nil {
		return wrap(err, "update vehicle")
	}
	if n == 0 {
		return fleet.NotFound("vehicle", v.ID)
	}
	if c := t.cache; c != nil {
		// The row as a read would return it: created_at and driver_id are
		// the stored ones, which only a cached copy knows without reading.
		old, ok := c.vehicles[v.ID]
		if ok && old.AccountID == v.AccountID {
			row := append(argsRow{v.ID, v.AccountID}, args[:kept]...)
			if nv, err := scanVehicle(append(row, toDB(old.CreatedAt), toDB(v.UpdatedAt), v.AlertsVersion, nullText(old.DriverID))); err == nil {
				c.setVehicle(nv)
				return nil
			}
		}
		c.forgetVehicle(v.ID)
	}
	return nil
}

// DeleteVehicle implements fleet.Tx. Its points go first (on PostgreSQL no
// foreign key ties them to it: migration 0026), then the vehicle, and its
// trips and schedules with it by ON DELETE CASCADE.
func (t *tx) DeleteVehicle(accountID, id string) error {
	if _, err := t.update(`DELETE FROM points WHERE vehicle_id = ?
		AND EXISTS (SELECT 1 FROM vehicles WHERE id = ? AND account_id = ?)`, id, id, accountID); err != nil {
		return wrap(err, "delete vehicle")
	}
	var n int64
	// its trips and schedules go with it (ON DELETE CASCADE)
	err := t.keeping(cachedVehicles|cachedTrips|cachedSchedules, func() (err error) {
		n, err = t.update(`DELETE FROM vehicles WHERE id = ? AND account_id = ?`, id, accountID)
		return err
	})
	if c := t.cache; c != nil {
		c.forgetVehicle(id)
		c.forgetTrip(id)
		c.forgetSchedules(id)
	}
	if err != nil {
		return wrap(err, "delete vehicle")
	}
	if n == 0 {
		return fleet.NotFound("vehicle", id)
	}
	return nil
}

// VehiclesToSweep implements fleet.Tx. On PostgreSQL the rows are locked
// and rows locked by a concurrent sweep are skipped.
func (t *tx) VehiclesToSweep(stationaryBefore, reportedBefore time.Time, limit int) ([]fleet.Vehicle, error) {
	lock := ""
	if !t.readOnly {
		lock = t.d.skipLocked
	}
	return t.vehicles("sweep vehicles", `SELECT `+vehicleColumns+` FROM vehicles v
		WHERE v.status <> 'offline' AND v.last_at IS NOT NULL
		  AND (v.last_at <= ? OR (v.status = 'idle' AND v.stationary_since <= ?))
		ORDER BY v.last_at, v.id LIMIT ?`+lock, toDB(reportedBefore), toDB(stationaryBefore), int64(limit))
}

// vehicles runs a query of vehicleColumns and scans its rows.
func (t *tx) vehicles(doing, query string, args ...any) ([]fleet.Vehicle, error) {
	rows, err := t.query(t.d.q(query), args...)
	if err != nil {
		return nil, wrap(t.failed(err), doing)
	}
	defer rows.Close()
	var out []fleet.Vehicle
	for rows.Next() {
		v, err := scanVehicle(rows)
		if err != nil {
			return nil, wrap(err, doing)
		}
		out = append(out, v)
	}
	return out, wrap(t.failed(rows.Err()), doing)
}

// VehiclesGoneSilent implements fleet.Tx. A vehicle's silence at now,
// in whole minutes, is (now - last_at) / 60000000 (integer division); it
// reached that many minutes after since if last_at is after since less
// them. Like the status sweep, it reads the table whole: no index may hold
// last_at (see migration 0004).
func (t *tx) VehiclesGoneSilent(since, now time.Time, minutes []int, after string, limit int) ([]fleet.Vehicle, error) {
	if len(minutes) == 0 || limit <= 0 {
		return nil, nil
	}
	const minute = int64(time.Minute / time.Microsecond)
	n, s := toDB(now), toDB(since)
	lo, hi := slices.Min(minutes), slices.Max(minutes)
	args := []any{n - int64(lo)*minute, s - int64(hi)*minute, n}
	for _, m := range minutes {
		args = append(args, int64(m))
	}
	args = append(args, s, n, after, int64(limit))
	return t.vehicles("find vehicles gone silent", `SELECT `+vehicleColumns+` FROM vehicles v
		WHERE v.last_at IS NOT NULL AND v.last_at <= ? AND v.last_at > ?
		  AND (? - v.last_at) / `+fmt.Sprint(minute)+` IN (?`+strings.Repeat(", ?", len(minutes)-1)+`)
		  AND v.last_at > ? - ((? - v.last_at) / `+fmt.Sprint(minute)+`) * `+fmt.Sprint(minute)+`
		  AND v.id > ?
		ORDER BY v.id LIMIT ?`, args...)
}

// pointsPerInsert bounds one multi-row INSERT (8 parameters a row, well
// under SQLite's and PostgreSQL's parameter limits).
const pointsPerInsert = 500

// InsertPoints implements fleet.Tx: multi-row inserts that skip duplicates
// and return the timestamps they stored.
func (t *tx) InsertPoints(vehicleID string, points []fleet.Point) ([]fleet.Point, error) {
	if t.readOnly {
		return nil, errReadOnly
	}
	if t.d.name == Postgres {
		return t.insertPointsArrays(vehicleID, points)
	}
	stored := make([]fleet.Point, 0, len(points))
	for start := 0; start < len(points); start += pointsPerInsert {
		part := points[start:min(start+pointsPerInsert, len(points))]
		var b strings.Builder
		b.WriteString(`INSERT INTO points (vehicle_id, ts, lat, lon, speed, heading, odometer_km, attrs) VALUES `)
		args := make([]any, 0, 8*len(part))
		byTS := make(map[int64]int, len(part))
		for i, p := range part {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
			ts := toDB(p.Timestamp)
			byTS[ts] = i
			args = append(args, vehicleID, ts, p.Latitude, p.Longitude, floatArg(p.Speed), floatArg(p.Heading), floatArg(p.OdometerKm),
				attrsArg(p.Attributes))
		}
		b.WriteString(` ON CONFLICT (vehicle_id, ts) DO NOTHING RETURNING ts`)
		rows, err := t.query(t.d.q(b.String()), args...)
		if err != nil {
			if classify(err) == errForeignKey {
				return nil, notFound(err, "vehicle", vehicleID)
			}
			return nil, wrap(t.failed(err), "insert points")
		}
		if stored, err = t.appendInserted(stored, rows, part, byTS); err != nil {
			return nil, err
		}
	}
	return stored, nil
}

// insertPointsSQL inserts points given as one array per column: on
// PostgreSQL, one statement text whatever their number, prepared once, its
// eight arguments encoded as arrays rather than eight per point.
const insertPointsSQL = `INSERT INTO points (vehicle_id, ts, lat, lon, speed, heading, odometer_km, attrs)
	SELECT $1::text, x.* FROM unnest($2::int8[], $3::float8[], $4::float8[], $5::float8[], $6::float8[], $7::float8[], $8::bytea[]) AS x
	ON CONFLICT (vehicle_id, ts) DO NOTHING RETURNING ts`

// insertPointsArrays is InsertPoints on PostgreSQL.
func (t *tx) insertPointsArrays(vehicleID string, points []fleet.Point) ([]fleet.Point, error) {
	n := len(points)
	ts, lat, lon := make([]int64, n), make([]float64, n), make([]float64, n)
	speed, heading, odo := make([]*float64, n), make([]*float64, n), make([]*float64, n)
	attrs := make([][]byte, n)
	byTS := make(map[int64]int, n)
	for i := range points {
		p := &points[i]
		ts[i], lat[i], lon[i] = toDB(p.Timestamp), p.Latitude, p.Longitude
		speed[i], heading[i], odo[i] = p.Speed, p.Heading, p.OdometerKm
		if len(p.Attributes) > 0 {
			attrs[i], _ = p.Attributes.AppendBinary(make([]byte, 0, 8*len(p.Attributes))) // it cannot fail
		}
		byTS[ts[i]] = i
	}
	// No foreign key checks the vehicle here (migration 0026): the
	// caller's transaction has read it, under its row lock.
	rows, err := t.query(insertPointsSQL, vehicleID, ts, lat, lon, speed, heading, odo, attrs)
	if err != nil {
		return nil, wrap(t.failed(err), "insert points")
	}
	return t.appendInserted(make([]fleet.Point, 0, n), rows, points, byTS)
}

// appendInserted appends to stored the points of part that an INSERT ...
// ON CONFLICT DO NOTHING RETURNING ts inserted (rows, which it closes),
// in part's order: byTS gives a timestamp's index in part.
func (t *tx) appendInserted(stored []fleet.Point, rows *sql.Rows, part []fleet.Point, byTS map[int64]int) ([]fleet.Point, error) {
	inserted := make([]bool, len(part))
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			rows.Close()
			return nil, wrap(err, "insert points")
		}
		inserted[byTS[at]] = true
	}
	err := rows.Err()
	rows.Close()
	if err != nil {
		return nil, wrap(t.failed(err), "insert points")
	}
	for i, ok := range inserted {
		if ok {
			stored = append(stored, part[i])
		}
	}
	return stored, nil
}

// Points implements fleet.Tx.
func (t *tx) Points(vehicleID string, from, to time.Time, limit int) ([]fleet.Point, error) {
	var blobs fleet.AttributeBlobs
	out, err := t.StoredPoints(vehicleID, from, to, limit, &blobs)
	if err != nil {
		return nil, err
	}
	// The page's attributes are decoded together, into memory they share.
	decoded, err := blobs.Decode()
	if err != nil {
		return nil, wrap(err, "read points")
	}
	for i := range out {
		out[i].Attributes = decoded[i]
	}
	return out, nil
}

// StoredPoints implements fleet.StoredPointsTx.
func (t *tx) StoredPoints(vehicleID string, from, to time.Time, limit int, blobs *fleet.AttributeBlobs) ([]fleet.Point, error) {
	out := []fleet.Point{}
	rows, err := t.query(t.d.q(`SELECT ts, lat, lon, speed, heading, odometer_km, attrs FROM points
		WHERE vehicle_id = ? AND ts >= ? AND ts <= ? ORDER BY ts LIMIT ?`), vehicleID, toDB(from), toDB(to), int64(limit))
	if err != nil {
		return nil, wrap(t.failed(err), "read points")
	}
	defer rows.Close()
	var attrs sql.RawBytes // copied into blobs before the next row
	for rows.Next() {
		var ts int64
		var speed, heading, odo sql.NullFloat64
		p := fleet.Point{VehicleID: vehicleID}
		if err := rows.Scan(&ts, &p.Latitude, &p.Longitude, &speed, &heading, &odo, &attrs); err != nil {
			return nil, wrap(err, "read points")
		}
		p.Timestamp, p.Speed, p.Heading, p.OdometerKm = fromDB(ts), nullFloat(speed), nullFloat(heading), nullFloat(odo)
		blobs.Add(attrs)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(t.failed(err), "read points")
	}
	return out, nil
}

// AppendEvent implements fleet.Tx.
func (t *tx) AppendEvent(e fleet.Event) error {
	err := t.insert(`INSERT INTO events (id, account_id, type, created_at, data) VALUES (?, ?, ?, ?, ?)`,
		e.ID, e.AccountID, e.Type, toDB(e.CreatedAt), string(e.Data))
	if classify(err) == errUnique {
		return conflict(err, "An event with id %q exists.", e.ID)
	}
	return wrap(err, "append event")
}

func scanEvent(s scanner) (fleet.Event, error) {
	var e fleet.Event
	var created int64
	var data string
	if err := s.Scan(&e.ID, &e.AccountID, &e.Type, &created, &data); err != nil {
		return fleet.Event{}, err
	}
	e.CreatedAt, e.Data = fromDB(created), json.RawMessage(data)
	return e, nil
}

// Event implements fleet.Tx.
func (t *tx) Event(accountID, id string) (fleet.Event, error) {
	e, err := scanEvent(t.queryRow(`SELECT id, account_id, type, created_at, data FROM events WHERE id = ? AND account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Event{}, fleet.NotFound("event", id)
	}
	return e, wrap(t.failed(err), "read event")
}

// Events implements fleet.Tx.
func (t *tx) Events(accountID string, f fleet.EventFilter, p fleet.Page) ([]fleet.Event, error) {
	out := []fleet.Event{}
	if p.Limit <= 0 {
		return out, nil
	}
	q := `SELECT id, account_id, type, created_at, data FROM events WHERE account_id = ? AND id > ?`
	args := []any{accountID, p.After}
	if f.Type != "" {
		q, args = q+` AND type = ?`, append(args, f.Type)
	}
	if !f.From.IsZero() {
		q, args = q+` AND created_at >= ?`, append(args, toDB(f.From))
	}
	rows, err := t.query(t.d.q(q+` ORDER BY id LIMIT ?`), append(args, int64(p.Limit))...)
	if err != nil {
		return nil, wrap(t.failed(err), "list events")
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, wrap(err, "list events")
		}
		out = append(out, e)
	}
	return out, wrap(t.failed(rows.Err()), "list events")
}

// PurgeEvents implements fleet.Store.
func (s *Store) PurgeEvents(ctx context.Context, before time.Time) (int, error) {
	return s.purge(ctx, `DELETE FROM events WHERE created_at < ?`, before, "purge events")
}

// PurgePoints implements fleet.Store.
func (s *Store) PurgePoints(ctx context.Context, before time.Time) (int, error) {
	return s.purge(ctx, `DELETE FROM points WHERE ts < ?`, before, "purge points")
}

// ApplyIngest implements fleet.Tx: a PostgreSQL group in write-set mode
// stages w to apply it with the group's other members' (group_writes.go);
// otherwise, on PostgreSQL, its takes are counted in the transaction
// (fleet.IngestQuotaStore), w is replayed, and its live reports are
// appended to the feed (fleet.IngestLiveFeed).
func (t *tx) ApplyIngest(w fleet.IngestWrites) error {
	if t.readOnly {
		return errReadOnly
	}
	if t.stage != nil {
		t.stage.add(w)
		return nil
	}
	if t.d.name == Postgres {
		for _, q := range w.Quota {
			if err := t.takeQuota(q); err != nil {
				return err
			}
		}
	}
	if err := fleet.ReplayIngest(t, w); err != nil {
		return err
	}
	if w.Live == nil || len(w.Live.Items) == 0 || t.d.name != Postgres {
		return nil
	}
	a := &liveArgs{}
	if err := a.add(*w.Live); err != nil {
		return err
	}
	var rows int64
	var notified string
	if err := t.queryRow(appendLiveSQL, a.total, a.offs, a.ns, a.accts, a.items, a.ats).Scan(&rows, &notified); err != nil {
		return wrap(t.failed(err), "append to the live feed")
	}
	if rows != 1 {
		return fmt.Errorf("sqlstore: live feed: appended %d rows of 1", rows)
	}
	return nil
}
