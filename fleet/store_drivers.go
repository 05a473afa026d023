package fleet

// DriverTx is the drivers area's part of a Tx: the account's drivers, and
// which vehicle each drives. Reads scoped by account return not_found for
// another account's driver, as the rest of Tx does.
//
// Who drives which vehicle is stored once, as the vehicle's DriverID:
// SetVehicleDriver writes it (UpdateVehicle never does), and a driver's
// VehicleID, which every read of a driver returns, is the vehicle of the
// account whose DriverID is the driver's id ("" when none). At most one
// vehicle of an account has a given driver.
type DriverTx interface {
	// CreateDriver stores a new driver (its VehicleID is ignored). Returns
	// conflict if the id exists, or another driver of the account has
	// the same non-empty Identifier (by DriverIdentifierKey) or
	// ExternalID; not_found if the account does not exist.
	CreateDriver(d Driver) error
	// Driver returns not_found if the account has no such driver.
	Driver(accountID, id string) (Driver, error)
	// DriverByIdentifier returns the account's driver whose Identifier
	// has the DriverIdentifierKey of identifier; not_found if there is
	// none (or identifier is "").
	DriverByIdentifier(accountID, identifier string) (Driver, error)
	// Drivers returns the account's drivers that f.Match, in id order,
	// after p.After, at most p.Limit of them.
	Drivers(accountID string, f DriverFilter, p Page) ([]Driver, error)
	// CountDrivers returns how many drivers the account has.
	CountDrivers(accountID string) (int, error)
	// UpdateDriver replaces a stored driver (every field but ID,
	// AccountID, CreatedAt and VehicleID). Returns not_found if the
	// account has no such driver, conflict as CreateDriver does.
	UpdateDriver(d Driver) error
	// DeleteDriver deletes a driver; trips keep its id as history, and a
	// vehicle whose DriverID it is keeps it until SetVehicleDriver clears
	// it (the service clears it first). Returns not_found if the account
	// has no such driver.
	DeleteDriver(accountID, id string) error
	// SetVehicleDriver sets the DriverID of the account's vehicle to
	// driverID ("" clears it); nothing else of the vehicle changes.
	// Returns not_found if the account has no such vehicle, conflict if
	// driverID is not "" and another vehicle of the account has it (a
	// driver is moved by clearing that vehicle first). That the driver
	// exists is the caller's to know.
	SetVehicleDriver(accountID, vehicleID, driverID string) error
}
