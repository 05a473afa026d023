package fleet

import (
	"context"
	"time"
)

// The drivers' use cases (API.md §15): the account's drivers, and who
// drives which vehicle.
//
// Driver changes emit no events of their own: the contract's event types
// (API.md §8) name none for drivers, so none is invented here (as for
// devices). What a webhook consumer follows is who drives: every change
// of a vehicle's driver emits vehicle.driver_changed, by hand or from a
// device's report, in the transaction of the change. An assignment is the
// vehicle's state, as its status is: it does not move the vehicle's
// updated_at, nor the driver's.

func notFoundDriver(id string) error { return NotFound("driver", id) }

func (s *Service) getDriver(tx DriverTx, p Principal, id string) (Driver, error) {
	if !ValidID(PrefixDriver, id) {
		return Driver{}, notFoundDriver(id)
	}
	d, err := tx.Driver(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return Driver{}, notFoundDriver(id)
	}
	return d, err
}

// driverConflict turns the store's conflict of a driver being written into
// the API's, naming what is taken: the identifier when another driver of
// the account has it, else the external_id (the only other value unique
// in the account).
func driverConflict(tx DriverTx, d Driver, err error) error {
	if ErrorCode(err) != CodeConflict {
		return err
	}
	if d.Identifier != "" {
		o, lerr := tx.DriverByIdentifier(d.AccountID, d.Identifier)
		if lerr == nil && o.ID != d.ID {
			e := Errorf(CodeConflict, "Another driver of this account, %s, has the identifier %q.", o.Name, o.Identifier)
			e.Details = []FieldError{{Field: "identifier", Message: "is taken by another driver"}}
			return e
		}
		if lerr != nil && ErrorCode(lerr) != CodeNotFound {
			return lerr
		}
	}
	if d.ExternalID != "" {
		e := Errorf(CodeConflict, "A driver with external_id %q exists in this account.", d.ExternalID)
		e.Details = []FieldError{{Field: "external_id", Message: "is taken by another driver"}}
		return e
	}
	return err
}

// CreateDriver adds a driver from the fields a client sets in in (the
// others, vehicle_id included, are ignored). A new driver drives no
// vehicle. An identifier or external_id another driver of the account has
// is conflict naming it; so is an account that holds as many drivers as
// its plan allows (PlanLimits.Drivers), a cap that holds under
// concurrency (the count and the insert share one serialisable
// transaction).
func (s *Service) CreateDriver(ctx context.Context, p Principal, in Driver) (Driver, error) {
	if err := p.allow("CreateDriver"); err != nil {
		return Driver{}, err
	}
	now := s.Now()
	d := Driver{ID: NewID(PrefixDriver), AccountID: p.Account.ID, Name: in.Name, Identifier: in.Identifier, Phone: in.Phone,
		Email: in.Email, LicenseNumber: in.LicenseNumber, LicenseExpiresOn: in.LicenseExpiresOn, Notes: in.Notes,
		ExternalID: ExternalIDForm(in.ExternalID), CreatedAt: now, UpdatedAt: now}
	normaliseDriver(&d)
	if err := d.Validate(); err != nil {
		return Driver{}, err
	}
	err := s.update(ctx, func(tx Tx) error {
		n, err := tx.CountDrivers(d.AccountID)
		if err != nil {
			return err
		}
		if limit := p.Account.Plan.Limits().Drivers; n >= limit {
			return Errorf(CodeConflict, "An account on the %s plan may have at most %d drivers and this account has %d; delete one first.",
				p.Account.Plan, limit, n)
		}
		return driverConflict(tx, d, tx.CreateDriver(d))
	})
	if err != nil {
		return Driver{}, err
	}
	return d, nil
}

// Driver returns one of the account's drivers, with the vehicle they drive.
func (s *Service) Driver(ctx context.Context, p Principal, id string) (Driver, error) {
	if err := p.allow("Driver"); err != nil {
		return Driver{}, err
	}
	var d Driver
	err := s.view(ctx, func(tx Tx) (err error) { d, err = s.getDriver(tx, p, id); return err })
	return d, err
}

// ListDrivers lists the account's drivers in creation order. A filter that
// can name no driver (an identifier outside the rule, a vehicle_id that is
// no vehicle id) is invalid_request.
func (s *Service) ListDrivers(ctx context.Context, p Principal, f DriverFilter, q ListQuery) (List[Driver], error) {
	if err := p.allow("ListDrivers"); err != nil {
		return List[Driver]{}, err
	}
	if err := f.check(); err != nil {
		return List[Driver]{}, err
	}
	page, limit, err := q.page(PrefixDriver, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Driver]{}, err
	}
	var ds []Driver
	err = s.view(ctx, func(tx Tx) (err error) { ds, err = tx.Drivers(p.Account.ID, f, page); return err })
	if err != nil {
		return List[Driver]{}, err
	}
	return finish(ds, limit, func(d Driver) string { return d.ID }), nil
}

// UpdateDriver applies a merge patch to a driver; the result is validated
// whole, and nothing changes if it is invalid. A new identifier takes
// effect from the next report that carries it; the driver's vehicle stays
// until another assignment.
func (s *Service) UpdateDriver(ctx context.Context, p Principal, id string, patch DriverPatch) (Driver, error) {
	if err := p.allow("UpdateDriver"); err != nil {
		return Driver{}, err
	}
	now := s.Now()
	var d Driver
	err := s.update(ctx, func(tx Tx) (err error) {
		d, err = s.getDriver(tx, p, id)
		if err != nil {
			return err
		}
		set(&d.Name, patch.Name)
		set(&d.Identifier, patch.Identifier)
		set(&d.Phone, patch.Phone)
		set(&d.Email, patch.Email)
		set(&d.LicenseNumber, patch.LicenseNumber)
		set(&d.LicenseExpiresOn, patch.LicenseExpiresOn)
		set(&d.Notes, patch.Notes)
		if patch.ExternalID.Set {
			d.ExternalID = ExternalIDForm(patch.ExternalID.Value)
		}
		normaliseDriver(&d)
		if err := d.Validate(); err != nil {
			return err
		}
		d.UpdatedAt = now
		return driverConflict(tx, d, tx.UpdateDriver(d))
	})
	if err != nil {
		return Driver{}, err
	}
	return d, nil
}

// DeleteDriver deletes a driver. The vehicle they drove has no driver from
// then on (vehicle.driver_changed, in the same transaction); trips keep
// the driver's id as history, and the summary by driver still counts them
// under it.
func (s *Service) DeleteDriver(ctx context.Context, p Principal, id string) (DriverDeleted, error) {
	if err := p.allow("DeleteDriver"); err != nil {
		return DriverDeleted{}, err
	}
	now := s.Now()
	err := s.update(ctx, func(tx Tx) error {
		d, err := s.getDriver(tx, p, id)
		if err != nil {
			return err
		}
		if d.VehicleID != "" {
			v, err := tx.Vehicle(d.AccountID, d.VehicleID)
			if err != nil {
				return err
			}
			if _, err := s.assignDriver(tx, &v, nil, "", now, now); err != nil {
				return err
			}
		}
		return tx.DeleteDriver(d.AccountID, d.ID)
	})
	if err != nil {
		return DriverDeleted{}, err
	}
	return DriverDeleted{DriverID: id, Deleted: true}, nil
}

// AssignDriver makes the account's driver a.DriverID drive the vehicle
// vehicleID, by hand; "" leaves the vehicle without a driver, and an
// a.DriverID not Set is a validation_error naming driver_id. A driver
// drives one vehicle at a time: one driving another vehicle moves, and
// that vehicle has no driver from then on. Each vehicle whose driver
// changes emits vehicle.driver_changed (identifier null) in the same
// transaction; assigning the driver a vehicle has already changes
// nothing and emits nothing. A vehicle of another account is not_found; a
// driverID that is no driver of the account is a validation_error naming
// driver_id, as every reference in a body is.
func (s *Service) AssignDriver(ctx context.Context, p Principal, vehicleID string, a DriverAssignment) (VehicleDriver, error) {
	if err := p.allow("AssignDriver"); err != nil {
		return VehicleDriver{}, err
	}
	if !a.DriverID.Set {
		var val Validator
		val.Add("driver_id", "is required: a driver of this account, or null for none")
		return VehicleDriver{}, val.Err()
	}
	driverID := a.DriverID.Value
	now := s.Now()
	var out VehicleDriver
	err := s.update(ctx, func(tx Tx) error {
		v, err := s.getVehicle(tx, p, vehicleID)
		if err != nil {
			return err
		}
		var d *Driver
		if driverID != "" {
			var val Validator
			dr, err := s.driverOf(tx, p.Account.ID, driverID, &val)
			if err != nil {
				return err
			}
			if err := val.Err(); err != nil {
				return err
			}
			d = &dr
		}
		if _, err := s.assignDriver(tx, &v, d, "", now, now); err != nil {
			return err
		}
		out = VehicleDriver{VehicleID: v.ID, DriverID: v.DriverID}
		return nil
	})
	if err != nil {
		return VehicleDriver{}, err
	}
	return out, nil
}

// driverOf reads the account's driver id named in a body, recording a bad
// reference on val as driver_id.
func (s *Service) driverOf(tx DriverTx, accountID, id string, val *Validator) (Driver, error) {
	if !ValidID(PrefixDriver, id) {
		val.Add("driver_id", "must name a driver of this account")
		return Driver{}, nil
	}
	d, err := tx.Driver(accountID, id)
	if ErrorCode(err) == CodeNotFound {
		val.Add("driver_id", "no driver %q in this account", id)
		return Driver{}, nil
	}
	return d, err
}

// assignTx is what assigning a driver needs: the vehicles whose driver
// changes, the driver, and the vehicle.driver_changed events.
type assignTx interface {
	VehicleTx
	DriverTx
	emitTx
}

// assignDriver makes d the driver of v (nil: none), in tx, by the rules of
// API.md §15, and reports whether v's driver changed. It is what every
// assignment goes through: by hand (AssignDriver), a driver's deletion,
// and a device's report naming a driver (the ingest).
//
//   - v and d must be read in tx (d.VehicleID is the vehicle d drives now,
//     which must be current). v.DriverID and d.VehicleID are updated in
//     memory as in the store.
//   - Nothing happens when v's driver is d already (or both are none).
//   - A driver drives one vehicle at a time: when d drives another vehicle,
//     that vehicle's driver is cleared first, with its own
//     vehicle.driver_changed {to: null, identifier: null}. A copy of that
//     vehicle read earlier in tx keeps the old DriverID in memory (never
//     in the store: UpdateVehicle does not write it).
//   - identifier is the driver key a device read ("" for a change by
//     hand): it goes into v's event, null when "". With d nil and an
//     identifier, the event says an unknown key was read ({to: null,
//     identifier}).
//   - at is when the change happened (the point's timestamp for a
//     report), now the event's created_at.
//
// The ingest calls it for a forward point whose driver_identifier differs
// from what the vehicle's driver has: d from tx.DriverByIdentifier (nil
// when not found), identifier the attribute's value, at the point's time.
func (s *Service) assignDriver(tx assignTx, v *Vehicle, d *Driver, identifier string, at, now time.Time) (bool, error) {
	to := ""
	if d != nil {
		to = d.ID
	}
	if v.DriverID == to {
		return false, nil
	}
	if d != nil && d.VehicleID != "" && d.VehicleID != v.ID {
		if err := tx.SetVehicleDriver(v.AccountID, d.VehicleID, ""); err != nil {
			return false, err
		}
		left := DriverChange{VehicleID: d.VehicleID, From: ptr(d.ID), At: at}
		if err := s.emit(tx, v.AccountID, EventVehicleDriverChanged, now, left); err != nil {
			return false, err
		}
	}
	if err := tx.SetVehicleDriver(v.AccountID, v.ID, to); err != nil {
		return false, err
	}
	change := DriverChange{VehicleID: v.ID, From: nullString(v.DriverID), To: nullString(to), Identifier: nullString(identifier), At: at}
	if err := s.emit(tx, v.AccountID, EventVehicleDriverChanged, now, change); err != nil {
		return false, err
	}
	v.DriverID = to
	if d != nil {
		d.VehicleID = v.ID
	}
	return true, nil
}
