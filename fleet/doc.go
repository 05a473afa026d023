// Package fleet is the domain of Fleet: its types, its rules and its use
// cases, with no HTTP and no SQL in it. Programs embed it directly, or serve
// it over HTTP with package fleethttp.
//
// # The model
//
// An Account (a fleet company, on a Plan) owns everything else: API Keys,
// Vehicles with their location history (Points), maintenance WorkOrders and
// Schedules, alert rules, geofences and alerts, webhook endpoints, Devices
// (trackers and phone apps that report a vehicle's positions themselves),
// Drivers (who drives which vehicle, by hand or from the key a device
// reads), ShareLinks (a public page of one vehicle's live position, for a
// while), and the Events that record each change. A Key holds Permissions; a request made
// with it becomes a Principal, which every use case takes first and checks:
// a Principal reaches only its own account's data, and another account's
// resource is not_found, never forbidden.
//
// Trips are derived, never written by a client: the ingest segments each
// vehicle's reports into Trips as they arrive, in the batch's transaction
// (see trip.go for the rules), and Stops and the Summary report are read
// from the stored trips alone.
//
// # The Service
//
// NewService builds the Service over a Store. Its methods are the product's
// use cases, each taking a context and the Principal that acts
// (CreateVehicle, IngestBulk, UpdateWorkOrder...), and each checking first
// what the principal's key needs for it: one table, read with PermissionOf,
// states that for every use case, and the HTTP adapter's route table and
// document read it from there. Authenticate turns a key secret into a
// Principal; SystemPrincipal acts for an account with every permission, for
// a program acting on its own behalf. Every input rule is the service's:
// whatever the HTTP API refuses, a program calling the service refuses too,
// with the same error and field name.
//
// Names follow one scheme, shared with the Go client (fleethttp.Client):
// X returns one resource, ListX one page of them (the client's Xs walks
// every page), CreateX, UpdateX (a merge patch, with Optional fields) and
// DeleteX change them.
//
// What else a program calls is kept apart, by audience:
//
//   - Service.Operator: the operator's use cases — accounts, and keys by
//     account or id — as the command line does them, with no principal.
//   - Service.Jobs: the background work one step at a time (status sweep,
//     offline alerts, maintenance check, usage flush, streams of keys and
//     share links no longer valid, purges) and the webhook delivery queue a sender works.
//     Run does all of the background work on a clock until its context ends.
//   - Service.Edge: what an adapter serving the API does around each use
//     case — admitting requests against the quotas, making POSTs idempotent
//     — and what the public page of a share link reads (SharedVehicle,
//     SubscribeShared).
//   - Service.DeviceEdge: what a listener of trackers and phone apps calls
//     — whether an identifier is registered (Known), and a device's
//     message of positions (Report), stored by the rules of the API.
//
// Time comes from Options.Now, never from time.Now in the rules, so tests
// drive status changes, quota windows and schedules with a clock of their
// own.
//
// # Errors
//
// Use cases return *Error values whose Code is the API's error code
// (CodeNotFound, CodeValidation, CodeInvalidStateTransition...); ErrorCode reads
// it from any error, mapping the unknown to internal_error. Validation
// errors name every bad field in Details.
//
// # What lives under fleet/internal/
//
// The computations that need none of the domain's types — no Tx, no
// Principal, no events — live in packages of their own under
// fleet/internal/, each tested on its own, which no package but fleet's
// may import; the rules that use them stay here, and what this package
// exports of them delegates. Like fleet, they import only the standard
// library (and what fleet already imports), so fleet's dependencies stay
// what they were:
//
//   - internal/geo: the geometry of geofences — great-circle distances
//     (DistanceM), point in polygon (holes, the antimeridian) and in
//     circle, bounding boxes, and the index of a long ring's edges by
//     latitude. What a geofence may be (Geofence.Validate), and which
//     rules watch it and how they are found for a point, are fleet's.
//   - internal/broker: the fan-out of the live streams — ids, the replay
//     buffer every subscriber shares, subscriptions and their count per
//     key, a shared feed's batches taken in id order. Who may subscribe,
//     how many streams a plan allows, and what a report is (Subscribe,
//     StreamItem), are fleet's.
//   - internal/unknownlimit: how often the attempts of unknown device
//     identifiers are recorded, per address a minute and for the server a
//     second. What an attempt is, and the figures, are fleet's.
//   - internal/password: the default hashing and verification of
//     passwords, PBKDF2-HMAC-SHA256 from the standard library
//     (HashPassword, VerifyPassword; a program passes its own hasher in
//     Options.Passwords, such as fleetpass.Argon2id), and the slots that
//     bound how many hashes run at once. What a password must be
//     (CheckPassword), and the sign-in throttle, are fleet's.
//   - internal/cache: the caches in memory — a bounded map (keys by
//     hash), the newest version of a value per account (notification
//     rules), values per account by version within a budget of bytes,
//     least recently used first out (compiled alert rules), values
//     trusted while fresh and dropped by a change (devices' routes by
//     identifier). What is cached, what a version is and how long an
//     entry is trusted are fleet's.
//   - internal/gate: the gates that order one process's writes of an
//     account and of a vehicle (shared or alone, granted in order of
//     arrival, given up when a request's context ends), and an account's
//     bulk batches one at a time. Which use case takes which gate when,
//     and what a request whose wait ended answers, are fleet's.
//   - internal/secret: AES-256-GCM sealing — a ring of keys named by ids
//     in what they seal (SecretKeys), keys derived from a secret and the
//     sealing of bytes under them (SealKey). What is sealed, under which
//     key and bound to what (a webhook's signing secrets to its endpoint,
//     an idempotent response to its key, Idempotency-Key and status), is
//     fleet's.
//
// # Stores
//
// A Store persists and decides nothing: validation, permissions, plans,
// the quota arithmetic, the status and work-order state machines and
// schedule due dates are all here. A change and the events it causes are
// written in one transaction (Store.Update), so they commit together or not
// at all. Implementations: memstore (memory) and sqlstore (SQLite and
// PostgreSQL: the SQL written once, an engine for each database). Update's
// context may say what a location batch's write is (WriteCost): a store
// whose writes take turns may serve accounts in turn by it (sqlstore's
// SQLite engine does; its PostgreSQL engine keeps a group runner free of
// bulk writes), and may lock the vehicles it names first; or ignore it.
//
// A store may commit several Updates together (group commit: sqlstore
// does for every write on SQLite and for location writes on PostgreSQL).
// What a caller of Update relies on holds for each of them:
//
//   - All or nothing per call: when fn returns an error (or panics), none
//     of its writes is kept, and the writes of the calls committed beside
//     it are (each runs in its own savepoint).
//   - Update returning nil means durable: it returns after the shared
//     commit, and with the commit's error if that failed.
//   - A group that the database aborts (a deadlock, a serialisation
//     failure) is run again, as a whole or the aborted call alone, so fn
//     may run more than once and must be a pure function of its
//     transaction: no effect outside the Tx. What follows a write — the
//     live stream, webhooks, counters — happens after Update returns nil.
//
// And the invariants of location writes hold however the writes of
// several servers sharing a store interleave (PostgreSQL runs them at READ
// COMMITTED with row locks, not SERIALIZABLE): a vehicle's latest location
// only moves forward (the newest point wins, whatever the order points
// arrive in); a point at a stored vehicle and timestamp is a duplicate,
// skipped and counted once; trips follow the stored points as if the
// batches had arrived one after another; caps (vehicles, keys, devices...)
// and quota windows are exact across servers.
//
// To write a new Store, start with Update and View: a read-write
// transaction whose writes commit together or not at all, isolated from the
// others (serialisable in effect; an Update may be run again when the store
// aborts it), and a read-only one that sees one consistent state. Check them
// with storetest.RunTransactions. Then implement the contract one area at a
// time — each area is a Store part (what runs outside transactions) and a Tx
// part — and check each with its section of fleet/storetest:
//
//   - keys (KeyStore, KeyTx): accounts, keys, the per-request path (lookup
//     by hash, quota windows exact under concurrency, one unit at a time
//     for requests and many at once, given back when unused, for an
//     account's location points; usage, idempotency); storetest.RunKeys.
//   - vehicles (VehicleTx): storetest.RunVehicles.
//   - locations (LocationStore, LocationTx): storetest.RunLocations.
//   - events (EventStore, EventTx): storetest.RunEvents.
//   - maintenance (MaintenanceTx): storetest.RunMaintenance.
//   - alerts (AlertTx): storetest.RunAlerts.
//   - webhooks (WebhookStore, WebhookTx): storetest.RunWebhooks.
//   - stream tokens (StreamTokenStore): single-use tokens taken once across
//     every process sharing the store; storetest.RunStreamTokens.
//   - trips (TripTx): storetest.RunTrips.
//   - users (UserTx): the dashboard's people, sessions and sign-in links;
//     storetest.RunUsers.
//   - devices (DeviceStore, DeviceTx): trackers and phone apps, their
//     identifiers unique across accounts, and the operator's record of
//     unknown identifiers; storetest.RunDevices.
//   - drivers (DriverTx): drivers, their identifiers and external ids
//     unique per account, and who drives which vehicle (the vehicle's
//     DriverID, written by SetVehicleDriver alone); storetest.RunDrivers.
//   - share links (ShareLinkStore, ShareLinkTx): links to one vehicle's
//     public page, found by the hash of their token across accounts;
//     storetest.RunShareLinks.
//   - a location batch's write-set (LocationTx.ApplyIngest, IngestWrites):
//     fleet.ReplayIngest is a correct ApplyIngest for any store; a store
//     may apply many batches' write-sets together. storetest.RunIngest,
//     which needs the areas above.
//
// storetest.Run runs them all; a store's own test is three lines calling it.
// Each method's comment says what it returns (not_found, conflict) and what
// a store shared by several processes must guarantee; a store copies values
// in and out, so that no caller shares memory with it.
package fleet
