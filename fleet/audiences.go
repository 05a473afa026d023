package fleet

// The Service's methods are the product's use cases, each taking the
// Principal that acts. What else an embedding program or an adapter calls
// is kept apart, by audience, so that `go doc fleet.Service` reads as what
// the product does:
//
//   - Operator (Service.Operator): accounts and keys by id, from the shell
//     or an admin tool, with no principal.
//   - Jobs (Service.Jobs): the background work one step at a time — Run does
//     all of it on a clock — and the webhook delivery queue a sender works.
//   - Edge (Service.Edge): what an adapter serving the API does around each
//     use case — admitting a request against the quotas, making a POST
//     idempotent.
//   - DeviceEdge (Service.DeviceEdge): what a listener of trackers and
//     phone apps calls — whether an identifier is registered, and storing
//     a device's report.

// Jobs is the service's background work, one step at a time, for programs
// that drive the clock themselves (tests, batch jobs); Service.Run does all
// of it on a timer. It also holds the webhook delivery queue that a sender
// (fleethttp.Sender) claims deliveries from and records outcomes to.
type Jobs struct{ s *Service }

// Jobs returns the service's background work.
func (s *Service) Jobs() Jobs { return Jobs{s} }

// Edge is what an adapter serving the API does around each use case:
// admitting a request against its key's hourly allowance (or its address's,
// for a request without a valid key), making a POST with an
// Idempotency-Key run once, spending the stream token that stands in
// for a key on the live stream, and reading what the public page of a
// share link shows (SharedVehicle, SubscribeShared).
type Edge struct{ s *Service }

// Edge returns the per-request plumbing of an adapter.
func (s *Service) Edge() Edge { return Edge{s} }

// DeviceEdge is what a listener of trackers and phone apps (package
// fleetdevice) calls for each device: Known when a device logs in, Report
// for each message of positions (see device_edge.go). It acts for the
// device's account, with no key.
type DeviceEdge struct{ s *Service }

// DeviceEdge returns what device listeners call.
func (s *Service) DeviceEdge() DeviceEdge { return DeviceEdge{s} }
