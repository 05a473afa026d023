package sqlstore

import (
	"database/sql"
	"errors"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// The drivers area (table drivers, migration 0018). Who drives which
// vehicle is the vehicles' driver_id: a driver's vehicle is read by a join
// on it (the partial unique index vehicles_driver).

const driverColumns = `d.id, d.account_id, d.name, d.identifier, d.phone, d.email, d.license_number, d.license_expires_on,
	d.notes, d.external_id, d.created_at, d.updated_at, v.id`

// driverFrom is the drivers with the vehicle each drives.
const driverFrom = ` FROM drivers d LEFT JOIN vehicles v ON v.account_id = d.account_id AND v.driver_id = d.id`

func scanDriver(s scanner) (fleet.Driver, error) {
	var d fleet.Driver
	var identifier, ext, vehicle sql.NullString
	var created, updated int64
	if err := s.Scan(&d.ID, &d.AccountID, &d.Name, &identifier, &d.Phone, &d.Email, &d.LicenseNumber, &d.LicenseExpiresOn,
		&d.Notes, &ext, &created, &updated, &vehicle); err != nil {
		return fleet.Driver{}, err
	}
	d.Identifier, d.ExternalID, d.VehicleID = identifier.String, ext.String, vehicle.String
	d.CreatedAt, d.UpdatedAt = fromDB(created), fromDB(updated)
	return d, nil
}

// identifierKey is the identifier_key column of an identifier.
func identifierKey(identifier string) any {
	if identifier == "" {
		return nil
	}
	return fleet.DriverIdentifierKey(identifier)
}

// CreateDriver implements fleet.Tx.
func (t *tx) CreateDriver(d fleet.Driver) error {
	err := t.insert(`INSERT INTO drivers (id, account_id, name, identifier, identifier_key, phone, email, license_number,
			license_expires_on, notes, external_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.AccountID, d.Name, nullText(d.Identifier), identifierKey(d.Identifier), d.Phone, d.Email, d.LicenseNumber,
		d.LicenseExpiresOn, d.Notes, nullText(d.ExternalID), toDB(d.CreatedAt), toDB(d.UpdatedAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A driver with this id, identifier or external_id exists.")
	case errForeignKey:
		return notFound(err, "account", d.AccountID)
	}
	return wrap(err, "create driver")
}

func (t *tx) oneDriver(what, where string, args ...any) (fleet.Driver, error) {
	d, err := scanDriver(t.queryRow(`SELECT `+driverColumns+driverFrom+` WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Driver{}, fleet.Errorf(fleet.CodeNotFound, "No driver with %s.", what)
	}
	return d, wrap(t.failed(err), "read driver")
}

// Driver implements fleet.Tx.
func (t *tx) Driver(accountID, id string) (fleet.Driver, error) {
	return t.oneDriver("id "+id, `d.id = ? AND d.account_id = ?`, id, accountID)
}

// DriverByIdentifier implements fleet.Tx.
func (t *tx) DriverByIdentifier(accountID, identifier string) (fleet.Driver, error) {
	if identifier == "" {
		return fleet.Driver{}, fleet.Errorf(fleet.CodeNotFound, "No driver with an empty identifier.")
	}
	return t.oneDriver("this identifier", `d.account_id = ? AND d.identifier_key = ?`, accountID, fleet.DriverIdentifierKey(identifier))
}

// Drivers implements fleet.Tx. The identifier and the vehicle narrow the
// query; the filter's Match decides, so the rule is written once.
func (t *tx) Drivers(accountID string, f fleet.DriverFilter, p fleet.Page) ([]fleet.Driver, error) {
	out := []fleet.Driver{}
	if p.Limit <= 0 {
		return out, nil
	}
	where := []string{"d.account_id = ?", "d.id > ?"}
	args := []any{accountID, p.After}
	if f.Identifier != "" {
		where, args = append(where, "d.identifier_key = ?"), append(args, fleet.DriverIdentifierKey(f.Identifier))
	}
	if f.VehicleID != "" {
		where, args = append(where, "v.id = ?"), append(args, f.VehicleID)
	}
	chunk := max(p.Limit, 100)
	after := p.After
	for len(out) < p.Limit {
		args[1] = after
		rows, err := t.query(t.d.q(`SELECT `+driverColumns+driverFrom+` WHERE `+strings.Join(where, " AND ")+
			` ORDER BY d.id LIMIT ?`), append(args, int64(chunk))...)
		if err != nil {
			return nil, wrap(t.failed(err), "list drivers")
		}
		n := 0
		for rows.Next() {
			d, err := scanDriver(rows)
			if err != nil {
				rows.Close()
				return nil, wrap(err, "list drivers")
			}
			n++
			after = d.ID
			if len(out) < p.Limit && f.Match(&d) {
				out = append(out, d)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, wrap(t.failed(err), "list drivers")
		}
		if n < chunk {
			break
		}
	}
	return out, nil
}

// CountDrivers implements fleet.Tx.
func (t *tx) CountDrivers(accountID string) (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM drivers WHERE account_id = ?`, accountID).Scan(&n)
	return n, wrap(t.failed(err), "count drivers")
}

// UpdateDriver implements fleet.Tx, in a savepoint: a conflict leaves the
// transaction usable.
func (t *tx) UpdateDriver(d fleet.Driver) error {
	var n int64
	err := t.savepoint(func() (err error) {
		n, err = t.update(`UPDATE drivers SET name = ?, identifier = ?, identifier_key = ?, phone = ?, email = ?,
			license_number = ?, license_expires_on = ?, notes = ?, external_id = ?, updated_at = ?
			WHERE id = ? AND account_id = ?`,
			d.Name, nullText(d.Identifier), identifierKey(d.Identifier), d.Phone, d.Email, d.LicenseNumber, d.LicenseExpiresOn,
			d.Notes, nullText(d.ExternalID), toDB(d.UpdatedAt), d.ID, d.AccountID)
		return err
	})
	if classify(err) == errUnique {
		return conflict(err, "Another driver of the account has this identifier or external_id.")
	}
	if err != nil {
		return wrap(err, "update driver")
	}
	if n == 0 {
		return fleet.NotFound("driver", d.ID)
	}
	return nil
}

// DeleteDriver implements fleet.Tx.
func (t *tx) DeleteDriver(accountID, id string) error {
	n, err := t.update(`DELETE FROM drivers WHERE id = ? AND account_id = ?`, id, accountID)
	if err != nil {
		return wrap(err, "delete driver")
	}
	if n == 0 {
		return fleet.NotFound("driver", id)
	}
	return nil
}

// SetVehicleDriver implements fleet.Tx: one UPDATE of the vehicle's
// driver_id, in a savepoint (a driver driving another vehicle is a
// conflict of vehicles_driver, which leaves the transaction usable). The
// row cache's copy of the vehicle follows.
func (t *tx) SetVehicleDriver(accountID, vehicleID, driverID string) error {
	var n int64
	err := t.keeping(cachedVehicles, func() error {
		return t.savepoint(func() (err error) {
			n, err = t.update(`UPDATE vehicles SET driver_id = ? WHERE id = ? AND account_id = ?`, nullText(driverID), vehicleID, accountID)
			return err
		})
	})
	if classify(err) == errUnique {
		return conflict(err, "Driver %s drives another vehicle.", driverID)
	}
	if err != nil {
		return wrap(err, "set a vehicle's driver")
	}
	if n == 0 {
		return fleet.NotFound("vehicle", vehicleID)
	}
	if c := t.cache; c != nil {
		if v, ok := c.vehicles[vehicleID]; ok && v.AccountID == accountID {
			v = v.Clone()
			v.DriverID = driverID
			c.setVehicle(v)
		}
	}
	return nil
}
