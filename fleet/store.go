package fleet

import "context"

// Store persists the domain. It decides nothing: every rule lives in this
// package and the Service applies it. Implementations: memstore (memory) and
// sqlstore (SQLite, PostgreSQL); fleet/storetest is the suite each passes.
//
// Errors: methods return *Error values with CodeNotFound or CodeConflict
// where documented. A failure of the database that heals by itself
// (unreachable, restarting, full, past the store's deadline, still in
// conflict after retries) is an *Error with CodeUnavailable, its cause in
// the chain (the API's 503 with Retry-After); any other error is a bug of
// the store, which the API reports as internal_error.
//
// The contract is grouped by area — keys, vehicles, locations, events,
// maintenance, alerts, webhooks, stream tokens, devices, drivers, share links, commands — each with a Store part (what runs outside
// a transaction: the per-request path, the delivery queue, purges) and a Tx
// part, and each with its section of the conformance suite
// (fleet/storetest: RunKeys, RunVehicles...), so that a new store can be
// written and checked one area at a time (see the package documentation).
type Store interface {
	// Update runs fn in a read-write transaction: when fn returns nil its
	// writes are committed together, otherwise none of them is. Transactions
	// are isolated from each other (serialisable in effect), though a store
	// may commit several together (group commit: see the package
	// documentation). A store may run fn more than once (PostgreSQL runs
	// again a transaction or a group it aborted for a deadlock or to keep it
	// serialisable), so fn must have no effect outside the Tx. ctx may
	// carry the write's WriteCost, by which a store may order the writes
	// waiting for it and lock their vehicles first (never decide anything).
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction that sees one consistent state.
	View(ctx context.Context, fn func(Tx) error) error
	// Ping reports whether the store is reachable.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error

	KeyStore
	LocationStore
	EventStore
	WebhookStore
	StreamTokenStore
	DeviceStore
	ShareLinkStore
	NotifyStore
	CommandStore
}

// Tx is what a transaction can read and write. Methods of a Tx are only
// valid inside the function passed to Update or View; in View, writes fail.
// Reads scoped by account return not_found for another account's resource.
// A method that fails (a conflict, say) leaves the transaction usable: fn
// may go on, and only returning an error from fn rolls everything back.
// The exceptions, which may leave the transaction unusable on PostgreSQL
// (their statements run without a savepoint) and whose failure fn
// returns: TripTx.PutTrips, VehicleTx.UpdateVehicle of a vehicle without
// an ExternalID, and LocationTx.ApplyIngest (fn's last call). A read that
// fails on PostgreSQL (a deadlock, a statement past the store's timeout)
// may end the transaction too: fn returns its error.
type Tx interface {
	KeyTx
	VehicleTx
	LocationTx
	EventTx
	MaintenanceTx
	AlertTx
	WebhookTx
	TripTx
	UserTx
	DeviceTx
	NotifyTx
	DriverTx
	ShareLinkTx
	CommandTx
}

// WriteCost describes a write transaction to the store that runs it: whose
// it is, how many location points it stores and which vehicles it writes.
// The service puts it in the context it passes to Store.Update for
// location batches, so that a store whose writes take turns (SQLite's one
// writer) can serve accounts fairly: keep one account's bulk load from
// making every other account's writes wait behind it; and so that a store
// that commits several writes together (PostgreSQL's group commit) can
// lock their vehicles first, in one order. A store may ignore it; it never
// changes what a write does.
type WriteCost struct {
	AccountID string
	Points    int
	// Vehicles are the vehicles whose rows the write reads to update
	// them, in id order (a store may lock them before the write runs).
	Vehicles []string
}

// BulkPoints is how many points make a location batch a bulk one. An
// account's bulk batches are ingested one at a time on each server, and a
// store may serve them apart from other writes, by their WriteCost. A
// batch under it takes well under a millisecond of a store's writer.
const BulkPoints = 32

type writeCostKey struct{}

// WithWriteCost returns a copy of ctx that carries c.
func WithWriteCost(ctx context.Context, c WriteCost) context.Context {
	return context.WithValue(ctx, writeCostKey{}, c)
}

// WriteCostOf returns the WriteCost ctx carries, and whether it carries one.
func WriteCostOf(ctx context.Context) (WriteCost, bool) {
	c, ok := ctx.Value(writeCostKey{}).(WriteCost)
	return c, ok
}
