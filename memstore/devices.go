package memstore

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// deviceTables hold the device registry, with its index of identifiers
// (unique across accounts), and the records of unknown identifiers, which
// live outside transactions under their own lock.
type deviceTables struct {
	devices      *table[fleet.Device]
	byIdentifier map[string]string // identifier -> device id

	unknownMu sync.Mutex
	unknown   map[unknownKey]fleet.UnknownDevice
}

type unknownKey struct{ identifier, protocol, address string }

func newDeviceTables() *deviceTables {
	return &deviceTables{
		devices: newTable("device", func(d fleet.Device) string { return d.ID },
			func(d fleet.Device) string { return d.AccountID }, fleet.Device.Clone),
		byIdentifier: map[string]string{},
		unknown:      map[unknownKey]fleet.UnknownDevice{},
	}
}

func (t *tx) CreateDevice(d fleet.Device) error {
	if err := t.writable(); err != nil {
		return err
	}
	dt := t.s.dv
	if _, ok := dt.byIdentifier[d.Identifier]; ok {
		return fleet.Errorf(fleet.CodeConflict, "A device with identifier %q exists.", d.Identifier)
	}
	if _, err := t.s.accounts.get("", d.AccountID); err != nil {
		return err
	}
	if err := dt.devices.insert(t.txn, d); err != nil {
		return err
	}
	dt.byIdentifier[d.Identifier] = d.ID
	t.undo(func() { delete(dt.byIdentifier, d.Identifier) })
	return nil
}

func (t *tx) Device(accountID, id string) (fleet.Device, error) {
	return t.s.dv.devices.get(accountID, id)
}

func (t *tx) DeviceByIdentifier(identifier string) (fleet.Device, error) {
	id, ok := t.s.dv.byIdentifier[identifier]
	if !ok {
		return fleet.Device{}, fleet.Errorf(fleet.CodeNotFound, "No device with identifier %q.", identifier)
	}
	return t.s.dv.devices.get("", id)
}

func (t *tx) Devices(accountID string, f fleet.DeviceFilter, p fleet.Page) ([]fleet.Device, error) {
	return t.s.dv.devices.list(accountID, p, func(d fleet.Device) bool { return f.Match(&d) }), nil
}

func (t *tx) CountDevices(accountID string) (int, error) {
	return len(t.s.dv.devices.order[accountID]), nil
}

func (t *tx) UpdateDevice(d fleet.Device) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.dv.devices.get(d.AccountID, d.ID)
	if err != nil {
		return err
	}
	old.VehicleID, old.Name, old.UpdatedAt = d.VehicleID, d.Name, d.UpdatedAt
	return t.s.dv.devices.put(t.txn, old)
}

func (t *tx) DeleteDevice(accountID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	dt := t.s.dv
	old, err := dt.devices.get(accountID, id)
	if err != nil {
		return err
	}
	if err := dt.devices.delete(t.txn, accountID, id); err != nil {
		return err
	}
	delete(dt.byIdentifier, old.Identifier)
	t.undo(func() { dt.byIdentifier[old.Identifier] = id })
	return nil
}

func (t *tx) DetachDevices(accountID, vehicleID string, at time.Time) (int, error) {
	if err := t.writable(); err != nil {
		return 0, err
	}
	n := 0
	for _, id := range slices.Clone(t.s.dv.devices.order[accountID]) {
		d := t.s.dv.devices.byID[id]
		if d.VehicleID != vehicleID {
			continue
		}
		d = d.Clone()
		d.VehicleID, d.UpdatedAt = "", at
		if err := t.s.dv.devices.put(t.txn, d); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (t *tx) RecordDeviceReport(d fleet.Device) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.dv.devices.get(d.AccountID, d.ID)
	if err != nil {
		return err
	}
	if old.VehicleID != d.VehicleID {
		return fleet.Errorf(fleet.CodeNotFound, "Device %s is not attached to vehicle %q.", d.ID, d.VehicleID)
	}
	old.LastSeenAt, old.Protocol = clonePtr(d.LastSeenAt), d.Protocol
	if d.LastReport != nil {
		old.LastReport = d.LastReport
	}
	return t.s.dv.devices.put(t.txn, old) // put copies it in
}

// RecordUnknownDevice implements fleet.Store.
func (s *Store) RecordUnknownDevice(ctx context.Context, u fleet.UnknownDevice, keep int) error {
	dt := s.dv
	dt.unknownMu.Lock()
	defer dt.unknownMu.Unlock()
	k := unknownKey{u.Identifier, u.Protocol, u.Address}
	old, ok := dt.unknown[k]
	if ok {
		if u.LastSeen.Before(old.LastSeen) {
			u.LastSeen = old.LastSeen
		}
		u.FirstSeen = old.FirstSeen
		u.Count += old.Count
	}
	dt.unknown[k] = u
	for !ok && len(dt.unknown) > max(keep, 0) { // a new record past keep
		var oldest unknownKey
		first := true
		for k, v := range dt.unknown {
			if first || v.LastSeen.Before(dt.unknown[oldest].LastSeen) {
				oldest, first = k, false
			}
		}
		delete(dt.unknown, oldest)
	}
	return nil
}

// UnknownDevices implements fleet.Store.
func (s *Store) UnknownDevices(ctx context.Context, limit int) ([]fleet.UnknownDevice, error) {
	dt := s.dv
	dt.unknownMu.Lock()
	out := make([]fleet.UnknownDevice, 0, len(dt.unknown))
	for _, u := range dt.unknown {
		out = append(out, u)
	}
	dt.unknownMu.Unlock()
	slices.SortFunc(out, func(a, b fleet.UnknownDevice) int {
		return cmp.Or(b.LastSeen.Compare(a.LastSeen), cmp.Compare(a.Identifier, b.Identifier),
			cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Address, b.Address))
	})
	return out[:min(len(out), max(limit, 0))], nil
}

// PurgeUnknownDevices implements fleet.Store.
func (s *Store) PurgeUnknownDevices(ctx context.Context, before time.Time) (int, error) {
	dt := s.dv
	dt.unknownMu.Lock()
	defer dt.unknownMu.Unlock()
	return deleteWhere(dt.unknown, func(u fleet.UnknownDevice) bool { return u.LastSeen.Before(before) }), nil
}
