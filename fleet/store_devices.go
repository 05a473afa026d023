package fleet

import (
	"context"
	"time"
)

// DeviceTx is the devices area's part of a Tx: the registry of trackers
// and phone apps. Reads scoped by account return not_found for another
// account's device, as the rest of Tx does; an identifier is unique across
// every account.
type DeviceTx interface {
	// CreateDevice stores a new device. Returns conflict if the id exists or
	// a device of any account has the same Identifier (across every process
	// sharing the store), not_found if the account does not exist.
	CreateDevice(d Device) error
	// Device returns not_found if the account has no such device.
	Device(accountID, id string) (Device, error)
	// DeviceByIdentifier returns the device with the identifier, of
	// whichever account; not_found if there is none.
	DeviceByIdentifier(identifier string) (Device, error)
	// Devices returns the account's devices that f.Match, in id order, after
	// p.After, at most p.Limit of them.
	Devices(accountID string, f DeviceFilter, p Page) ([]Device, error)
	// CountDevices returns how many devices the account has.
	CountDevices(accountID string) (int, error)
	// UpdateDevice stores a device's VehicleID, Name and UpdatedAt (the
	// other fields stay). Returns not_found if the account has no such
	// device.
	UpdateDevice(d Device) error
	// DeleteDevice returns not_found if the account has no such device.
	DeleteDevice(accountID, id string) error
	// DetachDevices clears the VehicleID of the account's devices attached
	// to vehicleID, setting their UpdatedAt to at, and returns how many
	// there were.
	DetachDevices(accountID, vehicleID string, at time.Time) (int, error)
	// RecordDeviceReport stores what a device last sent — d's LastSeenAt,
	// Protocol and, unless nil, LastReport; nothing else — on the
	// account's device d.ID, provided it is attached to d.VehicleID ("":
	// to none) when the transaction runs. Returns not_found otherwise (no
	// such device, or attached elsewhere now), so that a report routed by
	// a stale view of the device is never written. A report touches no
	// column an index of the device holds (on a store with row-level
	// conflicts, reports of different devices never conflict).
	RecordDeviceReport(d Device) error
}

// DeviceStore is the devices area's part of a Store: the operator's record
// of identifiers that tried to reach the server without being registered.
// It runs outside transactions; what it keeps is informational, and a
// store may commit it without waiting for the disk.
type DeviceStore interface {
	// RecordUnknownDevice adds attempts of an unknown identifier. Records
	// are keyed by identifier, protocol and address: a new key is stored
	// as u is; an existing one keeps its FirstSeen, takes the later
	// LastSeen and adds u.Count to its count. The store keeps at most keep
	// records: a new key past it forgets the least recently seen (u
	// itself, when it was seen before all the others).
	RecordUnknownDevice(ctx context.Context, u UnknownDevice, keep int) error
	// UnknownDevices returns the records, the last seen first (ties in
	// identifier, protocol, address order), at most limit of them.
	UnknownDevices(ctx context.Context, limit int) ([]UnknownDevice, error)
	// PurgeUnknownDevices deletes the records last seen before before, and
	// returns how many it deleted.
	PurgeUnknownDevices(ctx context.Context, before time.Time) (int, error)
}
