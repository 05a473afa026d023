// Package fleet is the domain of Fleet: its types, its rules and its use
// cases, with no HTTP and no SQL in it. Programs embed it directly, or serve
// it over HTTP with package fleethttp.
//
// # The model
//
// An Account (a fleet company, on a Plan) owns everything else: API Keys,
// Vehicles with their location history (Points), maintenance WorkOrders and
// Schedules, alert rules, geofences and alerts, webhook endpoints, and the
// Events that record each change. A Key holds Permissions; a request made
// with it becomes a Principal, which every use case takes first and checks:
// a Principal reaches only its own account's data, and another account's
// resource is not_found, never forbidden.
//
// # The Service
//
// NewService builds the Service over a Store. Every use case is a method
// (CreateVehicle, IngestBulk, UpdateWorkOrder...) taking a context and a
// Principal; Authenticate and Admit turn a key secret into a Principal and
// apply the hourly quota. Run does the background work — flushing usage
// counters, the clock-driven vehicle status sweep, the maintenance check,
// and purges — until its context ends.
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
// # Stores
//
// A Store persists and decides nothing: validation, permissions, plans,
// the quota arithmetic, the status and work-order state machines and
// schedule due dates are all here. A change and the events it causes are
// written in one transaction (Store.Update), so they commit together or not
// at all. Implementations: memstore (memory) and sqlstore (SQLite and
// PostgreSQL); fleet/storetest is the suite each passes, and a new store
// must pass it too.
package fleet
