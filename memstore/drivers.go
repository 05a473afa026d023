package memstore

import (
	"github.com/fleetkit/fleetapi/fleet"
)

// driverTables hold the drivers, their indexes of identifiers and external
// ids (unique per account), and which vehicle each drives: the vehicles'
// DriverID, indexed by driver.
type driverTables struct {
	drivers      *table[fleet.Driver]
	byIdentifier map[string]string // account + "\x00" + fleet.DriverIdentifierKey -> driver id
	byExternalID map[string]string // account + "\x00" + external id -> driver id
	driving      map[string]string // driver id -> vehicle id
}

func newDriverTables() *driverTables {
	return &driverTables{
		drivers: newTable("driver", func(d fleet.Driver) string { return d.ID },
			func(d fleet.Driver) string { return d.AccountID }, nil),
		byIdentifier: map[string]string{},
		byExternalID: map[string]string{},
		driving:      map[string]string{},
	}
}

// claim takes key in index for id, unless another id holds it; release
// gives it back. Both are undone with the transaction.
func (t *tx) claim(index map[string]string, key, id, what string) error {
	if owner, ok := index[key]; ok {
		if owner == id {
			return nil
		}
		return fleet.Errorf(fleet.CodeConflict, "Another driver has this %s.", what)
	}
	index[key] = id
	t.undo(func() { delete(index, key) })
	return nil
}

func (t *tx) release(index map[string]string, key string) {
	owner, ok := index[key]
	if !ok {
		return
	}
	delete(index, key)
	t.undo(func() { index[key] = owner })
}

func identifierKey(accountID, identifier string) string {
	return accountID + "\x00" + fleet.DriverIdentifierKey(identifier)
}

// claimDriver takes d's identifier and external id, giving back old's when
// they change (old is the zero Driver for a new one).
func (t *tx) claimDriver(d, old fleet.Driver) error {
	dt := t.s.dr
	if d.Identifier != "" && fleet.DriverIdentifierKey(d.Identifier) != fleet.DriverIdentifierKey(old.Identifier) {
		if err := t.claim(dt.byIdentifier, identifierKey(d.AccountID, d.Identifier), d.ID, "identifier"); err != nil {
			return err
		}
	}
	if d.ExternalID != "" && d.ExternalID != old.ExternalID {
		if err := t.claim(dt.byExternalID, d.AccountID+"\x00"+d.ExternalID, d.ID, "external_id"); err != nil {
			return err
		}
	}
	if old.Identifier != "" && fleet.DriverIdentifierKey(d.Identifier) != fleet.DriverIdentifierKey(old.Identifier) {
		t.release(dt.byIdentifier, identifierKey(old.AccountID, old.Identifier))
	}
	if old.ExternalID != "" && d.ExternalID != old.ExternalID {
		t.release(dt.byExternalID, old.AccountID+"\x00"+old.ExternalID)
	}
	return nil
}

// withVehicle sets d's VehicleID from the vehicles' DriverID.
func (t *tx) withVehicle(d fleet.Driver) fleet.Driver {
	d.VehicleID = t.s.dr.driving[d.ID]
	return d
}

func (t *tx) CreateDriver(d fleet.Driver) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.s.accounts.get("", d.AccountID); err != nil {
		return err
	}
	if _, ok := t.s.dr.drivers.byID[d.ID]; ok {
		return fleet.Errorf(fleet.CodeConflict, "A driver with id %q exists.", d.ID)
	}
	if err := t.claimDriver(d, fleet.Driver{}); err != nil {
		return err
	}
	d.VehicleID = ""
	return t.s.dr.drivers.insert(t.txn, d)
}

func (t *tx) Driver(accountID, id string) (fleet.Driver, error) {
	d, err := t.s.dr.drivers.get(accountID, id)
	if err != nil {
		return fleet.Driver{}, err
	}
	return t.withVehicle(d), nil
}

func (t *tx) DriverByIdentifier(accountID, identifier string) (fleet.Driver, error) {
	id, ok := t.s.dr.byIdentifier[identifierKey(accountID, identifier)]
	if !ok || identifier == "" {
		return fleet.Driver{}, fleet.Errorf(fleet.CodeNotFound, "No driver with identifier %q.", identifier)
	}
	return t.Driver(accountID, id)
}

func (t *tx) Drivers(accountID string, f fleet.DriverFilter, p fleet.Page) ([]fleet.Driver, error) {
	out := t.s.dr.drivers.list(accountID, p, func(d fleet.Driver) bool {
		d = t.withVehicle(d)
		return f.Match(&d)
	})
	for i := range out {
		out[i] = t.withVehicle(out[i])
	}
	return out, nil
}

func (t *tx) CountDrivers(accountID string) (int, error) {
	return len(t.s.dr.drivers.order[accountID]), nil
}

func (t *tx) UpdateDriver(d fleet.Driver) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.dr.drivers.get(d.AccountID, d.ID)
	if err != nil {
		return err
	}
	if err := t.claimDriver(d, old); err != nil {
		return err
	}
	d.CreatedAt, d.VehicleID = old.CreatedAt, ""
	return t.s.dr.drivers.put(t.txn, d)
}

func (t *tx) DeleteDriver(accountID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	dt := t.s.dr
	old, err := dt.drivers.get(accountID, id)
	if err != nil {
		return err
	}
	if err := dt.drivers.delete(t.txn, accountID, id); err != nil {
		return err
	}
	if old.Identifier != "" {
		t.release(dt.byIdentifier, identifierKey(accountID, old.Identifier))
	}
	if old.ExternalID != "" {
		t.release(dt.byExternalID, accountID+"\x00"+old.ExternalID)
	}
	return nil
}

func (t *tx) SetVehicleDriver(accountID, vehicleID, driverID string) error {
	if err := t.writable(); err != nil {
		return err
	}
	v, err := t.s.vehicles.get(accountID, vehicleID)
	if err != nil {
		return err
	}
	if v.DriverID == driverID {
		return nil
	}
	dt := t.s.dr
	if driverID != "" {
		if other, ok := dt.driving[driverID]; ok && other != vehicleID {
			return fleet.Errorf(fleet.CodeConflict, "Driver %s drives another vehicle.", driverID)
		}
	}
	t.setDriving(v.DriverID, "")
	t.setDriving(driverID, vehicleID)
	v.DriverID = driverID
	return t.s.vehicles.put(t.txn, v)
}

// setDriving records that driverID drives vehicleID ("": none), undone
// with the transaction.
func (t *tx) setDriving(driverID, vehicleID string) {
	if driverID == "" {
		return
	}
	m := t.s.dr.driving
	old, had := m[driverID]
	if vehicleID == "" {
		delete(m, driverID)
	} else {
		m[driverID] = vehicleID
	}
	t.undo(func() {
		if had {
			m[driverID] = old
		} else {
			delete(m, driverID)
		}
	})
}
