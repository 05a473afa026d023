package fleet

import (
	"fmt"
	"slices"
	"time"
)

// Write-sets: a location batch decides first and writes once.
//
// A batch's write transaction reads what it judges against (its vehicles,
// locked by a store that locks; their latest trips; the alert rules), then
// decides everything in memory. Its writes of the rows every report
// writes — the new points, the final row of each vehicle it moved, its
// trips, its device's row — are not sent one by one as they are decided:
// they are gathered into an IngestWrites and handed to the store in one
// call, LocationTx.ApplyIngest, as the transaction's function ends. A
// store may apply them by replaying its methods (ReplayIngest), or, as
// PostgreSQL's group commit does, apply the write-sets of many batches
// together in a few set-based statements.
//
// The events it emits are staged too. The rows a batch writes rarely
// (webhook deliveries and mail, alerts, work orders, a driver's change,
// points older than the vehicle's latest report) are written as they are
// decided, through the transaction's methods, as before.
//
// Reads that follow a staged write in the same batch see it: the trip
// tracker reads the vehicle's points (the staged ones included) and the
// vehicle's row (its staged final row), and the trips' reads see the
// staged trips (stagedTx).
//
// Why a forward point needs no look-up. A batch's vehicles are read
// inside its write transaction, locked where the store runs transactions
// side by side, and every stored point of a vehicle is at or before the
// vehicle's latest report: a batch that stores a point newer than the
// latest moves the vehicle to its newest point in the same transaction.
// So a point newer than the vehicle's latest report as the transaction
// read it cannot be stored already, and is staged as stored. A point at or
// before it may be a duplicate and is inserted at once
// (LocationTx.InsertPoints), which tells. storetest checks the rule.

// IngestWrites is the write-set of one location batch: what its
// transaction writes of the rows every report writes, applied by
// LocationTx.ApplyIngest in one call.
type IngestWrites struct {
	// Points are the new points of each vehicle, each newer than every
	// stored point of its vehicle, in ascending time; none is a duplicate.
	Points []VehiclePoints
	// Vehicles are the final rows of the vehicles the batch moved, as
	// VehicleTx.UpdateVehicle writes them; each vehicle once.
	Vehicles []Vehicle
	// Trips are the trips to store, as TripTx.PutTrips stores them (new
	// ones and replacements); each trip once.
	Trips []Trip
	// Devices are the device rows a report writes, as
	// DeviceTx.RecordDeviceReport writes them, with its condition: a
	// device no longer attached to its VehicleID fails the write-set
	// (not_found).
	Devices []Device
	// Events are the events the batch emits (a status change, an alert
	// opened...), as EventTx.AppendEvent stores them, in their order.
	Events []Event
	// Live are the batch's live reports, set only for a store that
	// appends them to its shared feed with the write-set
	// (IngestLiveFeed), which appends them in the same transaction as
	// LiveFeed.AppendLive would after it; every other store ignores them.
	Live *LiveAppend
	// Quota are the takes of the batch's points allowance, of exactly its
	// stored points, set only for a store that counts them with the
	// write-set (IngestQuotaStore): it counts them in the same
	// transaction, all or none, and a take that does not fit fails the
	// write-set with a *QuotaRefused. Every other store ignores them.
	Quota []QuotaTake
}

// LiveAppend is one batch's live reports, of one account, at one time, as
// LiveFeed.AppendLive takes them.
type LiveAppend struct {
	AccountID string
	At        time.Time
	Items     []StreamItem
}

// VehiclePoints are one vehicle's points of an IngestWrites.
type VehiclePoints struct {
	VehicleID string
	Points    []Point
}

// Empty reports whether w writes nothing.
func (w IngestWrites) Empty() bool {
	return len(w.Points) == 0 && len(w.Vehicles) == 0 && len(w.Trips) == 0 && len(w.Devices) == 0 && len(w.Events) == 0 &&
		(w.Live == nil || len(w.Live.Items) == 0) && len(w.Quota) == 0
}

// ReplayIngest applies w to tx with the transaction's own methods, in the
// order the one-by-one path writes them: the events (AppendEvent), each
// vehicle's points (InsertPoints), the vehicles (UpdateVehicle), the trips
// (PutTrips), the devices (RecordDeviceReport); w.Live and w.Quota are
// left to the caller (a store that appends and counts them). A point of w that is stored already breaks
// the rule that makes it new (see above): that is an error, not a
// duplicate. A store whose ApplyIngest has nothing better to do calls it.
func ReplayIngest(tx Tx, w IngestWrites) error {
	for _, e := range w.Events {
		if err := tx.AppendEvent(e); err != nil {
			return err
		}
	}
	for _, vp := range w.Points {
		stored, err := tx.InsertPoints(vp.VehicleID, vp.Points)
		if err != nil {
			return err
		}
		if len(stored) != len(vp.Points) {
			return Errorf(CodeConflict, "A point of vehicle %s newer than its latest report is stored already.", vp.VehicleID)
		}
	}
	for _, v := range w.Vehicles {
		if err := tx.UpdateVehicle(v); err != nil {
			return err
		}
	}
	if len(w.Trips) > 0 {
		if err := tx.PutTrips(w.Trips); err != nil {
			return err
		}
	}
	for _, d := range w.Devices {
		if err := tx.RecordDeviceReport(d); err != nil {
			if ErrorCode(err) == CodeNotFound { // still not_found, and the report routes again
				return fmt.Errorf("%w: %w", errDeviceMoved, err)
			}
			return err
		}
	}
	return nil
}

// stagedTx is a batch's transaction while it gathers its write-set: the
// writes of IngestWrites are staged, every other call goes to Tx, and the
// reads of what is staged see it.
type stagedTx struct {
	Tx
	// newest is each of the batch's vehicles' latest report as the
	// transaction read it (absent: none).
	newest map[string]time.Time
	read   map[string]bool
	w      IngestWrites
	// points indexes w.Points by vehicle, vehicles w.Vehicles.
	points   map[string]int
	vehicles map[string]int
}

// newStagedTx stages the writes of a batch whose vehicles tx read as
// vehicles.
func newStagedTx(tx Tx, vehicles map[string]Vehicle) *stagedTx {
	st := &stagedTx{Tx: tx, newest: make(map[string]time.Time, len(vehicles)), read: make(map[string]bool, len(vehicles)), points: map[string]int{}, vehicles: map[string]int{}}
	for id, v := range vehicles {
		st.read[id] = true
		if v.LastLocation != nil {
			st.newest[id] = v.LastLocation.Timestamp
		}
	}
	return st
}

// apply hands the write-set to the store.
func (t *stagedTx) apply() error {
	if t.w.Empty() {
		return nil
	}
	return t.Tx.ApplyIngest(t.w)
}

// InsertPoints stages the points newer than the vehicle's latest report
// (they cannot be stored already) and inserts the others at once.
func (t *stagedTx) InsertPoints(vehicleID string, points []Point) ([]Point, error) {
	if !t.read[vehicleID] { // not a vehicle of the batch: nothing is known of it
		return t.Tx.InsertPoints(vehicleID, points)
	}
	fwd := 0
	if newest, ok := t.newest[vehicleID]; ok {
		for fwd < len(points) && !points[fwd].Timestamp.After(newest) {
			fwd++
		}
	}
	var stored []Point
	if fwd > 0 {
		var err error
		if stored, err = t.Tx.InsertPoints(vehicleID, points[:fwd]); err != nil {
			return nil, err
		}
	}
	if fwd == len(points) {
		return stored, nil
	}
	fresh := points[fwd:]
	if i, ok := t.points[vehicleID]; ok {
		// A second call for the vehicle: still newer than what it staged?
		pts := t.w.Points[i].Points
		if last := pts[len(pts)-1].Timestamp; !fresh[0].Timestamp.After(last) {
			return t.insertNow(vehicleID, points)
		}
		t.w.Points[i].Points = append(pts, fresh...)
	} else {
		t.points[vehicleID] = len(t.w.Points)
		t.w.Points = append(t.w.Points, VehiclePoints{VehicleID: vehicleID, Points: slices.Clone(fresh)})
	}
	t.newest[vehicleID] = fresh[len(fresh)-1].Timestamp
	return append(stored, fresh...), nil
}

// insertNow writes the vehicle's staged points, then points, at once: the
// rare batch that inserts a vehicle's points twice, out of order.
func (t *stagedTx) insertNow(vehicleID string, points []Point) ([]Point, error) {
	i := t.points[vehicleID]
	if _, err := t.Tx.InsertPoints(vehicleID, t.w.Points[i].Points); err != nil {
		return nil, err
	}
	t.w.Points = slices.Delete(t.w.Points, i, i+1)
	for k, vp := range t.w.Points {
		t.points[vp.VehicleID] = k
	}
	delete(t.points, vehicleID)
	return t.Tx.InsertPoints(vehicleID, points)
}

// Points adds the staged points to the stored ones: every staged point of
// a vehicle is newer than its stored ones.
func (t *stagedTx) Points(vehicleID string, from, to time.Time, limit int) ([]Point, error) {
	out, err := t.Tx.Points(vehicleID, from, to, limit)
	if err != nil {
		return nil, err
	}
	i, ok := t.points[vehicleID]
	if !ok {
		return out, nil
	}
	for _, p := range t.w.Points[i].Points {
		if len(out) >= limit {
			break
		}
		if !p.Timestamp.Before(from) && !p.Timestamp.After(to) {
			p.VehicleID = vehicleID
			out = append(out, p)
		}
	}
	return out, nil
}

// UpdateVehicle stages the vehicle's final row.
func (t *stagedTx) UpdateVehicle(v Vehicle) error {
	if i, ok := t.vehicles[v.ID]; ok {
		t.w.Vehicles[i] = v.Clone()
		return nil
	}
	t.vehicles[v.ID] = len(t.w.Vehicles)
	t.w.Vehicles = append(t.w.Vehicles, v.Clone())
	return nil
}

// Vehicle returns a vehicle's staged row, if the batch staged one.
func (t *stagedTx) Vehicle(accountID, id string) (Vehicle, error) {
	if i, ok := t.vehicles[id]; ok && t.w.Vehicles[i].AccountID == accountID {
		return t.w.Vehicles[i].Clone(), nil
	}
	return t.Tx.Vehicle(accountID, id)
}

// SetVehicleDriver writes the driver at once, and on a staged row too.
func (t *stagedTx) SetVehicleDriver(accountID, vehicleID, driverID string) error {
	if err := t.Tx.SetVehicleDriver(accountID, vehicleID, driverID); err != nil {
		return err
	}
	if i, ok := t.vehicles[vehicleID]; ok && t.w.Vehicles[i].AccountID == accountID {
		t.w.Vehicles[i].DriverID = driverID
	}
	return nil
}

// PutTrips stages trips.
func (t *stagedTx) PutTrips(ts []Trip) error {
	for _, tr := range ts {
		tr = tr.Clone()
		if i := slices.IndexFunc(t.w.Trips, func(s Trip) bool { return s.ID == tr.ID }); i >= 0 {
			t.w.Trips[i] = tr
			continue
		}
		t.w.Trips = append(t.w.Trips, tr)
	}
	return nil
}

// LatestTrips sees the staged trips.
func (t *stagedTx) LatestTrips(vehicleIDs []string) (map[string]Trip, error) {
	out, err := t.Tx.LatestTrips(vehicleIDs)
	if err != nil || len(t.w.Trips) == 0 {
		return out, err
	}
	for _, tr := range t.w.Trips {
		if !slices.Contains(vehicleIDs, tr.VehicleID) {
			continue
		}
		if cur, ok := out[tr.VehicleID]; !ok || cur.ID == tr.ID || tr.Start.Timestamp.After(cur.Start.Timestamp) {
			out[tr.VehicleID] = tr.Clone()
		}
	}
	return out, nil
}

// putTripsNow writes the staged trips at once, before a read or a write
// of trips that does not see them.
func (t *stagedTx) putTripsNow() error {
	if len(t.w.Trips) == 0 {
		return nil
	}
	ts := t.w.Trips
	t.w.Trips = nil
	return t.Tx.PutTrips(ts)
}

// Trip sees the staged trips (written first).
func (t *stagedTx) Trip(accountID, id string) (Trip, error) {
	if err := t.putTripsNow(); err != nil {
		return Trip{}, err
	}
	return t.Tx.Trip(accountID, id)
}

// DeleteTrip deletes after the staged trips are written.
func (t *stagedTx) DeleteTrip(vehicleID, id string) error {
	if err := t.putTripsNow(); err != nil {
		return err
	}
	return t.Tx.DeleteTrip(vehicleID, id)
}

// LastTripBefore sees the staged trips (written first).
func (t *stagedTx) LastTripBefore(vehicleID string, before time.Time) (Trip, bool, error) {
	if err := t.putTripsNow(); err != nil {
		return Trip{}, false, err
	}
	return t.Tx.LastTripBefore(vehicleID, before)
}

// VehicleTrips sees the staged trips (written first).
func (t *stagedTx) VehicleTrips(vehicleID string, from, to, after time.Time, limit int) ([]Trip, error) {
	if err := t.putTripsNow(); err != nil {
		return nil, err
	}
	return t.Tx.VehicleTrips(vehicleID, from, to, after, limit)
}

// AccountTrips sees the staged trips (written first).
func (t *stagedTx) AccountTrips(accountID, vehicleID string, from, to time.Time) ([]Trip, error) {
	if err := t.putTripsNow(); err != nil {
		return nil, err
	}
	return t.Tx.AccountTrips(accountID, vehicleID, from, to)
}

// RecordDeviceReport stages the device's row; its condition is the
// write-set's.
func (t *stagedTx) RecordDeviceReport(d Device) error {
	for i := range t.w.Devices {
		if t.w.Devices[i].ID == d.ID {
			if d.LastReport == nil { // kept, as the store keeps it
				d.LastReport = t.w.Devices[i].LastReport
			}
			t.w.Devices[i] = d
			return nil
		}
	}
	t.w.Devices = append(t.w.Devices, d)
	return nil
}

// AppendEvent stages the event.
func (t *stagedTx) AppendEvent(e Event) error {
	t.w.Events = append(t.w.Events, e)
	return nil
}

// appendEventsNow writes the staged events at once, before a read of
// events that does not see them.
func (t *stagedTx) appendEventsNow() error {
	es := t.w.Events
	t.w.Events = nil
	for _, e := range es {
		if err := t.Tx.AppendEvent(e); err != nil {
			return err
		}
	}
	return nil
}

// Event sees the staged events (written first).
func (t *stagedTx) Event(accountID, id string) (Event, error) {
	if err := t.appendEventsNow(); err != nil {
		return Event{}, err
	}
	return t.Tx.Event(accountID, id)
}

// Events sees the staged events (written first).
func (t *stagedTx) Events(accountID string, f EventFilter, p Page) ([]Event, error) {
	if err := t.appendEventsNow(); err != nil {
		return nil, err
	}
	return t.Tx.Events(accountID, f, p)
}
