package fleet

import (
	"context"
	"time"
)

// The device registry's use cases (API.md §13): the trackers and phone apps
// of an account, each named by the identifier it sends, each attached to a
// vehicle or to none. What the listeners call is DeviceEdge
// (device_edge.go).
//
// Device changes emit no events. The contract's event types (API.md §8)
// name none for devices, so none is invented here: a webhook consumer
// learns of what a device sends through its vehicle's events (status
// changes, trips, alerts) and the live stream. And a report, which moves
// the device's last_seen_at and last_report many times a minute, is not a
// change a client made: it does not move updated_at either.
//
// Every change of the registry forgets the identifier in this process's
// cache of identifiers (see deviceCache): the next report reads the device
// again, so moving a device to another vehicle takes effect on its next
// report here; on other servers sharing the store, the report's own
// transaction sees the move (see DeviceTx.RecordDeviceReport).

func notFoundDevice(id string) error { return NotFound("device", id) }

func (s *Service) getDevice(tx DeviceTx, p Principal, id string) (Device, error) {
	if !ValidID(PrefixDevice, id) {
		return Device{}, notFoundDevice(id)
	}
	d, err := tx.Device(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return Device{}, notFoundDevice(id)
	}
	return d, err
}

// conflictIdentifier turns the store's conflict of a new device into the
// API's: an identifier is unique on the server, whichever account holds it,
// and the message does not say which.
func conflictIdentifier(err error, identifier string) error {
	if ErrorCode(err) != CodeConflict {
		return err
	}
	e := Errorf(CodeConflict, "A device with identifier %q is registered on this server already; an identifier names one device across every account.", identifier)
	e.Details = []FieldError{{Field: "identifier", Message: "is registered already"}}
	return e
}

// checkDevice validates the fields a client sets, naming every bad one: a
// vehicle_id must name a vehicle of the account, as every reference in a
// body does (validation_error, not not_found).
func (s *Service) checkDevice(tx VehicleTx, d *Device) error {
	var val Validator
	d.validate(&val)
	if d.VehicleID != "" {
		if _, err := s.vehicleOf(tx, d.AccountID, d.VehicleID, &val); err != nil {
			return err
		}
	}
	return val.Err()
}

// CreateDevice registers a device from the fields a client sets in in
// (identifier, vehicle_id, name; the others are ignored). The identifier is
// 1 to MaxIdentifier characters of [0-9A-Za-z._-], and a vehicle_id must name
// a vehicle of the account (validation_error naming the field otherwise).
// An identifier registered already, by any account, is conflict; so is an
// account that holds as many devices as its plan allows
// (PlanLimits.Devices), a cap that holds exactly under concurrency (the
// count and the insert share one serialisable transaction).
func (s *Service) CreateDevice(ctx context.Context, p Principal, in Device) (Device, error) {
	if err := p.allow("CreateDevice"); err != nil {
		return Device{}, err
	}
	now := s.Now()
	d := Device{ID: NewID(PrefixDevice), AccountID: p.Account.ID, Identifier: in.Identifier, VehicleID: in.VehicleID,
		Name: in.Name, CreatedAt: now, UpdatedAt: now}
	normaliseDevice(&d)
	err := s.update(ctx, func(tx Tx) error {
		if err := s.checkDevice(tx, &d); err != nil {
			return err
		}
		n, err := tx.CountDevices(d.AccountID)
		if err != nil {
			return err
		}
		if limit := p.Account.Plan.Limits().Devices; n >= limit {
			return Errorf(CodeConflict, "An account on the %s plan may have at most %d devices and this account has %d; delete one first.",
				p.Account.Plan, limit, n)
		}
		return conflictIdentifier(tx.CreateDevice(d), d.Identifier)
	})
	if err != nil {
		return Device{}, err
	}
	s.devices.forget(d.Identifier)
	return d, nil
}

// Device returns one of the account's devices.
func (s *Service) Device(ctx context.Context, p Principal, id string) (Device, error) {
	if err := p.allow("Device"); err != nil {
		return Device{}, err
	}
	var d Device
	err := s.view(ctx, func(tx Tx) (err error) { d, err = s.getDevice(tx, p, id); return err })
	return d, err
}

// ListDevices lists the account's devices in registration order. A filter
// that can name no device (an identifier outside the rule, a vehicle_id
// that is no vehicle id) is invalid_request.
func (s *Service) ListDevices(ctx context.Context, p Principal, f DeviceFilter, q ListQuery) (List[Device], error) {
	if err := p.allow("ListDevices"); err != nil {
		return List[Device]{}, err
	}
	if err := f.check(); err != nil {
		return List[Device]{}, err
	}
	page, limit, err := q.page(PrefixDevice, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Device]{}, err
	}
	var ds []Device
	err = s.view(ctx, func(tx Tx) (err error) { ds, err = tx.Devices(p.Account.ID, f, page); return err })
	if err != nil {
		return List[Device]{}, err
	}
	return finish(ds, limit, func(d Device) string { return d.ID }), nil
}

// UpdateDevice applies a merge patch to a device: vehicle_id (null
// detaches it) and name. The result is validated whole and nothing changes
// if it is invalid. A device moved to another vehicle reports to it from
// its next report on; the positions it sent before stay the old vehicle's.
func (s *Service) UpdateDevice(ctx context.Context, p Principal, id string, patch DevicePatch) (Device, error) {
	if err := p.allow("UpdateDevice"); err != nil {
		return Device{}, err
	}
	now := s.Now()
	var d Device
	err := s.update(ctx, func(tx Tx) (err error) {
		d, err = s.getDevice(tx, p, id)
		if err != nil {
			return err
		}
		set(&d.VehicleID, patch.VehicleID)
		set(&d.Name, patch.Name)
		normaliseDevice(&d)
		if err := s.checkDevice(tx, &d); err != nil {
			return err
		}
		d.UpdatedAt = now
		return tx.UpdateDevice(d)
	})
	if err != nil {
		return Device{}, err
	}
	s.devices.forget(d.Identifier)
	return d, nil
}

// DeleteDevice deletes a device: its identifier is unknown from then on
// (and free to register again). The locations it reported stay its
// vehicle's.
func (s *Service) DeleteDevice(ctx context.Context, p Principal, id string) (DeviceDeleted, error) {
	if err := p.allow("DeleteDevice"); err != nil {
		return DeviceDeleted{}, err
	}
	var d Device
	err := s.update(ctx, func(tx Tx) (err error) {
		d, err = s.getDevice(tx, p, id)
		if err != nil {
			return err
		}
		if err := deleteCommands(tx, d.AccountID, d.ID); err != nil {
			return err
		}
		return tx.DeleteDevice(d.AccountID, d.ID)
	})
	if err != nil {
		return DeviceDeleted{}, err
	}
	s.devices.forget(d.Identifier)
	return DeviceDeleted{DeviceID: d.ID, Deleted: true}, nil
}

// detachDevices leaves the devices of a vehicle being deleted without a
// vehicle, in the deletion's transaction: their reports are kept as
// last_report only until a client attaches them elsewhere.
func (s *Service) detachDevices(tx DeviceTx, accountID, vehicleID string, now time.Time) error {
	_, err := tx.DetachDevices(accountID, vehicleID, now)
	return err
}

// UnknownDevices returns the records of identifiers that tried to log in or
// report without being registered, the last seen first: at most limit (0:
// DefaultUnknownDevices; at most MaxUnknownDevices).
func (o Operator) UnknownDevices(ctx context.Context, limit int) ([]UnknownDevice, error) {
	if limit == 0 {
		limit = DefaultUnknownDevices
	}
	if limit < 1 || limit > MaxUnknownDevices {
		return nil, Errorf(CodeInvalidRequest, "limit must be between 1 and %d.", MaxUnknownDevices)
	}
	return o.s.store.UnknownDevices(ctx, limit)
}
