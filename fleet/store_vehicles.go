package fleet

import (
	"context"
	"time"
)

// VehicleTx is the vehicles area's part of a Tx: vehicles, and the reads of
// the clock-driven work (the status sweep, the offline check).
type VehicleTx interface {
	// CreateVehicle stores a new vehicle, with no driver (DriverID is
	// ignored: see DriverTx.SetVehicleDriver). Returns conflict if the id
	// exists or another vehicle of the account has the same non-empty
	// ExternalID.
	CreateVehicle(v Vehicle) error
	// Vehicle returns not_found if the account has no such vehicle.
	Vehicle(accountID, id string) (Vehicle, error)
	// Vehicles returns the account's vehicles that f.Match, in id order,
	// after p.After, at most p.Limit of them.
	Vehicles(accountID string, f VehicleFilter, p Page) ([]Vehicle, error)
	// UpdateVehicle replaces a stored vehicle (every field but ID,
	// AccountID, CreatedAt and DriverID, which SetVehicleDriver alone
	// writes). Returns not_found if it is not stored, conflict as
	// CreateVehicle does for ExternalID.
	UpdateVehicle(v Vehicle) error
	// DeleteVehicle deletes the vehicle, its location history and its
	// schedules; its work orders stay. Returns not_found if the account has
	// no such vehicle.
	DeleteVehicle(accountID, id string) error
	// VehiclesToSweep returns vehicles, of any account, whose status the clock
	// may have changed: idle ones stationary since stationaryBefore or
	// earlier, and ones not offline whose latest report is at reportedBefore
	// or earlier (both bounds inclusive, as the status machine's are); at
	// most limit, oldest report first. In a store shared by several
	// processes, rows returned to one Update are not returned to another
	// running at the same time (SKIP LOCKED), so no change is made twice.
	VehiclesToSweep(stationaryBefore, reportedBefore time.Time, limit int) ([]Vehicle, error)
	// VehiclesGoneSilent returns vehicles, of any account, that have
	// reported and whose silence (the time since their latest report)
	// reached m whole minutes, for some m in minutes, after since and by
	// now: latest report <= now - m and > since - m. since is before now and
	// at most a minute before it, so that one m at most applies to a
	// vehicle. In id order, after after, at most limit.
	VehiclesGoneSilent(since, now time.Time, minutes []int, after string, limit int) ([]Vehicle, error)
}

// LocationStore is the locations area's part of a Store.
type LocationStore interface {
	// PurgePoints deletes location points whose timestamp is before before.
	PurgePoints(ctx context.Context, before time.Time) (int, error)
}

// LocationTx is the locations area's part of a Tx: each vehicle's history.
type LocationTx interface {
	// InsertPoints stores points of a vehicle, given in ascending time with
	// no two at the same timestamp. A point whose vehicle and timestamp are
	// stored already is a duplicate and is skipped. It returns the points
	// stored, in ascending time.
	InsertPoints(vehicleID string, points []Point) ([]Point, error)
	// Points returns the vehicle's points with from <= timestamp <= to in
	// ascending time, at most limit of them.
	Points(vehicleID string, from, to time.Time, limit int) ([]Point, error)
	// ApplyIngest applies a location batch's write-set (IngestWrites): its
	// new points, its vehicles' final rows, its trips and its devices'
	// rows, as InsertPoints, UpdateVehicle, PutTrips and
	// RecordDeviceReport would, all or none (ReplayIngest does just
	// that). A point of w stored already, a vehicle not stored and a
	// device not attached to its vehicle fail it (conflict, not_found,
	// not_found). A store may defer the writes to the transaction's
	// commit, applying many transactions' write-sets together, provided
	// that a failure then runs the transactions again (Store.Update): the
	// function returns what ApplyIngest returns, as its last call. Like
	// PutTrips, its failure may leave the transaction unusable.
	ApplyIngest(w IngestWrites) error
}

// StoredPointsTx is what a Tx may also implement when it keeps points'
// attributes in their binary form (Attributes.AppendBinary's): a page of
// history is then written as JSON straight from those bytes
// (Service.HistoryJSON), without making Attributes of them. sqlstore
// implements it; a store that does not is read through Points.
type StoredPointsTx interface {
	// StoredPoints reads what Points reads, leaving each point's
	// Attributes nil and adding its binary form to blobs instead: one Add
	// per point returned, in order (none for a point without any).
	StoredPoints(vehicleID string, from, to time.Time, limit int, blobs *AttributeBlobs) ([]Point, error)
}
