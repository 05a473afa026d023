package fleet

import "time"

// TripTx is the trips area's part of a Tx: the trips the ingest derives
// from each vehicle's reports (stops and summaries are read from them).
//
// A trip's span is Start.Timestamp to End.Timestamp; no two trips of a
// vehicle start at the same time. Deleting a vehicle deletes its trips.
type TripTx interface {
	// PutTrips stores trips, every field included, each replacing the
	// stored one with its id, all or none. Returns not_found if there is
	// no vehicle t.VehicleID. That the vehicle is of the trip's account is
	// the caller's to know (the ingest read it in the same transaction):
	// the ingest calls this once per batch, with the trips of all its
	// vehicles, and pays no further read for it. Its failure may leave
	// the transaction unusable (on PostgreSQL it runs without a savepoint,
	// two round trips fewer on every report): fn returns the error.
	PutTrips(ts []Trip) error
	// DeleteTrip deletes a vehicle's trip; deleting one that is not
	// stored is no error.
	DeleteTrip(vehicleID, id string) error
	// Trip returns not_found if the account has no such trip.
	Trip(accountID, id string) (Trip, error)
	// LatestTrips returns the latest trip (by start) of each of the
	// vehicles that has one, by vehicle id. Only a vehicle's latest trip
	// may be in progress.
	LatestTrips(vehicleIDs []string) (map[string]Trip, error)
	// LastTripBefore returns the vehicle's trip starting latest before
	// before; ok is false if it has none.
	LastTripBefore(vehicleID string, before time.Time) (t Trip, ok bool, err error)
	// VehicleTrips returns the vehicle's trips whose span meets [from, to]
	// (Start.Timestamp <= to and End.Timestamp >= from) and that start
	// after after, in start order, at most limit of them.
	VehicleTrips(vehicleID string, from, to, after time.Time, limit int) ([]Trip, error)
	// AccountTrips returns the trips of the account (of its vehicle
	// vehicleID only, unless "") whose span meets [from, to], ordered by
	// vehicle id then start.
	AccountTrips(accountID, vehicleID string, from, to time.Time) ([]Trip, error)
}
