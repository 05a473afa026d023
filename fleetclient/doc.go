// Package fleetclient is the Go client of the Fleet HTTP API (/v1): typed
// methods that mirror the API's operations, ctx first.
//
//	c := fleetclient.NewClient("http://127.0.0.1:8080", os.Getenv("FLEET_KEY"))
//	v, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Truck 7"})
//	if fleet.ErrorCode(err) == fleet.CodeValidation { ... }
//	for rec, err := range c.Locations(ctx, fleetclient.VehicleQuery{}) { ... }
//
// Errors the API answers come back as *APIError, which carries the HTTP
// status, the request id and the *fleet.Error, so fleet.ErrorCode reads
// the same on both sides of the wire; a request that got no answer is a
// *TransportError, which fleet.ErrorCode reads as unavailable. List methods
// return iter.Seq2 and walk every page. A 429 is waited out as Retry-After
// says (WithoutRateLimitWait to opt out); a failed connection is retried,
// and every POST carries an Idempotency-Key, so a retry never runs twice.
// Answers a newer server within /v1 enriches (new members, enumeration
// values, event types) are read, keeping what the client knows.
//
// # Dependencies
//
// A program that only calls the API links this package, the wire types
// (fleetwire), the domain types the API speaks in (fleet), uuid and the
// standard library: never the handler (fleethttp), the stores, their
// drivers, the metrics or the rate limiter. TestClientLinksNoServerPackages
// and TestClientAddsOnlyTheWireTypes read `go list -deps` and fail if that
// changes; TestClientLinksNoXCrypto fails on any golang.org/x/crypto
// package (fleet hashes passwords with the standard library, and the
// Argon2id of fleetserver is in fleetpass, which the client does not
// link).
//
// # Where the wire types live
//
// Both sides of the wire use one definition of every body, and the client
// does not import fleethttp:
//
//   - Resources whose JSON is the API's travel as fleet's types
//     (fleet.Vehicle, fleet.Point, fleet.Alert, fleet.Device...), and
//     updates as fleet's merge patches (fleet.VehiclePatch...): the handler
//     encodes them and the client decodes them, with no copy in between.
//   - Everything else on the wire is in package fleetwire, which imports
//     only fleet and the standard library: the envelope every answer comes
//     in (fleetwire.Envelope, with fleetwire.Pagination and
//     fleetwire.ErrorBody), the error table (fleetwire.StatusOf), the
//     answers that are not fleet types (fleetwire.Account, APIKey,
//     NewAPIKey, KeyUsage, StreamToken), and the request bodies of the
//     operations that create things (fleetwire.VehicleInput,
//     LocationBatch, WorkOrderInput...). The handler decodes requests into
//     these types, its OpenAPI document is generated from them, and this
//     package encodes them, so a field renamed in one place is renamed for
//     both.
//   - What is the client's alone stays here: its options, the queries of
//     its list methods (VehicleQuery, SummaryQuery), WebhookParams,
//     LiveLocation and its errors.
//
// A separate package rather than the client's own copies keeps one
// definition (a copy drifts silently: the server refuses unknown fields);
// a package apart from fleethttp keeps the handler's dependencies out of
// every client program. fleethttp's Client, NewClient, options, query types
// and key types are deprecated aliases of these for one minor version.
package fleetclient
