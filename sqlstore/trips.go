package sqlstore

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// encodeSlices writes a trip's slices as a version byte (2) and 32 bytes
// each: the start (unix seconds), the kilometres, the moving seconds and
// the idling seconds, little-endian. A summary reads tens of thousands of
// trips: this decodes without allocating more than the slice.
//
// Trips written before slices kept idling (migration 0018) hold 24 bytes a
// slice and no version byte: 24n bytes, a length 1 + 32m never is, so the
// two read apart; theirs decode with IdleSeconds 0.
func encodeSlices(sl []fleet.TripSlice) []byte {
	if len(sl) == 0 {
		return []byte{}
	}
	b := make([]byte, 0, 1+32*len(sl))
	b = append(b, slicesVersion)
	for _, x := range sl {
		b = binary.LittleEndian.AppendUint64(b, uint64(x.Start))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.Km))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.MovingSeconds))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.IdleSeconds))
	}
	return b
}

// slicesVersion is the first byte of slices with idling seconds.
const slicesVersion = 2

func decodeSlices(b []byte) ([]fleet.TripSlice, error) {
	size := 24
	switch {
	case len(b) == 0:
		return nil, nil
	case len(b)%32 == 1 && b[0] == slicesVersion:
		b, size = b[1:], 32
	case len(b)%24 != 0:
		return nil, fmt.Errorf("sqlstore: trip slices of %d bytes", len(b))
	}
	out := make([]fleet.TripSlice, len(b)/size)
	for i := range out {
		x := b[size*i:]
		out[i] = fleet.TripSlice{Start: int64(binary.LittleEndian.Uint64(x)), Km: math.Float64frombits(binary.LittleEndian.Uint64(x[8:])),
			MovingSeconds: math.Float64frombits(binary.LittleEndian.Uint64(x[16:]))}
		if size == 32 {
			out[i].IdleSeconds = math.Float64frombits(binary.LittleEndian.Uint64(x[24:]))
		}
	}
	return out, nil
}

const tripColumns = `id, account_id, vehicle_id, status, start_lat, start_lon, start_at, end_lat, end_lon, end_at,
	distance_km, great_circle_km, moving_seconds, max_speed, start_odometer_km, end_odometer_km, odometer_all,
	points, ignored_points, pending_ignored, last_at, stationary_since, slices, driver_id`

func scanTrip(s scanner) (fleet.Trip, error) {
	var t fleet.Trip
	var status string
	var slices []byte
	var startAt, endAt, lastAt int64
	var startOdo, endOdo sql.NullFloat64
	var stationary sql.NullInt64
	var driver sql.NullString
	var err error
	if err = s.Scan(&t.ID, &t.AccountID, &t.VehicleID, &status, &t.Start.Latitude, &t.Start.Longitude, &startAt,
		&t.End.Latitude, &t.End.Longitude, &endAt, &t.DistanceKm, &t.GreatCircleKm, &t.MovingSeconds, &t.MaxSpeed,
		&startOdo, &endOdo, &t.OdometerAll, &t.Points, &t.IgnoredPoints, &t.PendingIgnored, &lastAt, &stationary, &slices, &driver); err != nil {
		return fleet.Trip{}, err
	}
	t.Status = fleet.TripStatus(status)
	t.Start.Timestamp, t.End.Timestamp, t.LastAt = fromDB(startAt), fromDB(endAt), fromDB(lastAt)
	t.StartOdometerKm, t.EndOdometerKm = nullFloat(startOdo), nullFloat(endOdo)
	t.StationarySince = fromNullDB(stationary)
	if driver.Valid {
		t.DriverID = &driver.String
	}
	if t.Slices, err = decodeSlices(slices); err != nil {
		return fleet.Trip{}, err
	}
	t.DurationSeconds = t.End.Timestamp.Sub(t.Start.Timestamp).Seconds()
	if t.MovingSeconds > 0 {
		t.AvgSpeed = t.DistanceKm / (t.MovingSeconds / 3600)
	}
	return t, nil
}

// tripsPerInsert is how many trips one statement upserts (tripParams
// parameters each, under SQLite's and PostgreSQL's limits).
const tripsPerInsert = 400

// tripParams is how many columns tripColumns names.
const tripParams = 24

// PutTrips implements fleet.Tx: multi-row upserts, one statement for a
// batch's trips.
func (t *tx) PutTrips(ts []fleet.Trip) error {
	if t.readOnly {
		return errReadOnly
	}
	// The cache follows every trip written (putTrip).
	return t.keeping(cachedTrips, func() error {
		for start := 0; start < len(ts); start += tripsPerInsert {
			part := ts[start:min(start+tripsPerInsert, len(ts))]
			var b strings.Builder
			b.WriteString(`INSERT INTO trips (` + tripColumns + `) VALUES `)
			args := make([]any, 0, tripParams*len(part))
			for i, tr := range part {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
				sl := encodeSlices(tr.Slices)
				args = append(args, tr.ID, tr.AccountID, tr.VehicleID, string(tr.Status), tr.Start.Latitude, tr.Start.Longitude,
					toDB(tr.Start.Timestamp), tr.End.Latitude, tr.End.Longitude, toDB(tr.End.Timestamp), tr.DistanceKm,
					tr.GreatCircleKm, tr.MovingSeconds, tr.MaxSpeed, floatArg(tr.StartOdometerKm), floatArg(tr.EndOdometerKm),
					tr.OdometerAll, tr.Points, tr.IgnoredPoints, tr.PendingIgnored, toDB(tr.LastAt), toNullDB(tr.StationarySince), sl,
					driverArg(tr.DriverID))
			}
			b.WriteString(` ON CONFLICT (id) DO UPDATE SET status = excluded.status, start_lat = excluded.start_lat,
				start_lon = excluded.start_lon, start_at = excluded.start_at, end_lat = excluded.end_lat, end_lon = excluded.end_lon,
				end_at = excluded.end_at, distance_km = excluded.distance_km, great_circle_km = excluded.great_circle_km,
				moving_seconds = excluded.moving_seconds, max_speed = excluded.max_speed,
				start_odometer_km = excluded.start_odometer_km, end_odometer_km = excluded.end_odometer_km,
				odometer_all = excluded.odometer_all, points = excluded.points, ignored_points = excluded.ignored_points,
				pending_ignored = excluded.pending_ignored,
				last_at = excluded.last_at, stationary_since = excluded.stationary_since, slices = excluded.slices,
				driver_id = excluded.driver_id`)
			// Without a savepoint (fleet.TripTx): a failure ends the
			// transaction on PostgreSQL, and the caller returns it.
			_, err := t.exec(t.d.q(b.String()), args...)
			err = t.failed(err)
			switch classify(err) {
			case errUnique:
				return conflict(err, "A trip of one of these vehicles starting at the same time exists.")
			case errForeignKey:
				return notFound(err, "vehicle", part[0].VehicleID)
			}
			if err != nil {
				return wrap(err, "put trips")
			}
			if t.cache != nil {
				for i := range part {
					tr, err := scanTrip(argsRow(args[tripParams*i : tripParams*(i+1)]))
					if err != nil {
						t.cache.forgetTrip(part[i].VehicleID)
						continue
					}
					t.cache.putTrip(tr)
				}
			}
		}
		return nil
	})
}

// driverArg is a trip's driver_id: NULL when none.
func driverArg(id *string) any {
	if id == nil {
		return nil
	}
	return *id
}

// DeleteTrip implements fleet.Tx.
func (t *tx) DeleteTrip(vehicleID, id string) error {
	err := t.keeping(cachedTrips, func() error {
		_, err := t.update(`DELETE FROM trips WHERE id = ? AND vehicle_id = ?`, id, vehicleID)
		return err
	})
	if t.cache != nil {
		t.cache.forgetTrip(vehicleID)
	}
	return wrap(err, "delete trip")
}

// Trip implements fleet.Tx.
func (t *tx) Trip(accountID, id string) (fleet.Trip, error) {
	tr, err := scanTrip(t.queryRow(`SELECT `+tripColumns+` FROM trips WHERE id = ? AND account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Trip{}, fleet.NotFound("trip", id)
	}
	return tr, wrap(t.failed(err), "read trip")
}

func (t *tx) oneTrip(doing, query string, args ...any) (fleet.Trip, bool, error) {
	tr, err := scanTrip(t.queryRow(query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Trip{}, false, nil
	}
	if err != nil {
		return fleet.Trip{}, false, wrap(t.failed(err), doing)
	}
	return tr, true, nil
}

// LatestTrips implements fleet.Tx.
func (t *tx) LatestTrips(vehicleIDs []string) (map[string]fleet.Trip, error) {
	out := make(map[string]fleet.Trip, len(vehicleIDs))
	if c := t.cache; c != nil {
		missing := vehicleIDs[:0:0]
		for _, id := range vehicleIDs {
			if lt, ok := c.trips[id]; !ok {
				missing = append(missing, id)
			} else if lt.ok {
				out[id] = lt.trip.Clone()
			}
		}
		read, err := t.latestTrips(missing)
		if err != nil {
			return out, err
		}
		for _, id := range missing {
			tr, ok := read[id]
			if ok {
				out[id] = tr
			}
			c.setTrip(id, latestTrip{tr.Clone(), ok})
		}
		return out, nil
	}
	return t.latestTrips(vehicleIDs)
}

// latestTrips reads each vehicle's latest trip.
func (t *tx) latestTrips(vehicleIDs []string) (map[string]fleet.Trip, error) {
	out := make(map[string]fleet.Trip, len(vehicleIDs))
	if len(vehicleIDs) == 0 {
		return out, nil
	}
	var ts []fleet.Trip
	var err error
	if len(vehicleIDs) == 1 {
		// A device's report: one seek down trips_vehicle_start.
		ts, err = t.trips("read latest trips", `SELECT `+tripColumns+` FROM trips WHERE vehicle_id = ?
			ORDER BY start_at DESC LIMIT 1`, vehicleIDs[0])
	} else {
		ts, err = t.trips("read latest trips", t.d.latestTrips, t.d.idsArg(vehicleIDs))
	}
	for _, tr := range ts {
		out[tr.VehicleID] = tr
	}
	return out, err
}

// LastTripBefore implements fleet.Tx.
func (t *tx) LastTripBefore(vehicleID string, before time.Time) (fleet.Trip, bool, error) {
	return t.oneTrip("read last trip", `SELECT `+tripColumns+` FROM trips WHERE vehicle_id = ? AND start_at < ?
		ORDER BY start_at DESC LIMIT 1`, vehicleID, toDB(before))
}

func (t *tx) trips(doing, query string, args ...any) ([]fleet.Trip, error) {
	out := []fleet.Trip{}
	rows, err := t.query(t.d.q(query), args...)
	if err != nil {
		return nil, wrap(t.failed(err), doing)
	}
	defer rows.Close()
	for rows.Next() {
		tr, err := scanTrip(rows)
		if err != nil {
			return nil, wrap(err, doing)
		}
		out = append(out, tr)
	}
	return out, wrap(t.failed(rows.Err()), doing)
}

// VehicleTrips implements fleet.Tx.
func (t *tx) VehicleTrips(vehicleID string, from, to, after time.Time, limit int) ([]fleet.Trip, error) {
	return t.trips("list trips", `SELECT `+tripColumns+` FROM trips
		WHERE vehicle_id = ? AND start_at > ? AND start_at <= ? AND end_at >= ? ORDER BY start_at LIMIT ?`,
		vehicleID, toDB(after), toDB(to), toDB(from), int64(limit))
}

// AccountTrips implements fleet.Tx.
func (t *tx) AccountTrips(accountID, vehicleID string, from, to time.Time) ([]fleet.Trip, error) {
	q, args := `SELECT `+tripColumns+` FROM trips WHERE account_id = ?`, []any{accountID}
	if vehicleID != "" {
		q, args = q+` AND vehicle_id = ?`, append(args, vehicleID)
	}
	return t.trips("list account trips", q+` AND start_at <= ? AND end_at >= ? ORDER BY vehicle_id, start_at`,
		append(args, toDB(to), toDB(from))...)
}
