package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// The devices area: the registry (table devices, migration 0014) and the
// operator's record of unknown identifiers (unknown_devices). A device's
// last report is kept as its JSON.

const deviceColumns = `d.id, d.account_id, d.identifier, d.vehicle_id, d.name, d.protocol, d.created_at, d.updated_at,
	d.last_seen_at, d.last_report`

func scanDevice(s scanner) (fleet.Device, error) {
	var d fleet.Device
	var created, updated int64
	var seen sql.NullInt64
	var report sql.NullString
	if err := s.Scan(&d.ID, &d.AccountID, &d.Identifier, &d.VehicleID, &d.Name, &d.Protocol, &created, &updated,
		&seen, &report); err != nil {
		return fleet.Device{}, err
	}
	d.CreatedAt, d.UpdatedAt, d.LastSeenAt = fromDB(created), fromDB(updated), fromNullDB(seen)
	if report.Valid {
		var r fleet.LastReport
		if err := json.Unmarshal([]byte(report.String), &r); err != nil {
			return fleet.Device{}, fmt.Errorf("sqlstore: decode a device's last report: %w", err)
		}
		r.ReceivedAt, r.Position.Timestamp = r.ReceivedAt.UTC(), r.Position.Timestamp.UTC()
		d.LastReport = &r
	}
	return d, nil
}

// CreateDevice implements fleet.Tx.
func (t *tx) CreateDevice(d fleet.Device) error {
	report, err := encodeReport(d.LastReport)
	if err != nil {
		return err
	}
	err = t.insert(`INSERT INTO devices (id, account_id, identifier, vehicle_id, name, protocol, created_at, updated_at,
			last_seen_at, last_report)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.AccountID, d.Identifier, d.VehicleID, d.Name, d.Protocol, toDB(d.CreatedAt), toDB(d.UpdatedAt),
		toNullDB(d.LastSeenAt), report)
	switch classify(err) {
	case errUnique:
		return conflict(err, "A device with this id or identifier exists.")
	case errForeignKey:
		return notFound(err, "account", d.AccountID)
	}
	return wrap(err, "create device")
}

// encodeReport is a last report's JSON, or nil for none.
func encodeReport(r *fleet.LastReport) (any, error) {
	if r == nil {
		return nil, nil
	}
	b, err := r.MarshalJSON() // what json.Marshal calls, without its second pass over the bytes
	if err != nil {
		return nil, fmt.Errorf("sqlstore: encode a device's last report: %w", err)
	}
	return string(b), nil
}

func (t *tx) oneDevice(where string, args ...any) (fleet.Device, error) {
	d, err := scanDevice(t.queryRow(`SELECT `+deviceColumns+` FROM devices d WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Device{}, fleet.Errorf(fleet.CodeNotFound, "No such device.")
	}
	return d, wrap(t.failed(err), "read device")
}

// Device implements fleet.Tx.
func (t *tx) Device(accountID, id string) (fleet.Device, error) {
	return t.oneDevice(`d.id = ? AND d.account_id = ?`, id, accountID)
}

// DeviceByIdentifier implements fleet.Tx.
func (t *tx) DeviceByIdentifier(identifier string) (fleet.Device, error) {
	return t.oneDevice(`d.identifier = ?`, identifier)
}

// Devices implements fleet.Tx.
func (t *tx) Devices(accountID string, f fleet.DeviceFilter, p fleet.Page) ([]fleet.Device, error) {
	out := []fleet.Device{}
	if p.Limit <= 0 {
		return out, nil
	}
	where := []string{"d.account_id = ?", "d.id > ?"}
	args := []any{accountID, p.After}
	if f.Identifier != "" {
		where, args = append(where, "d.identifier = ?"), append(args, f.Identifier)
	}
	if f.VehicleID != "" {
		where, args = append(where, "d.vehicle_id = ?"), append(args, f.VehicleID)
	}
	rows, err := t.query(t.d.q(`SELECT `+deviceColumns+` FROM devices d WHERE `+strings.Join(where, " AND ")+
		` ORDER BY d.id LIMIT ?`), append(args, int64(p.Limit))...)
	if err != nil {
		return nil, wrap(t.failed(err), "list devices")
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, wrap(err, "list devices")
		}
		if f.Match(&d) {
			out = append(out, d)
		}
	}
	return out, wrap(t.failed(rows.Err()), "list devices")
}

// CountDevices implements fleet.Tx.
func (t *tx) CountDevices(accountID string) (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM devices WHERE account_id = ?`, accountID).Scan(&n)
	return n, wrap(t.failed(err), "count devices")
}

// UpdateDevice implements fleet.Tx.
func (t *tx) UpdateDevice(d fleet.Device) error {
	n, err := t.update(`UPDATE devices SET vehicle_id = ?, name = ?, updated_at = ? WHERE id = ? AND account_id = ?`,
		d.VehicleID, d.Name, toDB(d.UpdatedAt), d.ID, d.AccountID)
	if err != nil {
		return wrap(err, "update device")
	}
	if n == 0 {
		return fleet.NotFound("device", d.ID)
	}
	return nil
}

// DeleteDevice implements fleet.Tx.
func (t *tx) DeleteDevice(accountID, id string) error {
	n, err := t.update(`DELETE FROM devices WHERE id = ? AND account_id = ?`, id, accountID)
	if err != nil {
		return wrap(err, "delete device")
	}
	if n == 0 {
		return fleet.NotFound("device", id)
	}
	return nil
}

// DetachDevices implements fleet.Tx.
func (t *tx) DetachDevices(accountID, vehicleID string, at time.Time) (int, error) {
	n, err := t.update(`UPDATE devices SET vehicle_id = '', updated_at = ? WHERE account_id = ? AND vehicle_id = ?`,
		toDB(at), accountID, vehicleID)
	return int(n), wrap(err, "detach devices")
}

// RecordDeviceReport implements fleet.Tx with one UPDATE by primary key
// whose condition is the device's vehicle: no read before it.
func (t *tx) RecordDeviceReport(d fleet.Device) error {
	report, err := encodeReport(d.LastReport)
	if err != nil {
		return err
	}
	n, err := t.update(`UPDATE devices SET protocol = ?, last_seen_at = ?, last_report = COALESCE(?, last_report)
		WHERE id = ? AND account_id = ? AND vehicle_id = ?`,
		d.Protocol, toNullDB(d.LastSeenAt), report, d.ID, d.AccountID, d.VehicleID)
	if err != nil {
		return wrap(err, "record device report")
	}
	if n == 0 {
		return fleet.Errorf(fleet.CodeNotFound, "No device %s attached to vehicle %q.", d.ID, d.VehicleID)
	}
	return nil
}

// RecordUnknownDevice implements fleet.Store. The record is informational:
// it commits without waiting for the disk (writeLease). A new record (its
// attempts are u's alone: a record has at least one) past keep forgets the
// least recently seen, in the same transaction; reading the index of
// last_seen back over keep rows, it costs the new identifiers alone.
func (s *Store) RecordUnknownDevice(ctx context.Context, u fleet.UnknownDevice, keep int) error {
	err := s.eng.writeLease(ctx, func(t *tx) error {
		var attempts int64
		err := t.queryRow(`INSERT INTO unknown_devices (identifier, protocol, address, first_seen, last_seen, attempts)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (identifier, protocol, address) DO UPDATE SET
				last_seen = CASE WHEN excluded.last_seen > unknown_devices.last_seen THEN excluded.last_seen ELSE unknown_devices.last_seen END,
				attempts = unknown_devices.attempts + excluded.attempts
			RETURNING attempts`,
			u.Identifier, u.Protocol, u.Address, toDB(u.FirstSeen), toDB(u.LastSeen), u.Count).Scan(&attempts)
		if err != nil || attempts != u.Count {
			return t.failed(err)
		}
		// At most a few past keep: each new record trims.
		_, err = t.update(`DELETE FROM unknown_devices WHERE (identifier, protocol, address) IN (
			SELECT identifier, protocol, address FROM unknown_devices
			ORDER BY last_seen DESC LIMIT 1000 OFFSET ?)`, max(keep, 0))
		return err
	})
	return wrap(err, "record unknown device")
}

// UnknownDevices implements fleet.Store.
func (s *Store) UnknownDevices(ctx context.Context, limit int) ([]fleet.UnknownDevice, error) {
	out := []fleet.UnknownDevice{}
	if limit <= 0 {
		return out, nil
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rows, err := s.rdb.QueryContext(ctx, s.d.q(`SELECT identifier, protocol, address, first_seen, last_seen, attempts
		FROM unknown_devices ORDER BY last_seen DESC, identifier, protocol, address LIMIT ?`), int64(limit))
	if err != nil {
		return nil, wrap(err, "list unknown devices")
	}
	defer rows.Close()
	for rows.Next() {
		var u fleet.UnknownDevice
		var first, last int64
		if err := rows.Scan(&u.Identifier, &u.Protocol, &u.Address, &first, &last, &u.Count); err != nil {
			return nil, wrap(err, "list unknown devices")
		}
		u.FirstSeen, u.LastSeen = fromDB(first), fromDB(last)
		out = append(out, u)
	}
	return out, wrap(rows.Err(), "list unknown devices")
}

// PurgeUnknownDevices implements fleet.Store.
func (s *Store) PurgeUnknownDevices(ctx context.Context, before time.Time) (int, error) {
	return s.purge(ctx, `DELETE FROM unknown_devices WHERE last_seen < ?`, before, "purge unknown devices")
}
