package fleet

import (
	"context"
	"time"
)

// Store persists the domain. It decides nothing: every rule lives in this
// package and the Service applies it. Implementations: memstore (memory) and
// sqlstore (SQLite, PostgreSQL); fleet/storetest is the suite each passes.
//
// Errors: methods return *Error values with CodeNotFound or CodeConflict
// where documented, and any other error for failures of the store itself
// (which the Service reports as internal_error or unavailable).
type Store interface {
	// Update runs fn in a read-write transaction: when fn returns nil its
	// writes are committed together, otherwise none of them is. Transactions
	// are isolated from each other (serialisable in effect). A store may run
	// fn more than once (PostgreSQL retries a transaction it aborted to keep
	// it serialisable), so fn must have no effect outside the Tx.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction that sees one consistent state.
	View(ctx context.Context, fn func(Tx) error) error

	// KeyByHash returns the key whose secret hashes to hash, with its
	// account, whatever the key's status. Returns not_found if none.
	KeyByHash(ctx context.Context, hash [32]byte) (Key, Account, error)

	// TakeQuota applies TakeQuota to subject's state atomically and returns
	// the outcome: of any number of concurrent calls, exactly as many are
	// allowed as the allowance has left — across every process sharing the
	// store, for a store that can be shared.
	TakeQuota(ctx context.Context, subject string, limit int, now time.Time) (Quota, error)

	// RecordUsage adds each entry's counts to the key's hour and moves the
	// key's last_used_at forward to the entry's LastUsedAt (never back).
	// Entries for keys that no longer exist are ignored.
	RecordUsage(ctx context.Context, usage []Usage) error
	// Usage returns the key's hourly counts for hours at or after from,
	// newest first.
	Usage(ctx context.Context, keyID string, from time.Time) ([]Usage, error)

	// BeginIdempotency stores rec unless a record for the same key id and
	// idempotency key exists that IdempotencyRecord.Blocks at rec.CreatedAt;
	// then it returns that record and true instead.
	BeginIdempotency(ctx context.Context, rec IdempotencyRecord) (IdempotencyRecord, bool, error)
	// FinishIdempotency stores the response of a begun record. Returns
	// not_found if there is none.
	FinishIdempotency(ctx context.Context, keyID, idemKey string, status int, body []byte) error
	// DeleteIdempotency forgets a begun record (the request failed in a way
	// that a retry may repeat).
	DeleteIdempotency(ctx context.Context, keyID, idemKey string) error
	// PurgeIdempotency deletes records created before before.
	PurgeIdempotency(ctx context.Context, before time.Time) (int, error)

	// PurgeQuota forgets rate-limit windows that ended before before.
	PurgeQuota(ctx context.Context, before time.Time) (int, error)
	// PurgeUsage deletes hourly usage counts of hours before before.
	PurgeUsage(ctx context.Context, before time.Time) (int, error)
	// PurgeEvents deletes events created before before.
	PurgeEvents(ctx context.Context, before time.Time) (int, error)
	// PurgePoints deletes location points whose timestamp is before before.
	PurgePoints(ctx context.Context, before time.Time) (int, error)

	// ClaimDeliveries: see webhook_store.go.
	DeliveryClaimer

	// Ping reports whether the store is reachable.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// Tx is what a transaction can read and write. Methods of a Tx are only
// valid inside the function passed to Update or View; in View, writes fail.
// Reads scoped by account return not_found for another account's resource.
// A method that fails (a conflict, say) leaves the transaction usable: fn
// may go on, and only returning an error from fn rolls everything back.
type Tx interface {
	// CreateAccount stores a new account. Returns conflict if the id exists.
	CreateAccount(a Account) error
	// Account returns not_found if there is no such account.
	Account(id string) (Account, error)
	// Accounts returns every account in id order, after p.After, at most
	// p.Limit of them.
	Accounts(p Page) ([]Account, error)

	// CreateKey stores a new key. Returns conflict if the id or hash exists,
	// not_found if its account does not.
	CreateKey(k Key) error
	// Key returns the account's key; not_found if it has no such key.
	Key(accountID, id string) (Key, error)
	// KeyByID returns the key with the id, of whichever account; not_found
	// if there is none (the operator's lookup).
	KeyByID(id string) (Key, error)
	// Keys returns the account's keys in id order, after p.After, at most
	// p.Limit of them.
	Keys(accountID string, p Page) ([]Key, error)
	// UpdateKey replaces the mutable fields of a stored key (name,
	// expires_at, revoked_at). Returns not_found if it is not stored.
	UpdateKey(k Key) error
	// CountActiveKeys returns how many of the account's keys are active at
	// now (Key.Status): not revoked, and without an expiry or expiring
	// after now. Keys in a rotation's grace period count.
	CountActiveKeys(accountID string, now time.Time) (int, error)

	// CreateVehicle stores a new vehicle. Returns conflict if the id exists
	// or another vehicle of the account has the same non-empty ExternalID.
	CreateVehicle(v Vehicle) error
	// Vehicle returns not_found if the account has no such vehicle.
	Vehicle(accountID, id string) (Vehicle, error)
	// Vehicles returns the account's vehicles that f.Match, in id order,
	// after p.After, at most p.Limit of them.
	Vehicles(accountID string, f VehicleFilter, p Page) ([]Vehicle, error)
	// UpdateVehicle replaces a stored vehicle (every field but ID, AccountID
	// and CreatedAt). Returns not_found if it is not stored, conflict as
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

	// InsertPoints stores points of a vehicle, given in ascending time with
	// no two at the same timestamp. A point whose vehicle and timestamp are
	// stored already is a duplicate and is skipped. It returns the points
	// stored, in ascending time.
	InsertPoints(vehicleID string, points []Point) ([]Point, error)
	// Points returns the vehicle's points with from <= timestamp <= to in
	// ascending time, at most limit of them.
	Points(vehicleID string, from, to time.Time, limit int) ([]Point, error)

	// CreateWorkOrder stores a new work order. Returns conflict if the id
	// exists. The vehicle is not checked: work orders outlive their vehicle.
	CreateWorkOrder(w WorkOrder) error
	// WorkOrder returns not_found if the account has no such work order.
	WorkOrder(accountID, id string) (WorkOrder, error)
	// WorkOrders returns the account's work orders that f.Match, in id
	// order, after p.After, at most p.Limit of them.
	WorkOrders(accountID string, f WorkOrderFilter, p Page) ([]WorkOrder, error)
	// UpdateWorkOrder replaces a stored work order (every field but ID,
	// AccountID, VehicleID and CreatedAt). Returns not_found if the account
	// has no such work order.
	UpdateWorkOrder(w WorkOrder) error

	// CreateSchedule stores a new schedule, bookkeeping fields included.
	// Returns conflict if the id exists, not_found if the account has no
	// vehicle s.VehicleID.
	CreateSchedule(s Schedule) error
	// Schedule returns not_found if the account has no such schedule.
	Schedule(accountID, id string) (Schedule, error)
	// Schedules returns the account's schedules that f.Match, in id order,
	// after p.After, at most p.Limit of them.
	Schedules(accountID string, f ScheduleFilter, p Page) ([]Schedule, error)
	// UpdateSchedule replaces a stored schedule (every field but ID,
	// AccountID, VehicleID and CreatedAt). Returns not_found if the account
	// has no such schedule.
	UpdateSchedule(s Schedule) error
	// DeleteSchedule deletes a schedule; work orders linked to it stay.
	// Returns not_found if the account has no such schedule.
	DeleteSchedule(accountID, id string) error
	// SchedulesOfVehicle returns the vehicle's schedules in id order (none
	// for an unknown vehicle).
	SchedulesOfVehicle(vehicleID string) ([]Schedule, error)
	// SchedulesToCheck returns schedules, of any account, whose stored
	// Status the calendar may have overtaken: those with Status ok and a
	// NextDueDate <= dueSoonBy, and those with Status other than overdue and
	// a NextDueDate < overdueBefore (dates compare as "YYYY-MM-DD" strings;
	// an empty NextDueDate never matches); at most limit, earliest
	// NextDueDate first, then in id order. In a store shared by several
	// processes, rows returned to one Update are not returned to another
	// running at the same time (SKIP LOCKED).
	SchedulesToCheck(dueSoonBy, overdueBefore string, limit int) ([]Schedule, error)

	// AppendEvent stores an event.
	AppendEvent(e Event) error
	// Event returns not_found if the account has no such event.
	Event(accountID, id string) (Event, error)
	// Events returns the account's events that f.Match, in id order, after
	// p.After, at most p.Limit of them.
	Events(accountID string, f EventFilter, p Page) ([]Event, error)

	// Webhooks: see webhook_store.go.
	WebhookTx
	AlertTx
}

// AlertTx is what a transaction reads and writes of alerts, alert rules and
// geofences. Reads scoped by account return not_found for another
// account's resource, as the rest of Tx does.
type AlertTx interface {
	// CreateAlertRule stores a new rule. Returns conflict if the id exists.
	CreateAlertRule(r AlertRule) error
	// AlertRule returns not_found if the account has no such rule.
	AlertRule(accountID, id string) (AlertRule, error)
	// AlertRules returns the account's rules that f.Match, in id order,
	// after p.After, at most p.Limit of them.
	AlertRules(accountID string, f AlertRuleFilter, p Page) ([]AlertRule, error)
	// CountAlertRules returns how many rules the account has, enabled or not.
	CountAlertRules(accountID string) (int, error)
	// UpdateAlertRule replaces a stored rule (every field but ID, AccountID,
	// Type and CreatedAt). Returns not_found if the account has no such rule.
	UpdateAlertRule(r AlertRule) error
	// DeleteAlertRule returns not_found if the account has no such rule.
	DeleteAlertRule(accountID, id string) error
	// EnabledAlertRules returns the account's enabled rules in id order and
	// the geofences they name: what location ingest evaluates, in one read.
	EnabledAlertRules(accountID string) ([]AlertRule, []Geofence, error)
	// AlertConfigVersion returns the account's alert configuration version
	// (0 until the first BumpAlertConfig).
	AlertConfigVersion(accountID string) (int64, error)
	// BumpAlertConfig moves the account's alert configuration version
	// forward by one; the service calls it with every change of a rule or
	// geofence, in the change's transaction.
	BumpAlertConfig(accountID string) error
	// EnabledRulesOfType returns enabled rules of type t of any account, in
	// id order, after after, at most limit of them (the offline sweep).
	EnabledRulesOfType(t AlertType, after string, limit int) ([]AlertRule, error)

	// CreateGeofence stores a new geofence. Returns conflict if the id exists.
	CreateGeofence(g Geofence) error
	// Geofence returns not_found if the account has no such geofence.
	Geofence(accountID, id string) (Geofence, error)
	// Geofences returns the account's geofences in id order, after p.After,
	// at most p.Limit of them.
	Geofences(accountID string, p Page) ([]Geofence, error)
	// CountGeofences returns how many geofences the account has.
	CountGeofences(accountID string) (int, error)
	// UpdateGeofence replaces a stored geofence (name, geometry, radius,
	// updated_at). Returns not_found if the account has no such geofence.
	UpdateGeofence(g Geofence) error
	// DeleteGeofence returns not_found if the account has no such geofence.
	// Rules naming it are the service's to check first.
	DeleteGeofence(accountID, id string) error

	// CreateAlert stores a new alert. Returns conflict if the id exists.
	CreateAlert(a Alert) error
	// Alert returns not_found if the account has no such alert.
	Alert(accountID, id string) (Alert, error)
	// Alerts returns the account's alerts that f.Match, in id order, after
	// p.After, at most p.Limit of them.
	Alerts(accountID string, f AlertFilter, p Page) ([]Alert, error)
	// UpdateAlert stores an alert's status, acknowledged_at and resolved_at.
	// Returns not_found if the account has no such alert.
	UpdateAlert(a Alert) error
	// LatestAlert returns the account's newest alert (highest id) whose Key
	// is key, whatever its status; not_found if there is none.
	LatestAlert(accountID, key string) (Alert, error)
}

// Usage is one key's request counts in one clock hour.
type Usage struct {
	KeyID      string
	Hour       time.Time // start of the hour, UTC
	Requests   int       // every request made with the key, rejected ones included
	Rejected   int       // requests refused by the rate limit
	LastUsedAt time.Time // latest request in the entry (RecordUsage only)
}

// IdempotencyRecord remembers a POST made with an Idempotency-Key, so that a
// repeat returns the first response.
type IdempotencyRecord struct {
	KeyID       string
	Key         string
	RequestHash [32]byte // method, path and body
	CreatedAt   time.Time
	Done        bool
	Status      int
	Body        []byte
}

// How long idempotency records are kept, and how long an unfinished one
// blocks a repeat before it is taken as abandoned (its server died).
const (
	IdempotencyRetention = 24 * time.Hour
	IdempotencyAbandoned = 5 * time.Minute
)

// Blocks reports whether the stored record r still decides what a new request
// with the same key does at time now; if not, a store replaces it.
func (r IdempotencyRecord) Blocks(now time.Time) bool {
	age := now.Sub(r.CreatedAt)
	if age >= IdempotencyRetention {
		return false
	}
	return r.Done || age < IdempotencyAbandoned
}
