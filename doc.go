// Package fleetapi is Fleet: a fleet-data platform as a Go library with a
// thin reference server. Fleet companies, and the products that serve them,
// use it to manage vehicles, see where each one is in real time, run
// maintenance, raise alerts and receive webhooks, through an HTTP/JSON API
// at /v1 authenticated with API keys whose allowance depends on the plan.
//
// The packages:
//
//   - fleet: the domain. Types, rules (validation, permissions, plans, the
//     quota window, state machines) and the Service with every use case,
//     over the Store interface. Standard library and uuid only; its
//     self-contained computations (fleet/internal/geo: the geometry of
//     geofences; fleet/internal/broker: the live streams' fan-out;
//     fleet/internal/gate and fleet/internal/cache: the gates that order
//     one process's writes, and the caches;
//     fleet/internal/password and fleet/internal/secret: the default
//     password hashing, PBKDF2 from the standard library, and the sealing
//     of secrets) live in packages of its own that keep to the same.
//   - fleet/storetest: the conformance suite every Store passes.
//   - memstore: a Store in memory, for tests, demos and embedding.
//   - sqlstore: a Store on SQLite (the embedded default) or PostgreSQL.
//   - fleetpass: Argon2id password hashing (golang.org/x/crypto), for
//     fleet.Options.Passwords; fleetserver stores its people's passwords
//     so.
//   - fleetstore: opens the Store a DSN names (memory:, sqlite:PATH,
//     postgres://...).
//   - fleethttp: the HTTP adapter: the /v1 handler, the OpenAPI document
//     and the webhook Sender.
//   - fleetclient: the Go client of the API. It links fleet, fleetwire,
//     uuid and the standard library (no golang.org/x/crypto), never the
//     handler or the stores
//     (fleethttp keeps deprecated aliases of it for one minor version).
//   - fleetwire: the API's JSON bodies that are not fleet types (the
//     envelope, the error table, the key and account answers, the request
//     bodies), one definition for the handler and the client.
//   - fleetdevice: the device edge: listeners (TCP, UDP, OsmAnd's HTTP)
//     that hand what trackers report to the service's device edge, and
//     the table of protocols. Each protocol's decoder is a package of its
//     own (fleetdevice/teltonika, gt06, h02, queclink, gps103, osmand)
//     that imports only fleetdevice/devproto, what the decoders share;
//     fleetdevice/devicetest simulates the devices.
//   - fleetmail: the e-mail edge: renders notifications, digests and
//     scheduled reports (text and HTML, the report's CSV attached) and
//     sends them over SMTP from the domain's outbox, claimed through the
//     Service like webhook deliveries.
//   - cmd/fleetserver: the reference server.
//   - examples: programs to copy from.
//
// Only cmd and examples wire a store to fleethttp and fleetmail; adapters never import
// each other, and fleetclient imports no adapter.
package fleetapi
