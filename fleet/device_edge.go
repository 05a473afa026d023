package fleet

import (
	"context"
	"errors"
	"net"
	"time"
)

// The device edge: what the listeners of package fleetdevice call for each
// login and each message of a tracker or phone app (API.md §13).
//
// # Routing a report
//
// A report names its device by identifier; the service must find the
// device, its account (for the plan) and its vehicle before it can ingest,
// and it must cost about what a single-point POST /v1/vehicles/{id}/locations
// costs. So this process keeps the route of each identifier it has seen in
// memory (deviceCache) and reads no device before the report's write
// transaction: a route is trusted for routeTTL (a device reports every few
// seconds or minutes, so a shorter life would read most reports' device
// again), the absence of a device for unknownTTL. Correctness does not rest
// on the cache: the report's write transaction records the device's row
// with a condition, that the device is still attached to the vehicle the
// route named (DeviceTx.RecordDeviceReport), in the transaction that stores
// the points. A device moved, detached or deleted since — by this server,
// which also forgets the identifier at once, or by another sharing the
// store, which this one cannot tell — fails that condition: the
// transaction rolls back whole, the route is read again, and the report is
// ingested along the new one. The device's row is part of the batch's
// write-set (IngestWrites.Devices), applied with its condition: on
// PostgreSQL a group applies its members' rows in one statement, and a
// row whose device moved meanwhile fails that statement, so the group's
// members run again one by one and the report alone fails its condition.
// A move committed by another server while the report runs either commits
// first (the report's condition fails) or waits for the report's group to
// commit (the row is locked by its update). What the
// cache may hold stale is the account (its plan, which decides too_old and
// the points allowance), for up to routeTTL, and the absence of a device
// that another server registered, for up to unknownTTL (this server forgets
// it at once).

// routeTTL is how long a route read from the store is trusted; unknownTTL
// how long the absence of a device is.
const (
	routeTTL   = 10 * time.Minute
	unknownTTL = 5 * time.Second
)

// maxCachedRoutes bounds the routes a process keeps.
const maxCachedRoutes = 200_000

// maxRouteAttempts bounds how often a report is routed again because its
// device changed while it was stored.
const maxRouteAttempts = 3

// UnknownRecordsPerMinute is how many attempts of unknown identifiers from
// one address (host) the operator's list records each minute; the others
// are counted in the service's Stats only, so that a flood of logins with
// unknown identifiers does not become a flood of writes.
const UnknownRecordsPerMinute = 10

// The records of unknown identifiers are bounded on each server (API.md
// §13): at most UnknownRecordsPerSecond are written a second, whatever
// addresses they come from (past it attempts are counted in Stats only),
// and the store keeps at most UnknownRecordsKept, the least recently seen
// forgotten first.
const (
	UnknownRecordsPerSecond = 100
	UnknownRecordsKept      = 10_000
)

// maxUnknownAddresses bounds the addresses whose minute the service keeps;
// past it, an attempt from a new address is counted only.
const maxUnknownAddresses = 10_000

// errDeviceMoved: the device a report was routed to is no longer attached
// to the route's vehicle (or is gone); the report's transaction rolls back
// and the report is routed again.
var errDeviceMoved = errors.New("fleet: the device changed since its report was routed")

// deviceRoute is what a report needs of its device: found is false when no
// device has the identifier.
type deviceRoute struct {
	found     bool
	deviceID  string
	vehicleID string
	// as acts for the device's account, with every permission.
	as      Principal
	fetched time.Time
}

// fresh reports whether r may be trusted at now.
func (r deviceRoute) fresh(now time.Time) bool {
	ttl := unknownTTL
	if r.found {
		ttl = routeTTL
	}
	return now.Sub(r.fetched) < ttl && !now.Before(r.fetched)
}

// route returns the route of identifier: from the cache unless fresh, else
// read in one read transaction. An identifier outside the rule names no
// device, without a read.
func (s *Service) route(ctx context.Context, identifier string, fresh bool) (deviceRoute, error) {
	if !ValidIdentifier(identifier) {
		return deviceRoute{}, nil
	}
	now := s.now()
	r, gen, ok := s.devices.get(identifier, now)
	if ok && !fresh {
		return r, nil
	}
	err := s.view(ctx, func(tx Tx) error {
		r = deviceRoute{}
		d, err := tx.DeviceByIdentifier(identifier)
		if ErrorCode(err) == CodeNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		a, err := tx.Account(d.AccountID)
		if err != nil {
			return err
		}
		r = deviceRoute{found: true, deviceID: d.ID, vehicleID: d.VehicleID, as: SystemPrincipal(a)}
		return nil
	})
	if err != nil {
		return deviceRoute{}, err
	}
	r.fetched = now
	s.devices.put(identifier, r, gen, now)
	return r, nil
}

// unknownAttempt counts an attempt of an identifier no device has, and
// records it for the operator unless its address, or the server, is past
// its rate; the store keeps UnknownRecordsKept records at most. The record
// is informational: failing to write it is logged, not returned.
func (s *Service) unknownAttempt(ctx context.Context, identifier, protocol, remoteAddr string, now time.Time) {
	s.stats.deviceUnknown.Add(1)
	host := remoteAddr
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		host = h
	}
	host = printable(host, 64)
	if !s.unknownLimit.allow(host, now) {
		return
	}
	u := UnknownDevice{Identifier: printable(identifier, 2*MaxIdentifier), Protocol: printable(protocol, 32), Address: host,
		FirstSeen: now, LastSeen: now, Count: 1}
	if err := s.store.RecordUnknownDevice(ctx, u, UnknownRecordsKept); err != nil {
		s.log.Warn("record an unknown device", "identifier", u.Identifier, "protocol", u.Protocol, "address", host, "err", err)
		return
	}
	s.stats.deviceUnknownRecorded.Add(1)
}

// printable is s with every byte outside printable ASCII replaced by '?',
// cut to at most n bytes: what a device sent, safe to store and show.
func printable(s string, n int) string {
	s = s[:min(len(s), n)]
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		clean = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if clean {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}

// Known reports whether a device with the identifier is registered, for a
// listener deciding whether to accept a login. An unknown identifier
// (any string that is not a registered identifier) is counted in Stats and
// recorded for the operator (Operator.UnknownDevices), at most
// UnknownRecordsPerMinute times a minute per address (remoteAddr's host)
// and UnknownRecordsPerSecond a second on the server, the store keeping
// UnknownRecordsKept records at most.
// It reads the store only for an identifier whose answer this process does
// not hold: a registered one's for routeTTL, an unknown one's for a few
// seconds.
func (e DeviceEdge) Known(ctx context.Context, identifier, protocol, remoteAddr string) (bool, error) {
	s := e.s
	r, err := s.route(ctx, identifier, false)
	if err != nil {
		return false, err
	}
	if !r.found {
		s.unknownAttempt(ctx, identifier, protocol, remoteAddr, s.Now())
	}
	return r.found, nil
}

// Registered reports whether a device with the identifier is registered,
// as Known does but recording nothing when it is not: what a listener asks
// for the identifiers of an address that sent too many unknown ones, so
// that a registered device behind a shared address (a carrier's NAT) is
// served whatever others sent from it. It answers from this process's
// cache of routes when it can (a registered identifier's for routeTTL, an
// unknown one's for a few seconds).
func (e DeviceEdge) Registered(ctx context.Context, identifier string) (bool, error) {
	r, err := e.s.route(ctx, identifier, false)
	return r.found, err
}

// Report handles one message of a device as a listener decoded it, by the
// rules of API.md §13, and returns once what it stored is durable: the
// listener acknowledges the message when the error is nil.
//
//   - An identifier no device has is not_found (and is recorded as Known
//     records it).
//   - Each position is judged in turn: one without a valid fix, or with a
//     value the API would refuse in a location (latitude 91, a heading of
//     360, a time before 2000...), is no_fix; one more than MaxFutureSkew
//     ahead of the clock is future; one older than the account's plan
//     reaches back is too_old; and all of them are no_vehicle while the
//     device has no vehicle. None of those is stored or moves anything.
//   - The others are ingested exactly as IngestLocations ingests a batch
//     of the device's vehicle (the same validation, duplicates skipped,
//     any order, trips, alerts, the live stream, webhooks), in one write
//     transaction that also records the device's row: last_seen_at,
//     protocol, and last_report, the message's LAST position in the order
//     it carries them (whatever its time) with whether it was stored and
//     why not (duplicate when the vehicle has a point at its time, or an
//     earlier position of the message has it). A message that stores
//     nothing records the row alone. Speeds are km/h already.
//   - When the account's points allowance, or the device's own
//     (Account.DevicePointsPerHour), refuses the batch
//     (rate_limit_exceeded), that error is returned (the device is not
//     acknowledged and sends the message again later), and last_report is
//     recorded all the same, with reason points_allowance, or
//     device_points_allowance.
//
// A message of more than MaxPointsPerVehicleBatch positions to store is a
// validation_error, as such a batch is for the API.
func (e DeviceEdge) Report(ctx context.Context, rep DeviceReport) (DeviceResult, error) {
	s := e.s
	now := s.Now()
	fresh := false
	for attempt := 1; ; attempt++ {
		r, err := s.route(ctx, rep.Identifier, fresh)
		if err != nil {
			return DeviceResult{}, err
		}
		if !r.found {
			s.unknownAttempt(ctx, rep.Identifier, rep.Protocol, rep.RemoteAddr, now)
			return DeviceResult{}, Errorf(CodeNotFound, "No device with identifier %q is registered.", printable(rep.Identifier, 2*MaxIdentifier))
		}
		res, err := s.report(ctx, r, rep, now)
		// A device moved or deleted, or a vehicle deleted, since the route
		// was read: read it again.
		if errors.Is(err, errDeviceMoved) || ErrorCode(err) == CodeNotFound {
			s.devices.forget(rep.Identifier)
			if attempt < maxRouteAttempts {
				fresh = true
				continue
			}
			return DeviceResult{}, Errorf(CodeUnavailable, "The device changed while its report was being stored; send it again.")
		}
		s.stats.deviceReports.Add(1)
		return res, err
	}
}

// report stores one message along route r.
func (s *Service) report(ctx context.Context, r deviceRoute, rep DeviceReport, now time.Time) (DeviceResult, error) {
	d := Device{ID: r.deviceID, AccountID: r.as.Account.ID, VehicleID: r.vehicleID, Protocol: printable(rep.Protocol, 32), LastSeenAt: &now}
	if len(rep.Positions) == 0 {
		return DeviceResult{}, s.update(ctx, func(tx Tx) error { return recordReport(tx, d, nil) })
	}
	reach := now.Add(-r.as.Account.Plan.Limits().HistoryReach)
	last := len(rep.Positions) - 1
	// A device's position is validated once, here: its attributes by
	// cleanAttrs, the rest by positionReason, each position becoming its
	// point (point) on the way. ingest takes the points as they are
	// (prepareBatch validates only a client's batch). A bad attribute is
	// dropped, its position kept: a device cannot be told (API.md §14).
	dropped := 0
	for i := range rep.Positions {
		dropped += rep.Positions[i].cleanAttrs()
	}
	if dropped > 0 {
		s.stats.deviceAttrsDropped.Add(uint64(dropped))
	}
	lr := LastReport{ReceivedAt: now, Protocol: d.Protocol, Position: rep.Positions[last].shown()}
	points := make([]Point, 0, len(rep.Positions))
	lastAt := -1 // the last position's index in points, when it is to be stored
	for i := range rep.Positions {
		pt := rep.Positions[i].point()
		why := positionReason(rep.Positions[i].Valid, &pt, now, reach)
		if why == "" && d.VehicleID == "" {
			why = ReasonNoVehicle
		}
		if i == last {
			lr.Reason = why
		}
		if why != "" {
			continue
		}
		if i == last {
			lastAt = len(points)
		}
		pt.VehicleID = d.VehicleID
		points = append(points, pt)
	}
	if len(points) == 0 {
		err := s.update(ctx, func(tx Tx) error { return recordReport(tx, d, &lr) })
		return DeviceResult{Reason: lr.Reason}, err
	}
	// Of positions at one time, the batch keeps the first: the last
	// position is a duplicate when an earlier one has its time.
	var lastTime time.Time
	lastDup := false
	if lastAt >= 0 {
		lastTime = points[lastAt].Timestamp
		for _, pt := range points[:lastAt] {
			lastDup = lastDup || pt.Timestamp.Equal(lastTime)
		}
	}
	var out LastReport
	hook := func(tx DeviceTx, stored map[string][]Point) error {
		out = lr
		if lastAt >= 0 {
			out.Stored = !lastDup && storedAt(stored[d.VehicleID], lastTime)
			if !out.Stored {
				out.Reason = ReasonDuplicate
			}
		}
		return recordReport(tx, d, &out)
	}
	res, err := s.ingest(ctx, r.as, points, MaxPointsPerVehicleBatch, d.VehicleID, &ingestDevice{id: d.ID, hook: hook})
	if ErrorCode(err) == CodeRateLimitExceeded {
		refused := lr
		if lastAt >= 0 {
			refused.Reason = ReasonPointsAllowance
			if errors.Is(err, errDevicePoints) {
				refused.Reason = ReasonDevicePointsAllowance
			}
		}
		if rerr := s.update(ctx, func(tx Tx) error { return recordReport(tx, d, &refused) }); rerr != nil && !errors.Is(rerr, errDeviceMoved) {
			s.log.Warn("record a refused device report", "device_id", d.ID, "err", rerr)
		}
		return DeviceResult{Reason: refused.Reason}, err
	}
	if err != nil {
		return DeviceResult{}, err
	}
	return DeviceResult{Accepted: res.Accepted, Duplicates: res.Duplicates, Stored: out.Stored, Reason: out.Reason}, nil
}

// recordReport writes the device's row (and lr, unless nil) in tx; a
// device no longer attached to d.VehicleID is errDeviceMoved.
func recordReport(tx DeviceTx, d Device, lr *LastReport) error {
	d.LastReport = lr
	err := tx.RecordDeviceReport(d)
	if ErrorCode(err) == CodeNotFound {
		return errDeviceMoved
	}
	return err
}

// positionReason is why a position (valid: with a fix; pt: the location it
// would be) is not to be stored ("" when it is), judged at now for an
// account whose history reaches back to reach.
func positionReason(valid bool, pt *Point, now, reach time.Time) string {
	if !valid {
		return ReasonNoFix
	}
	var val Validator
	// The attributes are clean already (cleanAttrs); the future is told
	// apart below.
	pt.validatePosition(&val, pt.Timestamp)
	switch {
	case val.Len() > 0:
		return ReasonNoFix // a value the API would refuse: no fix to trust
	case pt.Timestamp.After(now.Add(MaxFutureSkew)):
		return ReasonFuture
	case pt.Timestamp.Before(reach):
		return ReasonTooOld
	}
	return ""
}

// storedAt reports whether pts (in ascending time) holds a point at t.
func storedAt(pts []Point, t time.Time) bool {
	for _, pt := range pts {
		if pt.Timestamp.Equal(t) {
			return true
		}
	}
	return false
}
